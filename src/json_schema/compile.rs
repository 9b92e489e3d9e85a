//! Schema -> regex: the compiler.
//!
//! A schema's language is the union, over the JSON types it allows, of the values of
//! that type satisfying its keywords for that type, so each type is compiled on its own
//! and the results are alternated. Composition is resolved first: `$ref` and `allOf`
//! are merged into one schema ([`schema::merge`]), then each `anyOf` / `oneOf` is
//! distributed (`A & (B | C)` = `A&B | A&C`).

use std::rc::Rc;

use super::fragments::{self, JSON_CHAR};
use super::json::{canonical_char, pointer_push, write_json_string, Json};
use super::number::{self, in_range};
use super::pattern::{self, Pat, PropCache};
use super::re::{self, Interleave, Re};
use super::schema::{both, merge, unsupported, ArrayKeywords, Doc, Node, NodeRef, OneOf, Sch};
use super::schema::{ALL_TYPES, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};
use super::{stack_exhausted, stack_position, Config, PropertyOrder, MAX_SCHEMA_NESTING};
use crate::automaton::determinize::StepOnDemand;
use crate::automaton::expr::{ExprDfa, ExprSet, FastMap, StringsBuilder};
use crate::automaton::{Budget, Dfa, DfaConfig, Walk};
use crate::error::{Error, ErrorKind, Result};

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
    format_cache: FastMap<String, Re>,
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
    /// The targets of the references under a target ([`Doc::refs_under`]), by target.
    ref_edges: FastMap<String, Rc<[String]>>,
}

/// The state of [`Compiler::is_recursive`]'s search: targets numbered as found.
#[derive(Default)]
struct Tarjan {
    number: FastMap<String, usize>,
    names: Vec<String>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    self_loop: Vec<bool>,
    stack: Vec<usize>,
    frames: Vec<TarjanFrame>,
}

struct TarjanFrame {
    node: usize,
    edges: Rc<[String]>,
    next: usize,
}

