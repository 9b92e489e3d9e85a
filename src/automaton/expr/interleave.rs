//! Interleavings of ordered groups: a JSON object's members in any order, unfolded lazily.
//!
//! An object whose properties may come in any order has a language that, written out,
//! lists every set of properties written so far: 2^n states for n properties (the regex
//! compiler's listing stops at 6). An [`Node::Interleave`] node holds instead only where
//! each group stands and how many members were written; its derivative is that of its
//! one-step unfolding (the members that may come next, each followed by the node one step
//! on), built when a derivative asks for it. So only the sets of members a text actually
//! writes become states.
//!
//! A group is a sequence of members in a fixed order, each optional or required: a member
//! may be written once the group's earlier members are written or skipped, and a required
//! one may not be skipped. One group per member is "any order"; several groups of several
//! members are the interleavings that keep each group's own order. An `extra` member (any
//! undeclared property) may come any number of times, anywhere, or (`extra_last`) only
//! once the groups are done: the members still unwritten then are skipped. Members after the first
//! are preceded by `sep`; `min..=max` members in all (extras included).

use super::{ExprId, ExprSet, Info, Node};

/// Leading bytes of members (an object's keys) factored in an unfolding: enough to tell
/// most keys apart, few enough to bound the nesting it adds.
const KEY_FACTOR_DEPTH: u32 = 24;

/// A group's members in their order, each with whether it is required.
type Group = Box<[(ExprId, bool)]>;

/// What every [`Node::Interleave`] of one object shares.
#[derive(Clone, Debug)]
pub(crate) struct InterleaveSpec {
    /// The groups, each a sequence of (member, required).
    groups: Box<[Group]>,
    /// A member that may come any number of times (undeclared properties), if any.
    extra: Option<ExprId>,
    /// Extras only after the groups' members.
    extra_last: bool,
    /// Between two members.
    sep: ExprId,
    min: u32,
    /// Most members (`u32::MAX`: no limit).
    max: u32,
    /// Counts from here up are equivalent (at least 1: "something was written").
    clamp: u32,
    /// Derivative recursion depth of an unfolding.
    depth: u32,
    /// Some part holds a template's call (`call.rs`).
    holes: bool,
    /// Bits per group in a node's positions (a power of two, so that none straddles
    /// two words): one for groups of one member, so an object of 400 properties in any
    /// order has 52-byte states, not 1,600.
    width: u32,
}

impl InterleaveSpec {
    /// Group `g`'s field in packed positions: (word, shift, mask).
    fn field(&self, g: usize) -> (usize, u32, u32) {
        let bit = g * self.width as usize;
        let mask = u32::MAX >> (32 - self.width);
        (bit / 32, (bit % 32) as u32, mask)
    }

    /// Where group `g` stands in the packed positions `at`.
    fn pos(&self, at: &[u32], g: usize) -> usize {
        let (word, shift, mask) = self.field(g);
        ((at[word] >> shift) & mask) as usize
    }

    fn set_pos(&self, at: &mut [u32], g: usize, v: u32) {
        let (word, shift, mask) = self.field(g);
        at[word] = (at[word] & !(mask << shift)) | (v << shift);
    }

    /// Every member, the extra one and the separator: what the nodes may reach.
    pub(super) fn parts(&self) -> impl Iterator<Item = ExprId> + '_ {
        self.groups
            .iter()
            .flat_map(|g| g.iter().map(|&(m, _)| m))
            .chain(self.extra)
            .chain([self.sep])
    }

    /// This spec with every part renamed by `f` (the arena compacted, `compact.rs`).
    pub(super) fn renamed(&self, f: impl Fn(ExprId) -> ExprId) -> InterleaveSpec {
        let mut spec = self.clone();
        spec.groups = (self.groups.iter())
            .map(|g| g.iter().map(|&(m, req)| (f(m), req)).collect())
            .collect();
        spec.extra = self.extra.map(&f);
        spec.sep = f(self.sep);
        spec
    }

    /// The members not written yet at `at`, with whether each is required.
    fn remaining<'s>(&'s self, at: &'s [u32]) -> impl Iterator<Item = (ExprId, bool)> + 's {
        (self.groups.iter().enumerate())
            .flat_map(move |(g, members)| members[self.pos(at, g)..].iter().copied())
    }

    /// The members that may be written next at `at`, as (group, index, member): each
    /// group's members from where it stands up to its first required one (which may
    /// not be skipped).
    fn next_members<'s>(
        &'s self,
        at: &'s [u32],
    ) -> impl Iterator<Item = (usize, usize, ExprId)> + 's {
        (self.groups.iter().enumerate()).flat_map(move |(g, members)| {
            let from = self.pos(at, g);
            let upto = members[from..]
                .iter()
                .position(|&(_, req)| req)
                .map_or(members.len(), |i| from + i + 1);
            (from..upto).map(move |j| (g, j, members[j].0))
        })
    }

    /// Positions with every group at its start.
    fn start(&self) -> Box<[u32]> {
        vec![0; (self.groups.len() * self.width as usize).div_ceil(32)].into()
    }

    /// Positions with every group done.
    fn ends(&self) -> Box<[u32]> {
        let mut at = self.start();
        for (g, members) in self.groups.iter().enumerate() {
            self.set_pos(&mut at, g, members.len() as u32);
        }
        at
    }

    fn done(&self, at: &[u32]) -> bool {
        self.groups
            .iter()
            .enumerate()
            .all(|(g, m)| self.pos(at, g) == m.len())
    }
}

