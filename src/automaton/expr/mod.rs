//! Automaton expressions: regular languages over bytes with intersection and complement,
//! determinized lazily by derivatives.
//!
//! An expression is an id into an [`ExprSet`], an arena that hash-conses nodes: the
//! constructors normalize (flatten, sort and dedup unions and intersections, merge byte
//! sets, drop units, absorb the empty language), so equal expressions built twice get
//! one id. A DFA state is an expression: the language of what may still follow. Its
//! transition by a byte is the Brzozowski derivative, computed once per byte class and
//! cached ([`ExprDfa`]). Counts are data (`e{lo,hi}` derives to `e'·e{lo-1,hi-1}`), so a
//! large count costs one state per count actually reached, and nothing is ever written
//! out as regex text. The design, and why derivatives rather than products of NFAs:
//! docs/design/schema-automata.md.
//!
//! Liveness stays exact (docs/semantics.md): a state is handed out only if its language
//! is non-empty. Without intersection or complement every expression other than
//! [`ExprId::NOTHING`] is non-empty (the constructors guarantee it); with them a
//! memoized, budgeted search over derivatives decides ([`ExprDfa`]).

mod alphabet;
mod call;
mod compact;
mod derive;
mod hash_index;
mod hir;
mod interleave;
mod lazy;
mod look;
mod paged;
mod saturate;
mod strings;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use interleave::Interleaving;
pub(crate) use lazy::ExprDfa;
pub(crate) use strings::{StringTrie, StringsBuilder};

/// A fast, non-cryptographic hasher for the arena's and the DFA's tables (ids, small
/// nodes): SipHash's DoS resistance buys nothing here (keys are our own ids) and costs a
/// third of a schema's compile time. The multiply-rotate scheme of rustc's FxHasher.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The key of a node other than `Or` and `And` in [`ExprSet`]'s ids.
fn node_hash(node: &Node) -> u64 {
    use std::hash::Hash;
    let mut h = FastHasher::default();
    node.hash(&mut h);
    h.finish()
}