impl Tarjan {
    fn open(&mut self, name: String, edges: Rc<[String]>) {
        let id = self.names.len();
        self.self_loop.push(edges.contains(&name));
        self.number.insert(name.clone(), id);
        self.names.push(name);
        self.low.push(id);
        self.on_stack.push(true);
        self.stack.push(id);
        self.frames.push(TarjanFrame {
            node: id,
            edges,
            next: 0,
        });
    }
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
            format_cache: FastMap::default(),
            key_cache: FastMap::default(),
            string_bodies: FastMap::default(),
            key_pattern_dfas: FastMap::default(),
            props: PropCache::default(),
            branches: 0,
            branch_limit_hit: false,
            flatten_depth: 0,
            depth_cuts: 0,
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
        let mut refs = self.ref_stack.clone();
        refs.sort_unstable();
        let key = (Rc::as_ptr(n), self.compact(), self.loose_objects, refs);
        if let Some((_, re)) = self.node_memo.get(&key) {
            return Ok(re.clone());
        }
        self.charge_entries(key.3.len() as u64)?;
        let re = self.nested(|c| c.compile_node_inner(n))?;
        self.node_memo.insert(key, (n.clone(), re.clone()));
        Ok(re)
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
                if self.too_deep(&target) {
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

    /// A call to `target`'s template in this context. Its body is compiled later, by
    /// [`compile_templates`](Self::compile_templates), not here: a chain of definitions
    /// each calling the next would otherwise nest one compile per link.
    fn call_to(&mut self, target: String) -> Result<Re> {
        let key = (target, self.compact(), self.loose_objects);
        if let Some(&slot) = self.call_slots.get(&key) {
            return Ok(Re::call(slot));
        }
        let slot = self.templates.len() as u32;
        self.call_slots.insert(key.clone(), slot);
        self.template_contexts.push(key);
        self.templates.push(None);
        Ok(Re::call(slot))
    }

    /// Compiles the bodies of the templates called so far (and of those their bodies
    /// call), each with only its target on the reference stack: every recursive
    /// reference in it is a call too, so a body does not depend on where it was first
    /// met, and one template serves every use and every depth. Whitespace and loose
    /// objects are those of the context the template was called in.
    fn compile_templates(&mut self) -> Result<()> {
        let mut next = 0;
        while next < self.template_contexts.len() {
            let (target, compact, loose) = self.template_contexts[next].clone();
            let node = self.doc.node_at(&target)?;
            let ws = if compact {
                Re::empty()
            } else {
                self.ws.clone()
            };
            let saved_ws = std::mem::replace(&mut self.ws, ws);
            let saved_loose = std::mem::replace(&mut self.loose_objects, loose);
            let outer = std::mem::replace(&mut self.ref_stack, vec![target]);
            let body = self.compile_node(&node);
            self.ref_stack = outer;
            self.ws = saved_ws;
            self.loose_objects = saved_loose;
            self.templates[next] = Some(body?);
            next += 1;
        }
        Ok(())
    }

    /// Whether `target` reaches itself through the references under it (and under
    /// theirs). Tarjan's strongly connected components over the document's reference
    /// graph, iteratively (a chain of definitions must not deepen the native stack):
    /// every target the search finishes is decided at once, and a later search stops at
    /// decided targets (a cycle through one would have been found with it), so each
    /// target's references are listed and walked once per compile.
    fn is_recursive(&mut self, target: &str) -> Result<bool> {
        if let Some(&known) = self.recursive.get(target) {
            return Ok(known);
        }
        let mut t = Tarjan::default();
        let edges = self.refs_under(target)?;
        t.open(target.to_string(), edges);
        while let Some(frame) = t.frames.last_mut() {
            let v = frame.node;
            if frame.next < frame.edges.len() {
                let w = frame.edges[frame.next].clone();
                frame.next += 1;
                if self.recursive.contains_key(&w) {
                    continue;
                }
                match t.number.get(&w) {
                    None => {
                        let edges = self.refs_under(&w)?;
                        t.open(w, edges);
                    }
                    Some(&wi) if t.on_stack[wi] => t.low[v] = t.low[v].min(wi),
                    Some(_) => {}
                }
                continue;
            }
            t.frames.pop();
            if let Some(parent) = t.frames.last() {
                t.low[parent.node] = t.low[parent.node].min(t.low[v]);
            }
            if t.low[v] == v {
                let at = t.stack.iter().rposition(|&x| x == v).expect("on the stack");
                let component: Vec<usize> = t.stack.drain(at..).collect();
                let cyclic = component.len() > 1 || t.self_loop[v];
                for x in component {
                    t.on_stack[x] = false;
                    self.recursive.insert(t.names[x].clone(), cyclic);
                }
            }
        }
        Ok(self.recursive[target])
    }

    fn refs_under(&mut self, target: &str) -> Result<Rc<[String]>> {
        if let Some(r) = self.ref_edges.get(target) {
            return Ok(r.clone());
        }
        let mut visited = 0u64;
        let refs: Rc<[String]> = self.doc.refs_under(target, &mut || visited += 1).into();
        self.budget
            .charge(visited.saturating_mul(STEPS_PER_ENTRY))?;
        self.ref_edges.insert(target.to_string(), refs.clone());
        Ok(refs)
    }

    /// Whether following a reference to `target` once more recurses deeper than
    /// `max_recursion_depth`: nothing more can be written there.
    fn too_deep(&self, target: &str) -> bool {
        self.ref_stack.iter().filter(|t| *t == target).count()
            > self.config.get_max_recursion_depth()
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
                    if self.too_deep(&target) {
                        self.depth_cuts += 1;
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
            let mut rest = s.clone();
            rest.apply.any_of.remove(0);
            let mut alts = Vec::new();
            for b in &group {
                self.count_branch(&at)?;
                let mark = self.ref_stack.len();
                let out = match self.flatten(b) {
                    Ok(Some(fb)) => self.merge(&rest, &fb).and_then(|m| self.compile_flat(m)),
                    Ok(None) => Ok(Re::never()),
                    Err(e) => Err(e),
                };
                self.ref_stack.truncate(mark);
                alts.push(out?);
            }
            return Ok(Re::alt(alts));
        }
        if let Some(one_of) = s.apply.one_of.first().cloned() {
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
            for ((_, mut m, mut pushed), clash) in merged.into_iter().zip(clashes) {
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
            // exact, else a refusal (the values left out may have been valid).
            let lossy = |j: &usize| !one_of.complements[*j].1;
            if alts.iter().all(Re::is_never) && complements.keys().any(lossy) {
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
            return Ok(Re::alt(alts));
        }
        self.compile_types(&s)
    }

    /// Branch `b` (of the `anyOf`/`oneOf` at `at`) flattened and merged with `rest`,
    /// with the references it followed (taken off the stack: the caller puts them back
    /// to compile it, [`compile_with_refs`](Self::compile_with_refs)); `None` where
    /// nothing validates.
    fn merged_branch(
        &mut self,
        rest: &Sch,
        b: &NodeRef,
        at: &str,
    ) -> Result<Option<(Sch, Vec<String>)>> {
        self.count_branch(at)?;
        let mark = self.ref_stack.len();
        let out = self
            .flatten(b)
            .and_then(|fb| fb.map(|fb| self.merge(rest, &fb)).transpose());
        let pushed = self.ref_stack[mark..].to_vec();
        self.ref_stack.truncate(mark);
        Ok(out?.map(|m| (m, pushed)))
    }

    /// Compiles `m` with the references it was merged under on the stack.
    fn compile_with_refs(&mut self, m: Sch, refs: Vec<String>) -> Result<Re> {
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
    fn intersects_any_of(&self, s: &Sch) -> bool {
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
    fn any_of_intersected(&mut self, mut s: Sch) -> Result<Re> {
        let groups = std::mem::take(&mut s.apply.any_of);
        let saved = std::mem::replace(&mut self.loose_objects, true);
        let out = self.intersect_groups(s, groups);
        self.loose_objects = saved;
        out
    }

    fn intersect_groups(&mut self, s: Sch, groups: Vec<(Vec<NodeRef>, String)>) -> Result<Re> {
        let mut base = s.clone();
        base.apply.one_of.clear();
        // Each branch merged with the schema's keywords, with the references it followed.
        let mut merged: Vec<Vec<(Sch, Vec<String>)>> = Vec::new();
        for (group, at) in &groups {
            let mut alts = Vec::new();
            for b in group {
                alts.extend(self.merged_branch(&base, b, at)?);
            }
            merged.push(alts);
        }
        // A branch that no branch of another group can hold with is dropped, until none
        // is: an intersection the automaton would have to search through (objects of
        // any depth) to prove empty, where `oneOf`'s complements often leave nothing (a
        // branch requires a property that another's complement says is absent).
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
                            if !self.disjoint(&merged[i][k].0, &merged[j][l].0, 0)? {
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
                    return Ok(Re::never());
                }
            }
            if !dropped {
                break;
            }
        }
        let mut parts = Vec::new();
        if !s.apply.one_of.is_empty() {
            parts.push(self.compile_flat(s)?);
        }
        for alts in merged {
            let mut compiled = Vec::new();
            for (m, pushed) in alts {
                compiled.push(self.compile_with_refs(m, pushed)?);
            }
            let union = Re::alt(compiled);
            if union.is_never() {
                return Ok(union);
            }
            parts.push(union);
        }
        Ok(Re::and(parts))
    }

    /// The complement of `oneOf` branch `j` ([`OneOf::complements`]), flattened, with
    /// the references it followed; `None` where none is known (a branch that may hold
    /// with `j` then allows nothing).
    fn one_of_complement(
        &mut self,
        one_of: &OneOf,
        j: usize,
    ) -> Result<Option<(Sch, Vec<String>)>> {
        let (json, _) = &one_of.complements[j];
        if matches!(json, Json::Bool(false)) {
            return Ok(None);
        }
        let at = pointer_push(&one_of.at, &j.to_string());
        let Ok(node) = self.doc.parse(json, &at, &one_of.base) else {
            return Ok(None);
        };
        let mark = self.ref_stack.len();
        let flat = self.flatten(&node);
        let pushed = self.ref_stack[mark..].to_vec();
        self.ref_stack.truncate(mark);
        Ok(flat?.map(|f| (f, pushed)))
    }

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

    // ------------------------------------------------------------------------------
    // enum / const

    fn compile_enum(&mut self, s: &Sch) -> Result<Re> {
        let (first, _) = &s.enums[0];
        let values: Vec<&Json> = first
            .iter()
            .filter(|v| {
                s.enums[1..]
                    .iter()
                    .all(|(list, _)| list.iter().any(|w| w.equals(v)))
            })
            .collect();
        let types = s.types.unwrap_or(ALL_TYPES);
        // Everything but the values (an enum may hold 100,000 of them).
        let mut rest = Sch {
            ptr: s.ptr.clone(),
            types: None,
            enums: Vec::new(),
            excluded: s.excluded.clone(),
            number: s.number.clone(),
            string: s.string.clone(),
            array: s.array.clone(),
            object: s.object.clone(),
            apply: s.apply.clone(),
        };
        let unique = rest.array.unique.take().is_some();
        // Whether the other keywords constrain anything beyond the type: then each value
        // is checked against the regex of the rest, compiled compactly. (Every keyword
        // counts: a list of those that do missed `patternProperties`, and values that
        // failed it were written.)
        let excluded = std::mem::take(&mut rest.excluded);
        let needs_check = !rest.is_trivial();
        rest.excluded = excluded;
        // Where the rest calls a recursive definition, whose template is compiled only
        // after the root, no checker of its own can hold it: the values are intersected
        // with the rest (written with whitespace) in the automaton instead.
        let mut intersect_with = None;
        let mut checker = if needs_check {
            let re = self.compactly(|c| c.compile_flat(rest.clone()))?;
            if re.is_never() {
                return Ok(Re::never());
            }
            if re.has_calls() {
                intersect_with = Some(self.compile_flat(rest)?);
                None
            } else {
                match self.value_checker(&re)? {
                    Some(checker) => Some(checker),
                    None => return Ok(Re::never()),
                }
            }
        } else {
            None
        };
        let mut alts = Vec::new();
        // Values with one spelling (strings, booleans, null): one trie in an automaton.
        let mut literals = StringsBuilder::new();
        for v in values {
            // A string's size without writing it out (an enum may hold 100,000).
            let size = match v {
                Json::String(text) => text.len() + 2,
                _ => v.to_compact().len(),
            };
            self.charge_entries(1 + size as u64 / 16)?;
            if value_types(v) & types == 0 || s.excluded.iter().any(|x| x.equals(v)) {
                continue;
            }
            if unique {
                if let Json::Array(items) = v {
                    if items
                        .iter()
                        .enumerate()
                        .any(|(i, x)| items[..i].iter().any(|y| y.equals(x)))
                    {
                        continue;
                    }
                }
            }
            if let Some(dfa) = &mut checker {
                let mut ok = false;
                for sp in spellings(v) {
                    if self.checks(dfa, sp.as_bytes())? {
                        ok = true;
                        break;
                    }
                }
                if !ok {
                    continue;
                }
            }
            match v {
                Json::Null | Json::Bool(_) | Json::String(_) if self.for_automaton => {
                    literals.push_with(|out| v.write_compact(out))
                }
                _ => alts.push(self.literal(v)),
            }
        }
        if literals.len() >= MIN_TRIE_LITERALS {
            alts.push(Re::strings(literals));
        } else {
            alts.extend(literals.iter().map(Re::lit));
        }
        Ok(match intersect_with {
            Some(rest) => Re::and([Re::alt(alts), rest]),
            None => Re::alt(alts),
        })
    }

    /// An automaton of `re` that enum values are run through (compact, so one spelling
    /// per value is tried), derived lazily: only the states the values reach are built,
    /// and no regex text is written (a sibling free-form value of depth 8 would render to
    /// megabytes). `None` when its language is empty.
    fn value_checker(&mut self, re: &Re) -> Result<Option<ExprDfa>> {
        if re.has_calls() {
            // Its templates are compiled after the root: callers intersect instead.
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                "a value check (propertyNames, enum) through a recursive $ref",
            ));
        }
        let mut exprs = ExprSet::new();
        let root = re.to_expr(&mut exprs, &mut re::LowerMemo::default())?;
        let budget = self.budget.remaining();
        match ExprDfa::new(exprs, root, &DfaConfig::new(), budget, "JSON Schema".into()) {
            Ok(mut dfa) => {
                self.budget.charge(dfa.work_used())?;
                dfa.begin_call();
                Ok(Some(dfa))
            }
            Err(e) if e.kind() == ErrorKind::InvalidRegex => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether `dfa` matches `bytes` whole, its work charged to the compiler.
    fn checks(&mut self, dfa: &mut ExprDfa, bytes: &[u8]) -> Result<bool> {
        let walk = dfa.walk(ExprDfa::START, bytes);
        self.budget.charge(dfa.work_used())?;
        dfa.begin_call();
        match walk {
            Ok(Walk::Alive { is_match, .. }) => Ok(is_match),
            Ok(_) => Ok(false),
            Err(e) => Err(dfa.too_large(e)),
        }
    }

    /// The spellings of a value: numbers with optional trailing fraction zeros (and the
    /// exponent form `JSON.stringify` uses), strings canonically escaped, small objects
    /// in every key order; whitespace as configured between tokens.
    fn literal(&self, v: &Json) -> Re {
        match v {
            Json::Null | Json::Bool(_) | Json::String(_) => Re::lit(v.to_compact()),
            Json::Number(d) => number::literal_number_re(d),
            Json::Array(items) => {
                if items.is_empty() {
                    return Re::concat([Re::lit("["), self.ws.clone(), Re::lit("]")]);
                }
                let mut parts = vec![Re::lit("["), self.ws.clone()];
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        parts.push(self.sep());
                    }
                    parts.push(self.literal(x));
                }
                parts.extend([self.ws.clone(), Re::lit("]")]);
                Re::concat(parts)
            }
            Json::Object(members) => {
                if members.is_empty() {
                    return Re::concat([Re::lit("{"), self.ws.clone(), Re::lit("}")]);
                }
                let rendered: Vec<Re> = members
                    .iter()
                    .map(|(k, x)| self.member(Re::lit(key_text(k)), self.literal(x)))
                    .collect();
                let orders = if members.len() <= MAX_PERMUTED_MEMBERS {
                    permutations(members.len())
                } else {
                    vec![(0..members.len()).collect()]
                };
                let alts = orders.into_iter().map(|order| {
                    let mut parts = vec![Re::lit("{"), self.ws.clone()];
                    for (i, &j) in order.iter().enumerate() {
                        if i > 0 {
                            parts.push(self.sep());
                        }
                        parts.push(rendered[j].clone());
                    }
                    parts.extend([self.ws.clone(), Re::lit("}")]);
                    Re::concat(parts)
                });
                Re::alt(alts)
            }
        }
    }

    // ------------------------------------------------------------------------------
    // Numbers

    fn number(&mut self, s: &Sch, integer: bool) -> Result<Re> {
        let (lo, hi) = (s.number.lo.as_ref(), s.number.hi.as_ref());
        match s.number.multiple_of.len() {
            0 => Ok(if integer {
                number::integer_re(lo, hi)
            } else {
                number::number_re(lo, hi, None)
            }),
            1 => {
                let (m, at) = &s.number.multiple_of[0];
                if let Some(re) = number::multiple_of_re(m, lo, hi, integer) {
                    return Ok(re);
                }
                // Any integer divisor in an automaton: the integers of the range whose
                // digits leave remainder 0 (one state per remainder reached); for numbers
                // too, whose multiples are integers (written without a fraction).
                let divisor = if m.is_integer() { m.to_i128() } else { None };
                if let (true, Some(k)) = (self.for_automaton, divisor) {
                    if (1..=i128::from(MAX_RESIDUE_DIVISOR)).contains(&k) {
                        self.needs_automaton("multipleOf", at);
                        let digits = Re::concat([Re::opt(Re::lit("-")), Re::multiples(k as u32)]);
                        return Ok(Re::and([number::integer_re(lo, hi), digits]));
                    }
                }
                Err(unsupported(
                    "multipleOf",
                    parent(at),
                    &format!(
                        "multipleOf {} is expressible only as 10^-k for numbers, for integer divisors (up to {} in an index; in regex text 2^a*5^b without bounds that cut a sign), or for bounded ranges with at most {} multiples",
                        m.to_plain_string(),
                        MAX_RESIDUE_DIVISOR,
                        number::MAX_ENUMERATED_MULTIPLES
                    ),
                ))
            }
            _ => Err(unsupported(
                "multipleOf",
                parent(&s.number.multiple_of[1].1),
                "several different multipleOf",
            )),
        }
    }

    // ------------------------------------------------------------------------------
    // Strings

    fn string(&mut self, s: &Sch) -> Result<Re> {
        let (min, max) = (s.string.min_len, s.string.max_len);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
        let quote = || Re::lit("\"");
        let length = || {
            let max = max.map(|m| u32::try_from(m).unwrap_or(u32::MAX));
            let min = u32::try_from(min).unwrap_or(u32::MAX);
            Re::repeat(Re::raw(JSON_CHAR), min, max)
        };
        // Every pattern and known format; an unknown format is an annotation (JSON
        // Schema 2020-12) unless the configuration makes it an error.
        let mut constraints: Vec<(Option<&String>, Pat, &'static str, &String)> = Vec::new();
        for (p, at) in &s.string.patterns {
            let pat = pattern::parse(p)
                .map_err(|e| unsupported("pattern", parent(at), &format!("{p:?}: {e}")))?;
            constraints.push((None, pat, "pattern", at));
        }
        for (f, at) in &s.string.formats {
            match fragments::format_pattern(f) {
                Some(src) => {
                    let pat =
                        pattern::parse(&format!("^(?:{src})$")).expect("format patterns parse");
                    constraints.push((Some(f), pat, "format", at));
                }
                None if self.config.get_unknown_formats_are_errors() => {
                    return Err(unsupported(
                        "format",
                        parent(at),
                        &format!(
                            "format \"{f}\" is not supported (supported: {})",
                            fragments::FORMATS.join(", ")
                        ),
                    ));
                }
                None => {}
            }
        }
        let unlimited = min == 0 && max.is_none();
        let body = match constraints.len() {
            0 => length(),
            1 => {
                let (format, pat, keyword, at) = constraints.pop().expect("one constraint");
                match (format, unlimited) {
                    (Some(f), true) => match self.format_cache.get(f) {
                        Some(re) => re.clone(),
                        None => {
                            let re = self.constrained(pat, 0, None, keyword, at)?;
                            self.format_cache.insert(f.clone(), re.clone());
                            re
                        }
                    },
                    (_, true) => self.constrained(pat, 0, None, keyword, at)?,
                    // A length the pattern's regex cannot carry becomes an intersection.
                    (_, false) => match self.constrained(pat.clone(), min, max, keyword, at) {
                        Ok(re) => re,
                        Err(_) => {
                            self.needs_automaton(keyword, at);
                            Re::and([self.constrained(pat, 0, None, keyword, at)?, length()])
                        }
                    },
                }
            }
            _ => {
                // Several patterns/formats on one string: their intersection (an
                // automaton; a regex cannot say it).
                let mut parts = Vec::new();
                self.needs_automaton(constraints[1].2, constraints[1].3);
                for (_, pat, keyword, at) in constraints {
                    parts.push(self.constrained(pat, 0, None, keyword, at)?);
                }
                if !unlimited {
                    parts.push(length());
                }
                Re::and(parts)
            }
        };
        let body = if s.string.excluded_patterns.is_empty() {
            body
        } else {
            // `not: {pattern}`: a complement at the byte level is the complement of
            // decoded strings only where each string has one spelling, so the strings
            // are kept to their canonical one (`CANONICAL_STRING_CHAR`).
            let mut excluded = Vec::new();
            for (p, at) in &s.string.excluded_patterns {
                let pat = pattern::parse(p)
                    .map_err(|e| unsupported("not", parent(at), &format!("{p:?}: {e}")))?;
                excluded.push(self.constrained(pat, 0, None, "not", at)?);
            }
            self.needs_automaton("not", parent(&s.string.excluded_patterns[0].1));
            Re::and([
                body,
                Re::star(Re::raw(CANONICAL_STRING_CHAR)),
                Re::not(Re::alt(excluded)),
            ])
        };
        Ok(Re::concat([quote(), body, quote()]))
    }

    /// A pattern's strings (as JSON string content), with a length range applied.
    fn constrained(
        &mut self,
        pat: Pat,
        min: u64,
        max: Option<u64>,
        keyword: &str,
        at: &str,
    ) -> Result<Re> {
        let err = |why: &str| unsupported(keyword, parent(at), why);
        let branches = pattern::branches(pat).map_err(|e| err(&e))?;
        let mut alts = Vec::new();
        for b in branches {
            let mut pats: Vec<Pat> = b.items.into_iter().map(unwrap_single).collect();
            // Beside an unanchored end, a repetition matters only up to its minimum (any
            // more is within the free run): `[a-z]{1,255}` unanchored is `[a-z]`. Exact,
            // and it spares the automaton counting to 255 in every key.
            if !b.anchored_end {
                trim_repeats(&mut pats);
            }
            if !b.anchored_start {
                pats.reverse();
                trim_repeats(&mut pats);
                pats.reverse();
            }
            // Items, with unanchored ends as free runs of characters (None).
            let mut items: Vec<Option<Pat>> = pats.into_iter().map(Some).collect();
            if !b.anchored_start {
                items.insert(0, None);
            }
            if !b.anchored_end {
                items.push(None);
            }
            let range = |it: &Option<Pat>| it.as_ref().map_or((0, None), |p| p.len_range());
            let (lo, hi) = items.iter().fold((0u64, Some(0u64)), |(a, b), it| {
                let (x, y) = range(it);
                (
                    a.saturating_add(x),
                    b.and_then(|b| y.map(|y| b.saturating_add(y))),
                )
            });
            let implied = min <= lo && max.is_none_or(|m| hi.is_some_and(|h| h <= m));
            let mut adjust: Option<(usize, u64, Option<u64>)> = None;
            if !implied {
                // Exactly one variable-length item, a repeated single class (or a free
                // run), takes the length constraint.
                let variable: Vec<usize> = (0..items.len())
                    .filter(|&i| {
                        let (x, y) = range(&items[i]);
                        Some(x) != y
                    })
                    .collect();
                let ok = variable.len() == 1
                    && match &items[variable[0]] {
                        None => true,
                        Some(Pat::Repeat(inner, _, _)) => matches!(**inner, Pat::Class(_)),
                        _ => false,
                    };
                if !ok {
                    return Err(err("a length limit (minLength/maxLength) that the pattern does not imply, on a pattern whose length is not one repeated class"));
                }
                let v = variable[0];
                let fixed: u64 = (0..items.len())
                    .filter(|&i| i != v)
                    .map(|i| range(&items[i]).0)
                    .sum();
                let (rmin, rmax) = match &items[v] {
                    Some(Pat::Repeat(_, a, b)) => (*a as u64, b.map(|b| b as u64)),
                    _ => (0, None),
                };
                let nmin = rmin.max(min.saturating_sub(fixed));
                let nmax = match (rmax, max) {
                    (Some(a), Some(m)) => {
                        if m < fixed {
                            alts.push(Re::never());
                            continue;
                        }
                        Some(a.min(m - fixed))
                    }
                    (a, None) => a,
                    (None, Some(m)) => {
                        if m < fixed {
                            alts.push(Re::never());
                            continue;
                        }
                        Some(m - fixed)
                    }
                };
                adjust = Some((v, nmin, nmax));
            }
            let mut parts = Vec::new();
            for (i, it) in items.into_iter().enumerate() {
                let (rmin, rmax) = match adjust {
                    Some((v, a, b)) if v == i => (Some(a), Some(b)),
                    _ => (None, None),
                };
                let re = match it {
                    None => {
                        let (a, b) = (rmin.unwrap_or(0), rmax.flatten());
                        Re::repeat(Re::raw(JSON_CHAR), clamp32(a), b.map(clamp32))
                    }
                    Some(p) => match (rmin, p) {
                        (Some(a), Pat::Repeat(inner, _, _)) => {
                            let inner = inner.to_json_re(&mut self.props).map_err(|e| err(&e))?;
                            Re::repeat(inner, clamp32(a), rmax.flatten().map(clamp32))
                        }
                        (_, p) => p.to_json_re(&mut self.props).map_err(|e| err(&e))?,
                    },
                };
                parts.push(re);
            }
            alts.push(Re::concat(parts));
        }
        Ok(Re::alt(alts))
    }

    // ------------------------------------------------------------------------------
    // Arrays

    fn sep(&self) -> Re {
        Re::concat([self.ws.clone(), Re::lit(","), self.ws.clone()])
    }

    fn member(&self, key: Re, value: Re) -> Re {
        Re::concat([key, self.ws.clone(), Re::lit(":"), self.ws.clone(), value])
    }

    /// `open ws (body ws)? close`, or without the `?` when the body cannot be empty.
    fn container(&self, open: &str, body: Re, empty_ok: bool, close: &str) -> Re {
        let inner = Re::concat([body, self.ws.clone()]);
        let inner = if empty_ok { Re::opt(inner) } else { inner };
        Re::concat([Re::lit(open), self.ws.clone(), inner, Re::lit(close)])
    }

    fn array(&mut self, s: &Sch) -> Result<Re> {
        let a = &s.array;
        let (min, max) = (a.min_items, a.max_items);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
        if let Some(at) = &a.unique {
            if max.is_none_or(|m| m > 1) {
                return self.unique_items(a, at);
            }
        }
        if let Some((_, at)) = &a.max_contains {
            if !a.contains.is_empty() {
                return Err(unsupported("maxContains", parent(at), ""));
            }
        }
        let min_contains = a.min_contains.as_ref().map_or(1, |x| x.0);
        let items = a
            .items
            .clone()
            .unwrap_or_else(|| std::rc::Rc::new(Node::Any));
        if !a.contains.is_empty() && min_contains > 0 {
            self.array_with_contains(a, &items, min_contains)
        } else {
            self.array_of_items(a, &items)
        }
    }

    /// `uniqueItems` where the items can take only a few values (an `enum`, `const`,
    /// booleans, null): the arrays of distinct values in any order, an interleaving of
    /// one optional member per value (each all the spellings of its value that the item
    /// schema's language holds), so only the sets of values a text writes become states.
    /// Elsewhere uniqueness is not a regular language: an error.
    fn unique_items(&mut self, a: &ArrayKeywords, at: &str) -> Result<Re> {
        let refuse = |why: &str| Err(unsupported("uniqueItems", parent(at), why));
        if !a.prefix.is_empty() || !a.contains.is_empty() {
            return refuse("with prefixItems or contains (allowed with items of at most 64 possible values, or maxItems <= 1)");
        }
        let items = a
            .items
            .clone()
            .unwrap_or_else(|| std::rc::Rc::new(Node::Any));
        // Flattening follows references onto the stack: taken off again at once.
        let mark = self.ref_stack.len();
        let flat = self.flatten(&items);
        self.ref_stack.truncate(mark);
        let values = match flat? {
            None => Vec::new(),
            Some(flat) => match enum_values(&flat) {
                Some(values) => values,
                None => {
                    let types = possible_types(&flat);
                    if types & !(NULL | BOOLEAN) != 0 {
                        return refuse("item uniqueness is not a regular language: allowed where items take at most 64 possible values (enum, const, booleans, null) or maxItems <= 1");
                    }
                    let mut v = Vec::new();
                    if types & BOOLEAN != 0 {
                        v.extend([Json::Bool(false), Json::Bool(true)]);
                    }
                    if types & NULL != 0 {
                        v.push(Json::Null);
                    }
                    v
                }
            },
        };
        if values.len() > MAX_UNIQUE_VALUES {
            return refuse(&format!(
                "items of {} possible values: uniqueness is an automaton state per set of values written (at most {MAX_UNIQUE_VALUES} values)",
                values.len()
            ));
        }
        self.needs_automaton("uniqueItems", at);
        let item = self.compile_node(&items)?;
        let mut groups = Vec::new();
        for v in &values {
            // Values equal as JSON are one member (`1` and `1.0`).
            if values
                .iter()
                .take_while(|w| !std::ptr::eq(*w, v))
                .any(|w| w.equals(v))
            {
                continue;
            }
            self.charge_entries(1 + v.to_compact().len() as u64 / 16)?;
            groups.push(vec![(Re::and([self.literal(v), item.clone()]), false)]);
        }
        let (min, max) = (a.min_items, a.max_items);
        if min > groups.len() as u64 {
            return Ok(Re::never());
        }
        let body = Re::interleave(Interleave {
            groups,
            extra: None,
            extra_last: false,
            sep: self.sep(),
            min: clamp32(min.max(1)),
            max: max.map(clamp32),
        });
        Ok(self.container("[", body, min == 0, "]"))
    }

    /// An array with `contains`: items of `items`, at least `min_contains` of which
    /// (written as `hit`) also hold under `contains`.
    fn array_with_contains(
        &mut self,
        a: &ArrayKeywords,
        items: &NodeRef,
        min_contains: u64,
    ) -> Result<Re> {
        let (min, max) = (a.min_items, a.max_items);
        let at = &a.contains[0].1;
        if a.contains.len() > 1 {
            if min_contains != 1 {
                return Err(unsupported(
                    "contains",
                    parent(at),
                    "several contains in allOf, with minContains",
                ));
            }
            // Arrays holding an item of each: the intersection of the arrays holding
            // one of each (one layout, so their texts align).
            self.needs_automaton("contains", at);
            let mut parts = Vec::new();
            for c in &a.contains {
                let one = ArrayKeywords {
                    contains: vec![c.clone()],
                    ..a.clone()
                };
                parts.push(self.array_with_contains(&one, items, 1)?);
            }
            return Ok(Re::and(parts));
        }
        if !a.prefix.is_empty() {
            return Err(unsupported(
                "contains",
                parent(at),
                "together with prefixItems",
            ));
        }
        let item = self.compile_node(items)?;
        let hit = self.compile_node(&both(items, &a.contains[0].0))?;
        if hit.is_never() {
            return Ok(Re::never());
        }
        let sep = self.sep();
        let before = Re::concat([item.clone(), sep.clone()]);
        let after = Re::concat([sep.clone(), item]);
        let body = if min_contains > 1 {
            if max.is_some() || min > min_contains {
                return Err(unsupported(
                    "minContains",
                    parent(at),
                    "together with maxItems or a larger minItems",
                ));
            }
            let again = Re::concat([sep, Re::star(before.clone()), hit.clone()]);
            Re::concat([
                Re::star(before),
                hit,
                Re::repeat(
                    again,
                    clamp32(min_contains - 1),
                    Some(clamp32(min_contains - 1)),
                ),
                Re::star(after),
            ])
        } else {
            hit_positions(&before, &hit, &after, min.max(1), max, at)?
        };
        Ok(self.container("[", body, false, "]"))
    }

    /// An array of `prefixItems` then `items`, counted within `minItems`/`maxItems`.
    fn array_of_items(&mut self, a: &ArrayKeywords, items: &NodeRef) -> Result<Re> {
        let (min, max) = (a.min_items, a.max_items);
        let prefix: Vec<Re> = a
            .prefix
            .iter()
            .map(|p| self.compile_node(p))
            .collect::<Result<_>>()?;
        let item = self.compile_node(items)?;
        // R(j): the elements after j of them were written.
        let k = prefix.len() as u64;
        let sep = self.sep();
        let mut tail: Option<Re> = None; // R(j+1), built from the end
        let start_j = k.min(max.unwrap_or(u64::MAX));
        for j in (0..=start_j).rev() {
            let r = if j >= k {
                // Only `items` from here: count in [min - j, max - j].
                items_only(
                    &item,
                    &sep,
                    j,
                    min.saturating_sub(j),
                    max.map(|m| m.saturating_sub(j)),
                )
            } else {
                let next = tail.clone().unwrap_or_else(Re::empty);
                let head = if j == 0 { Re::empty() } else { sep.clone() };
                let present = if max.is_some_and(|m| j >= m) {
                    Re::never()
                } else {
                    Re::concat([head, prefix[j as usize].clone(), next])
                };
                if j >= min {
                    Re::alt([Re::empty(), present])
                } else {
                    present
                }
            };
            tail = Some(r);
        }
        let body = tail.unwrap_or_else(Re::empty);
        if body.is_never() {
            return Ok(Re::never());
        }
        if body.is_empty() {
            return Ok(Re::concat([Re::lit("["), self.ws.clone(), Re::lit("]")]));
        }
        Ok(self.container("[", body, min == 0, "]"))
    }

    // ------------------------------------------------------------------------------
    // Objects

    fn object(&mut self, s: &Sch) -> Result<Re> {
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
    fn key_body_not_in(&mut self, names: &[String]) -> Result<Re> {
        let mut sorted = names.to_vec();
        sorted.sort_unstable();
        if let Some(re) = self.key_cache.get(&sorted) {
            return Ok(re.clone());
        }
        self.charge_entries(names.len() as u64)?;
        let re = key_body_not_in(names);
        self.key_cache.insert(sorted, re.clone());
        Ok(re)
    }

    fn object_members(&mut self, s: &Sch) -> Result<Re> {
        let (min, max) = (s.object.min_props, s.object.max_props);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
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
        for (k, node) in &s.object.props {
            names.push(k.clone());
            let required = s.object.required.contains(k);
            if !name_allowed(self, k)? {
                if required {
                    return Ok(Re::never());
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
                    return Ok(Re::never());
                }
                continue;
            }
            members.push((self.member(Re::lit(key_text(k)), v), required));
            member_names.push(k);
        }
        let extra_node = s.object.additional.clone();
        for r in &s.object.required {
            if names.contains(r) {
                continue;
            }
            names.push(r.clone());
            if !name_allowed(self, r)? {
                return Ok(Re::never());
            }
            let v = match self.pattern_rule(s, r)? {
                Some(node) => self.compile_node(&node)?,
                None => match &extra_node {
                    None => self.any(self.config.get_any_value_depth()),
                    Some(n) => self.compile_node(n)?,
                },
            };
            if v.is_never() {
                return Ok(Re::never());
            }
            members.push((self.member(Re::lit(key_text(r)), v), true));
            member_names.push(r);
        }
        let extra_value = match &extra_node {
            // Undeclared properties next to declared ones only if asked for.
            None if !names.is_empty() && !self.config.allow_additional_properties => Re::never(),
            None => self.any(self.config.get_any_value_depth()),
            Some(n) => self.compile_node(n)?,
        };
        let quote = || Re::lit("\"");
        let (undeclared, body) = if names.is_empty() {
            let body = Re::star(Re::raw(JSON_CHAR));
            (Re::concat([quote(), body.clone(), quote()]), body)
        } else {
            let body = self.key_body_not_in(&names)?;
            (Re::concat([quote(), body.clone(), quote()]), body)
        };
        // A key of any name but the declared ones: every string prefix can still
        // become one, which rows on request use at a key's start (`string_bodies`).
        if name_filter.is_none() && s.object.patterns.is_empty() && !extra_value.is_never() {
            self.string_bodies.insert(body.id(), body);
        }
        let undeclared = match name_filter {
            Some(f) => Re::and([undeclared, f]),
            None => undeclared,
        };
        let extra = if s.object.patterns.is_empty() {
            (!extra_value.is_never()).then(|| self.member(undeclared, extra_value))
        } else {
            self.pattern_members(s, undeclared, extra_value)?
        };
        let parts = ObjectParts {
            members,
            extra,
            min,
            max,
            sep: self.sep(),
        };
        let places = match self.config.property_order {
            // Past the cap, the one merged order (as in regex text).
            PropertyOrder::Schema
                if self.for_automaton && member_names.len() <= MAX_INTERLEAVED_MEMBERS =>
            {
                place_groups(&s.object.orders, &member_names)
            }
            _ => Vec::new(),
        };
        let (body, empty_ok) = match self.config.property_order {
            PropertyOrder::Schema
                if self.loose_objects && parts.extra.is_some() && !parts.members.is_empty() =>
            {
                let places = if places.len() > 1 {
                    places
                } else {
                    vec![(0..parts.members.len()).collect()]
                };
                parts.interleaved(places, false)
            }
            PropertyOrder::Schema if places.len() > 1 => parts.interleaved(places, true),
            PropertyOrder::Schema => parts.schema_order(),
            PropertyOrder::Any if self.for_automaton => {
                if parts.members.len() > MAX_INTERLEAVED_MEMBERS {
                    return Err(Error::new(
                        ErrorKind::UnsupportedSchema,
                        format!(
                            "an object with {} declared properties at {} under PropertyOrder::Any (at most {}: each state of the object weighs every property not yet written)",
                            parts.members.len(),
                            show(&s.ptr),
                            MAX_INTERLEAVED_MEMBERS
                        ),
                    ));
                }
                let each = (0..parts.members.len()).map(|i| vec![i]).collect();
                parts.interleaved(each, false)
            }
            PropertyOrder::Any => {
                if parts.members.len() > MAX_ANY_ORDER_PROPERTIES {
                    return Err(Error::new(
                        ErrorKind::UnsupportedSchema,
                        format!(
                            "an object with {} declared properties at {} under PropertyOrder::Any in a regex (at most {}: regex text lists every order); Index::from_json_schema (JS: Index.fromJsonSchema) takes up to 1,024",
                            parts.members.len(),
                            show(&s.ptr),
                            MAX_ANY_ORDER_PROPERTIES
                        ),
                    ));
                }
                parts.any_order()
            }
        };
        if body.is_never() {
            return Ok(if empty_ok {
                Re::concat([Re::lit("{"), self.ws.clone(), Re::lit("}")])
            } else {
                Re::never()
            });
        }
        Ok(self.container("{", body, empty_ok, "}"))
    }

    /// Notes that the keyword at `at` needed an automaton (the first one is reported).
    fn needs_automaton(&mut self, keyword: &'static str, at: &str) {
        if self.automaton_only.is_none() {
            self.automaton_only = Some((keyword, parent(at).to_string()));
        }
    }

    /// The schema `patternProperties` gives the name `k` (every matching pattern's, as
    /// one), if any pattern matches it.
    fn pattern_rule(&mut self, s: &Sch, k: &str) -> Result<Option<NodeRef>> {
        let mut rule: Option<NodeRef> = None;
        for (p, node, at) in &s.object.patterns {
            let dfa = match self.key_pattern_dfas.get(p) {
                Some(dfa) => dfa.clone(),
                None => {
                    let body = self.pattern_body(p, at)?;
                    let dfa =
                        Rc::new(Dfa::new(&body.render()).map_err(|e| {
                            unsupported("patternProperties", parent(at), e.message())
                        })?);
                    self.key_pattern_dfas.insert(p.clone(), dfa.clone());
                    dfa
                }
            };
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

    /// The strings a key pattern matches, as JSON string content.
    fn pattern_body(&mut self, p: &str, at: &str) -> Result<Re> {
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
    fn pattern_members(&mut self, s: &Sch, undeclared: Re, extra_value: Re) -> Result<Option<Re>> {
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

    // ------------------------------------------------------------------------------
    // Any value

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

    // ------------------------------------------------------------------------------
    // oneOf: provable exclusivity

    /// Whether no instance can satisfy both (conservative: `false` when unsure).
    fn disjoint(&mut self, a: &Sch, b: &Sch, depth: usize) -> Result<bool> {
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
        for (one, other) in [(a, b), (b, a)] {
            if let Some(vals) = enum_values(one) {
                // Every value of one's enum is excluded by a simple check of the other.
                if vals.iter().all(|v| simply_excluded(v, other)) {
                    return Ok(true);
                }
            }
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
                            let mark = self.ref_stack.len();
                            let fa = self.flatten(&pa);
                            let fb = self.flatten(&pb);
                            let res = match (fa, fb) {
                                (Ok(Some(x)), Ok(Some(y))) => self.disjoint(&x, &y, depth + 1),
                                (Ok(None), _) | (_, Ok(None)) => Ok(true),
                                (Err(e), _) | (_, Err(e)) => Err(e),
                            };
                            self.ref_stack.truncate(mark);
                            if res? {
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

/// Parts of an object body: declared members (`"key":value`, required or not) in
/// order, the pattern of any other member, the member count range, the separator.
struct ObjectParts {
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
fn place_groups(orders: &[Vec<String>], names: &[&str]) -> Vec<Vec<usize>> {
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
        for name in order {
            if let Some(&q) = place_of.get(name.as_str()) {
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

/// The body of an array with exactly one `contains` hit required: one alternative per
/// position `j` of the first hit, with `lo` (>= 1) to `max` items in all. Bounded like
/// maxItems: an unbounded minItems here once built alternatives until memory ran out.
fn hit_positions(
    before: &Re,
    hit: &Re,
    after: &Re,
    lo: u64,
    max: Option<u64>,
    at: &str,
) -> Result<Re> {
    if lo > MAX_CONTAINS_POSITIONS {
        return Err(unsupported(
            "contains",
            parent(at),
            &format!("together with minItems above {MAX_CONTAINS_POSITIONS}"),
        ));
    }
    let mut alts = Vec::new();
    match max {
        None => {
            for j in 0..lo.saturating_sub(1) {
                alts.push(Re::concat([
                    Re::repeat(before.clone(), clamp32(j), Some(clamp32(j))),
                    hit.clone(),
                    Re::repeat(after.clone(), clamp32(lo - 1 - j), None),
                ]));
            }
            alts.push(Re::concat([
                Re::repeat(before.clone(), clamp32(lo - 1), None),
                hit.clone(),
                Re::star(after.clone()),
            ]));
        }
        Some(mx) => {
            if mx > MAX_CONTAINS_POSITIONS {
                return Err(unsupported(
                    "contains",
                    parent(at),
                    &format!("together with maxItems above {MAX_CONTAINS_POSITIONS}"),
                ));
            }
            for j in 0..mx {
                let k_lo = lo.saturating_sub(1 + j);
                let k_hi = mx - 1 - j;
                alts.push(Re::concat([
                    Re::repeat(before.clone(), clamp32(j), Some(clamp32(j))),
                    hit.clone(),
                    Re::repeat(after.clone(), clamp32(k_lo), Some(clamp32(k_hi))),
                ]));
            }
        }
    }
    Ok(Re::alt(alts))
}

/// `lo` to `hi` more items after `j` elements were written (`j == 0`: nothing yet, so the
/// first item has no separator).
fn items_only(item: &Re, sep: &Re, j: u64, lo: u64, hi: Option<u64>) -> Re {
    if j > 0 {
        return Re::repeat(
            Re::concat([sep.clone(), item.clone()]),
            clamp32(lo),
            hi.map(clamp32),
        );
    }
    if hi == Some(0) {
        return Re::empty();
    }
    let rest = Re::repeat(
        Re::concat([sep.clone(), item.clone()]),
        clamp32(lo.saturating_sub(1)),
        hi.map(|h| clamp32(h - 1)),
    );
    let one = Re::concat([item.clone(), rest]);
    if lo == 0 {
        Re::alt([Re::empty(), one])
    } else {
        one
    }
}

/// One character of a canonically spelled key in the keys `patternProperties` splits:
/// unescaped except `"` and `\` (keys with control characters or other escapes are
/// not produced there, so that every name has one spelling).
const CANONICAL_KEY_CHAR: &str = r#"(?:[^"\\\x00-\x1F]|\\["\\])"#;

/// One character of a canonically spelled string value where a pattern is negated: as
/// `JSON.stringify` and Python's `json.dumps(..., ensure_ascii=False)` write it, unescaped
/// but for `\"`, `\\`, the short escapes of control characters (`\n`, `\t`...) and
/// `\u00xx` (lower-case hex) for the other control characters. One spelling per
/// character, so the complement of a pattern's strings is exact among these; a text that
/// writes `\u0041` for `A` there is refused (a valid string, in a spelling models do
/// not write). Keys keep [`CANONICAL_KEY_CHAR`].
const CANONICAL_STRING_CHAR: &str =
    r#"(?:[^"\\\x00-\x1F]|\\["\\bfnrt]|\\u00(?:0[0-7]|0b|0e|0f|1[0-9a-f]))"#;

/// The regex of JSON string contents (between the quotes) that are none of `names`.
///
/// A trie of the names, walked character by character in canonical spelling (each
/// character has exactly one, see [`canonical_char`]); leaving the trie (a character no
/// name has there, or continuing past a name's end) makes the key differ from every name,
/// and any spelling may follow. Every string is a prefix of one of these (a finite set
/// of names leaves every string an extension outside it).
fn key_body_not_in(names: &[String]) -> Re {
    #[derive(Default)]
    struct Trie {
        end: bool,
        children: Vec<(char, Trie)>,
    }
    let mut root = Trie::default();
    for n in names {
        let mut t = &mut root;
        for c in n.chars() {
            let i = match t.children.iter().position(|(x, _)| *x == c) {
                Some(i) => i,
                None => {
                    t.children.push((c, Trie::default()));
                    t.children.len() - 1
                }
            };
            t = &mut t.children[i].1;
        }
        t.end = true;
    }
    fn walk(t: &Trie) -> Re {
        let mut alts = Vec::new();
        if !t.end {
            alts.push(Re::empty());
        }
        for (c, child) in &t.children {
            let mut s = String::new();
            canonical_char(*c, &mut s);
            alts.push(Re::concat([Re::lit(s), walk(child)]));
        }
        alts.push(Re::concat([
            canonical_other(t.children.iter().map(|(c, _)| *c)),
            KEY_PARTS.with(|k| k.json_chars.clone()),
        ]));
        Re::alt(alts)
    }
    walk(&root)
}

/// The parts of [`key_body_not_in`] that every trie node shares, made once per thread: one
/// node each, so that lowering makes their expressions once per schema, not once per
/// character of every declared name (each character had its own negated Unicode class
/// and 34 escape literals: about half of a typical schema's compile).
struct KeyParts {
    /// `JSON_CHAR*`: any rest of a key.
    json_chars: Re,
    /// A non-ASCII character or a canonical escape (`\"`, `\\`, the 32 control
    /// characters): regex text, so that alternations do not flatten it into each node.
    non_ascii_or_escape: Re,
    /// The unescaped ASCII characters of a JSON string (no `"`, `\`, control characters).
    plain_ascii: u128,
}

thread_local! {
    static KEY_PARTS: KeyParts = {
        let escaped = (0u32..0x20)
            .map(|c| char::from_u32(c).expect("ASCII"))
            .chain(['"', '\\']);
        let alts = escaped
            .map(|c| {
                let mut s = String::new();
                canonical_char(c, &mut s);
                Re::lit(s)
            })
            .chain([Re::class(r"[\x{80}-\x{10FFFF}]")]);
        let plain_ascii = (0x20u8..0x80)
            .filter(|&b| b != b'"' && b != b'\\')
            .fold(0u128, |bits, b| bits | 1 << b);
        KeyParts {
            json_chars: Re::star(Re::raw(JSON_CHAR)),
            non_ascii_or_escape: Re::raw(Re::alt(alts).render()),
            plain_ascii,
        }
    };
}

/// One canonically spelled JSON string character other than those of `except`.
fn canonical_other(except: impl Iterator<Item = char>) -> Re {
    let except: Vec<char> = except.collect();
    if except
        .iter()
        .all(|&c| c.is_ascii() && c as u32 >= 0x20 && c != '"' && c != '\\')
    {
        // The common case, names of plain ASCII characters: a byte class beside the
        // shared parts.
        return KEY_PARTS.with(|k| {
            let bits = except
                .iter()
                .fold(k.plain_ascii, |bits, &c| bits & !(1 << c as u32));
            Re::alt([Re::ascii_class(bits), k.non_ascii_or_escape.clone()])
        });
    }
    let mut class = String::from(r#"[^"\\\x00-\x1F"#);
    for c in &except {
        class.push_str(&super::re::class_char(*c));
    }
    class.push(']');
    let mut alts = vec![Re::class(class)];
    for c in (0u32..0x20)
        .map(|c| char::from_u32(c).unwrap())
        .chain(['"', '\\'])
    {
        if !except.contains(&c) {
            let mut s = String::new();
            canonical_char(c, &mut s);
            alts.push(Re::lit(s));
        }
    }
    Re::alt(alts)
}

/// A key as JSON text, quotes included.
fn key_text(k: &str) -> String {
    let mut s = String::new();
    write_json_string(k, &mut s);
    s
}

/// `(?:x)` -> `x`.
fn unwrap_single(p: Pat) -> Pat {
    match p {
        Pat::Concat(mut v) if v.len() == 1 => unwrap_single(v.pop().unwrap()),
        Pat::Alt(mut v) if v.len() == 1 => unwrap_single(v.pop().unwrap()),
        other => other,
    }
}

fn clamp32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn show(ptr: &str) -> &str {
    if ptr.is_empty() {
        "#"
    } else {
        ptr
    }
}

/// The schema location of a keyword location (`#/a/minimum` -> `#/a`).
fn parent(at: &str) -> &str {
    match at.rfind('/') {
        Some(i) if i > 0 => &at[..i],
        _ => "#",
    }
}

fn value_types(v: &Json) -> u8 {
    match v {
        Json::Null => NULL,
        Json::Bool(_) => BOOLEAN,
        Json::Number(d) => {
            if d.is_integer() {
                INTEGER
            } else {
                NUMBER
            }
        }
        Json::String(_) => STRING,
        Json::Array(_) => ARRAY,
        Json::Object(_) => OBJECT,
    }
}

/// The values an enum-constrained schema allows (before other keywords), if any.
fn enum_values(s: &Sch) -> Option<Vec<Json>> {
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
            .cloned()
            .collect(),
    )
}

fn possible_types(s: &Sch) -> u8 {
    let t = s.types.unwrap_or(ALL_TYPES);
    match enum_values(s) {
        Some(vals) => vals.iter().fold(0, |acc, v| acc | value_types(v)) & t,
        None => t,
    }
}

/// A value that a schema rejects by its type or number bounds or string length alone.
fn simply_excluded(v: &Json, s: &Sch) -> bool {
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
        _ => false,
    }
}

/// The literal text every match of `pattern` starts with, when it is anchored (`^`)
/// and has no alternation: the characters up to the first one that is not plainly
/// literal, less the last one if a quantifier follows it. Empty where unknown.
fn anchored_prefix(pattern: &str) -> &str {
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
fn prefixes_clash(a: &str, b: &str) -> bool {
    !(a.starts_with(b) || b.starts_with(a))
}

/// Whether `s` allows no value for property `k` (declared `false`, or undeclared beside
/// `additionalProperties: false` and no `patternProperties` that might match it): an
/// object that has `k` is refused.
fn forbids(s: &Sch, k: &str) -> bool {
    match s.object.props.iter().find(|(n, _)| n == k) {
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

fn prop_node(s: &Sch, k: &str) -> NodeRef {
    s.object
        .props
        .iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.clone())
        .or_else(|| s.object.additional.clone())
        .unwrap_or_else(|| std::rc::Rc::new(Node::Any))
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
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

/// Trims the repetitions at the end of `items` to their minimum count: one of at least
/// one stays as that many copies and stops the trimming; one of none goes, and the item
/// before it is looked at.
fn trim_repeats(items: &mut Vec<Pat>) {
    while let Some(last) = items.pop() {
        match last {
            Pat::Repeat(_, 0, _) => continue,
            Pat::Repeat(inner, lo, _) => {
                items.push(Pat::Repeat(inner, lo, Some(lo)));
                return;
            }
            other => {
                items.push(other);
                return;
            }
        }
    }
}

/// Every JSON spelling of the string `text`, quotes included: each character as itself
/// (where JSON allows it unescaped), as a `\u` escape with hex digits in either case (a
/// surrogate pair beyond U+FFFF), or as its short escape. Excluding a value must exclude
/// all of them, since a string pattern may write any.
fn every_spelling(text: &str) -> Re {
    let hex = |unit: u32| {
        Re::concat((0..4).rev().map(|k| {
            let d = char::from_digit((unit >> (4 * k)) & 15, 16).expect("a hex digit");
            let bits = (1u128 << d as u8) | (1u128 << d.to_ascii_uppercase() as u8);
            Re::ascii_class(bits)
        }))
    };
    let escape = |unit: u32| Re::concat([Re::lit("\\u"), hex(unit)]);
    let mut parts = vec![Re::lit("\"")];
    for c in text.chars() {
        let mut alts = Vec::new();
        if c >= ' ' && c != '"' && c != '\\' {
            alts.push(Re::lit(c.to_string()));
        }
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        alts.extend(short.map(Re::lit));
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        alts.push(Re::concat(units.iter().map(|&u| escape(u32::from(u)))));
        parts.push(Re::alt(alts));
    }
    parts.push(Re::lit("\""));
    Re::concat(parts)
}

/// Compact spellings of a value to test against a regex: canonical text, and every key
/// order of small objects.
fn spellings(v: &Json) -> Vec<String> {
    match v {
        Json::Array(items) => {
            let mut acc = vec![String::from("[")];
            for (i, x) in items.iter().enumerate() {
                let subs = spellings(x);
                let mut next = Vec::new();
                for a in &acc {
                    for s in &subs {
                        if next.len() >= 64 {
                            break;
                        }
                        next.push(format!("{a}{}{s}", if i > 0 { "," } else { "" }));
                    }
                }
                acc = next;
            }
            acc.into_iter().map(|a| a + "]").collect()
        }
        Json::Object(members) if members.len() <= MAX_PERMUTED_MEMBERS => {
            let mut out = Vec::new();
            for order in permutations(members.len()) {
                let reordered = Json::Object(order.iter().map(|&i| members[i].clone()).collect());
                out.push(reordered.to_compact());
            }
            out
        }
        _ => vec![v.to_compact()],
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
    use super::super::{automaton_from_json_schema_str, Config};

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
        // Recursion: each level is a new context (the reference is on the stack once
        // more), so it still stops at max_recursion_depth.
        let tree = r##"{"$defs":{"t":{"type":"object","properties":{"a":{"$ref":"#/$defs/t"},"b":{"$ref":"#/$defs/t"}}}},"$ref":"#/$defs/t"}"##;
        let a =
            automaton_from_json_schema_str(tree, &config.clone().max_recursion_depth(2)).unwrap();
        let mut dfa = crate::automaton::expr::ExprDfa::new(
            a.exprs,
            a.root,
            &crate::automaton::DfaConfig::new(),
            u64::MAX,
            "t".into(),
        )
        .unwrap();
        use crate::automaton::determinize::StepOnDemand;
        let accepts = |dfa: &mut crate::automaton::expr::ExprDfa, t: &str| {
            matches!(
                dfa.walk(crate::automaton::expr::ExprDfa::START, t.as_bytes()),
                Ok(crate::automaton::Walk::Alive { is_match: true, .. })
            )
        };
        // The root and two recursive expansions; a third is too deep.
        assert!(accepts(&mut dfa, r#"{"a":{"b":{}}}"#));
        assert!(!accepts(&mut dfa, r#"{"b":{"a":{}},"a":{}}"#)); // schema order: a before b
        assert!(accepts(&mut dfa, r#"{"a":{},"b":{"a":{}}}"#));
        assert!(!accepts(&mut dfa, r#"{"a":{"b":{"a":{}}}}"#));
        assert!(!accepts(&mut dfa, r#"{"b":{"b":{"b":{}}}}"#));
    }

    /// Only what every match must start with: anchored, no alternation, a quantified
    /// last character left out.
    #[test]
    fn anchored_prefixes_are_what_every_match_starts_with() {
        use super::{anchored_prefix, prefixes_clash};
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