/// See [`ExprSet::interleave_needs`].
pub(crate) struct InterleaveNeeds {
    pub(crate) required: Vec<ExprId>,
    pub(crate) optional: Vec<ExprId>,
    pub(crate) extra: Option<ExprId>,
    pub(crate) at_least: u32,
    pub(crate) at_most: u32,
    /// Between two members.
    pub(crate) sep: ExprId,
    /// Something was written: the next member comes after a `sep`.
    pub(crate) after_member: bool,
}

/// Writes down an interleaving's members.
#[derive(Clone, Debug)]
pub struct Interleaving {
    /// The groups, each a sequence of (member, required).
    pub groups: Vec<Vec<(ExprId, bool)>>,
    /// A member that may come any number of times anywhere, if any.
    pub extra: Option<ExprId>,
    /// Extras only once the groups are done (their unwritten members skipped).
    pub extra_last: bool,
    /// Written between two members.
    pub sep: ExprId,
    /// Fewest members in all.
    pub min: u32,
    /// Most members in all (`None`: no limit).
    pub max: Option<u32>,
}

impl ExprSet {
    /// Every sequence of the members of `spec`'s groups (separated by its `sep`) that
    /// keeps each group's order, writes every required member, and holds `min..=max`
    /// members in all. A group's members are taken to be distinct from every other
    /// member's strings (an object's keys): the language is then unambiguous and its
    /// states are where each group stands.
    pub fn interleave(&mut self, spec: Interleaving) -> ExprId {
        let max = spec.max.unwrap_or(u32::MAX);
        if max < spec.min {
            return ExprId::NOTHING;
        }
        let mut groups: Vec<Group> = Vec::new();
        for g in spec.groups {
            // A member that can never be written: a required one empties the language,
            // an optional one drops out.
            if g.iter().any(|&(m, req)| req && m == ExprId::NOTHING) {
                return ExprId::NOTHING;
            }
            let g: Group = g
                .into_iter()
                .filter(|&(m, _)| m != ExprId::NOTHING)
                .collect();
            if !g.is_empty() {
                groups.push(g);
            }
        }
        let extra = spec.extra.filter(|&x| x != ExprId::NOTHING);
        let clamp = if max != u32::MAX {
            max.saturating_add(1)
        } else {
            spec.min
        }
        .max(1);
        let spec_id = self.interleaves.len() as u32;
        let longest = groups.iter().map(|g| g.len()).max().unwrap_or(0) as u32;
        let width = (32 - longest.leading_zeros()).max(1).next_power_of_two();
        let mut spec = InterleaveSpec {
            groups: groups.into(),
            extra,
            extra_last: spec.extra_last,
            sep: spec.sep,
            min: spec.min,
            max,
            clamp,
            depth: 0,
            holes: false,
            width,
        };
        // An unfolding nests a union and a concatenation per factored byte.
        let deepest = spec
            .parts()
            .map(|m| u32::from(self.info[m.index()].depth))
            .max();
        spec.depth = 4 + 2 * KEY_FACTOR_DEPTH + deepest.unwrap_or(0);
        let holes = spec.parts().any(|m| self.info[m.index()].holes);
        spec.holes = holes;
        let start = spec.start();
        self.interleaves.push(std::sync::Arc::new(spec));
        self.interleave_at(spec_id, 0, start)
    }