/// The key of an `Or` (`and` false) or `And` node's members in [`ExprSet`]'s lists.
fn list_hash(and: bool, members: &[ExprId]) -> u64 {
    let mut h = FastHasher(u64::from(and));
    for m in members {
        h.write_u32(m.0);
    }
    h.finish()
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// A `HashSet` with [`FastHasher`].
pub(crate) type FastSet<K> = std::collections::HashSet<K, BuildHasherDefault<FastHasher>>;

/// An expression in an [`ExprSet`]; only meaningful with the set that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(u32);

impl ExprId {
    /// The empty language.
    pub(crate) const NOTHING: ExprId = ExprId(0);
    /// The language of the empty string only.
    pub(crate) const EMPTY: ExprId = ExprId(1);
    /// Any single byte.
    pub(crate) const ANY_BYTE: ExprId = ExprId(2);
    /// Every byte string (the universe complements are taken in).
    pub(crate) const ANY: ExprId = ExprId(3);

    fn index(self) -> usize {
        self.0 as usize
    }
}

/// No upper bound in [`Node::Repeat`].
pub(crate) const UNBOUNDED: u32 = u32::MAX;

/// Deepest expression the derivative may recurse into: past it the set reports
/// [`ExprSet::over_limit`] and the caller fails with an error instead of risking the
/// (small, fixed) wasm stack.
pub(crate) const MAX_DEPTH: u32 = 1_500;

/// Union members and nodes that [`ExprSet::meets_own_complement`] may look at for one
/// intersection, all its questions together: intersections are built at every
/// derivative, and one with many members and complements must not cost their product.
const SUBSET_FUEL: u32 = 1024;

/// A set of bytes, as four 64-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ByteSet(pub(crate) [u64; 4]);

impl ByteSet {
    pub(crate) const EMPTY: ByteSet = ByteSet([0; 4]);
    pub(crate) const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    pub(crate) fn range(lo: u8, hi: u8) -> ByteSet {
        let mut s = ByteSet::EMPTY;
        for b in lo..=hi {
            s.insert(b);
        }
        s
    }
    pub(crate) fn insert(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }
    #[inline]
    pub(crate) fn contains(&self, b: u8) -> bool {
        self.0[(b >> 6) as usize] >> (b & 63) & 1 == 1
    }
    pub(crate) fn union(&self, o: &ByteSet) -> ByteSet {
        ByteSet(std::array::from_fn(|i| self.0[i] | o.0[i]))
    }
    pub(crate) fn intersection(&self, o: &ByteSet) -> ByteSet {
        ByteSet(std::array::from_fn(|i| self.0[i] & o.0[i]))
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    pub(crate) fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    pub(crate) fn is_subset(&self, o: &ByteSet) -> bool {
        self.intersection(o) == *self
    }
}

/// A node of the arena. The constructors of [`ExprSet`] keep these invariants, on which
/// the derivative and the liveness argument rely:
/// - `Concat(a, b)`: `a` is not a `Concat` (chains nest to the right), neither side is
///   `NOTHING` or `EMPTY`;
/// - `Or`/`And`: at least two members, sorted, deduplicated, none of the same kind;
///   `Or` has at most one `Set` and no `NOTHING`; `And` has no `ANY`, no `NOTHING`;
/// - `Repeat(e, lo, hi)`: `lo <= hi`, `hi > 0`, not `(1, 1)`, `lo == 0` if `e` is
///   nullable, `e` neither `NOTHING` nor `EMPTY`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    Nothing,
    Empty,
    Set(ByteSet),
    Concat(ExprId, ExprId),
    Or(Box<[ExprId]>),
    And(Box<[ExprId]>),
    Not(ExprId),
    Repeat(ExprId, u32, u32),
    /// An interleaving of ordered groups (`interleave.rs`): its spec, the members
    /// written (clamped), and where each group stands.
    Interleave(u32, u32, Box<[u32]>),
    /// `Residue(k, r)`: the decimal digit strings `w` with `r·10^|w| + value(w)` a
    /// multiple of `k` (from `r = 0`: the numerals of the multiples of `k`, read
    /// left to right with one state per remainder). `k >= 1`, `r < k`.
    Residue(u32, u32),
    /// `Call(slot, depth)`: the template `slot` ([`ExprSet::define_templates`]) with its
    /// own calls one level deeper, at most `depth` levels in all (`call.rs`): a recursive
    /// `$ref`, shared by every level and unfolded only when a derivative reaches it.
    /// Inside a template, `depth` is [`call::HOLE`]: one less than the caller's.
    Call(u32, u32),
    /// `Strings(set, lo, hi, depth)`: the rest of the strings of string set `set`
    /// (`strings.rs`) after the prefix of `depth` bytes that its strings `lo..hi` (in
    /// sorted order) share; an `enum` of many strings.
    Strings(u32, u32, u32, u32),
    /// A look-around assertion (zero-width): the (before, after) context pairs where it
    /// holds (`look.rs`).
    Look(u32),
    /// `After(context, e)`: `e` read after a byte of that context; the root of a state
    /// of an automaton with look-around, never inside another node (`look.rs`).
    After(u8, ExprId),
}

/// Each decimal digit alone: a [`Node::Residue`] steps differently on each.
pub(crate) const DIGIT_SETS: [ByteSet; 10] = {
    let mut sets = [ByteSet([0; 4]); 10];
    let mut d = 0;
    while d < 10 {
        sets[d].0[0] = 1 << (b'0' as usize + d);
        d += 1;
    }
    sets
};

/// What the constructors know of a node without looking inside it again.
#[derive(Clone, Copy, Debug)]
struct Info {
    /// The empty string is in the language.
    nullable: bool,
    /// The language is known to be non-empty (always, for expressions without
    /// intersection or complement other than `NOTHING`).
    positive: bool,
    /// Recursion depth of the derivative on this node (saturating: past [`MAX_DEPTH`]
    /// the arena is unusable anyway; 16 bits keep `Info` at 8 bytes a node).
    depth: u16,
    /// Holds a count with an upper bound outside any complement: what the bounds of a
    /// row inside counts may lift (`saturate.rs`); the others are left whole.
    counted: bool,
    /// Holds a template's call ([`call::HOLE`] depth): only meaningful instantiated.
    holes: bool,
    /// Holds a look-around assertion: `nullable` then means "in every context" (false
    /// where unsure) and [`ExprSet::nullable_between`] tells for two contexts.
    looks: bool,
}

// Eight bytes a node (the arena's memory figures count them).
const _: () = assert!(std::mem::size_of::<Info>() == 8);

impl Info {
    /// A leaf that reads one byte: not nullable, non-empty, nothing inside.
    const LEAF: Info = Info {
        nullable: false,
        positive: true,
        depth: 1,
        counted: false,
        holes: false,
        looks: false,
    };
}

/// The arena of hash-consed expressions.
#[derive(Clone)]
pub struct ExprSet {
    nodes: Vec<Node>,
    info: Vec<Info>,
    /// Nodes other than `Or` and `And` by a hash of their content (hash-consing).
    ids: hash_index::HashIndex,
    /// `Or` and `And` nodes by a hash of their kind and members ([`list_hash`]): a union
    /// or an intersection that exists already is found from a borrowed list, without
    /// allocating (derivatives mostly rebuild expressions that exist).
    lists: hash_index::HashIndex,
    /// The members being gathered by [`union`](Self::union) or
    /// [`intersection`](Self::intersection), reused.
    members: Vec<ExprId>,
    /// The terms of the derivatives being taken, one frame above another
    /// ([`derive`](Self::derive)): no allocation per derivative of a list or chain.
    terms: Vec<ExprId>,
    /// Set when a constructor met [`MAX_DEPTH`]; sticky.
    too_deep: bool,
    /// The context before the derivative in progress (`look.rs`; [`Node::After`] sets
    /// it): what assertions in first position test.
    before: u8,
    /// What the [`Node::Interleave`] nodes of one object share, by index.
    interleaves: Vec<std::sync::Arc<interleave::InterleaveSpec>>,
    /// Interleave or call node -> its one-step unfolding.
    unfolded: FastMap<ExprId, ExprId>,
    /// The bodies of [`Node::Call`]'s templates, by slot, and the least depth at which
    /// each is known non-empty (`u32::MAX`: at none).
    templates: Vec<ExprId>,
    /// One past the largest template slot a call names (0: no call).
    calls_up_to: u32,
    template_min_depth: Vec<u32>,
    /// Whether each template only gains strings as its depth grows (`call.rs`).
    template_monotone: Vec<bool>,
    /// (template node, depth) -> the node with its holes filled.
    instances: FastMap<(ExprId, u32), ExprId>,
    /// The tries of [`Node::Strings`], by set.
    string_sets: Vec<std::sync::Arc<strings::StringTrie>>,
    /// (chain, tail) -> the chain re-nested onto the tail ([`concat2`](Self::concat2)):
    /// a derivative re-nests its head's chain onto the same tail step after step, and
    /// the chains of successive steps share their suffixes, so a walk down a chain
    /// stops at the first suffix already re-nested instead of re-interning every link.
    appended: FastMap<(ExprId, ExprId), ExprId>,
    /// The node of each one-byte set made so far ([`ExprId::NOTHING`]: none yet).
    single_bytes: [ExprId; 256],
    /// Nodes below this id were built before an automaton started deriving (the
    /// compiled expression); the rest are derivatives, searches and witnesses. A count
    /// among the first is one no walk has entered yet (`saturate.rs`).
    compiled_below: u32,
}

impl Default for ExprSet {
    fn default() -> Self {
        ExprSet::new()
    }
}

impl std::fmt::Debug for ExprSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExprSet")
            .field("nodes", &self.nodes.len())
            .finish_non_exhaustive()
    }
}

