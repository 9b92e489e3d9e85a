//! Recursive references: which definitions reach themselves (Tarjan's strongly
//! connected components over the document's reference graph), and the templates a
//! lazy index calls for them instead of expanding them in place.

use super::*;

/// The state of [`Compiler::is_recursive`]'s search: targets numbered as found.
#[derive(Default)]
pub(super) struct Tarjan {
    number: FastMap<String, usize>,
    names: Vec<String>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    self_loop: Vec<bool>,
    stack: Vec<usize>,
    frames: Vec<TarjanFrame>,
}

pub(super) struct TarjanFrame {
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

impl Compiler<'_> {
    /// A call to `target`'s template in this context. Its body is compiled later, by
    /// [`compile_templates`](Self::compile_templates), not here: a chain of definitions
    /// each calling the next would otherwise nest one compile per link.
    pub(super) fn call_to(&mut self, target: String) -> Result<Re> {
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

    /// The target of `n` where `n` is a reference alone (no other keyword) to a
    /// recursive definition.
    pub(super) fn recursive_ref(&mut self, n: &NodeRef) -> Result<Option<String>> {
        let Node::Schema(s) = &**n else {
            return Ok(None);
        };
        let Some((uri, at)) = s.only_ref() else {
            return Ok(None);
        };
        let target = self.doc.resolve_ref(uri, at)?;
        Ok(self.is_recursive(&target)?.then_some(target))
    }

    /// `n` where it merges a recursive definition with other keywords (`allOf` with a
    /// reference among its parts, or a `$ref` beside other keywords): the
    /// intersection of calls to the definitions' templates with the rest, instead of
    /// the definition expanded in place and merged. Expanded in place, the definition's
    /// own merges are made again at every level (ajv's "secure" meta-schema,
    /// `Github_medium---o39217`: four `dependencies` of two alternatives each, merged
    /// into `propertyNames` and `items` at every level, passed the combinations limit
    /// at the second). `None` where `n` merges no recursive definition.
    pub(super) fn recursion_intersected(&mut self, n: &NodeRef) -> Result<Option<Re>> {
        let mut targets = Vec::new();
        let rest: NodeRef = match &**n {
            Node::AllOf(parts) => {
                let mut others = Vec::new();
                for p in parts {
                    match self.recursive_ref(p)? {
                        Some(t) => targets.push(t),
                        None => others.push(p.clone()),
                    }
                }
                if targets.is_empty() {
                    return Ok(None);
                }
                match others.len() {
                    0 => Rc::new(Node::Any),
                    1 => others.pop().expect("one"),
                    _ => Rc::new(Node::AllOf(others)),
                }
            }
            Node::Schema(s) if !s.apply.refs.is_empty() => {
                let mut kept = Vec::new();
                for (uri, at) in &s.apply.refs {
                    let target = self.doc.resolve_ref(uri, at)?;
                    if self.is_recursive(&target)? {
                        targets.push(target);
                    } else {
                        kept.push((uri.clone(), at.clone()));
                    }
                }
                if targets.is_empty() {
                    return Ok(None);
                }
                let mut rest = (**s).clone();
                rest.apply.refs = kept;
                Rc::new(Node::Schema(Box::new(rest)))
            }
            _ => return Ok(None),
        };
        self.call_and(&targets, |c| c.compile_node(&rest)).map(Some)
    }

    /// Calls to `targets`' templates intersected with what `rest` compiles, compiled
    /// with undeclared properties anywhere ([`Compiler::loose_objects`]): the templates
    /// give the objects their order, and the rest must accept the members the
    /// templates declare wherever they put them. Exact: a text in both is valid for
    /// both.
    pub(super) fn call_and(
        &mut self,
        targets: &[String],
        rest: impl FnOnce(&mut Self) -> Result<Re>,
    ) -> Result<Re> {
        let mut parts = Vec::with_capacity(targets.len() + 1);
        for t in targets {
            parts.push(self.call_to(t.clone())?);
        }
        let saved = std::mem::replace(&mut self.loose_objects, true);
        let out = rest(self);
        self.loose_objects = saved;
        parts.push(out?);
        Ok(Re::and(parts))
    }

    /// Compiles the bodies of the templates called so far (and of those their bodies
    /// call), each with only its target on the reference stack: every recursive
    /// reference in it is a call too, so a body does not depend on where it was first
    /// met, and one template serves every use and every depth. Whitespace and loose
    /// objects are those of the context the template was called in.
    pub(super) fn compile_templates(&mut self) -> Result<()> {
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
    pub(super) fn is_recursive(&mut self, target: &str) -> Result<bool> {
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
                let id = self.component_of.len();
                for x in component {
                    t.on_stack[x] = false;
                    self.recursive.insert(t.names[x].clone(), cyclic);
                    self.component_of.insert(t.names[x].clone(), id);
                }
            }
        }
        Ok(self.recursive[target])
    }

    pub(super) fn refs_under(&mut self, target: &str) -> Result<Rc<[String]>> {
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
    /// `max_recursion_depth`: nothing more can be written there. Every entry into the
    /// target's cycle on the stack counts, whichever definition of it (A -> B -> A is
    /// two, as calls count): counted per definition, three mutually recursive ones were
    /// expanded twelve levels deep (`Github_medium---o3626`: 80 ms, against 11 ms so).
    /// Only a target in a cycle recurses: one outside every cycle may still be on the
    /// stack that often (merged at each level of a recursion it is not part of, as the
    /// complements of a recursive `oneOf`'s other branches are), and is bounded by that
    /// recursion.
    pub(super) fn too_deep(&mut self, target: &str) -> Result<bool> {
        if !self.ref_stack.iter().any(|t| t == target) || !self.is_recursive(target)? {
            return Ok(false);
        }
        let c = self.component_of[target];
        let entries = self
            .ref_stack
            .iter()
            .filter(|t| self.component_of.get(*t) == Some(&c))
            .count();
        Ok(entries > self.config.get_max_recursion_depth())
    }
}
