//! Combinators: `$ref`s merged beside siblings, `anyOf` groups intersected instead of
//! distributed, `oneOf` complements, and the proofs that `oneOf` branches are disjoint.

use super::*;

/// A compiled branch, the schema it was compiled from and the references it followed.
type Compiled = (Re, Sch, Vec<String>);

/// Work steps a merge of an intersection's branches may take at least
/// ([`Compiler::intersected_groups`]).
const MIN_MERGE_TRIAL: u64 = 200_000;

/// The values an enum-constrained schema allows (before other keywords), if any.
pub(super) fn enum_values(s: &Sch) -> Option<Vec<&Json>> {
    let (first, _) = s.enums.first()?;
    let types = s.types.unwrap_or(ALL_TYPES);
    Some(
        first
            .iter()
            .filter(|v| {
                s.enums[1..]
                    .iter()
                    .all(|(l, _)| l.iter().any(|w| w.equals(v)))
            })
            .filter(|v| value_types(v) & types != 0)
            .collect(),
    )
}

pub(super) fn possible_types(s: &Sch) -> u8 {
    let t = s.types.unwrap_or(ALL_TYPES);
    match enum_values(s) {
        Some(vals) => vals.iter().fold(0, |acc, v| acc | value_types(v)) & t,
        None => t,
    }
}

/// A value that a schema rejects by its type or number bounds or string length alone.
pub(super) fn simply_excluded(v: &Json, s: &Sch) -> bool {
    if value_types(v) & s.types.unwrap_or(ALL_TYPES) == 0 {
        return true;
    }
    if let Some(vals) = enum_values(s) {
        if !vals.iter().any(|w| w.equals(v)) {
            return true;
        }
    }
    match v {
        Json::Number(d) => !in_range(d, s.number.lo.as_ref(), s.number.hi.as_ref()),
        Json::String(x) => {
            let n = x.chars().count() as u64;
            n < s.string.min_len || s.string.max_len.is_some_and(|m| n > m)
        }
        // An object without a name `s` requires, or with one it forbids.
        Json::Object(members) => {
            s.object.required.iter().any(|k| v.get(k).is_none())
                || members.iter().any(|(k, _)| forbids(s, k))
        }
        _ => false,
    }
}

/// The literal text every match of `pattern` starts with, when it is anchored (`^`)
/// and has no alternation: the characters up to the first one that is not plainly
/// literal, less the last one if a quantifier follows it. Empty where unknown.
pub(super) fn anchored_prefix(pattern: &str) -> &str {
    let Some(rest) = pattern.strip_prefix('^') else {
        return "";
    };
    if pattern.contains('|') {
        return "";
    }
    let literal = |c: char| c.is_ascii_alphanumeric() || " _-/:@#%&=,;<>'!~`\"".contains(c);
    let mut end = 0;
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !literal(c) {
            break;
        }
        match chars.peek() {
            Some((_, '?' | '*' | '+' | '{')) => break,
            _ => end = i + c.len_utf8(),
        }
    }
    &rest[..end]
}

/// Whether no string starts with both prefixes.
pub(super) fn prefixes_clash(a: &str, b: &str) -> bool {
    !(a.starts_with(b) || b.starts_with(a))
}

/// Whether `s` allows no value for property `k` (declared `false`, or undeclared beside
/// `additionalProperties: false` and no `patternProperties` that might match it): an
/// object that has `k` is refused.
pub(super) fn forbids(s: &Sch, k: &str) -> bool {
    match s.object.props.iter().find(|(n, _)| &**n == k) {
        Some((_, v)) => matches!(&**v, Node::Nothing),
        None => {
            s.object.patterns.is_empty()
                && s.object
                    .additional
                    .as_ref()
                    .is_some_and(|v| matches!(&**v, Node::Nothing))
        }
    }
}