impl ExprSet {
    /// An arena holding the four constant expressions.
    pub fn new() -> ExprSet {
        let mut set = ExprSet {
            nodes: Vec::new(),
            info: Vec::new(),
            ids: Default::default(),
            lists: Default::default(),
            members: Vec::new(),
            terms: Vec::new(),
            too_deep: false,
            before: look::EDGE,
            interleaves: Vec::new(),
            unfolded: FastMap::default(),
            templates: Vec::new(),
            calls_up_to: 0,
            template_min_depth: Vec::new(),
            template_monotone: Vec::new(),
            instances: FastMap::default(),
            string_sets: Vec::new(),
            appended: FastMap::default(),
            single_bytes: [ExprId::NOTHING; 256],
            compiled_below: u32::MAX,
        };
        let nothing = set.intern(Node::Nothing);
        let empty = set.intern(Node::Empty);
        let any_byte = set.intern(Node::Set(ByteSet::ALL));
        let any = set.intern(Node::Repeat(any_byte, 0, UNBOUNDED));
        debug_assert_eq!(
            [nothing, empty, any_byte, any],
            [
                ExprId::NOTHING,
                ExprId::EMPTY,
                ExprId::ANY_BYTE,
                ExprId::ANY
            ]
        );
        set
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the arena holds only the constants (never, once built).
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 4
    }

    /// Whether some constructor met the depth limit (the expression is then unusable).
    pub(crate) fn too_deep(&self) -> bool {
        self.too_deep
    }

    pub(crate) fn node(&self, e: ExprId) -> &Node {
        &self.nodes[e.index()]
    }

    pub(crate) fn nullable(&self, e: ExprId) -> bool {
        self.info[e.index()].nullable
    }

