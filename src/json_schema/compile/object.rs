//! Objects: declared members in schema order or any order, required ones, counts,
//! `patternProperties`, `additionalProperties`, `propertyNames`, and the canonical
//! spellings of keys that make those exact.

use super::*;

/// An object's declared and required members ([`Compiler::declared_members`]).
struct DeclaredMembers<'s> {
    /// Every declared or required name (the keys no other member may take).
    names: Vec<String>,
    /// `"key":value` and whether it is required, one per name `propertyNames` allows.
    members: Vec<(Re, bool)>,
    /// The name of each member, in `members`'s order.
    member_names: Vec<&'s str>,
    /// The keys (quoted strings) `propertyNames` allows.
    name_filter: Option<Re>,
}

/// Parts of an object body: declared members (`"key":value`, required or not) in
/// order, the pattern of any other member, the member count range, the separator.
pub(super) struct ObjectParts {
    members: Vec<(Re, bool)>,
    extra: Option<Re>,
    min: u64,
    max: Option<u64>,
    sep: Re,
}

impl ObjectParts {
    fn counting(&self) -> bool {
        self.min > 0 || self.max.is_some()
    }

    /// Counts above what matters are equivalent: clamp them.
    fn clamp(&self, c: u64) -> u64 {
        if !self.counting() {
            0
        } else if let Some(m) = self.max {
            c.min(m + 1)
        } else {
            c.min(self.min)
        }
    }

    /// Other members after `c` members; `emitted`: whether something was written.
    fn extras(&self, c: u64, emitted: bool) -> Re {
        if self.max.is_some_and(|m| c > m) {
            return Re::never();
        }
        let lo = self.min.saturating_sub(c);
        let hi = self.max.map(|m| m - c);
        let Some(extra) = &self.extra else {
            return if lo == 0 && emitted {
                Re::empty()
            } else {
                Re::never()
            };
        };
        let more = Re::concat([self.sep.clone(), extra.clone()]);
        if emitted {
            Re::repeat(more, clamp32(lo), hi.map(clamp32))
        } else {
            if hi == Some(0) {
                return Re::never();
            }
            Re::concat([
                extra.clone(),
                Re::repeat(
                    more,
                    clamp32(lo.saturating_sub(1)),
                    hi.map(|h| clamp32(h - 1)),
                ),
            ])
        }
    }

    /// Declared members in order, each optional one present or not, commas only between
    /// present ones. `F(i)` (nothing written yet) and `S(i, c)` (c written) refer to
    /// `S(i+1, ..)` and `F(i+1)`, so the regex grows quadratically with the number of
    /// optional members (linearly in the number of `S` nodes, shared), and counts are
    /// tracked only when min/maxProperties ask for it. Returns the non-empty body and
    /// whether the empty object is allowed.
    fn schema_order(&self) -> (Re, bool) {
        if !self.counting() {
            return self.schema_order_linear();
        }
        let n = self.members.len();
        let mut s_memo: FastMap<(usize, u64), Re> = FastMap::default();
        // S(i, c) for i from n down.
        fn s_of(p: &ObjectParts, i: usize, c: u64, memo: &mut FastMap<(usize, u64), Re>) -> Re {
            if let Some(r) = memo.get(&(i, c)) {
                return r.clone();
            }
            let r = if p.max.is_some_and(|m| c > m) {
                Re::never()
            } else if i == p.members.len() {
                p.extras(c, true)
            } else {
                let (m, required) = &p.members[i];
                let present = Re::concat([
                    p.sep.clone(),
                    m.clone(),
                    s_of(p, i + 1, p.clamp(c + 1), memo),
                ]);
                if *required {
                    present
                } else {
                    Re::alt([present, s_of(p, i + 1, c, memo)])
                }
            };
            memo.insert((i, c), r.clone());
            r
        }
        let mut f = self.extras(0, false);
        for i in (0..n).rev() {
            let (m, required) = &self.members[i];
            let present = Re::concat([m.clone(), s_of(self, i + 1, self.clamp(1), &mut s_memo)]);
            f = if *required {
                present
            } else {
                Re::alt([present, f])
            };
        }
        let empty_ok = self.min == 0 && self.members.iter().all(|(_, r)| !r);
        (f, empty_ok)
    }