pub(super) fn prop_node(s: &Sch, k: &str) -> NodeRef {
    s.object
        .props
        .iter()
        .find(|(n, _)| &**n == k)
        .map(|(_, v)| v.clone())
        .or_else(|| s.object.additional.clone())
        .unwrap_or_else(|| std::rc::Rc::new(Node::Any))
}

/// A branch of an intersected group, flattened.
struct GroupBranch {
    /// Merged with the schema's own keywords: what is compiled.
    merged: Sch,
    /// Alone but for the schema's `type` and `required` (most proofs that branches
    /// are disjoint need them: a discriminating property the schema requires, which
    /// each branch gives its own values): what is compared with the other groups'
    /// branches, the same wherever the group meets a schema with that `type` and
    /// `required` (a `oneOf`'s complements meet every other branch of it).
    alone: Sch,
    node: NodeRef,
    /// The references followed (see [`Compiler::merged_branch`]).
    refs: Vec<String>,
}

impl Compiler<'_> {
    /// Branch `b` (of the `anyOf`/`oneOf` at `at`) flattened and merged with `rest`,
    /// with the references it followed (taken off the stack: the caller puts them back
    /// to compile it, [`compile_with_refs`](Self::compile_with_refs)); `None` where
    /// nothing validates.
    pub(super) fn merged_branch(
        &mut self,
        rest: &Sch,
        b: &NodeRef,
        at: &str,
    ) -> Result<Option<(Sch, Vec<String>)>> {
        Ok(self
            .flattened_branch(rest, b, at)?
            .map(|(merged, _, refs)| (merged, refs)))
    }

    /// Branch `b` flattened: merged with `rest`, alone, and the references followed.
    fn flattened_branch(
        &mut self,
        rest: &Sch,
        b: &NodeRef,
        at: &str,
    ) -> Result<Option<(Sch, Sch, Vec<String>)>> {
        self.count_branch(at)?;
        let mark = self.ref_stack.len();
        let out = self.flatten(b).and_then(|fb| {
            fb.map(|alone| Ok((self.merge(rest, &alone)?, alone)))
                .transpose()
        });
        let refs = self.ref_stack[mark..].to_vec();
        self.ref_stack.truncate(mark);
        Ok(out?.map(|(merged, alone)| (merged, alone, refs)))
    }

    /// [`merged_branch`](Self::merged_branch), keeping the branch alone as well (with
    /// `rest`'s `type` and `required`).
    fn group_branch(&mut self, rest: &Sch, b: &NodeRef, at: &str) -> Result<Option<GroupBranch>> {
        let Some((merged, mut alone, refs)) = self.flattened_branch(rest, b, at)? else {
            return Ok(None);
        };
        if let Some(t) = rest.types {
            alone.types = Some(alone.types.unwrap_or(ALL_TYPES) & t);
        }
        for k in &rest.object.required {
            if !alone.object.required.contains(k) {
                alone.object.required.push(k.clone());
            }
        }
        Ok(Some(GroupBranch {
            merged,
            alone,
            node: b.clone(),
            refs,
        }))
    }

    /// `rest`'s `type` and `required`, by number: what the branches of its groups are
    /// compared with ([`GroupBranch::alone`]), so what their disjointness is known under.
    fn restriction(&mut self, rest: &Sch) -> u32 {
        let mut names = rest.object.required.clone();
        crate::sort::sort(&mut names);
        let next = self.restrictions.len() as u32;
        *self.restrictions.entry((rest.types, names)).or_insert(next)
    }

    /// Whether two branches of intersected groups, alone under `restriction`, are
    /// disjoint: asked once per pair of nodes and restriction in a compile (a `oneOf` of
    /// n overlapping branches intersects the same complements n times, each with all
    /// the others). A proof that went through a reference cut at the recursion limit is
    /// not kept: the cut depends on the stack.
    fn branches_disjoint(
        &mut self,
        x: &GroupBranch,
        y: &GroupBranch,
        restriction: u32,
    ) -> Result<bool> {
        let (px, py) = (Rc::as_ptr(&x.node) as usize, Rc::as_ptr(&y.node) as usize);
        if let Some(&(.., known)) = self.disjoint_branches.get(&(px, py, restriction)) {
            return Ok(known);
        }
        let cuts = self.depth_cuts;
        let d = self.disjoint(&x.alone, &y.alone, 0)?;
        if self.depth_cuts == cuts {
            // The nodes are kept with the answer: their addresses name no other node
            // meanwhile.
            let entry = (x.node.clone(), y.node.clone(), d);
            self.disjoint_branches
                .insert((px, py, restriction), entry.clone());
            self.disjoint_branches.insert((py, px, restriction), entry);
        }
        Ok(d)
    }

    /// Compiles `m` with the references it was merged under on the stack.
    pub(super) fn compile_with_refs(&mut self, m: Sch, refs: Vec<String>) -> Result<Re> {
        let mark = self.ref_stack.len();
        self.ref_stack.extend(refs);
        let out = self.compile_flat(m);
        self.ref_stack.truncate(mark);
        out
    }

    /// Whether `s`'s `anyOf` groups are compiled as an intersection
    /// ([`any_of_intersected`](Self::any_of_intersected)) rather than distributed: in an
    /// automaton, where undeclared properties are allowed (else a part would forbid the
    /// properties another declares), and where distributing would make more than
    /// [`MAX_DISTRIBUTED`] alternatives at this level (each group's, and a `oneOf`'s,
    /// branches multiply).
    pub(super) fn intersects_any_of(&self, s: &Sch) -> bool {
        if !self.for_automaton
            || !self.config.allow_additional_properties
            || s.apply.any_of.is_empty()
        {
            return false;
        }
        let groups = s.apply.any_of.iter().map(|(g, _)| g.len());
        let one_ofs = s.apply.one_of.iter().map(|o| o.branches.len());
        let product = groups
            .chain(one_ofs)
            .fold(1usize, |p, n| p.saturating_mul(n.max(1)));
        product > MAX_DISTRIBUTED
    }

    /// `anyOf` without multiplying its groups: for each group, the union of its
    /// branches each merged with the schema's own keywords (so a branch that
    /// contradicts them is dropped when compiling, as distributing does), and these
    /// unions intersected (with the `oneOf` beside them, distributed as usual, as one
    /// more part). The groups add their branches instead of multiplying them. Each
    /// part is a subset of its schema's texts, and a text in all of them is valid for
    /// all: exact. A part's objects take the properties another part's branches
    /// declare as undeclared ones, so in every part undeclared properties may come
    /// anywhere ([`Compiler::loose_objects`]): a text writes each place's properties
    /// in that place's order, interleaved, as the distributed merge would accept.
    #[inline(never)]
    pub(super) fn any_of_intersected(&mut self, mut s: Sch) -> Result<Re> {
        let groups = std::mem::take(&mut s.apply.any_of);
        let saved = std::mem::replace(&mut self.loose_objects, true);
        let out = self.intersect_groups(s, groups);
        self.loose_objects = saved;
        out
    }

    pub(super) fn intersect_groups(
        &mut self,
        s: Sch,
        groups: Vec<(Rc<[NodeRef]>, Rc<str>)>,
    ) -> Result<Re> {
        let mut base = s.clone();
        base.apply.one_of.clear();
        let mut merged: Vec<Vec<GroupBranch>> = Vec::new();
        for (group, at) in &groups {
            let mut alts = Vec::new();
            for b in group.iter() {
                alts.extend(self.group_branch(&base, b, at)?);
            }
            merged.push(alts);
        }
        let restriction = self.restriction(&base);
        if !self.drop_branches_that_cannot_hold(&mut merged, restriction)? {
            return Ok(Re::never());
        }
        let mut parts = Vec::new();
        if !s.apply.one_of.is_empty() {
            parts.push(self.compile_flat(s)?);
        }
        let mut compiled: Vec<Vec<Compiled>> = Vec::new();
        let before = self.budget.used();
        for alts in merged {
            let mut group = Vec::new();
            for GroupBranch { merged, refs, .. } in alts {
                let re = self.compile_with_refs(merged.clone(), refs.clone())?;
                if !re.is_never() {
                    group.push((re, merged, refs));
                }
            }
            if group.is_empty() {
                return Ok(Re::never());
            }
            compiled.push(group);
        }
        let spent = self.budget.used() - before;
        // Branches every group holds (the same automaton) are taken out of the
        // intersection: (C or R1) and (C or R2) and ... = C or (R1 and R2 and ...). The
        // complements of a `oneOf`'s overlapping branches repeat one branch in every
        // group ("the discriminating property present"), and every group's automaton
        // was derived at every byte of the object.
        let common: Vec<Re> = match compiled.split_first() {
            Some((first, others)) if !others.is_empty() => first
                .iter()
                .filter(|(re, ..)| others.iter().all(|g| g.iter().any(|(o, ..)| o == re)))
                .map(|(re, ..)| re.clone())
                .collect(),
            _ => Vec::new(),
        };
        if common.is_empty() {
            parts.push(self.intersected_groups(compiled, spent)?);
        } else {
            for group in &mut compiled {
                group.retain(|(re, ..)| !common.contains(re));
            }
            let rest = if compiled.iter().any(Vec::is_empty) {
                Re::never()
            } else {
                self.intersected_groups(compiled, spent)?
            };
            parts.push(Re::alt(common.into_iter().chain([rest])));
        }
        Ok(Re::and(parts))
    }

    /// Branches that cannot hold, and branches that no branch of another group can
    /// hold with, are dropped, until none is: an intersection the automaton would
    /// have to search through (objects of any depth) to prove empty, where `oneOf`'s
    /// complements often leave nothing (a branch requires a property that another's
    /// complement says is absent). A branch merged with the schema's keywords is
    /// checked alone (n checks), pairs are checked unmerged (remembered for the
    /// compile: checking merged pairs, n^2 per schema the groups meet, was 80% of a
    /// 32-branch `oneOf`'s budget, Github_hard---o17529, and dropped nothing).
    /// `false` where a group is left with none (the intersection is empty). Every
    /// branch was made with the same schema, whose `type` and `required` are
    /// `restriction`.
    fn drop_branches_that_cannot_hold(
        &mut self,
        merged: &mut [Vec<GroupBranch>],
        restriction: u32,
    ) -> Result<bool> {
        for group in merged.iter_mut() {
            let mut k = 0;
            while k < group.len() {
                let m = &group[k].merged;
                if self.disjoint(m, m, 0)? {
                    group.remove(k);
                } else {
                    k += 1;
                }
            }
            if group.is_empty() {
                return Ok(false);
            }
        }
        loop {
            let mut dropped = false;
            for i in 0..merged.len() {
                let mut k = 0;
                while k < merged[i].len() {
                    let mut holds = true;
                    for j in 0..merged.len() {
                        if j == i {
                            continue;
                        }
                        let mut some = false;
                        for l in 0..merged[j].len() {
                            if !self.branches_disjoint(&merged[i][k], &merged[j][l], restriction)? {
                                some = true;
                                break;
                            }
                        }
                        if !some {
                            holds = false;
                            break;
                        }
                    }
                    if holds {
                        k += 1;
                    } else {
                        merged[i].remove(k);
                        dropped = true;
                    }
                }
                if merged[i].is_empty() {
                    return Ok(false);
                }
            }
            if !dropped {
                break;
            }
        }
        Ok(true)
    }

    /// The intersection of groups of compiled branches (each group their union). Where
    /// every group has one branch left, without `anyOf` or `oneOf` of its own, their
    /// schemas are merged and compiled once instead: one automaton, not several derived
    /// side by side at every byte. The merge is tried within twice the work `spent`
    /// compiling the branches (and at least [`MIN_MERGE_TRIAL`]): merged properties
    /// whose schemas hold `anyOf`s distribute them, which can multiply past the budget
    /// (a GeoJSON `oneOf`'s complements), and then the intersection is kept.
    fn intersected_groups(&mut self, groups: Vec<Vec<Compiled>>, spent: u64) -> Result<Re> {
        let mergeable = |g: &Vec<Compiled>| {
            g.len() == 1 && g[0].1.apply.any_of.is_empty() && g[0].1.apply.one_of.is_empty()
        };
        if groups.len() > 1 && groups.iter().all(mergeable) {
            let mut m = groups[0][0].1.clone();
            let mut pushed = groups[0][0].2.clone();
            for g in &groups[1..] {
                m = self.merge(&m, &g[0].1)?;
                // The references each branch followed, each as many times as one branch
                // followed it: how often a reference is on the stack is what the
                // recursion limit counts, and the branches stand side by side, not
                // nested (each complement of a recursive `oneOf` follows the same one).
                for r in &g[0].2 {
                    let theirs = g[0].2.iter().filter(|x| *x == r).count();
                    if pushed.iter().filter(|x| *x == r).count() < theirs {
                        pushed.push(r.clone());
                    }
                }
            }
            let allowance = spent.saturating_mul(2).max(MIN_MERGE_TRIAL);
            if let Some(re) = self.within(allowance, |c| c.compile_with_refs(m, pushed))? {
                return Ok(re);
            }
        }
        Ok(Re::and(
            groups
                .into_iter()
                .map(|g| Re::alt(g.into_iter().map(|(re, ..)| re))),
        ))
    }

    /// Whether every value of `one`'s enum is excluded by a simple check of `other`, or
    /// fails a pattern of either (`"enum": [..kinds..]` beside `"pattern": "compound"`, a
    /// branch per kind, as state-machine schemas write it).
    fn an_enum_excluded(&mut self, one: &Sch, other: &Sch) -> Result<bool> {
        let Some(vals) = enum_values(one) else {
            return Ok(false);
        };
        for v in &vals {
            if !simply_excluded(v, other) && !self.fails_a_pattern(v, one, other)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether string `v` fails a `pattern` of `a` or `b` (`false` for other values, and
    /// where a pattern cannot be read).
    fn fails_a_pattern(&mut self, v: &Json, a: &Sch, b: &Sch) -> Result<bool> {
        let Json::String(text) = v else {
            return Ok(false);
        };
        for (p, at) in a.string.patterns.iter().chain(&b.string.patterns) {
            if self.string_matches(p, at, text)? == Some(false) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `text` matches pattern `p` (searched, as JSON Schema does), by the DFA
    /// `patternProperties` names use too; `None` where the pattern cannot be read (the
    /// schema's own compile of it reports why).
    fn string_matches(&mut self, p: &str, at: &str, text: &str) -> Result<Option<bool>> {
        self.budget.charge(STEPS_PER_NODE)?;
        let Ok(dfa) = self.key_pattern_dfa(p, at) else {
            return Ok(None);
        };
        let spelled = object::key_text(text);
        Ok(Some(
            dfa.is_match(&spelled.as_bytes()[1..spelled.len() - 1]),
        ))
    }

    /// `f` tried within `allowance` more work steps: `None` where it failed within them
    /// or cut a reference at the recursion depth (a cut branch matches nothing, where
    /// the caller has a result without it), its work still charged and its branch count
    /// taken back; an error where the whole budget ran out.
    fn within(
        &mut self,
        allowance: u64,
        f: impl FnOnce(&mut Self) -> Result<Re>,
    ) -> Result<Option<Re>> {
        let limit = self.budget.limit();
        let (branches, limit_hit) = (self.branches, self.branch_limit_hit);
        let cuts = self.depth_cuts;
        self.budget
            .set_limit(limit.min(self.budget.used().saturating_add(allowance)));
        let out = f(self);
        self.budget.set_limit(limit);
        match out {
            Ok(re) if self.depth_cuts == cuts => Ok(Some(re)),
            Err(e) if self.budget.used() > limit => Err(e),
            _ => {
                self.depth_cuts = cuts;
                self.branches = branches;
                self.branch_limit_hit = limit_hit;
                Ok(None)
            }
        }
    }

    /// The complement of `oneOf` branch `j` ([`OneOf::complements`]), flattened, with
    /// the references it followed; `None` where none is known (a branch that may hold
    /// with `j` then allows nothing).
    pub(super) fn one_of_complement(
        &mut self,
        one_of: &OneOf,
        j: usize,
    ) -> Result<Option<(Sch, Vec<String>)>> {
        // Taken and parsed once per compile: a `oneOf` met in many contexts (distributed
        // under other branches) asks for the same complements again, and parsing them was
        // a third of the slowest such compile (Github_hard---o36016).
        let key = (Rc::as_ptr(&one_of.complements) as usize, j);
        let node = match self.complement_nodes.get(&key) {
            Some((_, node)) => node.clone(),
            None => {
                let (json, _) = self.doc.one_of_complement(one_of, j);
                let at = pointer_push(&one_of.at, &j.to_string());
                let node = match json {
                    Json::Bool(false) => None,
                    json => self.doc.parse(&json, &at, &one_of.base).ok(),
                };
                // The Rc is kept with its nodes: its address names no other list meanwhile.
                self.complement_nodes
                    .insert(key, (one_of.complements.clone(), node.clone()));
                node
            }
        };
        let Some(node) = node else {
            return Ok(None);
        };
        let mark = self.ref_stack.len();
        let flat = self.flatten(&node);
        let pushed = self.ref_stack[mark..].to_vec();
        self.ref_stack.truncate(mark);
        Ok(flat?.map(|f| (f, pushed)))
    }

    /// Whether the schemas `pa` and `pb` of a property two schemas both require are
    /// disjoint ([`disjoint`](Self::disjoint) one level down), remembered by the
    /// nodes, the depth and, where a `$ref` is below, the references on the stack that
    /// can change what they flatten to (as [`compile_node`](Self::compile_node) does).
    fn props_disjoint(&mut self, pa: &NodeRef, pb: &NodeRef, depth: usize) -> Result<bool> {
        if matches!(**pa, Node::Any) || matches!(**pb, Node::Any) {
            return self.props_disjoint_uncached(pa, pb, depth);
        }
        let refs = if self.reaches_a_ref(pa) || self.reaches_a_ref(pb) {
            self.stack_that_matters()?
        } else {
            Vec::new()
        };
        let key = (
            Rc::as_ptr(pa) as usize,
            Rc::as_ptr(pb) as usize,
            depth,
            refs,
        );
        if let Some(&(.., known)) = self.disjoint_props.get(&key) {
            return Ok(known);
        }
        self.charge_entries(key.3.len() as u64)?;
        let res = self.props_disjoint_uncached(pa, pb, depth)?;
        self.disjoint_props
            .insert(key, (pa.clone(), pb.clone(), res));
        Ok(res)
    }

    fn props_disjoint_uncached(
        &mut self,
        pa: &NodeRef,
        pb: &NodeRef,
        depth: usize,
    ) -> Result<bool> {
        let mark = self.ref_stack.len();
        if Rc::ptr_eq(pa, pb) {
            // A schema checked against itself (can it hold at all?): flattened once.
            let res = match self.flatten(pa) {
                Ok(Some(x)) => self.disjoint(&x, &x, depth + 1),
                Ok(None) => Ok(true),
                Err(e) => Err(e),
            };
            self.ref_stack.truncate(mark);
            return res;
        }
        let fa = self.flatten(pa);
        let fb = self.flatten(pb);
        let res = match (fa, fb) {
            (Ok(Some(x)), Ok(Some(y))) => self.disjoint(&x, &y, depth + 1),
            (Ok(None), _) | (_, Ok(None)) => Ok(true),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        self.ref_stack.truncate(mark);
        res
    }

    pub(super) fn disjoint(&mut self, a: &Sch, b: &Sch, depth: usize) -> Result<bool> {
        self.budget.charge(STEPS_PER_NODE)?;
        self.charge_entries(entries(a) + entries(b))?;
        let ta = possible_types(a);
        let tb = possible_types(b);
        if ta & tb == 0 {
            return Ok(true);
        }
        if let (Some(va), Some(vb)) = (enum_values(a), enum_values(b)) {
            if va.iter().all(|x| vb.iter().all(|y| !x.equals(y))) {
                return Ok(true);
            }
        }
        if self.an_enum_excluded(a, b)? || self.an_enum_excluded(b, a)? {
            return Ok(true);
        }
        let common = ta & tb;
        let mut all = true;
        for t in [NULL, BOOLEAN, OBJECT, ARRAY, STRING, NUMBER | INTEGER] {
            if common & t == 0 {
                continue;
            }
            let d = match t {
                NULL | BOOLEAN => false,
                STRING => {
                    let lo = a.string.min_len.max(b.string.min_len);
                    let hi = match (a.string.max_len, b.string.max_len) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    };
                    hi.is_some_and(|h| h < lo)
                        || a.string.patterns.iter().any(|(pa, _)| {
                            b.string.patterns.iter().any(|(pb, _)| {
                                prefixes_clash(anchored_prefix(pa), anchored_prefix(pb))
                            })
                        })
                }
                ARRAY => {
                    let lo = a.array.min_items.max(b.array.min_items);
                    let hi = match (a.array.max_items, b.array.max_items) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    };
                    hi.is_some_and(|h| h < lo)
                }
                OBJECT => {
                    let lo = a.object.min_props.max(b.object.min_props);
                    let hi = match (a.object.max_props, b.object.max_props) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    };
                    let mut d = hi.is_some_and(|h| h < lo)
                        || a.object.required.iter().any(|k| forbids(b, k))
                        || b.object.required.iter().any(|k| forbids(a, k));
                    if !d && depth < 4 {
                        for k in a
                            .object
                            .required
                            .iter()
                            .filter(|k| b.object.required.contains(k))
                        {
                            let pa = prop_node(a, k);
                            let pb = prop_node(b, k);
                            if self.props_disjoint(&pa, &pb, depth)? {
                                d = true;
                                break;
                            }
                        }
                    }
                    d
                }
                _ => {
                    let lo = number::tighter_lower(a.number.lo.clone(), b.number.lo.clone());
                    let hi = number::tighter_upper(a.number.hi.clone(), b.number.hi.clone());
                    number::range_is_empty(lo.as_ref(), hi.as_ref())
                }
            };
            if !d {
                all = false;
                break;
            }
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::{anchored_prefix, prefixes_clash};

    /// Only what every match must start with: anchored, no alternation, a quantified
    /// last character left out.
    #[test]
    fn anchored_prefixes_are_what_every_match_starts_with() {
        assert_eq!(anchored_prefix("^mailto:"), "mailto:");
        assert_eq!(anchored_prefix("^ab?c"), "a");
        assert_eq!(anchored_prefix("^ab*"), "a");
        assert_eq!(anchored_prefix("^ab{0,2}"), "a");
        assert_eq!(anchored_prefix("^ab+"), "a");
        assert_eq!(anchored_prefix("^x0[a-z]"), "x0");
        assert_eq!(anchored_prefix("^a.b"), "a");
        assert_eq!(anchored_prefix("^a\\.b"), "a");
        assert_eq!(anchored_prefix("^x|y"), "");
        assert_eq!(anchored_prefix("^(x|y)"), "");
        assert_eq!(anchored_prefix("x"), "");
        assert_eq!(anchored_prefix("^(ab)"), "");
        assert!(prefixes_clash("x0", "y"));
        assert!(!prefixes_clash("x", "x0"));
        assert!(!prefixes_clash("", "y"));
    }
}