    /// Whether `e` holds a count with an upper bound outside any complement.
    pub(crate) fn counted(&self, e: ExprId) -> bool {
        self.info[e.index()].counted
    }

    /// Records that the nodes made so far are the compiled expression: the ones made
    /// from now on are an automaton's ([`compiled`](Self::compiled)).
    pub(crate) fn mark_compiled(&mut self) {
        self.compiled_below = self.nodes.len() as u32;
    }

    /// Whether `e` was built before [`mark_compiled`](Self::mark_compiled) (every node,
    /// until it is called).
    pub(crate) fn compiled(&self, e: ExprId) -> bool {
        e.0 < self.compiled_below
    }

    pub(crate) fn positive(&self, e: ExprId) -> bool {
        self.info[e.index()].positive
    }

    /// Approximate bytes held by the arena.
    pub(crate) fn memory_usage(&self) -> usize {
        let lists: usize = self
            .nodes
            .iter()
            .map(|n| match n {
                Node::Or(v) | Node::And(v) => v.len() * 4 * 2,
                Node::Interleave(_, _, at) => at.len() * 4 * 2,
                _ => 0,
            })
            .sum();
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.info.capacity() * std::mem::size_of::<Info>()
            + self.ids.memory_usage()
            + self.lists.memory_usage()
            + (self.unfolded.capacity() + self.instances.capacity()) * 16
            + self.appended.capacity() * 12
            + lists
            + self
                .string_sets
                .iter()
                .map(|t| t.memory_usage())
                .sum::<usize>()
    }

    fn intern(&mut self, node: Node) -> ExprId {
        debug_assert!(!matches!(node, Node::Or(_) | Node::And(_)), "intern_list");
        let hash = node_hash(&node);
        if let Some(id) = self.ids.find(hash, |id| *self.node(id) == node) {
            return id;
        }
        let id = self.push_node(node);
        self.ids.insert(hash, id);
        id
    }

    /// Appends a node not in the arena yet, with what the constructors know of it.
    fn push_node(&mut self, node: Node) -> ExprId {
        let info = self.info_of(&node);
        if u32::from(info.depth) > MAX_DEPTH {
            self.too_deep = true;
        }
        let id = ExprId(self.nodes.len() as u32);
        self.nodes.push(node);
        self.info.push(info);
        id
    }

    /// The `And` (`and`) or `Or` node of `members` (sorted, deduplicated, at least two).
    fn intern_list(&mut self, and: bool, members: &[ExprId]) -> ExprId {
        let hash = list_hash(and, members);
        let same = |id: ExprId| match self.node(id) {
            Node::And(v) => and && **v == *members,
            Node::Or(v) => !and && **v == *members,
            _ => false,
        };
        if let Some(id) = self.lists.find(hash, same) {
            return id;
        }
        let list: Box<[ExprId]> = members.into();
        let id = self.push_node(if and { Node::And(list) } else { Node::Or(list) });
        self.lists.insert(hash, id);
        id
    }

    /// The info a union or an intersection of `members` takes from them alike: one level
    /// deeper than the deepest, and counted, holed or asserting where any member is
    /// (nullability and positivity are the caller's).
    fn members_info(&self, members: &[ExprId]) -> Info {
        let mut info = Info {
            nullable: false,
            positive: false,
            depth: 0,
            counted: false,
            holes: false,
            looks: false,
        };
        for e in members {
            let m = self.info[e.index()];
            info.depth = info.depth.max(m.depth);
            info.counted |= m.counted;
            info.holes |= m.holes;
            info.looks |= m.looks;
        }
        info.depth = info.depth.saturating_add(1);
        info
    }

