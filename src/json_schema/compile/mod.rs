//! Schema -> regex: the compiler.
//!
//! A schema's language is the union, over the JSON types it allows, of the values of
//! that type satisfying its keywords for that type, so each type is compiled on its own
//! and the results are alternated. Composition is resolved first: `$ref` and `allOf`
//! are merged into one schema ([`schema::merge`]), then each `anyOf` / `oneOf` is
//! distributed (`A & (B | C)` = `A&B | A&C`).

use std::rc::Rc;

use super::fragments::{self, JSON_CHAR};
use super::json::{pointer_push, write_json_string, Json};
use super::key_names;
use super::number::{self, in_range};
use super::pattern::{self, Pat, PropCache};
use super::re::{self, Interleave, Re};
use super::schema::{
    both, merge, show, unsupported, ArrayKeywords, Doc, Node, NodeRef, OneOf, Sch,
};
use super::schema::{ALL_TYPES, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};
use super::{stack_exhausted, stack_position, Config, PropertyOrder, MAX_SCHEMA_NESTING};
use crate::automaton::expr::{ExprDfa, ExprSet, FastMap, StringsBuilder};
use crate::automaton::primitives::StepOnDemand;
use crate::automaton::{Budget, Dfa, DfaConfig, Walk};
use crate::error::{Error, ErrorKind, Result};

mod array;
mod combine;
mod object;
mod recursion;
mod scalar;

// Helpers the parts share (each part reads the module's names through `use super::*`).
use combine::{enum_values, possible_types};
use object::{key_text, permutations, CANONICAL_STRING_CHAR};
use scalar::{every_spelling, value_types};

/// A `oneOf`'s complements, as the schema holds them (`OneOf::complements`).
type ComplementList = Rc<super::schema::Complements>;

/// At most this many `anyOf`/`oneOf` branches are expanded in one schema.
pub(crate) const MAX_BRANCHES: usize = 10_000;
/// In an automaton, `anyOf` groups (with a `oneOf` beside them) whose branches would
/// multiply past this many alternatives at one level are intersected, not distributed
/// ([`Compiler::any_of_intersected`]). Distributing merges each branch with its siblings
/// (one schema order for their properties, contradictions found early); past this it
/// was what ran into [`MAX_BRANCHES`].
const MAX_DISTRIBUTED: usize = 16;
/// Largest integer `multipleOf` an index reads by remainders (a state per remainder
/// reached, so at most this many per number).
const MAX_RESIDUE_DIVISOR: u32 = 1_000_000;

/// Most members of one interleaving (properties in any order, or merged from several
/// places): a state's unfolding and emptiness look at every member not yet written, so
/// an object's first mask costs about the square of this (a few milliseconds at the
/// cap, not minutes for 100,000 properties).
const MAX_INTERLEAVED_MEMBERS: usize = 1024;

/// `uniqueItems` over items of at most this many possible values (an automaton state
/// per set of values a text writes).
const MAX_UNIQUE_VALUES: usize = 64;

/// With [`PropertyOrder::Any`], at most this many declared properties per object.
pub(crate) const MAX_ANY_ORDER_PROPERTIES: usize = 6;
/// With [`PropertyOrder::Auto`], objects of at most this many declared properties take
/// them in any order. Measured on the development corpus (docs/schemabench.md, "Property
/// order"): 8 halves the schemas refusing a valid text and keeps masks' p99 under
/// 200 µs and p99.9 under 1 ms; 12 and 16 refuse a few texts fewer and pass neither.
pub const AUTO_ANY_ORDER_MAX_PROPERTIES: usize = 8;
/// `contains` with `maxItems` or `minItems` writes one alternative per position: at most this many.
const MAX_CONTAINS_POSITIONS: u64 = 256;
/// Enum objects with at most this many members are accepted in every key order.
const MAX_PERMUTED_MEMBERS: usize = 4;
/// An `enum` with at least this many strings (or booleans, null) is one trie in an
/// automaton (`Re::strings`): a union of that many literals is a node per byte of each,
/// all in the arena, and each derivative a union over every literal still alive (an enum
/// of 100,000 strings ran past the 32 MiB determinization limit at its first mask).
/// Smaller ones stay literals, whose shapes the row code knows.
const MIN_TRIE_LITERALS: usize = 64;
/// Work charged per sub-schema compiled (`Config::max_work`): about what one costs
/// beside its keywords (calibrated in wasm on the schema corpus, docs/reliability.md).
const STEPS_PER_NODE: u64 = 100;
/// Work charged per keyword entry of a schema cloned or merged (a property, a required
/// name, an enum value, an item schema...), and per enum value or object layout step.
const STEPS_PER_ENTRY: u64 = 20;
/// Work charged per regex node entry made ([`re::entries_made`]): making, lowering to an
/// automaton expression and dropping the tree is most of a compilation's time. Measured on
/// the schema corpus (5,767 schemas, natively and in wasm alike): 100-600 ns per entry, so
/// the default budget (about 830,000 entries) stops a compilation within about 1 s in wasm
/// (docs/reliability.md). 30 until the "any key but these" tries stopped making 35 entries
/// per character (the same budget then reached further into the corpus's slowest schema:
/// its tree's peak in wasm rose from 21 to 30 MiB), 40 after, 60 since the warm-worker run
/// of 2026-12-02 put that schema's refusal at 1.36 s in wasm (595 ms natively at 60, 800
/// at 40; the native triage passes the same 5,427 schemas at both).
const STEPS_PER_RE_ENTRY: u64 = 60;

/// A compiled sub-schema's context: the node, compact whitespace, loose objects
/// ([`Compiler::loose_objects`]) and the references on the stack (sorted).
type MemoKey = (*const Node, bool, bool, Vec<String>);

