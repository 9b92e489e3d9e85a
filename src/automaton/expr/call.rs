//! Calls into shared templates with a depth bound: recursion (a recursive `$ref`)
//! without an automaton that doubles per level.
//!
//! A template is an expression in which some nodes are calls [`Node::Call`]`(slot,
//! HOLE)`. `Call(slot, d)` stands for template `slot` with each of its holes filled by
//! a call one level deeper (`d - 1`); `Call(_, 0)` is the empty language. So a
//! recursive definition is lowered once, whatever the depth allowed, and a level is
//! instantiated (its holes filled: a copy of the nodes on the paths to them, hash-consed)
//! only when a derivative reaches it: a text nested 5 deep costs 5 levels, one nested
//! 30 deep 30, and the depth allowed costs nothing until used. A state is still an
//! expression, so the depth bound is what keeps the automaton finite.
//!
//! Calls are never nullable (a template is a JSON value, which is never the empty
//! string: [`ExprSet::define_templates`] refuses a nullable body). A call is known
//! non-empty from the least depth at which its template is, found once for all
//! templates by a fixpoint over depths.

use super::{ExprId, ExprSet, FastMap, Info, Node};

/// A call's depth inside a template: one less than the depth it is instantiated at.
pub(crate) const HOLE: u32 = u32::MAX;

impl ExprSet {
    /// A call to template `slot` from inside a template (its depth filled when the
    /// template is instantiated).
    pub(crate) fn hole_call(&mut self, slot: u32) -> ExprId {
        self.calls_up_to = self.calls_up_to.max(slot + 1);
        self.intern(Node::Call(slot, HOLE))
    }

    /// Whether every call made in this set has its template: a set lowered without its
    /// templates must be refused before a derivative looks one up (it would index out
    /// of bounds: a trap in wasm).
    pub(crate) fn calls_defined(&self) -> bool {
        self.calls_up_to as usize <= self.templates.len()
    }

    /// A call to template `slot` that may nest `depth` levels (none: the empty language).
    pub(crate) fn call(&mut self, slot: u32, depth: u32) -> ExprId {
        if depth == 0 {
            return ExprId::NOTHING;
        }
        self.calls_up_to = self.calls_up_to.max(slot + 1);
        self.intern(Node::Call(slot, depth))
    }

    /// Sets the templates' bodies (slot `i` is `bodies[i]`; their calls are holes) and
    /// finds the least depth at which each is non-empty.
    ///
    /// Errors when a body is nullable: a call is taken never to be.
    pub(crate) fn define_templates(&mut self, bodies: Vec<ExprId>) -> Result<(), String> {
        if let Some(i) = bodies.iter().position(|&b| self.nullable(b)) {
            return Err(format!("template {i} matches the empty string"));
        }
        self.templates = bodies;
        self.template_monotone = self.monotone_templates();
        // Round d finds the templates non-empty with calls d - 1 deep, given the
        // rounds before; a round that finds none ends the search (the next would see
        // the same callees).
        let n = self.templates.len();
        self.template_min_depth = vec![u32::MAX; n];
        for d in 1..=n as u32 + 1 {
            let mut found = false;
            let mut memo = FastMap::default();
            for slot in 0..n {
                if self.template_min_depth[slot] == u32::MAX
                    && self.positive_at(self.templates[slot], d, &mut memo)
                {
                    self.template_min_depth[slot] = d;
                    found = true;
                }
            }
            if !found {
                break;
            }
        }
        Ok(())
    }

    /// Whether each template's language only grows with the depth: none of its calls,
    /// nor its callees', is under a complement (where a deeper call would take strings
    /// away).
    fn monotone_templates(&self) -> Vec<bool> {
        let n = self.templates.len();
        let mut monotone = vec![true; n];
        let mut callees = vec![Vec::new(); n];
        for (slot, &body) in self.templates.iter().enumerate() {
            let mut seen = super::FastSet::default();
            let mut stack = vec![(body, false)];
            while let Some((e, negated)) = stack.pop() {
                if !self.info[e.index()].holes || !seen.insert((e, negated)) {
                    continue;
                }
                match *self.node(e) {
                    Node::Call(callee, _) => {
                        if negated {
                            monotone[slot] = false;
                        }
                        callees[slot].push(callee as usize);
                    }
                    Node::Not(x) => stack.push((x, !negated)),
                    Node::Concat(a, b) => stack.extend([(a, negated), (b, negated)]),
                    Node::Or(ref v) | Node::And(ref v) => {
                        stack.extend(v.iter().map(|&x| (x, negated)))
                    }
                    Node::Repeat(x, ..) => stack.push((x, negated)),
                    Node::Interleave(spec, ..) => {
                        stack.extend(self.interleave_parts(spec).map(|x| (x, negated)))
                    }
                    Node::Nothing
                    | Node::Empty
                    | Node::Set(_)
                    | Node::Residue(..)
                    | Node::Strings(..)
                    | Node::Look(_)
                    | Node::After(..) => {}
                }
            }
        }
        // A template calling a non-monotone one is not monotone either.
        loop {
            let mut changed = false;
            for slot in 0..n {
                if monotone[slot] && callees[slot].iter().any(|&c| !monotone[c]) {
                    monotone[slot] = false;
                    changed = true;
                }
            }
            if !changed {
                return monotone;
            }
        }
    }