    /// The interleaving of `spec` with every part mapped by `f` (a template's node
    /// instantiated, `call.rs`), at the same place: `written` and `at`. Members that
    /// become empty stay in their groups (so that `at` still means the same), a required
    /// one emptying the whole.
    pub(super) fn interleave_mapped(
        &mut self,
        spec_id: u32,
        written: u32,
        at: Box<[u32]>,
        mut f: impl FnMut(&mut Self, ExprId) -> ExprId,
    ) -> ExprId {
        let old = std::sync::Arc::clone(&self.interleaves[spec_id as usize]);
        let mut spec = (*old).clone();
        let mut groups = Vec::with_capacity(old.groups.len());
        for (g, members) in old.groups.iter().enumerate() {
            let from = old.pos(&at, g);
            let mut mapped = Vec::with_capacity(members.len());
            for (j, &(m, req)) in members.iter().enumerate() {
                // Members already written are not looked at again.
                let m = if j < from { m } else { f(self, m) };
                if req && j >= from && m == ExprId::NOTHING {
                    return ExprId::NOTHING;
                }
                mapped.push((m, req));
            }
            groups.push(mapped.into_boxed_slice());
        }
        spec.groups = groups.into();
        spec.extra = old
            .extra
            .map(|x| f(self, x))
            .filter(|&x| x != ExprId::NOTHING);
        spec.sep = f(self, old.sep);
        let deepest = spec
            .parts()
            .map(|m| u32::from(self.info[m.index()].depth))
            .max();
        spec.depth = 4 + 2 * KEY_FACTOR_DEPTH + deepest.unwrap_or(0);
        let holes = spec.parts().any(|m| self.info[m.index()].holes);
        spec.holes = holes;
        let id = self.interleaves.len() as u32;
        self.interleaves.push(std::sync::Arc::new(spec));
        self.interleave_at(id, written, at)
    }

    /// The node of `spec` with `written` members written and each group at `at`.
    fn interleave_at(&mut self, spec: u32, written: u32, at: Box<[u32]>) -> ExprId {
        let s = &self.interleaves[spec as usize];
        if s.extra.is_none() && s.done(&at) {
            // Nothing more can be written.
            return if written >= s.min {
                ExprId::EMPTY
            } else {
                ExprId::NOTHING
            };
        }
        self.intern(Node::Interleave(spec, written, at))
    }

    /// How many required members are not written yet.
    fn still_required(&self, spec: &InterleaveSpec, at: &[u32]) -> u32 {
        spec.remaining(at).filter(|&(_, req)| req).count() as u32
    }

    /// Whether the node of `spec` at `written`, `at` is known non-empty when its parts'
    /// being so is `positive`. Extras make up the count to `min` if there are any:
    /// non-empty for sure when every required member can be written and that fits
    /// under `max`. Otherwise the lazy DFA's search decides.
    fn positive_by(
        &self,
        s: &InterleaveSpec,
        written: u32,
        at: &[u32],
        mut positive: impl FnMut(ExprId) -> bool,
    ) -> bool {
        let mut required = 0u32;
        for (m, _) in s.remaining(at).filter(|&(_, req)| req) {
            required += 1;
            if !positive(m) {
                return false;
            }
        }
        let at_least = written.saturating_add(required);
        let extras_ok = at_least >= s.min || s.extra.is_some_and(&mut positive);
        extras_ok && at_least.max(s.min) <= s.max
    }

    /// Whether the interleave node `e` is known non-empty when its parts' being so is
    /// `positive` (`interleave_info`'s rule, for a template's node at some depth).
    pub(super) fn interleave_positive_with(
        &self,
        e: ExprId,
        mut positive: impl FnMut(&Self, ExprId) -> bool,
    ) -> bool {
        let Node::Interleave(spec_id, written, ref at) = *self.node(e) else {
            unreachable!("an interleave node")
        };
        let s = &self.interleaves[spec_id as usize];
        self.positive_by(s, written, at, |m| positive(self, m))
    }

    pub(super) fn interleave_info(&self, spec: u32, written: u32, at: &[u32]) -> Info {
        let s = &self.interleaves[spec as usize];
        Info {
            nullable: self.still_required(s, at) == 0 && written >= s.min,
            positive: self.positive_by(s, written, at, |m| self.info[m.index()].positive),
            depth: s.depth.try_into().unwrap_or(u16::MAX),
            // Counts inside members are left as they are (saturate.rs does not look in).
            counted: false,
            holes: s.holes,
            looks: false,
        }
    }