    /// Without counts: `G(k)`, the non-empty sequences of members 1..k (each optional
    /// one present or not, every required one present), is `G(k-1)(,Pk)? | Pk` (or
    /// `G(k-1),Pk | Pk` for a required member, `Pk` alone only if nothing before is
    /// required), so the regex grows linearly with the number of members. Each step
    /// nests a group, and regex syntax limits nesting, so members go in blocks (at most
    /// 16 steps per object): within a block, the non-empty sequences are listed by their
    /// first member (`Pj(,Pj+1)?...`), quadratic in the block's size only. Other members
    /// follow, each after a comma.
    fn schema_order_linear(&self) -> (Re, bool) {
        let n = self.members.len();
        let block = n.div_ceil(16).max(1);
        let mut g = Re::never();
        let mut empty_ok = true;
        for chunk in self.members.chunks(block) {
            // `, Pi` for each member of the block, optional ones optional.
            let tails: Vec<Re> = chunk
                .iter()
                .map(|(m, required)| {
                    let after = Re::concat([self.sep.clone(), m.clone()]);
                    if *required {
                        after
                    } else {
                        Re::opt(after)
                    }
                })
                .collect();
            // Non-empty sequences of this block alone, by their first member.
            let mut firsts = Vec::new();
            for (j, (m, required)) in chunk.iter().enumerate() {
                firsts.push(Re::concat(
                    std::iter::once(m.clone()).chain(tails[j + 1..].iter().cloned()),
                ));
                if *required {
                    break;
                }
            }
            let extend = Re::concat(std::iter::once(g.clone()).chain(tails.iter().cloned()));
            let alone = if empty_ok {
                Re::alt(firsts)
            } else {
                Re::never()
            };
            g = Re::alt([extend, alone]);
            if chunk.iter().any(|(_, r)| *r) {
                empty_ok = false;
            }
        }
        let Some(extra) = &self.extra else {
            return (g, empty_ok);
        };
        let first = if empty_ok {
            Re::alt([g, extra.clone()])
        } else {
            g
        };
        let body = Re::concat([
            first,
            Re::star(Re::concat([self.sep.clone(), extra.clone()])),
        ]);
        (body, empty_ok)
    }

    /// Declared members in every interleaving of `groups` (indices into `members`, each
    /// group in its own order), other members anywhere among them or, with
    /// `extra_last`, after them: unfolded by the automaton as a text goes (only the sets
    /// of members a text writes become states). One group per member is any order. The
    /// body written holds at least one member; the empty object is told apart by the
    /// caller.
    fn interleaved(&self, groups: Vec<Vec<usize>>, extra_last: bool) -> (Re, bool) {
        let groups: Vec<Vec<(Re, bool)>> = groups
            .into_iter()
            .map(|g| g.into_iter().map(|i| self.members[i].clone()).collect())
            .collect();
        let empty_ok = self.min == 0 && self.members.iter().all(|(_, r)| !r);
        let body = Re::interleave(Interleave {
            groups,
            extra: self.extra.clone(),
            extra_last,
            sep: self.sep.clone(),
            min: clamp32(self.min.max(1)),
            max: self.max.map(clamp32),
        });
        (body, empty_ok)
    }

    /// Declared members in any order (every order listed), then other members: the
    /// regex text form of [`interleaved`](Self::interleaved), at most
    /// [`MAX_ANY_ORDER_PROPERTIES`] members.
    fn any_order(&self) -> (Re, bool) {
        let n = self.members.len();
        let required: u32 = self
            .members
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| *r)
            .fold(0, |a, (i, _)| a | 1 << i);
        let mut memo: FastMap<(u32, bool), Re> = FastMap::default();
        fn g(
            p: &ObjectParts,
            n: usize,
            required: u32,
            mask: u32,
            emitted: bool,
            memo: &mut FastMap<(u32, bool), Re>,
        ) -> Re {
            if let Some(r) = memo.get(&(mask, emitted)) {
                return r.clone();
            }
            let c = mask.count_ones() as u64;
            let mut alts = Vec::new();
            if mask & required == required {
                alts.push(p.extras(c, emitted));
            }
            if p.max.is_none_or(|m| c < m) {
                for i in 0..n {
                    if mask & (1 << i) != 0 {
                        continue;
                    }
                    let head = if emitted { p.sep.clone() } else { Re::empty() };
                    alts.push(Re::concat([
                        head,
                        p.members[i].0.clone(),
                        g(p, n, required, mask | 1 << i, true, memo),
                    ]));
                }
            }
            let r = Re::alt(alts);
            memo.insert((mask, emitted), r.clone());
            r
        }
        let body = g(self, n, required, 0, false, &mut memo);
        (body, self.min == 0 && required == 0)
    }
}