pub(crate) struct Compiler<'a> {
    pub(crate) doc: Doc<'a>,
    config: &'a Config,
    /// The whitespace allowed between tokens (empty when compact).
    ws: Re,
    ref_stack: Vec<String>,
    any_cache: FastMap<(usize, bool), Re>,
    /// Compiled sub-schemas by node, whitespace mode and the references on the stack
    /// (as a sorted list: only how often each is there matters, for the recursion
    /// limit). A definition used in many places, or at every level of a recursion,
    /// compiles once per context instead of once per use: a real-world schema made 1.3
    /// million regex node entries that lowered to under 6,000 distinct expressions.
    /// The node is kept (an `Rc`), so its address cannot be reused by another.
    node_memo: FastMap<MemoKey, (NodeRef, Re)>,
    /// [`Compiler::reaches_a_ref`] by node (kept, so that its address names no other).
    ref_below: FastMap<usize, (NodeRef, bool)>,
    /// `oneOf` complements parsed, by their list (its address, the list kept) and branch.
    complement_nodes: FastMap<(usize, usize), (ComplementList, Option<NodeRef>)>,
    /// Whether two branches of intersected groups are disjoint, by their nodes
    /// and restriction ([`Compiler::branches_disjoint`]).
    disjoint_branches: FastMap<(usize, usize, u32), (NodeRef, NodeRef, bool)>,
    /// Whether the schemas of a property two branches both require are disjoint, by
    /// their nodes, the check's depth and the stack as in `node_memo`: a 30-branch
    /// `oneOf`'s complements compare the same few property pairs thousands of times
    /// (`Github_hard---o17529`).
    disjoint_props: FastMap<(usize, usize, usize, Vec<String>), (NodeRef, NodeRef, bool)>,
    /// The `type` and sorted `required` of schemas whose groups were intersected, by
    /// number.
    restrictions: FastMap<(Option<u8>, Vec<Rc<str>>), u32>,
    /// A string's content under one pattern or format and no length, by keyword and
    /// source: the same pattern in many definitions compiles once.
    string_cache: FastMap<(&'static str, String), Re>,
    /// "Any key but these" by sorted names: an object compiled in several contexts (a
    /// definition under different reference stacks) shares one trie, made and lowered
    /// once (it was a quarter of the slowest compiles).
    key_cache: FastMap<Vec<String>, Re>,
    /// The contents of undeclared keys used unfiltered ([`key_body_not_in`], by node
    /// id): languages of which every JSON string body is a prefix, followed by a key's
    /// closing quote. A lazy index reads every string token as allowed at the start of
    /// one (`ExprDfa::covers_string_body`).
    pub(crate) string_bodies: FastMap<usize, Re>,
    /// `patternProperties` patterns as DFAs over key content, by pattern text, for
    /// [`pattern_rule`](Self::pattern_rule): made once per compile, not once per declared
    /// name and context (a schema whose one pattern met 21 names under many references
    /// spent 88% of its compile building the same DFA again).
    key_pattern_dfas: FastMap<String, Rc<Dfa>>,
    props: PropCache,
    branches: usize,
    /// Whether [`MAX_BRANCHES`] stopped this compile (then tried again with coarse
    /// `oneOf` complements, [`Doc::coarse_one_of`]).
    pub(crate) branch_limit_hit: bool,
    flatten_depth: usize,
    /// References cut at the recursion depth (matching nothing there) so far: a `oneOf`
    /// cannot trust a cut branch to be empty (a value may satisfy it as well).
    depth_cuts: usize,
    /// Whether any reference was cut at the recursion depth in this compile, kept where
    /// a tried part is taken back with its `depth_cuts` ([`Compiler::depth_cut`]).
    cut_anywhere: bool,
    /// The first keyword (and location) that needed an intersection or a complement:
    /// the reason a regex text cannot be written (`regex_from_json_schema` names it).
    pub(crate) automaton_only: Option<(&'static str, String)>,
    /// Nesting of `compile_node`/`compile_flat` calls, bounded by [`MAX_SCHEMA_NESTING`].
    nesting: usize,
    /// The stack's position when this compiler was made ([`stack_exhausted`]).
    stack_start: usize,
    /// The work limit (`Config::max_work`): combinations of `anyOf`, `oneOf` and `$ref`
    /// multiply, and this stops them before they take seconds.
    budget: Budget,
    /// [`re::entries_made`] when last charged.
    re_entries_charged: u64,
    /// Compiling for an automaton (not regex text): objects whose properties may come
    /// in any order become lazily unfolded interleavings ([`Re::interleave`]), of any
    /// size and with undeclared properties anywhere.
    pub(crate) for_automaton: bool,
    /// Objects put undeclared properties anywhere among the declared ones (each place's
    /// own order kept), not only after them: set while compiling the parts of an
    /// intersected `anyOf` ([`Compiler::any_of_intersected`]), where the properties one
    /// part declares are undeclared in the others and a text writes them in one order.
    loose_objects: bool,
    /// Recursive references written alone become calls into shared templates
    /// ([`Re::call`]): set for a lazy index's automaton.
    pub(crate) recursion_calls: bool,
    /// Template slots by (target, compact, loose objects): the context a target's
    /// body is compiled in.
    call_slots: FastMap<(String, bool, bool), u32>,
    /// The templates' bodies by slot (`None` until compiled), and the context each was
    /// called in (the key of `call_slots`).
    templates: Vec<Option<Re>>,
    template_contexts: Vec<(String, bool, bool)>,
    /// Whether a reference target reaches itself through references, by target.
    recursive: FastMap<String, bool>,
    /// The cycle (strongly connected component) of each target [`Compiler::recursive`]
    /// has decided, numbered (unique: a number taken once some target has it).
    component_of: FastMap<String, usize>,
    /// The targets of the references under a target ([`Doc::refs_under`]), by target.
    ref_edges: FastMap<String, Rc<[String]>>,
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(root: &'a Json, config: &'a Config, ws: Re) -> Compiler<'a> {
        Compiler {
            doc: Doc::new(root),
            config,
            ws,
            ref_stack: vec!["#".to_string()],
            any_cache: FastMap::default(),
            node_memo: FastMap::default(),
            ref_below: FastMap::default(),
            string_cache: FastMap::default(),
            complement_nodes: FastMap::default(),
            disjoint_branches: FastMap::default(),
            disjoint_props: FastMap::default(),
            restrictions: FastMap::default(),
            key_cache: FastMap::default(),
            string_bodies: FastMap::default(),
            key_pattern_dfas: FastMap::default(),
            props: PropCache::default(),
            branches: 0,
            branch_limit_hit: false,
            flatten_depth: 0,
            depth_cuts: 0,
            cut_anywhere: false,
            automaton_only: None,
            nesting: 0,
            stack_start: stack_position(),
            budget: Budget::new(config.get_max_work(), "JSON Schema"),
            re_entries_charged: re::entries_made(),
            for_automaton: false,
            loose_objects: false,
            recursion_calls: false,
            call_slots: FastMap::default(),
            templates: Vec::new(),
            template_contexts: Vec::new(),
            recursive: FastMap::default(),
            component_of: FastMap::default(),
            ref_edges: FastMap::default(),
        }
    }

    /// The templates the compiled expression calls, by slot ([`Re::call`]).
    pub(crate) fn take_templates(&mut self) -> Vec<Re> {
        std::mem::take(&mut self.templates)
            .into_iter()
            .map(|t| t.expect("every template is compiled before the compile returns"))
            .collect()
    }

    /// Free-form values already made (by [`Compiler::any`], keyed by depth and compact
    /// mode): a thread's template hands its own to each compile.
    pub(crate) fn seed_free_form(&mut self, levels: &FastMap<(usize, bool), Re>) {
        self.any_cache.clone_from(levels);
    }

    /// The free-form values made so far (see [`Compiler::seed_free_form`]).
    pub(crate) fn free_form_levels(&self) -> &FastMap<(usize, bool), Re> {
        &self.any_cache
    }

    /// Work steps used so far.
    pub(crate) fn work_used(&self) -> u64 {
        self.budget.used()
    }

    /// Charges the regex nodes made since the last call (which also bounds the nodes a
    /// compilation holds, its memory: 2 million entries by default).
    fn charge_re_entries(&mut self) -> Result<()> {
        let now = re::entries_made();
        let made = now.wrapping_sub(self.re_entries_charged);
        self.re_entries_charged = now;
        self.budget.charge(made.saturating_mul(STEPS_PER_RE_ENTRY))
    }

    /// Charges the copy or merge of schemas with these many keyword entries.
    fn charge_entries(&mut self, entries: u64) -> Result<()> {
        self.budget.charge(entries.saturating_mul(STEPS_PER_ENTRY))
    }

    /// [`merge`], charged by the keyword entries of both schemas.
    fn merge(&mut self, a: &Sch, b: &Sch) -> Result<Sch> {
        self.charge_entries(entries(a) + entries(b))?;
        merge(a, b)
    }

    pub(crate) fn compile_root(&mut self) -> Result<Re> {
        let root = self.doc.node_at("#")?;
        let re = self.compile_node(&root)?;
        self.compile_templates()?;
        self.charge_re_entries()?;
        Ok(re)
    }

    /// Whether a reference was cut at the recursion depth anywhere in this compile.
    pub(crate) fn depth_cut(&self) -> bool {
        self.cut_anywhere
    }

    fn compact(&self) -> bool {
        self.ws.is_empty()
    }

    /// Runs `f` one nesting level deeper: recursion through sub-schemas is bounded here,
    /// so no schema can overflow the stack (a trap in wasm32).
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<Re>) -> Result<Re> {
        if self.nesting >= MAX_SCHEMA_NESTING || stack_exhausted(self.stack_start) {
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                format!("sub-schemas (properties, items, $ref expansions, anyOf/oneOf, complements) nest more than {MAX_SCHEMA_NESTING} deep, or more than {} KiB of stack", super::MAX_STACK_BYTES >> 10),
            ));
        }
        self.budget.charge(STEPS_PER_NODE)?;
        self.charge_re_entries()?;
        self.nesting += 1;
        let out = f(self);
        self.nesting -= 1;
        out
    }

    fn compile_node(&mut self, n: &NodeRef) -> Result<Re> {
        if matches!(&**n, Node::Any | Node::Nothing) {
            return self.nested(|c| c.compile_node_inner(n));
        }
        // A sub-schema without a `$ref` below compiles the same under any stack.
        let refs = if self.reaches_a_ref(n) {
            self.stack_that_matters()?
        } else {
            Vec::new()
        };
        let key = (Rc::as_ptr(n), self.compact(), self.loose_objects, refs);
        if let Some((_, re)) = self.node_memo.get(&key) {
            return Ok(re.clone());
        }
        self.charge_entries(key.3.len() as u64)?;
        let re = self.nested(|c| c.compile_node_inner(n))?;
        self.node_memo.insert(key, (n.clone(), re.clone()));
        Ok(re)
    }

    /// Whether a `$ref` is written anywhere in `n` (its subschemas, `oneOf` branches and
    /// the complements taken when parsing): only through one can the reference stack
    /// change what `n` compiles to. (A `oneOf`'s complements have references only where
    /// its branches do.) Remembered per node: asked at every node compiled.
    pub(super) fn reaches_a_ref(&mut self, n: &NodeRef) -> bool {
        let key = Rc::as_ptr(n) as usize;
        if let Some((_, known)) = self.ref_below.get(&key) {
            return *known;
        }
        let found = match &**n {
            Node::Any | Node::Nothing => false,
            Node::AllOf(parts) => parts.iter().any(|p| self.reaches_a_ref(p)),
            Node::Schema(s) => {
                let (a, o, x) = (&s.array, &s.object, &s.apply);
                !x.refs.is_empty()
                    || a.prefix.iter().any(|p| self.reaches_a_ref(p))
                    || a.items.iter().any(|p| self.reaches_a_ref(p))
                    || a.contains.iter().any(|(p, _)| self.reaches_a_ref(p))
                    || o.props.iter().any(|(_, p)| self.reaches_a_ref(p))
                    || o.patterns.iter().any(|(_, p, _)| self.reaches_a_ref(p))
                    || o.additional.iter().any(|p| self.reaches_a_ref(p))
                    || o.names.iter().any(|p| self.reaches_a_ref(p))
                    || x.all_of.iter().any(|p| self.reaches_a_ref(p))
                    || x.any_of
                        .iter()
                        .flat_map(|(g, _)| g.iter())
                        .any(|p| self.reaches_a_ref(p))
                    || x.one_of
                        .iter()
                        .flat_map(|g| g.branches.iter())
                        .any(|p| self.reaches_a_ref(p))
            }
        };
        self.ref_below.insert(key, (n.clone(), found));
        found
    }

    /// The references on the stack that can change what a sub-schema compiles to, sorted
    /// (only how often each is there matters): those in a cycle, which [`too_deep`]
    /// counts, and the root's. A reference outside every cycle is never followed while it
    /// is on the stack, so its place there changes nothing: a definition reached through
    /// different chains of such references compiles once, not once per chain (the tail
    /// of the corpus compiled 2.45 sub-schemas per distinct one, one schema 148).
    ///
    /// [`too_deep`]: Self::too_deep
    pub(super) fn stack_that_matters(&mut self) -> Result<Vec<String>> {
        let mut refs = Vec::new();
        for i in 0..self.ref_stack.len() {
            let t = &self.ref_stack[i];
            // The root is on every stack once; whether it is in a cycle would need a scan
            // of the whole document.
            let recursive = t == "#"
                || match self.recursive.get(t) {
                    Some(&known) => known,
                    None => {
                        let t = t.clone();
                        self.is_recursive(&t)?
                    }
                };
            if recursive {
                refs.push(self.ref_stack[i].clone());
            }
        }
        crate::sort::sort(&mut refs);
        Ok(refs)
    }

    fn compile_node_inner(&mut self, n: &NodeRef) -> Result<Re> {
        match &**n {
            Node::Any => Ok(self.any(self.config.get_any_value_depth())),
            Node::Nothing => Ok(Re::never()),
            // A bare `$ref` compiles as its target node, so that every use of a
            // definition shares the target's memo entry (`node_memo`).
            Node::Schema(s) if s.only_ref().is_some() => {
                let (uri, at) = s.only_ref().expect("checked");
                let target = self.doc.resolve_ref(uri, at)?;
                if self.recursion_calls && self.is_recursive(&target)? {
                    return self.call_to(target);
                }
                if self.too_deep(&target)? {
                    self.cut_anywhere = true;
                    return Ok(Re::never());
                }
                self.budget.charge(STEPS_PER_NODE)?;
                let node = self.doc.node_at(&target)?;
                self.ref_stack.push(target);
                let out = self.compile_node(&node);
                self.ref_stack.pop();
                out
            }
            _ => {
                if self.recursion_calls {
                    if let Some(re) = self.recursion_intersected(n)? {
                        return Ok(re);
                    }
                }
                let mark = self.ref_stack.len();
                let flat = self.flatten(n);
                let out = match flat {
                    Ok(Some(s)) => self.compile_flat(s),
                    Ok(None) => Ok(Re::never()),
                    Err(e) => Err(e),
                };
                self.ref_stack.truncate(mark);
                out
            }
        }
    }

    /// Merges a node's `$ref`s and `allOf` into one schema (`None`: nothing validates).
    /// The references followed stay on the stack (the caller truncates it).
    fn flatten(&mut self, n: &NodeRef) -> Result<Option<Sch>> {
        self.flatten_depth += 1;
        let out = self.flatten_inner(n);
        self.flatten_depth -= 1;
        out
    }

    fn flatten_inner(&mut self, n: &NodeRef) -> Result<Option<Sch>> {
        if self.flatten_depth > 64 {
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                "allOf/$ref nested more than 64 deep".to_string(),
            ));
        }
        match &**n {
            Node::Any => Ok(Some(Sch::default())),
            Node::Nothing => Ok(None),
            Node::AllOf(parts) => {
                let mut acc: Option<Sch> = None;
                for p in parts {
                    let Some(f) = self.flatten(p)? else {
                        return Ok(None);
                    };
                    acc = Some(match acc {
                        None => f,
                        Some(a) => self.merge(&a, &f)?,
                    });
                }
                Ok(Some(acc.unwrap_or_default()))
            }
            Node::Schema(s) => {
                self.budget.charge(STEPS_PER_NODE)?;
                self.charge_entries(entries(s))?;
                let mut base: Sch = (**s).clone();
                base.apply.refs.clear();
                base.apply.all_of.clear();
                for (uri, at) in &s.apply.refs {
                    let target = self.doc.resolve_ref(uri, at)?;
                    if self.too_deep(&target)? {
                        self.depth_cuts += 1;
                        self.cut_anywhere = true;
                        return Ok(None);
                    }
                    self.ref_stack.push(target.clone());
                    let node = self.doc.node_at(&target)?;
                    let Some(t) = self.flatten(&node)? else {
                        return Ok(None);
                    };
                    base = self.merge(&base, &t)?;
                }
                for part in &s.apply.all_of {
                    let Some(t) = self.flatten(part)? else {
                        return Ok(None);
                    };
                    base = self.merge(&base, &t)?;
                }
                Ok(Some(base))
            }
        }
    }

    fn count_branch(&mut self, at: &str) -> Result<()> {
        self.branches += 1;
        if self.branches > MAX_BRANCHES {
            self.branch_limit_hit = true;
            return Err(unsupported(
                "anyOf",
                at,
                &format!("the combinations of anyOf/oneOf branches exceed {MAX_BRANCHES}"),
            ));
        }
        Ok(())
    }

    /// `f` with no whitespace between tokens: what is checked against values and names
    /// is compact text.
    fn compactly<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.ws, Re::empty());
        let out = f(self);
        self.ws = saved;
        out
    }

    /// Compiles a schema free of `$ref`/`allOf`, distributing `anyOf`/`oneOf`.
    fn compile_flat(&mut self, s: Sch) -> Result<Re> {
        self.nested(|c| c.compile_flat_inner(s))
    }

    fn compile_flat_inner(&mut self, s: Sch) -> Result<Re> {
        if self.intersects_any_of(&s) {
            return self.any_of_intersected(s);
        }
        if let Some((group, at)) = s.apply.any_of.first().cloned() {
            return self.any_of_distributed(s, group, at);
        }
        if let Some(one_of) = s.apply.one_of.first().cloned() {
            return self.one_of_distributed(s, one_of);
        }
        self.compile_types(&s)
    }

    // The three ways on are functions of their own, none inlined here: this one is
    // on every path of nested sub-schemas (an `anyOf` distributed group by group
    // recurses through it), and with their locals inlined its frame was 10 KiB, which
    // spent the compile's stack allowance after some 60 levels.

    /// The first `anyOf` group of `s` distributed: each branch merged with the rest.
    #[inline(never)]
    fn any_of_distributed(&mut self, s: Sch, group: Rc<[NodeRef]>, at: Rc<str>) -> Result<Re> {
        let mut rest = s;
        rest.apply.any_of.remove(0);
        let mut alts = Vec::new();
        let alone = rest.is_trivial();
        for b in group.iter() {
            self.count_branch(&at)?;
            if alone {
                // Nothing to merge a branch with: each compiles as a node of its own,
                // so that a branch that is a reference shares the target's memo entry
                // and, where the target recurses, is a call (a recursion through
                // `anyOf: [{"$ref": ...}]` was expanded in place at every level).
                alts.push(self.compile_node(b)?);
                continue;
            }
            if self.recursion_calls {
                if let Some(target) = self.recursive_ref(b)? {
                    alts.push(self.call_and(&[target], |c| c.compile_flat(rest.clone()))?);
                    continue;
                }
            }
            let mark = self.ref_stack.len();
            let out = match self.flatten(b) {
                Ok(Some(fb)) => self.merge(&rest, &fb).and_then(|m| self.compile_flat(m)),
                Ok(None) => Ok(Re::never()),
                Err(e) => Err(e),
            };
            self.ref_stack.truncate(mark);
            alts.push(out?);
        }
        Ok(Re::alt(alts))
    }

    /// The first `oneOf` of `s`: each branch merged with the rest and, where another may
    /// hold with it, with the other's complement.
    #[inline(never)]
    fn one_of_distributed(&mut self, s: Sch, one_of: OneOf) -> Result<Re> {
        let mut rest = s.clone();
        rest.apply.one_of.remove(0);
        // Merge every branch with the rest, remembering the references each followed.
        let mut merged: Vec<(usize, Sch, Vec<String>)> = Vec::new();
        let cuts = self.depth_cuts;
        for (i, b) in one_of.branches.iter().enumerate() {
            if let Some((m, pushed)) = self.merged_branch(&rest, b, &one_of.at)? {
                merged.push((i, m, pushed));
            }
        }
        if self.depth_cuts > cuts {
            // A branch is a reference past the recursion depth: it matches nothing
            // here, but a value may satisfy it and another branch, which `oneOf`
            // refuses. Nothing here can be written for sure, so nothing is (the
            // depth cut takes values away, never adds them).
            return Ok(Re::never());
        }
        // Branches that may hold together: each takes the other's complement.
        let mut clashes: Vec<Vec<usize>> = vec![Vec::new(); merged.len()];
        let mut first_clash = None;
        for x in 0..merged.len() {
            for y in x + 1..merged.len() {
                let (a, b) = (merged[x].1.clone(), merged[y].1.clone());
                let cuts = self.depth_cuts;
                // Disjoint only through a cut reference proves nothing.
                if !self.disjoint(&a, &b, 0)? || self.depth_cuts > cuts {
                    clashes[x].push(merged[y].0);
                    clashes[y].push(merged[x].0);
                    first_clash.get_or_insert((merged[x].0, merged[y].0));
                }
            }
        }
        let mut complements: FastMap<usize, Option<(Sch, Vec<String>)>> = FastMap::default();
        let mut alts = Vec::new();
        let alone = rest.is_trivial();
        for ((i, mut m, mut pushed), clash) in merged.into_iter().zip(clashes) {
            if clash.is_empty() && alone {
                // A branch apart from every other, with nothing to merge: a node of
                // its own, sharing its memo entry (a reference's target compiles
                // once for every `oneOf` that names it, as in `anyOf` above).
                alts.push(self.compile_node(&one_of.branches[i])?);
                continue;
            }
            let mut possible = true;
            for j in clash {
                let known = match complements.get(&j) {
                    Some(c) => c.clone(),
                    None => {
                        let c = self.one_of_complement(&one_of, j)?;
                        complements.insert(j, c.clone());
                        c
                    }
                };
                let Some((c, refs)) = known else {
                    possible = false;
                    break;
                };
                m = self.merge(&m, &c)?;
                pushed.extend(refs);
            }
            if !possible {
                continue;
            }
            alts.push(self.compile_with_refs(m, pushed)?);
        }
        // Nothing left: the schema's own verdict where every complement taken was
        // exact, else a refusal (the values left out may have been valid), unless
        // the recursion depth cut something on the way (a complement's reference, a
        // branch's value): nothing is what is left at that depth.
        let lossy = |j: &usize| !one_of.complements.exact(*j);
        if alts.iter().all(Re::is_never) && complements.keys().any(lossy) && self.depth_cuts == cuts
        {
            if let Some((i, j)) = first_clash {
                return Err(unsupported(
                    "oneOf",
                    &s.ptr,
                    &format!(
                        "branches {i} and {j} are not provably exclusive, and the complement of each that can be said leaves nothing"
                    ),
                ));
            }
        }
        Ok(Re::alt(alts))
    }

    #[inline(never)]
    fn compile_types(&mut self, s: &Sch) -> Result<Re> {
        if !s.enums.is_empty() {
            return self.compile_enum(s);
        }
        if s.is_trivial() {
            // `{}`: the same free-form value as `true`.
            return Ok(self.any(self.config.get_any_value_depth()));
        }
        let types = s.types.unwrap_or(ALL_TYPES);
        let mut alts = Vec::new();
        let excluded = |v: &Json| s.excluded.iter().any(|x| x.equals(v));
        if types & NULL != 0 && !excluded(&Json::Null) {
            alts.push(Re::lit(fragments::NULL));
        }
        if types & BOOLEAN != 0 {
            match (excluded(&Json::Bool(true)), excluded(&Json::Bool(false))) {
                (false, false) => alts.push(Re::raw(fragments::BOOLEAN)),
                (true, false) => alts.push(Re::lit("false")),
                (false, true) => alts.push(Re::lit("true")),
                (true, true) => {}
            }
        }
        if types & (NUMBER | INTEGER) == NUMBER {
            // Numbers that are not integers (`not: {"type": "integer"}`).
            if s.number.lo.is_some() || s.number.hi.is_some() || !s.number.multiple_of.is_empty() {
                return Err(unsupported(
                    "not",
                    &s.ptr,
                    "non-integer numbers with a range or multipleOf",
                ));
            }
            alts.push(Re::raw(number::NON_INTEGER));
        } else if types & (NUMBER | INTEGER) != 0 {
            alts.push(self.number(s, types & NUMBER == 0)?);
        }
        if types & STRING != 0 {
            let string = self.string(s)?;
            let names: Vec<Re> = s
                .excluded
                .iter()
                .filter_map(|v| match v {
                    Json::String(t) => Some(every_spelling(t)),
                    _ => None,
                })
                .collect();
            if names.is_empty() || string.is_never() {
                alts.push(string);
            } else {
                self.needs_automaton("not", &format!("{}/not", s.ptr));
                alts.push(Re::and([string, Re::not(Re::alt(names))]));
            }
        }
        if types & ARRAY != 0 {
            alts.push(self.array(s)?);
        }
        if types & OBJECT != 0 {
            alts.push(self.object(s)?);
        }
        Ok(Re::alt(alts))
    }

    /// Any JSON value with at most `depth` levels of nested arrays/objects.
    pub(crate) fn any(&mut self, depth: usize) -> Re {
        let key = (depth, self.compact());
        if let Some(r) = self.any_cache.get(&key) {
            return r.clone();
        }
        let string = Re::concat([Re::lit("\""), Re::star(Re::raw(JSON_CHAR)), Re::lit("\"")]);
        let mut alts = vec![
            Re::lit("null"),
            Re::raw(fragments::BOOLEAN),
            Re::raw(number::NUMBER),
            string.clone(),
        ];
        if depth > 0 {
            let inner = self.any(depth - 1);
            let sep = self.sep();
            let elems = Re::concat([
                inner.clone(),
                Re::star(Re::concat([sep.clone(), inner.clone()])),
            ]);
            alts.push(self.container("[", elems, true, "]"));
            let member = self.member(string, inner);
            let members = Re::concat([member.clone(), Re::star(Re::concat([sep, member]))]);
            alts.push(self.container("{", members, true, "}"));
        }
        let r = Re::alt(alts);
        self.any_cache.insert(key, r.clone());
        r
    }

    /// How deep the free-form values that `root` reaches nest containers (0: none, or
    /// only scalars). A value that nests `d` levels has a state for every stack of `d`
    /// open containers (objects and arrays close differently), so the complete automaton
    /// of `root` has at least `2^d` states: the floor [`Index`](crate::Index) checks
    /// before it determinizes everything (an eager build, a serialization).
    pub(crate) fn free_form_depth(&self, root: &Re) -> usize {
        // Depth 0 holds no container; without deeper ones there is nothing to walk for.
        let marks: FastMap<_, _> = self
            .any_cache
            .iter()
            .filter(|(&(depth, _), _)| depth > 0)
            .map(|(&(depth, _), r)| (r.id(), depth))
            .collect();
        if marks.is_empty() {
            return 0;
        }
        root.deepest_mark(&marks)
    }
}