    /// The one-step unfolding of an interleave node: `ε` if it may end here, and each
    /// member that may come next (after `sep` unless it is the first), followed by the
    /// node one step on. Memoized: a state inside a member that may end (a number) asks
    /// at every byte.
    pub(super) fn unfold_interleave(&mut self, e: ExprId, work: &mut u64) -> ExprId {
        if let Some(&u) = self.unfolded.get(&e) {
            return u;
        }
        let Node::Interleave(spec_id, written, ref at) = *self.node(e) else {
            unreachable!("an interleave node")
        };
        let at = at.clone();
        let s = std::sync::Arc::clone(&self.interleaves[spec_id as usize]);
        let mut alts = Vec::new();
        // What may come next, without the separator before it: `sep` is factored out,
        // and the members' keys are factored by their leading bytes, so a derivative
        // (at every digit of a number, where a member may end) tests `sep` once, and one
        // at a key's start only the members that share its first byte.
        let mut next_members = Vec::new();
        if self.nullable(e) {
            alts.push(ExprId::EMPTY);
        }
        if written < s.max {
            let next = (written + 1).min(s.clamp);
            let lead = if written > 0 { s.sep } else { ExprId::EMPTY };
            for (g, j, m) in s.next_members(&at) {
                *work += 1;
                let mut on = at.clone();
                s.set_pos(&mut on, g, j as u32 + 1);
                let rest = self.interleave_at(spec_id, next, on);
                next_members.push(self.concat2(m, rest));
            }
            let closing = s.extra_last && !s.done(&at);
            let extra = match s.extra {
                // Past the groups: only with every required member written.
                Some(_) if closing && self.still_required(&s, &at) > 0 => None,
                x => x,
            };
            if let Some(x) = extra {
                let on = if closing { s.ends() } else { at.clone() };
                let rest = self.interleave_at(spec_id, next, on);
                next_members.push(self.concat2(x, rest));
            }
            let factored = self.left_factor(&next_members, KEY_FACTOR_DEPTH, work);
            alts.push(self.concat2(lead, factored));
        }
        let u = self.union(&alts);
        self.unfolded.insert(e, u);
        u
    }

    /// The union of `alts` with common leading bytes factored out, `depth` bytes deep:
    /// `a·x ∪ a·y` is `a·(x ∪ y)`. The same language; its derivative by a byte looks
    /// only at the alternatives that begin with it.
    fn left_factor(&mut self, alts: &[ExprId], depth: u32, work: &mut u64) -> ExprId {
        if depth == 0 || alts.len() < 2 {
            return self.union(alts);
        }
        let mut heads: Vec<(ExprId, Vec<ExprId>)> = Vec::new();
        let mut others = Vec::new();
        for &a in alts {
            *work += 1;
            match *self.node(a) {
                Node::Concat(h, t) if matches!(self.node(h), Node::Set(_)) => {
                    match heads.iter_mut().find(|(x, _)| *x == h) {
                        Some((_, tails)) => tails.push(t),
                        None => heads.push((h, vec![t])),
                    }
                }
                _ => others.push(a),
            }
        }
        for (h, tails) in heads {
            let rest = self.left_factor(&tails, depth - 1, work);
            others.push(self.concat2(h, rest));
        }
        self.union(&others)
    }

    /// What decides whether an interleave node's language is empty: the members that
    /// must still be written, those that may be, the extra member, and how many members
    /// may be written in all from here, `(at least, at most)`. It is non-empty exactly
    /// when every required member is, and some count between the bounds can be made of
    /// the required members, non-empty optional ones, and extras.
    pub(crate) fn interleave_needs(&self, e: ExprId) -> InterleaveNeeds {
        let Node::Interleave(spec_id, written, ref at) = *self.node(e) else {
            unreachable!("an interleave node")
        };
        let s = &self.interleaves[spec_id as usize];
        let mut needs = InterleaveNeeds {
            required: Vec::new(),
            optional: Vec::new(),
            extra: s.extra,
            at_least: s.min.saturating_sub(written),
            at_most: s.max.saturating_sub(written),
            sep: s.sep,
            after_member: written > 0,
        };
        for (m, req) in s.remaining(at) {
            if req {
                needs.required.push(m);
            } else {
                needs.optional.push(m);
            }
        }
        needs
    }