    /// The least depth at which template `slot` matches some text (`u32::MAX`: none).
    pub(crate) fn template_min_depth(&self, slot: u32) -> u32 {
        self.template_min_depth[slot as usize]
    }

    /// Whether every template only gains strings as its depth grows.
    pub(crate) fn templates_monotone(&self) -> bool {
        self.template_monotone.iter().all(|&m| m)
    }

    /// Whether template `slot`'s calls only gain strings as their depth grows.
    pub(crate) fn call_monotone(&self, slot: u32) -> bool {
        self.template_monotone[slot as usize]
    }

    /// The body of template `slot`.
    pub(crate) fn template(&self, slot: u32) -> ExprId {
        self.templates[slot as usize]
    }

    pub(super) fn call_info(&self, slot: u32, depth: u32) -> Info {
        Info {
            nullable: false,
            positive: depth != HOLE
                && self
                    .template_min_depth
                    .get(slot as usize)
                    .is_some_and(|&m| m <= depth),
            depth: 1,
            counted: false,
            holes: depth == HOLE,
            looks: false,
        }
    }

    /// Whether `e` (a template's node) instantiated at `depth` is known non-empty, by
    /// the constructors' own rules (`info_of`), with the templates' least depths known
    /// so far. Nullability does not depend on the depth (calls are never nullable).
    fn positive_at(&self, e: ExprId, depth: u32, memo: &mut FastMap<ExprId, bool>) -> bool {
        if !self.info[e.index()].holes {
            return self.positive(e);
        }
        if let Some(&p) = memo.get(&e) {
            return p;
        }
        let p = match *self.node(e) {
            Node::Call(slot, _) => {
                let inner = depth - 1;
                inner >= 1 && self.template_min_depth[slot as usize] <= inner
            }
            Node::Concat(..) => {
                let mut cur = e;
                let mut all = true;
                while let Node::Concat(head, rest) = *self.node(cur) {
                    if !self.positive_at(head, depth, memo) {
                        all = false;
                        break;
                    }
                    cur = rest;
                }
                all && self.positive_at(cur, depth, memo)
            }
            Node::Or(ref v) => {
                let v = v.clone();
                v.iter().any(|&x| self.positive_at(x, depth, memo))
            }
            Node::And(_) | Node::Not(_) => self.positive(e),
            Node::Repeat(x, lo, _) => lo == 0 || self.positive_at(x, depth, memo),
            Node::Interleave(..) => {
                self.interleave_positive_with(e, |set, m| set.positive_at(m, depth, memo))
            }
            Node::Nothing
            | Node::Empty
            | Node::Set(_)
            | Node::Residue(..)
            | Node::Strings(..)
            | Node::Look(_)
            | Node::After(..) => self.positive(e),
        };
        memo.insert(e, p);
        p
    }

    /// A call's one-step unfolding: its template at its depth (memoized).
    pub(crate) fn unfold_call(&mut self, e: ExprId, work: &mut u64) -> ExprId {
        if let Some(&u) = self.unfolded.get(&e) {
            return u;
        }
        let Node::Call(slot, depth) = *self.node(e) else {
            unreachable!("a call node")
        };
        debug_assert_ne!(
            depth, HOLE,
            "a template's call is only unfolded instantiated"
        );
        let body = self.templates[slot as usize];
        let u = self.instantiate(body, depth, work);
        self.unfolded.insert(e, u);
        u
    }