    fn info_of(&self, node: &Node) -> Info {
        let i = |e: &ExprId| self.info[e.index()];
        match node {
            Node::Nothing => Info {
                positive: false,
                ..Info::LEAF
            },
            Node::Empty => Info {
                nullable: true,
                ..Info::LEAF
            },
            Node::Set(_) => Info::LEAF,
            Node::Concat(a, b) => {
                let (a, b_is_concat, b) = (i(a), matches!(self.node(*b), Node::Concat(..)), i(b));
                Info {
                    nullable: a.nullable && b.nullable,
                    positive: a.positive && b.positive,
                    // The derivative walks a chain in one frame: only heads and the last
                    // element recurse.
                    depth: (a.depth.saturating_add(1)).max(if b_is_concat {
                        b.depth
                    } else {
                        b.depth.saturating_add(1)
                    }),
                    counted: a.counted || b.counted,
                    holes: a.holes || b.holes,
                    looks: a.looks || b.looks,
                }
            }
            // What a union and an intersection share (depth, counts, holes,
            // assertions); they differ in nullability and positivity only.
            Node::Or(v) => {
                let (nullable, positive) = (
                    v.iter().any(|e| i(e).nullable),
                    v.iter().any(|e| i(e).positive),
                );
                Info {
                    nullable,
                    positive,
                    ..self.members_info(v)
                }
            }
            Node::And(v) => {
                let nullable = v.iter().all(|e| i(e).nullable);
                Info {
                    nullable,
                    positive: nullable,
                    ..self.members_info(v)
                }
            }
            Node::Not(e) => {
                let e = i(e);
                // With assertions inside, `e.nullable` is only a lower bound.
                let nullable = !e.nullable && !e.looks;
                Info {
                    nullable,
                    positive: nullable,
                    depth: e.depth.saturating_add(1),
                    counted: false,
                    holes: e.holes,
                    looks: e.looks,
                }
            }
            Node::Repeat(e, lo, hi) => {
                let e = i(e);
                Info {
                    nullable: *lo == 0 || e.nullable,
                    positive: *lo == 0 || e.positive,
                    depth: e.depth.saturating_add(1),
                    counted: *hi != UNBOUNDED || e.counted,
                    holes: e.holes,
                    looks: e.looks,
                }
            }
            Node::Interleave(spec, written, at) => self.interleave_info(*spec, *written, at),
            // Some digits always lead back to remainder 0 (10^j >= k digits' worth).
            Node::Residue(_, r) => Info {
                nullable: *r == 0,
                ..Info::LEAF
            },
            Node::Call(slot, depth) => self.call_info(*slot, *depth),
            Node::Look(_) | Node::After(..) => self.look_info(node),
            // Every trie node leads to an end.
            Node::Strings(set, lo, _, depth) => Info {
                nullable: self.string_trie(*set).is_end(*lo, *depth),
                ..Info::LEAF
            },
        }
    }

    /// One byte of `set` (the empty set is [`ExprId::NOTHING`]).
    pub(crate) fn set(&mut self, set: ByteSet) -> ExprId {
        if set.is_empty() {
            ExprId::NOTHING
        } else {
            self.intern(Node::Set(set))
        }
    }

    /// The language of a regex (regex-automata's syntax: Unicode classes over UTF-8,
    /// matched as a whole; no look-around).
    ///
    /// Errors: [`ErrorKind::InvalidRegex`](crate::ErrorKind::InvalidRegex).
    pub fn regex(&mut self, pattern: &str) -> crate::Result<ExprId> {
        hir::from_regex(self, pattern)
    }

    /// Every valid UTF-8 text: the universe to complement text languages in
    /// (`difference(any_text, e)`), since [`complement`](Self::complement) is taken
    /// over all byte strings.
    pub fn any_text(&mut self) -> ExprId {
        hir::from_regex(self, "(?s:.)*").expect("a valid regex")
    }

    /// One byte in `lo..=hi`.
    pub fn byte_range(&mut self, lo: u8, hi: u8) -> ExprId {
        self.set(ByteSet::range(lo, hi))
    }

    /// Exactly the bytes of `text`.
    pub fn literal(&mut self, text: &[u8]) -> ExprId {
        self.literal_then(text, ExprId::EMPTY)
    }

    /// The bytes of `text`, then `tail`: `concat2(literal(text), tail)` without the
    /// literal's own chain to re-nest. From the end, as `concat` nests, without
    /// gathering the parts: front ends lower many one-character literals (6% of a large
    /// JSON Schema's compile in wasm went here).
    pub fn literal_then(&mut self, text: &[u8], tail: ExprId) -> ExprId {
        let mut out = tail;
        for &b in text.iter().rev() {
            let byte = self.byte(b);
            out = self.concat2(byte, out);
        }
        out
    }

    /// The one-byte set `{b}`, remembered by byte (hashing a 32-byte set per character
    /// of every literal was most of lowering one).
    fn byte(&mut self, b: u8) -> ExprId {
        let known = self.single_bytes[usize::from(b)];
        if known != ExprId::NOTHING {
            return known;
        }
        let id = self.byte_range(b, b);
        self.single_bytes[usize::from(b)] = id;
        id
    }

    /// `parts` one after the other.
    pub fn concat(&mut self, parts: &[ExprId]) -> ExprId {
        let mut out = ExprId::EMPTY;
        for &p in parts.iter().rev() {
            out = self.concat2(p, out);
        }
        out
    }