    /// The parts of an interleave node's spec, for walks over what it may reach
    /// (byte classes).
    pub(crate) fn interleave_parts(&self, spec: u32) -> impl Iterator<Item = ExprId> + '_ {
        self.interleaves[spec as usize].parts()
    }

    /// The members that may come first from an interleave node (or its `sep`): what its
    /// derivative tests first (`first_sets`; ending tests no byte).
    pub(crate) fn interleave_heads(&self, e: ExprId, out: &mut Vec<ExprId>) {
        let Node::Interleave(spec_id, written, ref at) = *self.node(e) else {
            unreachable!("an interleave node")
        };
        let s = &self.interleaves[spec_id as usize];
        if written >= s.max {
            return;
        }
        if written > 0 {
            out.push(s.sep);
            if !self.nullable(s.sep) {
                return;
            }
        }
        out.extend(s.next_members(at).map(|(_, _, m)| m));
        out.extend(s.extra);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(x: &mut ExprSet, s: &str) -> ExprId {
        x.literal(s.as_bytes())
    }

    /// Whether `text` is in `e`, by derivatives.
    fn matches(x: &mut ExprSet, e: ExprId, text: &str) -> bool {
        let mut memo = Default::default();
        let mut work = 0;
        let mut cur = e;
        for &b in text.as_bytes() {
            cur = x.derive(cur, b, b, &mut memo, &mut work);
        }
        x.nullable(cur)
    }

    fn any_order(
        x: &mut ExprSet,
        names: &[(&str, bool)],
        extra: bool,
        min: u32,
        max: Option<u32>,
    ) -> ExprId {
        let groups = names
            .iter()
            .map(|&(n, req)| vec![(lit(x, n), req)])
            .collect();
        let extra = extra.then(|| lit(x, "x"));
        let sep = lit(x, ",");
        x.interleave(Interleaving {
            groups,
            extra,
            extra_last: false,
            sep,
            min,
            max,
        })
    }

    #[test]
    fn any_order_of_optional_and_required_members() {
        let mut x = ExprSet::new();
        let e = any_order(
            &mut x,
            &[("a", false), ("b", true), ("c", false)],
            false,
            0,
            None,
        );
        for ok in ["b", "a,b", "b,a", "c,b,a", "a,c,b", "b,c"] {
            assert!(matches(&mut x, e, ok), "{ok}");
        }
        for bad in ["", "a", "a,c", "b,b", "a,b,a", "ab", "b,", ",b", "b,d"] {
            assert!(!matches(&mut x, e, bad), "{bad}");
        }
    }

    #[test]
    fn groups_keep_their_own_order() {
        let mut x = ExprSet::new();
        let (a, b, c, d) = (
            lit(&mut x, "a"),
            lit(&mut x, "b"),
            lit(&mut x, "c"),
            lit(&mut x, "d"),
        );
        let sep = lit(&mut x, ",");
        let e = x.interleave(Interleaving {
            groups: vec![vec![(a, true), (b, false)], vec![(c, false), (d, true)]],
            extra: None,
            extra_last: false,
            sep,
            min: 0,
            max: None,
        });
        for ok in ["a,d", "a,b,d", "c,a,d", "a,c,b,d", "c,d,a,b", "a,c,d"] {
            assert!(matches(&mut x, e, ok), "{ok}");
        }
        // b before a, d before c, a group skipping its required member.
        for bad in ["b,a,d", "b,d", "a,d,c", "d", "a,b", "a,d,a"] {
            assert!(!matches(&mut x, e, bad), "{bad}");
        }
    }

    #[test]
    fn extras_anywhere_and_counts() {
        let mut x = ExprSet::new();
        let e = any_order(&mut x, &[("a", false), ("b", false)], true, 2, Some(3));
        for ok in ["a,b", "x,a", "x,x", "b,x,a", "x,x,x"] {
            assert!(matches(&mut x, e, ok), "{ok}");
        }
        for bad in ["a", "x", "x,x,x,x", "a,x,b,x", "a,a"] {
            assert!(!matches(&mut x, e, bad), "{bad}");
        }
        // Extras last: after an extra, no declared member; not before the required ones.
        let (a, b, y) = (lit(&mut x, "a"), lit(&mut x, "b"), lit(&mut x, "x"));
        let sep = lit(&mut x, ",");
        let last = x.interleave(Interleaving {
            groups: vec![vec![(a, true)], vec![(b, false)]],
            extra: Some(y),
            extra_last: true,
            sep,
            min: 0,
            max: None,
        });
        for ok in ["a", "b,a", "a,x", "a,x,x", "b,a,x"] {
            assert!(matches(&mut x, last, ok), "{ok}");
        }
        for bad in ["x,a", "a,x,b", "b,x", "x"] {
            assert!(!matches(&mut x, last, bad), "{bad}");
        }
        // Too few members possible: empty, and not taken for non-empty.
        let none = any_order(&mut x, &[("a", false)], false, 2, None);
        assert!(!x.positive(none) && !matches(&mut x, none, "a"));
    }
}
