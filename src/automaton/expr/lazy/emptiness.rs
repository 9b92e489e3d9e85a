//! Emptiness of a derivative, decided before it becomes a state: what is known
//! without deriving (positive, nullable, a state already), then the witnesses of
//! recent walks, strings built from the expression's structure, guided and plain dives,
//! and last a breadth-first search over the derivatives, all against the work budget.

use super::*;

/// Expressions a built witness visits at most ([`ExprDfa::built_witness`]).
pub(super) const WITNESS_FUEL: usize = 20_000;

/// Nesting a built witness follows at most (the recursion's depth).
pub(super) const MAX_WITNESS_DEPTH: usize = 400;

/// Longest built witness.
pub(super) const MAX_WITNESS_LEN: usize = 4096;

/// Deepest level of a recursive call a built witness is made from (shallower first).
pub(super) const SHALLOW_CALL_DEPTH: u32 = 3;

/// A byte class a guided dive may take next ([`ExprDfa::guide_classes`]).
#[derive(Clone, Copy)]
pub(super) struct Vote {
    class: u8,
    /// Parts of an intersection whose built strings begin with it.
    parts: u32,
    /// Length of the shortest string built from it.
    len: usize,
}

impl Vote {
    /// Adds `v` to `votes`, or the shorter length to the same class's vote.
    fn add(votes: &mut Vec<Vote>, v: Vote) {
        match votes.iter_mut().find(|w| w.class == v.class) {
            Some(w) => {
                w.parts = w.parts.max(v.parts);
                w.len = w.len.min(v.len);
            }
            None => votes.push(v),
        }
    }
}

/// Derivatives a guided dive takes at most ([`ExprDfa::guided_dive`]).
pub(super) const MAX_GUIDED_STEPS: usize = 1024;

/// Longest path a guided dive follows (deeper, it turns back: free-form values nest
/// without end).
pub(super) const MAX_GUIDED_DEPTH: usize = 256;

/// Bytes of built witnesses kept ([`ExprDfa::built_witness`]).
pub(super) const MAX_BUILT_BYTES: usize = 1 << 20;

/// Candidates an intersection's built witness tries.
pub(super) const MAX_WITNESS_CANDIDATES: usize = 16;

/// Expressions a non-emptiness search explores breadth first before it tries one dive
/// ([`ExprDfa::dive_nonempty`]). The search derives one class per group of classes
/// with the same derivative, so a few hundred expressions cost less than a dive that
/// fails (up to [`MAX_GUIDED_STEPS`] derivatives, the guide's votes at each): at 64,
/// `Github_hard---o90420`'s key starts spent most of their searches in dives that
/// found nothing before the search proved the language empty at 224 expressions.
pub(super) const DIVE_AFTER: usize = 256;

/// Steps of a dive: each derives every byte class of one expression.
pub(super) const MAX_DIVE_STEPS: usize = 1024;