    /// `a` then `b`.
    pub fn concat2(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if a == ExprId::NOTHING || b == ExprId::NOTHING {
            return ExprId::NOTHING;
        }
        if a == ExprId::EMPTY {
            return b;
        }
        if b == ExprId::EMPTY {
            return a;
        }
        if a == ExprId::ANY && b == ExprId::ANY {
            return ExprId::ANY;
        }
        if let Node::Concat(..) = self.node(a) {
            // Re-nest a's chain to the right: (x·y)·b = x·(y·b), down to the first
            // suffix already re-nested onto b.
            let mut links = Vec::new();
            let mut rest = a;
            let mut done = None;
            while let Node::Concat(h, t) = *self.node(rest) {
                if let Some(&out) = self.appended.get(&(rest, b)) {
                    done = Some(out);
                    break;
                }
                links.push((rest, h));
                rest = t;
            }
            let mut out = match done {
                Some(out) => out,
                None => self.concat2(rest, b),
            };
            for (chain, h) in links.into_iter().rev() {
                out = self.intern(Node::Concat(h, out));
                self.appended.insert((chain, b), out);
            }
            return out;
        }
        self.intern(Node::Concat(a, b))
    }

    /// Any one of `alts`.
    pub fn union(&mut self, alts: &[ExprId]) -> ExprId {
        self.with_members(|set, items| set.union_into(alts, items))
    }

    /// `build` with the reused member list (no allocation per union or intersection).
    fn with_members(
        &mut self,
        build: impl FnOnce(&mut Self, &mut Vec<ExprId>) -> ExprId,
    ) -> ExprId {
        let mut items = std::mem::take(&mut self.members);
        let out = build(self, &mut items);
        self.members = items;
        out
    }

    fn union_into(&mut self, alts: &[ExprId], items: &mut Vec<ExprId>) -> ExprId {
        items.clear();
        let mut bytes = ByteSet::EMPTY;
        for &a in alts {
            match self.node(a) {
                Node::Nothing => {}
                Node::Set(s) => bytes = bytes.union(s),
                Node::Or(v) => {
                    for &x in v.iter() {
                        match self.node(x) {
                            Node::Set(s) => bytes = bytes.union(s),
                            _ => items.push(x),
                        }
                    }
                }
                _ => items.push(a),
            }
        }
        if items.contains(&ExprId::ANY) {
            return ExprId::ANY;
        }
        if !bytes.is_empty() {
            let s = self.set(bytes);
            items.push(s);
        }
        items.sort_unstable();
        items.dedup();
        // ε is redundant beside a nullable member.
        if items.len() > 1 && items.contains(&ExprId::EMPTY) {
            let others_nullable = items
                .iter()
                .any(|&x| x != ExprId::EMPTY && self.nullable(x));
            if others_nullable {
                items.retain(|&x| x != ExprId::EMPTY);
            }
        }
        match items.len() {
            0 => ExprId::NOTHING,
            1 => items[0],
            _ => self.intern_list(false, items),
        }
    }

    /// `a` or `b`.
    pub fn union2(&mut self, a: ExprId, b: ExprId) -> ExprId {
        self.union(&[a, b])
    }

    /// The strings in every one of `parts`.
    pub fn intersection(&mut self, parts: &[ExprId]) -> ExprId {
        self.with_members(|set, items| set.intersection_into(parts, items))
    }

    fn intersection_into(&mut self, parts: &[ExprId], items: &mut Vec<ExprId>) -> ExprId {
        items.clear();
        let mut bytes = ByteSet::ALL;
        let mut has_set = false;
        for &p in parts {
            match self.node(p) {
                Node::Nothing => return ExprId::NOTHING,
                Node::Set(s) => {
                    bytes = bytes.intersection(s);
                    has_set = true;
                }
                Node::And(v) => {
                    for &x in v.iter() {
                        match self.node(x) {
                            Node::Set(s) => {
                                bytes = bytes.intersection(s);
                                has_set = true;
                            }
                            _ => items.push(x),
                        }
                    }
                }
                _ if p == ExprId::ANY => {}
                _ => items.push(p),
            }
        }
        if has_set {
            if bytes.is_empty() {
                return ExprId::NOTHING;
            }
            let s = self.set(bytes);
            items.push(s);
        }
        items.sort_unstable();
        items.dedup();
        if self.meets_own_complement(items) {
            return ExprId::NOTHING;
        }
        if items.contains(&ExprId::EMPTY) {
            return if items.iter().all(|&x| self.nullable(x)) {
                ExprId::EMPTY
            } else {
                ExprId::NOTHING
            };
        }
        match items.len() {
            0 => ExprId::ANY,
            1 => items[0],
            _ => self.intern_list(true, items),
        }
    }