/// The groups of members (indices into `names`, the members' names in schema order) whose
/// orders the places in `orders` fix: places sharing a name join one group, in schema
/// order; names of no place (listed only in `required`) form a last group. Fewer than two
/// groups: schema order is the only one.
pub(super) fn place_groups(orders: &[Rc<[Rc<str>]>], names: &[&str]) -> Vec<Vec<usize>> {
    if orders.len() < 2 {
        return Vec::new();
    }
    // Union-find over places: a name seen in an earlier place joins the two.
    let mut parent: Vec<usize> = (0..orders.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut place_of: FastMap<&str, usize> = FastMap::default();
    for (p, order) in orders.iter().enumerate() {
        for name in order.iter() {
            if let Some(&q) = place_of.get(&**name) {
                let (a, b) = (root(&mut parent, p), root(&mut parent, q));
                parent[a] = b;
            } else {
                place_of.insert(name, p);
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of_root: FastMap<usize, usize> = FastMap::default();
    let mut unplaced = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match place_of.get(name) {
            Some(&p) => {
                let r = root(&mut parent, p);
                let g = *group_of_root.entry(r).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(i);
            }
            None => unplaced.push(i),
        }
    }
    if !unplaced.is_empty() {
        groups.push(unplaced);
    }
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
}

/// One character of a canonically spelled key in the keys `patternProperties` splits:
/// unescaped except `"` and `\` (keys with control characters or other escapes are
/// not produced there, so that every name has one spelling).
pub(super) const CANONICAL_KEY_CHAR: &str = r#"(?:[^"\\\x00-\x1F]|\\["\\])"#;

/// One character of a canonically spelled string value where a pattern is negated: as
/// `JSON.stringify` and Python's `json.dumps(..., ensure_ascii=False)` write it, unescaped
/// but for `\"`, `\\`, the short escapes of control characters (`\n`, `\t`...) and
/// `\u00xx` (lower-case hex) for the other control characters. One spelling per
/// character, so the complement of a pattern's strings is exact among these; a text that
/// writes `\u0041` for `A` there is refused (a valid string, in a spelling models do
/// not write). Keys keep [`CANONICAL_KEY_CHAR`].
pub(super) const CANONICAL_STRING_CHAR: &str =
    r#"(?:[^"\\\x00-\x1F]|\\["\\bfnrt]|\\u00(?:0[0-7]|0b|0e|0f|1[0-9a-f]))"#;

/// A key as JSON text, quotes included.
pub(super) fn key_text(k: &str) -> String {
    let mut s = String::new();
    write_json_string(k, &mut s);
    s
}

/// Every order of `0..n`.
pub(super) fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// A closed object (`additionalProperties: false`, no `patternProperties`) under
/// complements of other objects' `additionalProperties: false` ("some key not among
/// these names"), said without them where each is simple: one naming none of the
/// object's properties holds exactly when the object has a member (`minProperties: 1`),
/// one naming all of them never (no key may be written outside them). `None` where a
/// list names some of the properties, or the object is open: the complements are then
/// intersected as they are. A `oneOf` of closed objects told apart by their one key
/// (`{"and": ..}`, `{"or": ..}`, ...) gives each branch every other's complement, and
/// intersected they made the slowest masks of the corpus (`Github_hard---o36016`).
fn closed_some_key_not_in(s: &Sch) -> Option<Sch> {
    let closed = s.object.patterns.is_empty()
        && s.object
            .additional
            .as_ref()
            .is_some_and(|a| matches!(**a, Node::Nothing));
    if s.object.some_key_not_in.is_empty() || !closed {
        return None;
    }
    let mut plain = s.clone();
    plain.object.some_key_not_in.clear();
    plain.object.min_props = plain.object.min_props.max(1);
    for list in &s.object.some_key_not_in {
        let named = |k: &str| list.iter().any(|x| x == k);
        let outside = s.object.props.iter().filter(|(k, _)| !named(k)).count();
        if outside == 0 {
            plain.object.max_props = Some(0);
        } else if outside < s.object.props.len() {
            return None;
        }
    }
    Some(plain)
}

impl Compiler<'_> {
    #[inline(never)]
    pub(super) fn object(&mut self, s: &Sch) -> Result<Re> {
        if let Some(plain) = closed_some_key_not_in(s) {
            return self.object(&plain);
        }
        let object = self.object_members(s)?;
        if s.object.some_key_not_in.is_empty() || object.is_never() {
            return Ok(object);
        }
        // Complements of `additionalProperties: false` (`oneOf`): objects that also
        // have, somewhere, a canonically spelled key not among the names. Values nest at
        // most 2 levels here (a part of the complement, so still sound): at the default
        // 32, the intersection's states at a key start (a free-form value of every
        // member in step with the object's own) ran two corpus schemas past the
        // determinization limit at a mask.
        self.needs_automaton("oneOf", &s.ptr);
        let quote = || Re::lit("\"");
        let any_key = Re::concat([quote(), Re::star(Re::raw(JSON_CHAR)), quote()]);
        let value = self.any(self.config.get_any_value_depth().min(2));
        let any_member = self.member(any_key, value.clone());
        let sep = self.sep();
        let before = Re::star(Re::concat([any_member.clone(), sep.clone()]));
        let after = Re::star(Re::concat([sep, any_member]));
        let canonical = Re::star(Re::raw(CANONICAL_KEY_CHAR));
        let mut parts = vec![object];
        for names in &s.object.some_key_not_in {
            let not_in = self.key_body_not_in(names)?;
            let key = Re::concat([quote(), Re::and([not_in, canonical.clone()]), quote()]);
            let member = self.member(key, value.clone());
            let body = Re::concat([before.clone(), member, after.clone()]);
            parts.push(self.container("{", body, false, "}"));
        }
        Ok(Re::and(parts))
    }

    /// Key contents other than `names` ([`key_body_not_in`]), made once per set of
    /// names in a compile and charged by their count.
    pub(super) fn key_body_not_in(&mut self, names: &[String]) -> Result<Re> {
        let mut sorted = names.to_vec();
        crate::sort::sort(&mut sorted);
        sorted.dedup();
        if let Some(re) = self.key_cache.get(&sorted) {
            return Ok(re.clone());
        }
        if let Some(long) = sorted.iter().find(|n| n.len() > key_names::MAX_NAME_BYTES) {
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                format!(
                    "a property name of {} bytes beside undeclared properties: at most {} (the keys that differ from it are a trie as deep as the name)",
                    long.len(),
                    key_names::MAX_NAME_BYTES
                ),
            ));
        }
        // A tree had about ten entries per trie node, which the budget counted; the
        // automaton's node lowers into as many expressions.
        let bytes: usize = sorted.iter().map(String::len).sum();
        self.charge_entries(names.len() as u64 + 8 * bytes as u64)?;
        let re = if self.for_automaton {
            Re::keys_not_in(sorted.clone().into())
        } else {
            key_names::key_body_not_in(&sorted)
        };
        self.key_cache.insert(sorted, re.clone());
        Ok(re)
    }

    pub(super) fn object_members(&mut self, s: &Sch) -> Result<Re> {
        let (min, max) = (s.object.min_props, s.object.max_props);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
        let Some(declared) = self.declared_members(s)? else {
            return Ok(Re::never());
        };
        let extra = self.undeclared_member(s, &declared.names, declared.name_filter)?;
        let parts = ObjectParts {
            members: declared.members,
            extra,
            min,
            max,
            sep: self.sep(),
        };
        let (body, empty_ok) = self.arranged(s, &parts, &declared.member_names)?;
        if body.is_never() {
            return Ok(if empty_ok {
                Re::concat([Re::lit("{"), self.ws.clone(), Re::lit("}")])
            } else {
                Re::never()
            });
        }
        Ok(self.container("{", body, empty_ok, "}"))
    }

    /// The declared and required members (`"key":value`, required or not), those that
    /// `propertyNames` refuses left out; `None` where a required one can hold nothing.
    fn declared_members<'s>(&mut self, s: &'s Sch) -> Result<Option<DeclaredMembers<'s>>> {
        let mut names: Vec<String> = Vec::new();
        let mut members: Vec<(Re, bool)> = Vec::new();
        // The name of each member, in `members`'s order.
        let mut member_names: Vec<&str> = Vec::new();
        // `propertyNames`: the keys (quoted strings) its schema allows. Declared and
        // required names are checked here; undeclared keys are intersected with it.
        let name_filter = match &s.object.names {
            Some(n) => Some(self.compactly(|c| c.compile_node(n))?),
            None => None,
        };
        let mut name_checker = match &name_filter {
            Some(f) => {
                self.needs_automaton("propertyNames", &format!("{}/propertyNames", s.ptr));
                Some(self.value_checker(f)?)
            }
            None => None,
        };
        let mut name_allowed = |c: &mut Self, k: &str| -> Result<bool> {
            match &mut name_checker {
                None => Ok(true),
                Some(None) => Ok(false),
                Some(Some(dfa)) => c.checks(dfa, key_text(k).as_bytes()),
            }
        };
        for (k, node) in s.object.props.iter() {
            names.push(k.to_string());
            let required = s.object.required.contains(k);
            if !name_allowed(self, k)? {
                if required {
                    return Ok(None);
                }
                continue;
            }
            let node = match self.pattern_rule(s, k)? {
                Some(p) => both(node, &p),
                None => node.clone(),
            };
            let v = self.compile_node(&node)?;
            if v.is_never() {
                if required {
                    return Ok(None);
                }
                continue;
            }
            members.push((self.member(Re::lit(key_text(k)), v), required));
            member_names.push(k);
        }
        for r in &s.object.required {
            if names.iter().any(|n| n == &**r) {
                continue;
            }
            names.push(r.to_string());
            if !name_allowed(self, r)? {
                return Ok(None);
            }
            let v = match self.pattern_rule(s, r)? {
                Some(node) => self.compile_node(&node)?,
                None => match &s.object.additional {
                    None => self.any(self.config.get_any_value_depth()),
                    Some(n) => self.compile_node(n)?,
                },
            };
            if v.is_never() {
                return Ok(None);
            }
            members.push((self.member(Re::lit(key_text(r)), v), true));
            member_names.push(r);
        }
        Ok(Some(DeclaredMembers {
            names,
            members,
            member_names,
            name_filter,
        }))
    }

    /// The member of any other key (none of `names`, allowed by `name_filter`):
    /// `additionalProperties` and `patternProperties`; `None` where there is none.
    fn undeclared_member(
        &mut self,
        s: &Sch,
        names: &[String],
        name_filter: Option<Re>,
    ) -> Result<Option<Re>> {
        let extra_value = match &s.object.additional {
            // Undeclared properties next to declared ones only if asked for.
            None if !names.is_empty() && !self.config.allow_additional_properties => Re::never(),
            None => self.any(self.config.get_any_value_depth()),
            Some(n) => self.compile_node(n)?,
        };
        let quote = || Re::lit("\"");
        let body = if names.is_empty() {
            Re::star(Re::raw(JSON_CHAR))
        } else {
            self.key_body_not_in(names)?
        };
        let undeclared = Re::concat([quote(), body.clone(), quote()]);
        // A key of any name but the declared ones: every string prefix can still
        // become one, which rows on request use at a key's start (`string_bodies`).
        if name_filter.is_none() && s.object.patterns.is_empty() && !extra_value.is_never() {
            self.string_bodies.insert(body.id(), body);
        }
        let undeclared = match name_filter {
            Some(f) => Re::and([undeclared, f]),
            None => undeclared,
        };
        if s.object.patterns.is_empty() {
            Ok((!extra_value.is_never()).then(|| self.member(undeclared, extra_value)))
        } else {
            self.pattern_members(s, undeclared, extra_value)
        }
    }

    /// The object's body in the configured property order, and whether `{}` is allowed.
    fn arranged(&self, s: &Sch, parts: &ObjectParts, member_names: &[&str]) -> Result<(Re, bool)> {
        let any_order = match self.config.property_order {
            PropertyOrder::Schema => false,
            PropertyOrder::Any => true,
            PropertyOrder::Auto => {
                self.for_automaton
                    && self.config.lazy_index
                    && parts.members.len() <= AUTO_ANY_ORDER_MAX_PROPERTIES
            }
        };
        // Past the cap, the one merged order (as in regex text).
        let places =
            if !any_order && self.for_automaton && member_names.len() <= MAX_INTERLEAVED_MEMBERS {
                place_groups(&s.object.orders, member_names)
            } else {
                Vec::new()
            };
        let too_many = |why: String| {
            Error::new(
                ErrorKind::UnsupportedSchema,
                format!(
                    "an object with {} declared properties at {} under PropertyOrder::Any{why}",
                    parts.members.len(),
                    show(&s.ptr),
                ),
            )
        };
        Ok(if any_order && self.for_automaton {
            if parts.members.len() > MAX_INTERLEAVED_MEMBERS {
                return Err(too_many(format!(
                    " (at most {MAX_INTERLEAVED_MEMBERS}: each state of the object weighs every property not yet written)"
                )));
            }
            let each = (0..parts.members.len()).map(|i| vec![i]).collect();
            parts.interleaved(each, false)
        } else if any_order {
            if parts.members.len() > MAX_ANY_ORDER_PROPERTIES {
                return Err(too_many(format!(
                    " in a regex (at most {MAX_ANY_ORDER_PROPERTIES}: regex text lists every order); Index::from_json_schema (JS: Index.fromJsonSchema) takes up to 1,024"
                )));
            }
            parts.any_order()
        } else if self.loose_objects && parts.extra.is_some() && !parts.members.is_empty() {
            let places = if places.len() > 1 {
                places
            } else {
                vec![(0..parts.members.len()).collect()]
            };
            parts.interleaved(places, false)
        } else if places.len() > 1 {
            parts.interleaved(places, true)
        } else {
            parts.schema_order()
        })
    }

    /// Notes that the keyword at `at` needed an automaton (the first one is reported).
    pub(super) fn needs_automaton(&mut self, keyword: &'static str, at: &str) {
        if self.automaton_only.is_none() {
            self.automaton_only = Some((keyword, parent(at).to_string()));
        }
    }

    /// The schema `patternProperties` gives the name `k` (every matching pattern's, as
    /// one), if any pattern matches it.
    pub(super) fn pattern_rule(&mut self, s: &Sch, k: &str) -> Result<Option<NodeRef>> {
        let mut rule: Option<NodeRef> = None;
        for (p, node, at) in &s.object.patterns {
            let dfa = self.key_pattern_dfa(p, at)?;
            let spelled = key_text(k);
            if dfa.is_match(&spelled.as_bytes()[1..spelled.len() - 1]) {
                rule = Some(match rule {
                    None => node.clone(),
                    Some(r) => both(&r, node),
                });
            }
        }
        Ok(rule)
    }

    /// Pattern `p`'s DFA over canonically spelled string content (a name, or a string
    /// value), made once per pattern and compile.
    pub(super) fn key_pattern_dfa(&mut self, p: &str, at: &str) -> Result<Rc<Dfa>> {
        if let Some(dfa) = self.key_pattern_dfas.get(p) {
            return Ok(dfa.clone());
        }
        let body = self.pattern_body(p, at)?;
        let dfa = Rc::new(
            Dfa::new(&body.render())
                .map_err(|e| unsupported("patternProperties", parent(at), e.message()))?,
        );
        self.key_pattern_dfas.insert(p.to_string(), dfa.clone());
        Ok(dfa)
    }

    /// The strings a key pattern matches, as JSON string content.
    pub(super) fn pattern_body(&mut self, p: &str, at: &str) -> Result<Re> {
        let pat = pattern::parse(p)
            .map_err(|e| unsupported("patternProperties", parent(at), &format!("{p:?}: {e}")))?;
        self.constrained(pat, 0, None, "patternProperties", at)
    }

    /// The undeclared members of an object with `patternProperties`: one alternative
    /// per set of patterns a name can match (its value must satisfy all of them), and
    /// the names matching none take `extra_value`. Names are split by intersections and
    /// complements of the key languages, within canonically spelled keys, so that each
    /// name has exactly one rule (an automaton: regex text cannot say this).
    ///
    /// Of the 2^p sets of p patterns, only those whose patterns overlap pairwise can
    /// match one name (most key patterns are disjoint: `^x-`, `^[0-9]+$`), so only
    /// those are written, and a pattern disjoint from one in the set needs no
    /// complement beside it.
    pub(super) fn pattern_members(
        &mut self,
        s: &Sch,
        undeclared: Re,
        extra_value: Re,
    ) -> Result<Option<Re>> {
        const MAX_PATTERNS: usize = 24;
        const MAX_CELLS: usize = 64;
        let patterns = &s.object.patterns;
        if patterns.len() > MAX_PATTERNS {
            return Err(unsupported(
                "patternProperties",
                parent(&patterns[0].2),
                &format!("more than {MAX_PATTERNS} patterns on one object"),
            ));
        }
        self.needs_automaton("patternProperties", parent(&patterns[0].2));
        let quote = || Re::lit("\"");
        let mut keys = Vec::new();
        for (p, _, at) in patterns {
            keys.push(Re::concat([quote(), self.pattern_body(p, at)?, quote()]));
        }
        let n = keys.len();
        // Which pairs of key languages meet.
        let mut meets = vec![vec![true; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let both_keys = Re::and([keys[i].clone(), keys[j].clone()]);
                let m = self.value_checker(&both_keys)?.is_some();
                meets[i][j] = m;
                meets[j][i] = m;
            }
        }
        // The sets of pairwise meeting patterns, by extending each with later ones.
        let mut cells: Vec<Vec<usize>> = vec![Vec::new()];
        let mut k = 0;
        while k < cells.len() {
            let last = cells[k].last().map_or(0, |&l| l + 1);
            let meeting: Vec<usize> = (last..n)
                .filter(|&j| cells[k].iter().all(|&i| meets[i][j]))
                .collect();
            for j in meeting {
                let mut c = cells[k].clone();
                c.push(j);
                cells.push(c);
                if cells.len() > MAX_CELLS {
                    return Err(unsupported(
                        "patternProperties",
                        parent(&patterns[0].2),
                        &format!(
                            "more than {MAX_CELLS} sets of overlapping patterns on one object"
                        ),
                    ));
                }
            }
            k += 1;
        }
        // Keys with one spelling only: complements taken within them are exact.
        let canonical = Re::concat([quote(), Re::star(Re::raw(CANONICAL_KEY_CHAR)), quote()]);
        let mut alts = Vec::new();
        for cell in cells {
            let mut key_parts = vec![undeclared.clone(), canonical.clone()];
            let mut rule: Option<NodeRef> = None;
            for (j, key) in keys.iter().enumerate() {
                if cell.contains(&j) {
                    key_parts.push(key.clone());
                    rule = Some(match rule {
                        None => patterns[j].1.clone(),
                        Some(r) => both(&r, &patterns[j].1),
                    });
                } else if cell.iter().all(|&i| meets[i][j]) {
                    key_parts.push(Re::not(key.clone()));
                }
            }
            let value = match rule {
                Some(node) => self.compile_node(&node)?,
                None => extra_value.clone(),
            };
            if value.is_never() {
                continue;
            }
            alts.push(self.member(Re::and(key_parts), value));
        }
        Ok((!alts.is_empty()).then(|| Re::alt(alts)))
    }
}