    /// `e` with each hole filled by a call `depth - 1` deep: a copy of the nodes on the
    /// paths to the holes (the rest is shared). Adds the nodes visited to `work`.
    pub(crate) fn instantiate(&mut self, e: ExprId, depth: u32, work: &mut u64) -> ExprId {
        if !self.info[e.index()].holes {
            return e;
        }
        if let Some(&x) = self.instances.get(&(e, depth)) {
            return x;
        }
        *work += 1;
        let out = match *self.node(e) {
            Node::Call(slot, _) => self.call(slot, depth - 1),
            Node::Concat(..) => {
                // A chain in one frame: its length does not deepen the recursion.
                let mut heads = Vec::new();
                let mut cur = e;
                while let Node::Concat(head, rest) = *self.node(cur) {
                    heads.push(head);
                    cur = rest;
                }
                let mut out = self.instantiate(cur, depth, work);
                for h in heads.into_iter().rev() {
                    let h = self.instantiate(h, depth, work);
                    out = self.concat2(h, out);
                    *work += 1;
                }
                out
            }
            Node::Or(ref v) | Node::And(ref v) => {
                let and = matches!(self.node(e), Node::And(_));
                let v = v.clone();
                let parts: Vec<ExprId> = v
                    .iter()
                    .map(|&x| self.instantiate(x, depth, work))
                    .collect();
                if and {
                    self.intersection(&parts)
                } else {
                    self.union(&parts)
                }
            }
            Node::Not(x) => {
                let x = self.instantiate(x, depth, work);
                self.complement(x)
            }
            Node::Repeat(x, lo, hi) => {
                let x = self.instantiate(x, depth, work);
                let hi = (hi != super::UNBOUNDED).then_some(hi);
                self.repeat(x, lo, hi)
            }
            Node::Interleave(spec, written, ref at) => {
                let at = at.clone();
                self.interleave_mapped(spec, written, at, |set, m| set.instantiate(m, depth, work))
            }
            Node::Nothing
            | Node::Empty
            | Node::Set(_)
            | Node::Residue(..)
            | Node::Strings(..)
            | Node::Look(_)
            | Node::After(..) => e,
        };
        self.instances.insert((e, depth), out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree: `[` then trees separated by `,` then `]`, as template 0.
    fn tree(set: &mut ExprSet) -> ExprId {
        let open = set.literal(b"[");
        let close = set.literal(b"]");
        let comma = set.literal(b",");
        let me = set.hole_call(0);
        let more = set.concat(&[comma, me]);
        let more = set.repeat(more, 0, None);
        let items = set.concat(&[me, more]);
        let items = set.repeat(items, 0, Some(1));
        set.concat(&[open, items, close])
    }

    fn matches(set: &mut ExprSet, e: ExprId, text: &[u8]) -> bool {
        let mut memo = crate::automaton::expr::derive::DeriveMemo::default();
        let mut work = 0;
        let mut cur = e;
        for &b in text {
            cur = set.derive(cur, b, b, &mut memo, &mut work);
        }
        set.nullable(cur)
    }

    #[test]
    fn a_call_nests_its_template_at_most_depth_levels() {
        let mut set = ExprSet::new();
        let body = tree(&mut set);
        set.define_templates(vec![body]).unwrap();
        let root = set.call(0, 3);
        for (text, ok) in [
            (&b"[]"[..], true),
            (b"[[],[[]]]", true),
            (b"[[[]]]", true),
            (b"[[[[]]]]", false),
            (b"[[]", false),
            (b"[],", false),
        ] {
            assert_eq!(
                matches(&mut set, root, text),
                ok,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        let deep = set.call(0, 40);
        let mut text = vec![b'['; 40];
        text.extend(vec![b']'; 40]);
        assert!(matches(&mut set, deep, &text));
        text.insert(0, b'[');
        text.push(b']');
        assert!(!matches(&mut set, deep, &text));
        assert_eq!(set.call(0, 0), ExprId::NOTHING);
        assert!(set.positive(root));
    }

    #[test]
    fn a_template_that_needs_itself_is_empty_at_every_depth() {
        // `[` me `]` with no way out: never a finite text.
        let mut set = ExprSet::new();
        let open = set.literal(b"[");
        let close = set.literal(b"]");
        let me = set.hole_call(0);
        let body = set.concat(&[open, me, close]);
        // Template 1 needs template 0 or stops: non-empty from depth 1.
        let stop = set.literal(b"x");
        let other = set.hole_call(0);
        let body1 = set.union(&[other, stop]);
        set.define_templates(vec![body, body1]).unwrap();
        let zero = set.call(0, 50);
        assert!(!set.positive(zero));
        assert!(!matches(&mut set, zero, b"[[]]"));
        let one = set.call(1, 50);
        assert!(set.positive(one));
        assert!(matches(&mut set, one, b"x"));
        assert!(!matches(&mut set, one, b"[x]"));
    }

    #[test]
    fn a_call_under_a_complement_is_not_monotone_nor_are_its_callers() {
        let mut set = ExprSet::new();
        let a = set.literal(b"a");
        let inner = set.hole_call(0);
        let not_inner = set.complement(inner);
        let body0 = set.concat(&[a, not_inner]);
        let other = set.hole_call(0);
        let body1 = set.concat(&[a, other]);
        let b = set.literal(b"b");
        let body2 = set.concat(&[b, a]);
        set.define_templates(vec![body0, body1, body2]).unwrap();
        assert!(!set.call_monotone(0));
        assert!(!set.call_monotone(1), "calls template 0");
        assert!(set.call_monotone(2));
        assert!(!set.templates_monotone());
    }

    #[test]
    fn a_nullable_template_is_refused() {
        let mut set = ExprSet::new();
        let a = set.literal(b"a");
        let body = set.repeat(a, 0, None);
        assert!(set.define_templates(vec![body]).is_err());
    }
}