    /// Whether some member of an intersection (`items`, sorted) is inside the language
    /// that another member complements: `a ∧ ¬b` with `a ⊆ b` as far as
    /// [`known_subset`](Self::known_subset) tells, so the intersection is empty. Why: under
    /// a `oneOf` of unanchored patterns (`"pattern": "NEW"`, `"ON_APPROVAL"`, ...), once
    /// a string has matched one pattern each other branch keeps `.*ON_APPROVAL.* ∧
    /// ¬(.* | …)`; nothing else says it is empty, and the determinizer's search proved it
    /// by visiting every state of the string (10 ms for one transition of
    /// `Github_hard---o12278`).
    fn meets_own_complement(&self, items: &[ExprId]) -> bool {
        let mut fuel = SUBSET_FUEL;
        for &x in items {
            let Node::Not(b) = *self.node(x) else {
                continue;
            };
            for &a in items {
                if fuel == 0 {
                    return false;
                }
                if a != x && self.known_subset(a, b, &mut fuel) {
                    return true;
                }
            }
        }
        false
    }

    /// `a ⊆ b`, as far as a glance tells: equal; inside a member of `b`'s union; or `b`
    /// a star `y*` and `a` made of pieces inside `y` ([`within_star`](Self::within_star)).
    /// `false` means "not known", also once `fuel` is spent.
    fn known_subset(&self, a: ExprId, b: ExprId, fuel: &mut u32) -> bool {
        let members = match self.node(b) {
            Node::Or(v) => &v[..],
            _ => &[],
        };
        std::iter::once(&b).chain(members).any(|&m| {
            if *fuel == 0 {
                return false;
            }
            *fuel -= 1;
            a == m
                || matches!(*self.node(m), Node::Repeat(y, 0, UNBOUNDED) if self.within_star(a, y, fuel))
        })
    }

    /// Whether every string of `a` is a concatenation of strings of `y`, looking at no
    /// more than `fuel` nodes of `a`: `a` is built of `y`'s members, sets inside `y`'s
    /// set, and stars or counts of those (a pattern's `.*NEW.*` inside the `.*` of the
    /// same characters).
    fn within_star(&self, a: ExprId, y: ExprId, fuel: &mut u32) -> bool {
        if *fuel == 0 {
            return false;
        }
        *fuel -= 1;
        // `y`'s bytes: itself if a set, else its union's one set member (if any).
        let y_bytes = match self.node(y) {
            Node::Set(q) => Some(q),
            Node::Or(v) => v.iter().find_map(|&m| match self.node(m) {
                Node::Set(q) => Some(q),
                _ => None,
            }),
            _ => None,
        };
        let item = |x: ExprId| {
            x == y
                || match self.node(x) {
                    Node::Set(p) => y_bytes.is_some_and(|q| p.is_subset(q)),
                    _ => matches!(self.node(y), Node::Or(v) if v.binary_search(&x).is_ok()),
                }
        };
        if a == ExprId::EMPTY || item(a) {
            return true;
        }
        match *self.node(a) {
            Node::Concat(h, t) => self.within_star(h, y, fuel) && self.within_star(t, y, fuel),
            Node::Repeat(x, _, _) => self.within_star(x, y, fuel),
            Node::Or(ref v) => v.iter().all(|&m| self.within_star(m, y, fuel)),
            _ => false,
        }
    }

    /// Every byte string not in `e` (the complement within all byte strings; callers
    /// that mean "within valid text" intersect with their universe).
    pub fn complement(&mut self, e: ExprId) -> ExprId {
        match *self.node(e) {
            Node::Not(x) => x,
            Node::Nothing => ExprId::ANY,
            _ if e == ExprId::ANY => ExprId::NOTHING,
            _ => self.intern(Node::Not(e)),
        }
    }

    /// The decimal numerals (digits only, leading zeros included) of the multiples of
    /// `k`, read with one state per remainder: `multipleOf` for any integer divisor, a
    /// regular language whose regex text would be large. `k` is at least 1.
    pub fn multiples_of(&mut self, k: u32) -> ExprId {
        self.intern(Node::Residue(k.max(1), 0))
    }

    /// The strings of `a` that are not in `b`.
    pub fn difference(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if b == ExprId::NOTHING {
            return a;
        }
        let not_b = self.complement(b);
        self.intersection(&[a, not_b])
    }