impl ExprDfa {
    /// Whether `e`'s language is non-empty: flags and memos first, then structure (a
    /// concatenation, union or repetition is non-empty as its parts are), and a search
    /// only for intersections and complements. Structure first matters: a state of a
    /// JSON document is the rest of the document around an intersection (a key that is
    /// not a declared one, a pattern within a length), and a search over the document
    /// would derive all of it down to its end, again for every new state.
    pub(super) fn is_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        if let Some(known) = self.known_nonempty(e) {
            return Ok(known);
        }
        let result = match *self.exprs.node(e) {
            Node::Concat(..) => {
                // Iterative along the chain (chains can be long; heads nest only as deep
                // as the expression does), stopping at a suffix already known: the
                // derivatives of a document share their suffixes, so after the first
                // state only the new heads are looked at.
                let mut cur = e;
                let mut suffixes = Vec::new();
                let nonempty = loop {
                    if cur != e {
                        if let Some(known) = self.known_nonempty(cur) {
                            break known;
                        }
                        suffixes.push(cur);
                    }
                    match *self.exprs.node(cur) {
                        Node::Concat(head, rest) => {
                            if !self.is_nonempty(head)? {
                                break false;
                            }
                            cur = rest;
                        }
                        _ => break self.is_nonempty(cur)?,
                    }
                };
                if nonempty {
                    // Every suffix of a non-empty concatenation is non-empty.
                    for x in suffixes {
                        self.nonempty.insert(x, true);
                    }
                }
                nonempty
            }
            Node::Or(ref alts) => {
                let n = alts.len();
                // Cheap ways first, for every member: one may be proved by a witness
                // while another (an intersection whose parts contradict, met first) is
                // empty and takes a whole search to prove so.
                let mut any = false;
                for i in 0..n {
                    let Node::Or(alts) = self.exprs.node(e) else {
                        unreachable!()
                    };
                    let a = alts[i];
                    let proved = match self.known_nonempty(a) {
                        Some(known) => known,
                        None => self.witnessed(a)?,
                    };
                    if proved {
                        any = true;
                        break;
                    }
                }
                for i in 0..n {
                    if any {
                        break;
                    }
                    let Node::Or(alts) = self.exprs.node(e) else {
                        unreachable!()
                    };
                    if self.is_nonempty(alts[i])? {
                        any = true;
                        break;
                    }
                }
                any
            }
            Node::Repeat(body, lo, _) => lo == 0 || self.is_nonempty(body)?,
            // By its members, each decided once, not by a search over whole objects.
            Node::Interleave(..) => {
                let needs = self.exprs.interleave_needs(e);
                let mut ok = true;
                for &m in &needs.required {
                    if !self.is_nonempty(m)? {
                        ok = false;
                        break;
                    }
                }
                let written = needs.required.len() as u32;
                let mut most = written;
                if let (true, Some(x)) = (ok, needs.extra) {
                    if self.is_nonempty(x)? {
                        most = u32::MAX; // extras make up any count
                    }
                }
                if ok && most != u32::MAX {
                    for &m in &needs.optional {
                        if most >= needs.at_least {
                            break;
                        }
                        if self.is_nonempty(m)? {
                            most += 1;
                        }
                    }
                }
                ok && written.max(needs.at_least) <= most.min(needs.at_most)
            }
            Node::Call(slot, depth) => self.call_nonempty(e, slot, depth)?,
            _ => self.search_nonempty(e)?,
        };
        self.nonempty.insert(e, result);
        Ok(result)
    }

    /// Whether the call `e` (template `slot` at `depth`) is non-empty: as its template
    /// instantiated. Where the template's language only grows with the depth (no call
    /// under a complement, `ExprSet::call_monotone`), from the shallowest depth up: the
    /// first level non-empty decides every deeper one, and a shallow level is cheap to
    /// decide (its calls stop soon), where deciding a deep one first would search
    /// through every level below it.
    pub(super) fn call_nonempty(
        &mut self,
        e: ExprId,
        slot: u32,
        depth: u32,
    ) -> Result<bool, TooLarge> {
        let unfold = |dfa: &mut Self, call: ExprId| -> Result<bool, TooLarge> {
            let mut work = 0;
            let unfolded = dfa.exprs.unfold_call(call, &mut work);
            dfa.charge_nodes(work)?;
            dfa.is_nonempty(unfolded)
        };
        if !self.exprs.call_monotone(slot) {
            // Not met from a schema (the compiler expands such recursion in place).
            return unfold(self, e);
        }
        if self
            .call_nonempty_from
            .get(&slot)
            .is_some_and(|&from| depth >= from)
        {
            return Ok(true);
        }
        let empty_upto = self.call_empty_upto.get(&slot).copied().unwrap_or(0);
        if depth <= empty_upto {
            return Ok(false);
        }
        for d in empty_upto + 1..=depth {
            let call = self.exprs.call(slot, d);
            if unfold(self, call)? {
                self.call_nonempty_from.insert(slot, d);
                return Ok(true);
            }
            self.nonempty.insert(call, false);
            self.call_empty_upto.insert(slot, d);
        }
        Ok(false)
    }

    /// What is known of `e`'s non-emptiness without deriving it.
    pub(super) fn known_nonempty(&self, e: ExprId) -> Option<bool> {
        if e == ExprId::NOTHING {
            return Some(false);
        }
        if self.exprs.positive(e) || self.exprs.nullable_at_end(e) || self.state_of.contains_key(&e)
        {
            return Some(true);
        }
        self.nonempty.get(&e).copied()
    }

    /// A breadth-first search over `e`'s derivatives for a nullable (or known non-empty)
    /// one: breadth first, because the shortest witness is usually short (a few
    /// characters) while a depth-first search can follow a count to its end first. On
    /// success the expressions on the path found are non-empty too; on failure every
    /// expression seen is empty (the search saw all that is reachable from them).
    pub(super) fn search_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        if self.try_witnesses(e)? || self.try_built_witness(e)? {
            return Ok(true);
        }
        let mut seen = FastSet::default();
        seen.insert(e);
        // `order[i]` was found from `order[parent[i]]` by the byte class `via[i]`.
        let (mut order, mut parent, mut via) = (vec![e], vec![usize::MAX], vec![0u8]);
        let mut head = 0;
        let mut dived = false;
        while head < order.len() {
            // Past a small search (which proves most empty languages), the dives: the
            // guided one first, then the plain one.
            if !dived && order.len() > DIVE_AFTER {
                dived = true;
                if self.guided_dive(e)? || self.dive_nonempty(e)? {
                    return Ok(true);
                }
            }
            let x = order[head];
            for class in self.distinct_classes(x)? {
                let class = class as usize;
                let y = self.derive(x, class)?;
                if seen.contains(&y) {
                    continue;
                }
                match self.known_nonempty(y) {
                    Some(true) => {
                        let mut witness = vec![class as u8];
                        let mut i = head;
                        while i != usize::MAX {
                            self.nonempty.insert(order[i], true);
                            if parent[i] != usize::MAX {
                                witness.push(via[i]);
                            }
                            i = parent[i];
                        }
                        witness.reverse();
                        self.remember_witness(witness);
                        return Ok(true);
                    }
                    Some(false) => {}
                    None => {
                        seen.insert(y);
                        order.push(y);
                        parent.push(head);
                        via.push(class as u8);
                    }
                }
            }
            head += 1;
        }
        for x in order {
            self.nonempty.insert(x, false);
        }
        Ok(false)
    }

    /// One depth-first path from `e`: at each step, every byte class is derived; a
    /// derivative known non-empty ends it (found), else it goes on by the first class
    /// whose derivative is neither known empty nor met before. `false` means only "not
    /// found" (a dead end or [`MAX_DIVE_STEPS`]): emptiness is for the search to prove.
    /// Why: a witness as long as a whole object (its required members, a string of
    /// exactly 16 characters) sits dozens of bytes deep, and breadth first explored
    /// thousands of expressions for one (`Github_hard---o79409`: 2,711 for 35 bytes).
    pub(super) fn dive_nonempty(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut seen = FastSet::default();
        seen.insert(e);
        let (mut path, mut witness) = (vec![e], Vec::new());
        let mut x = e;
        for _ in 0..MAX_DIVE_STEPS {
            let mut next = None;
            for class in self.distinct_classes(x)? {
                let class = class as usize;
                let y = self.derive(x, class)?;
                match self.known_nonempty(y) {
                    Some(true) => {
                        for p in path {
                            self.nonempty.insert(p, true);
                        }
                        witness.push(class as u8);
                        self.remember_witness(witness);
                        return Ok(true);
                    }
                    Some(false) => {}
                    None if next.is_none() && !seen.contains(&y) => next = Some((class, y)),
                    None => {}
                }
            }
            let Some((class, y)) = next else {
                return Ok(false);
            };
            seen.insert(y);
            path.push(y);
            witness.push(class as u8);
            x = y;
        }
        Ok(false)
    }

    /// Whether one of the recent witnesses leads `e` to a language known non-empty.
    /// States met one after another in a walk usually differ in little (a count, how
    /// much of a pattern is behind), and a completion found for one completes the next:
    /// following a witness costs a derivative per byte, where a search derives every
    /// byte class of every expression it meets (hundreds, under a length limit). Exact:
    /// the derivatives along the witness are computed, not assumed.
    pub(super) fn try_witnesses(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        for k in 0..self.witnesses.len() {
            let witness = std::mem::take(&mut self.witnesses[k]);
            let found = self.follows(e, &witness);
            self.witnesses[k] = witness;
            if found? {
                // Most recently useful first.
                let w = self.witnesses.remove(k);
                self.witnesses.insert(0, w);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a recent or a built witness shows `e` non-empty (no search).
    pub(super) fn witnessed(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        Ok(self.try_witnesses(e)? || self.try_built_witness(e)?)
    }

    /// Whether a string built from `e`'s structure ([`built_witness`](Self::built_witness))
    /// is in its language, checked by deriving along it (exact). An intersection of
    /// objects (an `anyOf` intersected, `Compiler::any_of_intersected`) has members
    /// of any depth (free-form values) where a breadth-first search spends itself on
    /// nested arrays long before it reaches the end of a required member's value
    /// (`Github_trivial---o88605`: 900,000 derivatives), while the shortest object of
    /// one part, a few dozen bytes, is usually in all of them.
    pub(super) fn try_built_witness(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut fuel = WITNESS_FUEL;
        let Some(w) = self.built_witness(e, 0, &mut fuel)? else {
            return Ok(false);
        };
        if self.follows_bytes(e, &w)? {
            let classes = w.iter().map(|&b| self.classes[b as usize]).collect();
            self.remember_witness(classes);
            return Ok(true);
        }
        Ok(false)
    }

    /// A path from `e` led by built witnesses ([`built_witness`](Self::built_witness)):
    /// a depth-first search that tries, at each step, the byte classes that begin the
    /// strings built for the parts of what is left, those that more parts of an
    /// intersection begin with first. Where the parts want different optional members,
    /// one part's string stops where another's goes on (a member one needs, a `}` the
    /// other allows), which a string built for either alone misses. Bounded by
    /// [`MAX_GUIDED_STEPS`] derivatives; `false` means only "not found".
    pub(super) fn guided_dive(&mut self, e: ExprId) -> Result<bool, TooLarge> {
        let mut fuel = WITNESS_FUEL;
        let mut seen = FastSet::default();
        seen.insert(e);
        // Each frame: an expression on the path, its candidate classes, the next to try.
        let first = self.guide_classes(e, &mut fuel)?;
        let mut stack: Vec<(ExprId, Vec<u8>, usize)> = vec![(e, first, 0)];
        let mut steps = 0;
        while let Some((x, candidates, next)) = stack.last_mut() {
            let Some(&class) = candidates.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            let x = *x;
            steps += 1;
            if steps > MAX_GUIDED_STEPS {
                return Ok(false);
            }
            let y = self.derive(x, class as usize)?;
            match self.known_nonempty(y) {
                Some(true) => {
                    let mut witness: Vec<u8> = Vec::with_capacity(stack.len());
                    for (p, candidates, next) in &stack {
                        self.nonempty.insert(*p, true);
                        witness.push(candidates[*next - 1]);
                    }
                    self.remember_witness(witness);
                    return Ok(true);
                }
                Some(false) => {}
                None if stack.len() < MAX_GUIDED_DEPTH && seen.insert(y) => {
                    let candidates = self.guide_classes(y, &mut fuel)?;
                    stack.push((y, candidates, 0));
                }
                None => {}
            }
        }
        Ok(false)
    }

    /// The classes of the first bytes of the strings built for `x`'s parts: those more
    /// parts of an intersection begin with first, then those of shorter strings (a
    /// closing bracket before another element of a free-form array: the search goes
    /// depth first, and nested values never end).
    pub(super) fn guide_classes(
        &mut self,
        x: ExprId,
        fuel: &mut usize,
    ) -> Result<Vec<u8>, TooLarge> {
        let mut votes: Vec<Vote> = Vec::new();
        self.guide_votes(x, 0, fuel, &mut votes)?;
        // Voted bytes first, the longest string first: the part that needs the most
        // leads (the others usually take its members as undeclared ones), where the
        // most votes went to what needs least (an undeclared key every part allows).
        // Then the other bytes, shortest string first.
        crate::sort::sort_by(&mut votes, |a, b| {
            (b.parts > 0)
                .cmp(&(a.parts > 0))
                .then(if a.parts > 0 {
                    b.len.cmp(&a.len)
                } else {
                    a.len.cmp(&b.len)
                })
                .then(b.parts.cmp(&a.parts))
        });
        Ok(votes.into_iter().map(|v| v.class).collect())
    }

    /// Adds `x`'s first classes to `votes`, each with the length of the shortest string
    /// built from there: an intersection counts a class once per part (and the longest
    /// of its parts' strings), a union or a concatenation's nullable heads add their
    /// members' classes, a concatenation's tail adds its string's length.
    pub(super) fn guide_votes(
        &mut self,
        x: ExprId,
        depth: usize,
        fuel: &mut usize,
        votes: &mut Vec<Vote>,
    ) -> Result<(), TooLarge> {
        if depth > MAX_WITNESS_DEPTH || votes.len() >= MAX_WITNESS_CANDIDATES {
            return Ok(());
        }
        match *self.exprs.node(x) {
            Node::And(ref parts) => {
                // A part votes for the first byte of its own shortest string; the other
                // bytes its members begin with come after, as fallbacks. (Counting every
                // byte a part may begin with, the undeclared keys every part allows
                // outvoted the declared ones a part needs.)
                let parts = parts.clone();
                let mut all: Vec<Vote> = Vec::new();
                for &p in parts.iter() {
                    let own_first = self
                        .built_witness(p, depth + 1, fuel)?
                        .and_then(|w| w.first().map(|&b| (self.classes[b as usize], w.len())));
                    if let Some((class, len)) = own_first {
                        match all.iter_mut().find(|w| w.class == class) {
                            // A fallback's length gives way to a part's own string's.
                            Some(w) if w.parts == 0 => {
                                *w = Vote {
                                    class,
                                    parts: 1,
                                    len,
                                }
                            }
                            Some(w) => {
                                w.parts += 1;
                                w.len = w.len.max(len);
                            }
                            None => all.push(Vote {
                                class,
                                parts: 1,
                                len,
                            }),
                        }
                    }
                    let mut own = Vec::new();
                    self.guide_votes(p, depth + 1, fuel, &mut own)?;
                    for v in own {
                        if !all.iter().any(|w| w.class == v.class) {
                            all.push(Vote { parts: 0, ..v });
                        }
                    }
                }
                for v in all {
                    Vote::add(votes, v);
                }
            }
            Node::Or(ref alts) => {
                let alts = alts.clone();
                for &a in alts.iter() {
                    self.guide_votes(a, depth + 1, fuel, votes)?;
                }
            }
            Node::Concat(head, rest) => {
                let tail = self
                    .built_witness(rest, depth + 1, fuel)?
                    .map_or(MAX_WITNESS_LEN, |w| w.len());
                let mut own = Vec::new();
                self.guide_votes(head, depth + 1, fuel, &mut own)?;
                for v in own {
                    Vote::add(
                        votes,
                        Vote {
                            len: v.len + tail,
                            ..v
                        },
                    );
                }
                if self.exprs.nullable(head) {
                    self.guide_votes(rest, depth + 1, fuel, votes)?;
                }
            }
            Node::Repeat(body, _, _) => self.guide_votes(body, depth + 1, fuel, votes)?,
            Node::Not(_) | Node::Nothing | Node::Empty => {}
            _ => {
                if let Some(w) = self.built_witness(x, depth + 1, fuel)? {
                    if let Some(&b) = w.first() {
                        let class = self.classes[b as usize];
                        Vote::add(
                            votes,
                            Vote {
                                class,
                                parts: 1,
                                len: w.len(),
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether deriving `e` along `classes` reaches an expression known non-empty
    /// (those passed on the way are marked so); `false` at one known empty, or at the
    /// end without a verdict.
    pub(super) fn follows(&mut self, e: ExprId, classes: &[u8]) -> Result<bool, TooLarge> {
        let mut x = e;
        let mut path = Vec::with_capacity(classes.len());
        for &class in classes {
            path.push(x);
            x = self.derive(x, class as usize)?;
            match self.known_nonempty(x) {
                Some(true) => {
                    for p in path {
                        self.nonempty.insert(p, true);
                    }
                    return Ok(true);
                }
                Some(false) => return Ok(false),
                None => {}
            }
        }
        Ok(false)
    }

    /// [`follows`](Self::follows) along the classes of `bytes`.
    pub(super) fn follows_bytes(&mut self, e: ExprId, bytes: &[u8]) -> Result<bool, TooLarge> {
        let classes: Vec<u8> = bytes.iter().map(|&b| self.classes[b as usize]).collect();
        self.follows(e, &classes)
    }

    /// A string that `e` probably matches, built from its structure: the shortest
    /// alternative of a union, the fewest repetitions, an object's members that must be
    /// written (each place in its order), and for an intersection the first string of
    /// one part that the others match too. Complements build nothing (the parts beside
    /// them do). Only a candidate: [`try_built_witness`](Self::try_built_witness) checks
    /// it. Bounded by `fuel` (expressions visited) and nesting.
    pub(super) fn built_witness(
        &mut self,
        e: ExprId,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Arc<[u8]>>, TooLarge> {
        if let Some(w) = self.built.get(&e) {
            return Ok(w.clone());
        }
        if *fuel == 0 || depth > MAX_WITNESS_DEPTH {
            return Ok(None);
        }
        *fuel -= 1;
        let w: Option<Vec<u8>> = match *self.exprs.node(e) {
            // Assertions are checked by the derivatives that follow the string.
            Node::Nothing | Node::Not(_) | Node::Look(_) | Node::After(..) => None,
            Node::Empty => Some(Vec::new()),
            Node::Set(set) => (0..=255u8).find(|&b| set.contains(b)).map(|b| vec![b]),
            Node::Residue(_, r) => (r == 0).then(Vec::new),
            Node::Strings(set, lo, hi, depth) => {
                Some(self.exprs.string_trie(set).shortest_from(lo, hi, depth))
            }
            Node::Concat(..) => self.built_concat(e, depth, fuel)?,
            Node::Or(ref alts) => {
                let alts = alts.clone();
                let mut best: Option<Arc<[u8]>> = None;
                for a in alts.iter() {
                    if let Some(w) = self.built_witness(*a, depth + 1, fuel)? {
                        if best.as_ref().is_none_or(|b| w.len() < b.len()) {
                            best = Some(w);
                        }
                    }
                }
                best.map(|b| b.to_vec())
            }
            Node::Repeat(body, lo, _) => {
                if lo == 0 {
                    Some(Vec::new())
                } else {
                    match self.built_witness(body, depth + 1, fuel)? {
                        Some(b) if b.len().saturating_mul(lo as usize) <= MAX_WITNESS_LEN => {
                            Some(b.repeat(lo as usize))
                        }
                        _ => None,
                    }
                }
            }
            Node::Interleave(..) => self.built_interleave(e, depth, fuel)?,
            Node::Call(slot, at) => self.built_call(slot, at, depth, fuel)?,
            Node::And(ref parts) => {
                let parts = parts.clone();
                self.built_intersection(e, &parts, depth, fuel)?
            }
        };
        let w: Option<Arc<[u8]>> = w.filter(|w| w.len() <= MAX_WITNESS_LEN).map(Arc::from);
        // A failure for want of fuel is not remembered (another call may have enough);
        // the strings kept are bounded in bytes (dropped all at once past the bound).
        if w.is_some() || *fuel > 0 {
            let bytes = w.as_ref().map_or(0, |w| w.len()) + BYTES_PER_MEMO_SLOT;
            if self.built_bytes + bytes > MAX_BUILT_BYTES {
                self.built.clear();
                self.built_bytes = 0;
            }
            self.built_bytes += bytes;
            self.built.insert(e, w.clone());
        }
        Ok(w)
    }

    /// A built witness of a concatenation: its parts' one after another.
    fn built_concat(
        &mut self,
        e: ExprId,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Vec<u8>>, TooLarge> {
        let mut out = Vec::new();
        let mut cur = e;
        loop {
            match *self.exprs.node(cur) {
                Node::Concat(head, rest) => {
                    let Some(h) = self.built_witness(head, depth + 1, fuel)? else {
                        return Ok(None);
                    };
                    out.extend_from_slice(&h);
                    cur = rest;
                }
                _ => {
                    return Ok(self.built_witness(cur, depth + 1, fuel)?.map(|t| {
                        out.extend_from_slice(&t);
                        out
                    }))
                }
            }
        }
    }

    /// A built witness of a call, from the shallowest levels up: only a candidate
    /// (checked against the whole), and one level deep its own calls are empty, so the
    /// search cannot follow the recursion down through every level (each a copy of the
    /// template).
    fn built_call(
        &mut self,
        slot: u32,
        at: u32,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Vec<u8>>, TooLarge> {
        for d in 1..=at.min(SHALLOW_CALL_DEPTH) {
            let mut work = 0;
            let call = self.exprs.call(slot, d);
            let unfolded = self.exprs.unfold_call(call, &mut work);
            *fuel = fuel.saturating_sub(work as usize);
            if let Some(w) = self.built_witness(unfolded, depth + 1, fuel)? {
                return Ok(Some(w.to_vec()));
            }
        }
        Ok(None)
    }

    /// A built witness of the intersection `e` of `parts`. Candidates: each part's
    /// string, and each alternative's of a part that is a union; the first that the
    /// whole follows.
    fn built_intersection(
        &mut self,
        e: ExprId,
        parts: &[ExprId],
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Vec<u8>>, TooLarge> {
        let mut candidates: Vec<Arc<[u8]>> = Vec::new();
        for &p in parts {
            if let Some(w) = self.built_witness(p, depth + 1, fuel)? {
                candidates.push(w);
            }
            if let Node::Or(alts) = self.exprs.node(p) {
                let alts = alts.clone();
                for &a in alts.iter().take(MAX_WITNESS_CANDIDATES) {
                    if let Some(w) = self.built_witness(a, depth + 1, fuel)? {
                        candidates.push(w);
                    }
                }
            }
        }
        crate::sort::sort_by_key(&mut candidates, |w| w.len());
        candidates.dedup();
        for w in candidates.into_iter().take(MAX_WITNESS_CANDIDATES) {
            if self.follows_bytes(e, &w)? {
                return Ok(Some(w.to_vec()));
            }
        }
        Ok(None)
    }

    /// An interleaving's string: its members that must be written (group after group,
    /// each in its order), then optional members and extras while fewer than its least
    /// count, a separator between two.
    pub(super) fn built_interleave(
        &mut self,
        e: ExprId,
        depth: usize,
        fuel: &mut usize,
    ) -> Result<Option<Vec<u8>>, TooLarge> {
        let needs = self.exprs.interleave_needs(e);
        let Some(sep) = self.built_witness(needs.sep, depth + 1, fuel)? else {
            return Ok(None);
        };
        let mut chosen: Vec<Arc<[u8]>> = Vec::new();
        for &m in &needs.required {
            match self.built_witness(m, depth + 1, fuel)? {
                Some(w) => chosen.push(w),
                None => return Ok(None),
            }
        }
        let mut count = chosen.len() as u32;
        for &m in &needs.optional {
            if count >= needs.at_least {
                break;
            }
            if let Some(w) = self.built_witness(m, depth + 1, fuel)? {
                chosen.push(w);
                count += 1;
            }
        }
        if count < needs.at_least {
            let Some(x) = needs.extra else {
                return Ok(None);
            };
            let Some(w) = self.built_witness(x, depth + 1, fuel)? else {
                return Ok(None);
            };
            // Extras repeat one string: an object's undeclared keys would clash, so
            // only counts of one are built (the search finds the others).
            if needs.at_least - count > 1 {
                return Ok(None);
            }
            chosen.push(w);
            count += 1;
        }
        if count > needs.at_most {
            return Ok(None);
        }
        let mut out = Vec::new();
        for (i, w) in chosen.iter().enumerate() {
            if i > 0 || needs.after_member {
                out.extend_from_slice(&sep);
            }
            out.extend_from_slice(w);
        }
        Ok(Some(out))
    }

    /// Keeps `witness` (byte classes) among the few recent ones.
    pub(super) fn remember_witness(&mut self, witness: Vec<u8>) {
        if self.witnesses.len() == MAX_WITNESSES {
            self.witnesses.pop();
        }
        self.witnesses.insert(0, witness);
    }
}