fn clamp32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The schema location of a keyword location (`#/a/minimum` -> `#/a`).
fn parent(at: &str) -> &str {
    match at.rfind('/') {
        Some(i) if i > 0 => &at[..i],
        _ => "#",
    }
}

/// The keyword entries of a schema that a clone or a merge copies (work accounting).
fn entries(s: &Sch) -> u64 {
    let lists = s.enums.iter().map(|(v, _)| v.len()).sum::<usize>()
        + s.number.multiple_of.len()
        + s.string.patterns.len()
        + s.string.excluded_patterns.len()
        + s.string.formats.len()
        + s.array.prefix.len()
        + s.array.contains.len()
        + s.object.props.len()
        + s.object.required.len()
        + s.object.patterns.len()
        + s.apply.all_of.len()
        + s.apply.any_of.iter().map(|(g, _)| g.len()).sum::<usize>()
        + s.apply
            .one_of
            .iter()
            .map(|o| o.branches.len())
            .sum::<usize>()
        + s.apply.refs.len();
    1 + lists as u64
}

#[cfg(test)]
mod tests {
    use super::super::{automaton_from_json_schema_str, Config, SchemaAutomaton};
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::primitives::StepOnDemand;
    use crate::automaton::{DfaConfig, Walk};

    /// Whether the lazy automaton of a compiled schema accepts a whole text.
    fn matcher(a: SchemaAutomaton) -> impl FnMut(&str) -> bool {
        let mut dfa = ExprDfa::new(a.exprs, a.root, &DfaConfig::new(), u64::MAX, "t".into())
            .expect("an automaton");
        move |t| {
            matches!(
                dfa.walk(ExprDfa::START, t.as_bytes()),
                Ok(Walk::Alive { is_match: true, .. })
            )
        }
    }