    /// `e` repeated `lo..=hi` times (`hi` `None`: unbounded).
    pub fn repeat(&mut self, e: ExprId, lo: u32, hi: Option<u32>) -> ExprId {
        let hi = hi.unwrap_or(UNBOUNDED);
        if hi < lo {
            return ExprId::NOTHING;
        }
        if hi == 0 || e == ExprId::EMPTY {
            return ExprId::EMPTY;
        }
        if e == ExprId::NOTHING {
            return if lo == 0 {
                ExprId::EMPTY
            } else {
                ExprId::NOTHING
            };
        }
        if lo == 1 && hi == 1 {
            return e;
        }
        let lo = if self.nullable(e) { 0 } else { lo };
        if let Node::Repeat(x, 0, inner_hi) = *self.node(e) {
            // (x*){0,n} = x* for n >= 1; (x?){0,n} = x{0,n}.
            if inner_hi == UNBOUNDED {
                return e;
            }
            if inner_hi == 1 {
                return self.intern(Node::Repeat(x, 0, hi));
            }
        }
        self.intern(Node::Repeat(e, lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_normalize_to_one_id() {
        let mut x = ExprSet::new();
        let a = x.literal(b"a");
        let b = x.literal(b"b");
        let c = x.literal(b"cd");
        // Unions are flat, sorted and deduplicated; single bytes merge into one set.
        let u1 = x.union(&[c, a, b]);
        let ab = x.union(&[b, a]);
        let u2 = x.union(&[ab, c, a]);
        assert_eq!(u1, u2);
        assert!(matches!(x.node(ab), Node::Set(_)));
        // Concatenation re-nests to the right.
        let abc1 = x.concat(&[a, b, c]);
        let ab_ = x.concat(&[a, b]);
        let abc2 = x.concat2(ab_, c);
        assert_eq!(abc1, abc2);
        // Units and zeros.
        assert_eq!(x.concat2(a, ExprId::EMPTY), a);
        assert_eq!(x.concat2(a, ExprId::NOTHING), ExprId::NOTHING);
        assert_eq!(x.intersection(&[a, ExprId::ANY]), a);
        assert_eq!(x.intersection(&[a, b]), ExprId::NOTHING);
        let na = x.complement(a);
        assert_eq!(x.complement(na), a);
        assert_eq!(x.repeat(a, 1, Some(1)), a);
        let astar = x.repeat(a, 0, None);
        assert_eq!(x.repeat(astar, 2, Some(5)), astar);
        assert!(x.nullable(astar) && !x.nullable(a) && x.nullable(na));
        assert!(x.positive(na));
    }

    #[test]
    fn a_member_inside_another_members_complement_empties_an_intersection() {
        let mut x = ExprSet::new();
        // A string that contains `ON` once another pattern has matched (`.*` joined the
        // union of the others): `.*ON.* ∧ ¬(.* | .*EW)` over the letters.
        let letters = x.regex("[A-Z]").unwrap();
        let any = x.repeat(letters, 0, None);
        let contains_on = x.regex("[A-Z]*ON[A-Z]*").unwrap();
        let ew = x.regex("[A-Z]*EW").unwrap();
        let others = x.union(&[any, ew]);
        let not_others = x.complement(others);
        assert_eq!(x.intersection(&[contains_on, not_others]), ExprId::NOTHING);
        // Pieces inside the star's item, counted or in a union, are inside it too.
        let counted = x.regex("(?:O|[A-C]{2,5})N").unwrap();
        assert_eq!(x.intersection(&[counted, not_others]), ExprId::NOTHING);
        // Not inside: a digit, or the other side's star of fewer characters.
        for outside in ["[A-Z]*1", "[A-Z]*ON[a-z]"] {
            let e = x.regex(outside).unwrap();
            assert_ne!(
                x.intersection(&[e, not_others]),
                ExprId::NOTHING,
                "{outside}"
            );
        }
        let upto_c = x.regex("[A-C]").unwrap();
        let some = x.repeat(upto_c, 0, None);
        let not_some = x.complement(some);
        assert_ne!(x.intersection(&[contains_on, not_some]), ExprId::NOTHING);
        // Not a count with a minimum: `x{2,}` does not hold the empty string.
        let two_or_more = x.repeat(letters, 2, None);
        let not_two = x.complement(two_or_more);
        let one = x.regex("[A-Z]?").unwrap();
        assert_ne!(x.intersection(&[one, not_two]), ExprId::NOTHING);
    }
}

#[cfg(test)]
mod differential;