    /// Work (derivative nodes, in budget steps) the lazy automaton of `schema` takes to
    /// decide each text, which must be accepted exactly where `expected` says, summed.
    fn walk_work(schema: &str, texts: &[(&str, bool)]) -> u64 {
        let config = Config::new()
            .allow_additional_properties(true)
            .for_lazy_index();
        let a = automaton_from_json_schema_str(schema, &config).unwrap();
        let mut dfa = ExprDfa::new(a.exprs, a.root, &DfaConfig::new(), u64::MAX, "t".into())
            .expect("an automaton");
        let mut work = 0;
        for (text, expected) in texts {
            dfa.begin_call();
            let accepted = matches!(
                dfa.walk(ExprDfa::START, text.as_bytes()),
                Ok(Walk::Alive { is_match: true, .. })
            );
            assert_eq!(accepted, *expected, "{text}");
            work += dfa.work_used();
        }
        work
    }

    /// The same branches as `oneOf` and as `anyOf`: the work the `oneOf` takes over
    /// the `anyOf`'s, on texts each branch of which holds alone (`oneOf` accepts them
    /// too), checking also `one_of_only`: texts only the `anyOf` accepts.
    fn one_of_over_any_of(branches: &str, texts: &[&str], one_of_refuses: &[&str]) -> f64 {
        let accepted: Vec<(&str, bool)> = texts.iter().map(|t| (*t, true)).collect();
        let any_of = walk_work(&format!(r#"{{"anyOf":[{branches}]}}"#), &accepted);
        let mut with_refused = accepted.clone();
        with_refused.extend(one_of_refuses.iter().map(|t| (*t, false)));
        let one_of = walk_work(&format!(r#"{{"oneOf":[{branches}]}}"#), &with_refused);
        one_of as f64 / any_of as f64
    }

    /// A `oneOf` of objects whose properties are all optional (an address whose
    /// `country` decides which `state`s are valid, as government forms write it): each
    /// branch takes every other's complement, an `anyOf` of "country present and not
    /// theirs", "state present and not theirs" and "postal code present and invalid".
    /// Merged with the branch, the first is the same in every complement, the last holds
    /// for no value; taken out and dropped, what is left merges into one object. The
    /// twelve branches' intersection of 34 objects each was derived at every byte of the
    /// address (36 ms masks in wasm): now within a few times the `anyOf`'s work.
    #[test]
    fn overlapping_one_of_branches_are_not_intersected_side_by_side() {
        let branches: Vec<String> = (0..12)
            .map(|i| {
                let states: Vec<String> = (0..8).map(|k| format!(r#""S{i}x{k}""#)).collect();
                format!(
                    r#"{{"type":"object","properties":{{"country":{{"enum":["C{i}"]}},"state":{{"enum":[{}]}},"postalCode":{{"type":"string","maxLength":10}}}}}}"#,
                    states.join(",")
                )
            })
            .collect();
        let ratio = one_of_over_any_of(
            &branches.join(","),
            &[
                r#"{"country":"C3","state":"S3x1","postalCode":"12345"}"#,
                r#"{"state":"S7x7"}"#,
                r#"{"country":"C11"}"#,
            ],
            &[r#"{}"#, r#"{"postalCode":"12345"}"#],
        );
        assert!(ratio < 3.0, "oneOf takes {ratio:.1}x the anyOf's work");
    }

    /// `oneOf` branches told apart by a property whose `enum` of every kind meets a
    /// `pattern` naming one (state-machine schemas: `"type": {"enum": [..kinds..]}` in a
    /// base, `"pattern": "compound"` in a branch) are disjoint: the proof reads the enum's
    /// values through the patterns, and the branches need no complements (one such
    /// schema compiled in 93 ms and spent 341 ms in masks natively; 10 and 18 now).
    #[test]
    fn enum_values_read_through_patterns_tell_branches_apart() {
        let kinds = [
            "alpha", "beta", "gamma", "delta", "omega", "sigma", "tau", "rho", "psi", "chi",
        ];
        let all: Vec<String> = kinds.iter().map(|k| format!(r#""{k}""#)).collect();
        let branches: Vec<String> = kinds
            .iter()
            .map(|k| {
                format!(
                    r#"{{"type":"object","required":["kind"],"properties":{{"kind":{{"type":"string","enum":[{}],"pattern":"{k}"}},"{k}Only":{{"type":"string"}},"note":{{"type":"string","maxLength":20}}}}}}"#,
                    all.join(",")
                )
            })
            .collect();
        let ratio = one_of_over_any_of(
            &branches.join(","),
            &[
                r#"{"kind":"beta","betaOnly":"x","note":"n"}"#,
                r#"{"kind":"sigma"}"#,
            ],
            &[r#"{"kind":"zeta"}"#, r#"{"note":"n"}"#],
        );
        assert!(ratio < 1.5, "oneOf takes {ratio:.1}x the anyOf's work");
    }

    /// A `oneOf` of closed objects told apart by their one key (a condition language:
    /// `{"and": [..]}`, `{"or": [..]}`, `{"field": ".."}`): each branch takes every
    /// other's complement, "some key not among theirs", which for an object that may
    /// only hold its own key is "not empty". Intersected as they were, a key start
    /// derived 144 objects (33 ms masks in wasm).
    #[test]
    fn closed_one_key_branches_need_no_complement_automata() {
        let keys = [
            "and", "or", "not", "field", "equals", "empty", "gt", "lt", "ge", "le",
        ];
        let branches: Vec<String> = keys
            .iter()
            .map(|k| {
                format!(
                    r#"{{"properties":{{"{k}":{{"type":"string"}}}},"additionalProperties":false}}"#
                )
            })
            .collect();
        let ratio = one_of_over_any_of(
            &branches.join(","),
            &[r#"{"field":"a"}"#, r#"{"le":"b"}"#, r#"{"and":"c"}"#],
            &[r#"{}"#, r#"{"and":"c","or":"d"}"#],
        );
        assert!(ratio < 3.0, "oneOf takes {ratio:.1}x the anyOf's work");
    }

    /// A `oneOf` of objects told apart by a property none requires (a list of
    /// validation rules, `{"assert": "Email", "checkMX": true}`, one branch per rule):
    /// every branch takes every other's complement, and the intersected complements'
    /// branches were checked pairwise, merged with each branch anew: 32 rules (a real
    /// schema's) spent 80% of the work budget there and failed. Pairs are now checked
    /// once per compile, unmerged, and the schema compiles in about half the budget.
    #[test]
    fn many_overlapping_branches_check_their_complements_once() {
        let branches: Vec<String> = (0..32)
            .map(|i| {
                format!(
                    r#"{{"properties":{{"assert":{{"enum":["R{i}"]}},"message":{{"type":"string"}},"opt{i}":{{"type":"boolean"}}}}}}"#
                )
            })
            .collect();
        let schema = format!(
            r#"{{"type":"object","properties":{{"rules":{{"type":"array","items":{{"oneOf":[{}]}}}}}}}}"#,
            branches.join(",")
        );
        let config = Config::new()
            .allow_additional_properties(true)
            .for_lazy_index();
        let a = automaton_from_json_schema_str(&schema, &config).unwrap();
        let work = a.work;
        let mut accepts = matcher(a);
        assert!(accepts(
            r#"{"rules":[{"assert":"R3","opt3":true},{"assert":"R31"}]}"#
        ));
        // No rule, or a rule's own option beside another's name: more than one branch
        // holds, or none.
        assert!(!accepts(r#"{"rules":[{"message":"m"}]}"#));
        assert!(work < 35_000_000, "{work} work steps");
    }

    /// A `oneOf`'s complements are taken when the compiler needs one, not as the schema
    /// is parsed: 300 `oneOf`s told apart by type (null or an object of 200 properties)
    /// need none, and taking them all used up the document's complement visits
    /// (`MAX_COMPLEMENT_VISITS`), so that the one `oneOf` whose branches overlap got
    /// no complement and the schema was refused. Those 300 branches that name one
    /// definition also compile it once (as a node of its own, not merged anew per
    /// `oneOf`: that alone ran past the work budget).
    #[test]
    fn one_of_complements_are_taken_when_needed() {
        let big: Vec<String> = (0..200)
            .map(|i| format!(r#""f{i}":{{"type":"string"}}"#))
            .collect();
        let sites: Vec<String> = (0..300)
            .map(|i| {
                format!(r##""p{i}":{{"oneOf":[{{"type":"null"}},{{"$ref":"#/$defs/big"}}]}}"##)
            })
            .collect();
        let schema = format!(
            r##"{{"$defs":{{"big":{{"type":"object","properties":{{{}}}}}}},"type":"object","properties":{{{},"x":{{"oneOf":[{{"type":"object","required":["a"]}},{{"type":"object","required":["b"]}}]}}}}}}"##,
            big.join(","),
            sites.join(",")
        );
        let compiled = automaton_from_json_schema_str(&schema, &Config::new());
        assert!(compiled.is_ok(), "{:?}", compiled.err());
    }

    /// A pattern compiles once per schema wherever it appears: a `oneOf` of string
    /// patterns whose branches cannot be told apart takes each branch with the others'
    /// patterns excluded, and those were parsed and compiled again for every branch (an
    /// ABI schema's type `oneOf`: 55 ms natively, 4 ms once cached).
    #[test]
    fn a_pattern_compiles_once_per_schema() {
        let big: Vec<String> = (0..300).map(|i| format!("k{i}x{}", i * 7)).collect();
        let patterns = [
            format!("^u?fixed({})$", big.join("|")),
            "^u?int[0-9]*$".to_string(),
            "^bytes[0-9]*$".to_string(),
            "^bool$".to_string(),
        ];
        let branches: Vec<String> = patterns
            .iter()
            .map(|p| {
                format!(
                    r#"{{"type":"string","pattern":{}}}"#,
                    serde_json::to_string(p).unwrap()
                )
            })
            .collect();
        let one_of = format!(r#"{{"oneOf":[{}]}}"#, branches.join(","));
        let any_of = format!(r#"{{"anyOf":[{}]}}"#, branches.join(","));
        let config = Config::new();
        let one_of = automaton_from_json_schema_str(&one_of, &config).unwrap();
        let any_of = automaton_from_json_schema_str(&any_of, &config).unwrap();
        assert!(
            one_of.work < 2 * any_of.work,
            "oneOf {} vs anyOf {}",
            one_of.work,
            any_of.work
        );
    }

    /// A recursion through `anyOf` branches (`{"anyOf": [{"$ref": "#/$defs/t"}, ...]}`,
    /// as CWL's and many generated schemas recurse) is a call into one template, not an
    /// expansion in place at every level: six such sites per level cost about what six
    /// properties do (in place, every level multiplied them, past the branch limit), and
    /// the recursion still stops at `max_recursion_depth`.
    #[test]
    fn a_recursion_through_any_of_compiles_once() {
        let sites: Vec<String> = (0..6)
            .map(|i| format!(r##""p{i}":{{"anyOf":[{{"$ref":"#/$defs/t"}},{{"type":"null"}}]}}"##))
            .collect();
        let schema = format!(
            r##"{{"$defs":{{"t":{{"type":"object","properties":{{{}}}}}}},"$ref":"#/$defs/t"}}"##,
            sites.join(",")
        );
        let flat: Vec<String> = (0..6)
            .map(|i| format!(r#""p{i}":{{"type":["object","null"]}}"#))
            .collect();
        let flat = format!(r#"{{"type":"object","properties":{{{}}}}}"#, flat.join(","));
        let config = Config::new();
        let recursive = automaton_from_json_schema_str(&schema, &config).unwrap();
        let plain = automaton_from_json_schema_str(&flat, &config).unwrap();
        assert!(
            recursive.work < 4 * plain.work,
            "recursive {} vs plain {}",
            recursive.work,
            plain.work
        );
        let shallow = r##"{"$defs":{"t":{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#/$defs/t"},{"type":"null"}]}}}},"$ref":"#/$defs/t"}"##;
        let a = automaton_from_json_schema_str(shallow, &config.clone().max_recursion_depth(1))
            .unwrap();
        let mut accepts = matcher(a);
        assert!(accepts(r#"{"a":null}"#));
        assert!(accepts(r#"{"a":{"a":null}}"#));
        assert!(!accepts(r#"{"a":{"a":{"a":{"a":{"a":{"a":null}}}}}}"#));
    }

    /// A definition used in many places compiles once per context: 100 properties that
    /// refer to one 100-property definition cost about what 200 properties cost, not
    /// 10,000 (the memo of `compile_node`); the language is the same either way.
    #[test]
    fn a_shared_definition_compiles_once() {
        let def: Vec<String> = (0..100)
            .map(|i| format!(r#""d{i}":{{"type":"integer"}}"#))
            .collect();
        let uses: Vec<String> = (0..100)
            .map(|i| format!(r##""u{i}":{{"$ref":"#/$defs/d"}}"##))
            .collect();
        let schema = format!(
            r#"{{"$defs":{{"d":{{"type":"object","properties":{{{}}}}}}},"type":"object","properties":{{{}}}}}"#,
            def.join(","),
            uses.join(",")
        );
        let flat: Vec<String> = (0..200)
            .map(|i| format!(r#""p{i}":{{"type":"integer"}}"#))
            .collect();
        let flat = format!(r#"{{"type":"object","properties":{{{}}}}}"#, flat.join(","));
        let config = Config::new();
        let shared = automaton_from_json_schema_str(&schema, &config).unwrap();
        let plain = automaton_from_json_schema_str(&flat, &config).unwrap();
        assert!(
            shared.work < 3 * plain.work,
            "shared {} vs plain {}",
            shared.work,
            plain.work
        );
        // Through references outside any cycle, the chain that led to a definition is
        // no context of its own: 50 wrappers around one 100-property definition cost
        // about what the definition does once, not 50 times (it did before).
        let wrappers: Vec<String> = (0..50)
            .map(|i| {
                format!(
                    r##""w{i}":{{"type":"object","properties":{{"x":{{"$ref":"#/$defs/d"}}}}}}"##
                )
            })
            .collect();
        let via: Vec<String> = (0..50)
            .map(|i| format!(r##""v{i}":{{"$ref":"#/$defs/w{i}"}}"##))
            .collect();
        let chained = format!(
            r#"{{"$defs":{{"d":{{"type":"object","properties":{{{}}}}},{}}},"type":"object","properties":{{{}}}}}"#,
            def.join(","),
            wrappers.join(","),
            via.join(",")
        );
        let chained = automaton_from_json_schema_str(&chained, &config).unwrap();
        assert!(
            chained.work < 3 * plain.work,
            "chained {} vs plain {}",
            chained.work,
            plain.work
        );
        // Recursion: each level is a new context (the reference is on the stack once
        // more), so it still stops at max_recursion_depth.
        let tree = r##"{"$defs":{"t":{"type":"object","properties":{"a":{"$ref":"#/$defs/t"},"b":{"$ref":"#/$defs/t"}}}},"$ref":"#/$defs/t"}"##;
        let a =
            automaton_from_json_schema_str(tree, &config.clone().max_recursion_depth(2)).unwrap();
        let mut accepts = matcher(a);
        // The root and two recursive expansions; a third is too deep.
        assert!(accepts(r#"{"a":{"b":{}}}"#));
        assert!(!accepts(r#"{"b":{"a":{}},"a":{}}"#)); // schema order: a before b
        assert!(accepts(r#"{"a":{},"b":{"a":{}}}"#));
        assert!(!accepts(r#"{"a":{"b":{"a":{}}}}"#));
        assert!(!accepts(r#"{"b":{"b":{"b":{}}}}"#));
    }

    /// A recursive definition merged with other keywords (ajv's "secure" meta-schema,
    /// `Github_medium---o39217`: its `dependencies` merge `#` into `propertyNames` and
    /// `items` at every level) is intersected with a call to its template, not
    /// expanded in place: expanded, its merges multiplied past the combinations limit
    /// at the second level. The rules of both sides hold at every depth.
    #[test]
    fn a_recursive_definition_merged_with_keywords_is_called() {
        let schema = r##"{"$schema": "http://json-schema.org/draft-07/schema#", "$id": "https://raw.githubusercontent.com/ajv-validator/ajv/master/lib/refs/json-schema-secure.json#", "title": "Meta-schema for the security assessment of JSON Schemas", "description": "If a JSON Schema fails validation against this meta-schema, it may be unsafe to validate untrusted data", "definitions": {"schemaArray": {"type": "array", "minItems": 1, "items": {"$ref": "#"}}}, "dependencies": {"patternProperties": {"description": "prevent slow validation of large property names", "required": ["propertyNames"], "properties": {"propertyNames": {"required": ["maxLength"]}}}, "_uniqueItems": {"description": "prevent slow validation of large non-scalar arrays", "if": {"properties": {"_uniqueItems": {"const": true}, "items": {"properties": {"type": {"anyOf": [{"enum": ["object", "array"]}, {"type": "array", "contains": {"enum": ["object", "array"]}}]}}}}}, "then": {"required": ["maxItems"]}}, "pattern": {"description": "prevent slow pattern matching of large strings", "required": ["maxLength"]}, "format": {"description": "prevent slow format validation of large strings", "required": ["maxLength"]}}, "properties": {"additionalItems": {"$ref": "#"}, "additionalProperties": {"$ref": "#"}, "dependencies": {"additionalProperties": {"anyOf": [{"type": "array"}, {"$ref": "#"}]}}, "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/definitions/schemaArray"}]}, "definitions": {"additionalProperties": {"$ref": "#"}}, "patternProperties": {"additionalProperties": {"$ref": "#"}}, "properties": {"additionalProperties": {"$ref": "#"}}, "if": {"$ref": "#"}, "then": {"$ref": "#"}, "else": {"$ref": "#"}, "allOf": {"$ref": "#/definitions/schemaArray"}, "anyOf": {"$ref": "#/definitions/schemaArray"}, "oneOf": {"$ref": "#/definitions/schemaArray"}, "not": {"$ref": "#"}, "contains": {"$ref": "#"}, "propertyNames": {"$ref": "#"}}}"##;
        let config = Config::new()
            .allow_additional_properties(true)
            .for_lazy_index();
        let a = automaton_from_json_schema_str(schema, &config).unwrap();
        assert!(a.work < 2_000_000, "work {}", a.work);
        let mut accepts = matcher(a);
        // `patternProperties` requires `propertyNames` with `maxLength` (the rest's rule).
        assert!(accepts(
            r#"{"patternProperties":{},"propertyNames":{"maxLength":3}}"#
        ));
        assert!(!accepts(r#"{"patternProperties":{},"propertyNames":{}}"#));
        // Inside the merged `propertyNames`, `#`'s own rules (the call's): `pattern`
        // requires `maxLength` (written after it: the schema's order), one level down
        // and two.
        assert!(accepts(
            r#"{"patternProperties":{},"propertyNames":{"pattern":"a","maxLength":3}}"#
        ));
        assert!(!accepts(
            r#"{"patternProperties":{},"propertyNames":{"pattern":"a","minLength":3}}"#
        ));
        assert!(accepts(
            r#"{"patternProperties":{},"propertyNames":{"not":{"pattern":"a","maxLength":1},"maxLength":3}}"#
        ));
        assert!(!accepts(
            r#"{"patternProperties":{},"propertyNames":{"not":{"pattern":"a"},"maxLength":3}}"#
        ));
        // And the rest's rule again inside the call: a `patternProperties` nested in
        // `propertyNames` needs its own `propertyNames` with `maxLength`.
        assert!(!accepts(
            r#"{"patternProperties":{},"propertyNames":{"patternProperties":{},"maxLength":3}}"#
        ));
        assert!(accepts(
            r#"{"patternProperties":{},"propertyNames":{"patternProperties":{},"propertyNames":{"maxLength":2},"maxLength":3}}"#
        ));
    }
}
