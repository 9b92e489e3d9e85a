//! A grammar lowered to one automaton expression.
//!
//! Rules that do not reach themselves are inlined (hash-consing shares each). A rule
//! that reaches itself becomes a template of the expression set (`call.rs`): a call
//! unfolds one level when a derivative reaches it, and the depth bound
//! (`Config::max_recursion_depth`) keeps the automaton finite. Before that, two
//! rewrites turn the common recursions into iteration, which no bound limits:
//!
//! * direct left recursion, `a ::= a x | y` into `a ::= y x*` (a left-recursive call
//!   would unfold every level at each derivative); left recursion that remains (through
//!   other rules or a nullable prefix) is refused, naming the rule;
//! * direct tail recursion, `a ::= x a | y` into `a ::= x* y`.
//!
//! A template never matches the empty string (calls are taken to be non-nullable), so
//! a recursive rule that can be empty is lowered as `ε | call`, its template the rule
//! minus the empty string.

use super::ast::{Expr, Grammar, Pos, Rule};
use super::{invalid, Config};
use crate::automaton::expr::{ExprId, ExprSet, FastMap};
use crate::error::Result;

/// Rules that reach themselves (and become templates) a grammar may have.
const MAX_RECURSIVE_RULES: usize = 1024;

/// A grammar lowered: the expression set (templates defined) and the start.
pub(crate) struct Lowered {
    pub(crate) exprs: ExprSet,
    pub(crate) root: ExprId,
}

/// Lowers `grammar` into `exprs`, the set its [`Expr::Lowered`] terminals are in (its rules checked: each defined once, every reference defined,
/// no left recursion, none that can match nothing).
pub(crate) fn lower(grammar: &Grammar, config: &Config, exprs: ExprSet) -> Result<Lowered> {
    let rules = Rules::new(grammar)?;
    let order = rules.callees_first();
    let mut rules = rules;
    rules.rewrite_direct_recursion();
    let recursive = rules.recursive(&order);
    if recursive.len() > MAX_RECURSIVE_RULES {
        // Deciding when each template first matches text is a fixpoint over depths and
        // templates: quadratic in their number (8 s for 20,000).
        return Err(crate::Error::new(
            crate::ErrorKind::BuildTooExpensive,
            format!(
                "{} rules reach themselves (at most {MAX_RECURSIVE_RULES} can be recursive templates)",
                recursive.len()
            ),
        ));
    }
    rules.refuse_left_recursion(&recursive)?;
    // Only some of the rules on cycles become templates, enough to cut every cycle; the
    // others are inlined around them, so a nesting level costs one call, not one per rule
    // on the way (json.gbnf's value -> array -> value: 32 levels, not 15).
    let recursive = rules.template_rules(&recursive);
    let order = rules.callees_first_around(&recursive);
    let mut lowering = Lowering {
        exprs,
        slots: FastMap::default(),
        lowered: FastMap::default(),
        nullable: rules.nullable(),
        depth: config.max_recursion_depth,
    };
    for (slot, &r) in recursive.iter().enumerate() {
        lowering.slots.insert(r, slot as u32);
    }
    for &r in &order {
        for in_template in [false, true] {
            let e = lowering.expr(&rules, &rules.bodies[r], in_template)?;
            lowering.lowered.insert((r, in_template), e);
        }
    }
    let mut bodies = Vec::with_capacity(recursive.len());
    for &r in &recursive {
        let body = lowering.lowered[&(r, true)];
        bodies.push(lowering.non_empty_part(body)?);
    }
    lowering
        .exprs
        .define_templates(bodies)
        .map_err(|e| invalid(rules.pos[0], format!("internal: {e}")))?;
    for (slot, &r) in recursive.iter().enumerate() {
        // A nullable rule matches the empty text anyway (and its template, an
        // intersection, is not decided by the fixpoint over depths).
        if !lowering.nullable[r]
            && lowering.exprs.template_min_depth(slot as u32) > config.max_recursion_depth
        {
            return Err(invalid(
                rules.pos[r],
                format!(
                    "rule {:?} matches no text within the recursion depth {} (it never reaches a way out of its recursion)",
                    rules.names[r], config.max_recursion_depth
                ),
            ));
        }
    }
    let root = lowering.lowered[&(rules.start, false)];
    if root == ExprId::NOTHING {
        return Err(invalid(
            rules.pos[rules.start],
            "the grammar matches no text",
        ));
    }
    Ok(Lowered {
        exprs: lowering.exprs,
        root,
    })
}

/// The rules reachable from the start, numbered (0 the start).
struct Rules {
    names: Vec<String>,
    bodies: Vec<Expr>,
    pos: Vec<Pos>,
    index: FastMap<String, usize>,
    start: usize,
}

impl Rules {
    fn new(grammar: &Grammar) -> Result<Rules> {
        let mut defined: FastMap<&str, &Rule> = FastMap::default();
        for rule in &grammar.rules {
            if let Some(first) = defined.insert(&rule.name, rule) {
                return Err(invalid(
                    rule.pos,
                    format!(
                        "rule {:?} is defined twice (first at {})",
                        rule.name, first.pos
                    ),
                ));
            }
        }
        let Some(start) = defined.get(grammar.start.as_str()) else {
            return Err(invalid(
                Pos { line: 1, column: 1 },
                format!("the grammar has no {:?} rule to start from", grammar.start),
            ));
        };
        let mut rules = Rules {
            names: vec![start.name.clone()],
            bodies: vec![start.body.clone()],
            pos: vec![start.pos],
            index: FastMap::default(),
            start: 0,
        };
        rules.index.insert(start.name.clone(), 0);
        let mut next = 0;
        while next < rules.bodies.len() {
            let mut refs = Vec::new();
            let body = rules.bodies[next].clone();
            body.refs(&mut refs);
            for (name, at) in refs {
                if rules.index.contains_key(name) {
                    continue;
                }
                let rule = defined
                    .get(name)
                    .ok_or_else(|| invalid(at, format!("rule {name:?} is not defined")))?;
                rules.index.insert(name.to_string(), rules.names.len());
                rules.names.push(rule.name.clone());
                rules.bodies.push(rule.body.clone());
                rules.pos.push(rule.pos);
            }
            next += 1;
        }
        Ok(rules)
    }

    fn refs_of(&self, r: usize) -> Vec<usize> {
        let mut refs = Vec::new();
        self.bodies[r].refs(&mut refs);
        refs.iter().map(|(name, _)| self.index[*name]).collect()
    }

    /// The rules in an order where each comes after the rules it refers to, but for
    /// references within a strongly connected component.
    fn callees_first(&self) -> Vec<usize> {
        let edges: Vec<Vec<usize>> = (0..self.names.len()).map(|r| self.refs_of(r)).collect();
        components(&edges).0
    }

    /// A set of `recursive` rules that cuts every cycle (a feedback vertex set, chosen
    /// greedily: a rule referring to itself, else the one with the most references in
    /// and out among those still on cycles), in `recursive`'s order.
    fn template_rules(&self, recursive: &[usize]) -> Vec<usize> {
        let n = self.names.len();
        let edges: Vec<Vec<usize>> = (0..n).map(|r| self.refs_of(r)).collect();
        let mut chosen = vec![false; n];
        loop {
            let pruned: Vec<Vec<usize>> = (0..n)
                .map(|v| match chosen[v] {
                    true => Vec::new(),
                    false => edges[v].iter().copied().filter(|&w| !chosen[w]).collect(),
                })
                .collect();
            let cyclic = on_cycles(&pruned);
            let mut into = vec![0usize; n];
            for (v, out) in pruned.iter().enumerate().filter(|(v, _)| cyclic[*v]) {
                out.iter()
                    .filter(|&&w| cyclic[w] && w != v)
                    .for_each(|&w| into[w] += 1);
            }
            let score = |v: usize| match pruned[v].contains(&v) {
                true => usize::MAX,
                false => into[v] * pruned[v].iter().filter(|&&w| cyclic[w]).count(),
            };
            match (0..n)
                .filter(|&v| cyclic[v])
                .max_by_key(|&v| (score(v), std::cmp::Reverse(v)))
            {
                Some(v) => chosen[v] = true,
                None => break,
            }
        }
        recursive.iter().copied().filter(|&r| chosen[r]).collect()
    }

    /// The rules in an order where each comes after the rules it refers to, references
    /// to `templates` aside (they are calls): an order to lower them in.
    fn callees_first_around(&self, templates: &[usize]) -> Vec<usize> {
        let n = self.names.len();
        let mut is_template = vec![false; n];
        templates.iter().for_each(|&t| is_template[t] = true);
        let edges: Vec<Vec<usize>> = (0..n)
            .map(|r| {
                self.refs_of(r)
                    .into_iter()
                    .filter(|&w| !is_template[w])
                    .collect()
            })
            .collect();
        components(&edges).0
    }

    /// The rules that reach themselves (after the rewrites), in `order`.
    fn recursive(&self, order: &[usize]) -> Vec<usize> {
        let n = self.names.len();
        let edges: Vec<Vec<usize>> = (0..n).map(|r| self.refs_of(r)).collect();
        let cyclic = on_cycles(&edges);
        order.iter().copied().filter(|&r| cyclic[r]).collect()
    }

    /// `a ::= a x | y` into `a ::= y x*`, then `a ::= x a | y` into `a ::= x* y`, where
    /// the rule's own references are only there.
    fn rewrite_direct_recursion(&mut self) {
        for r in 0..self.bodies.len() {
            let name = self.names[r].clone();
            let alts = alternatives(&self.bodies[r]);
            let mentions = |e: &Expr| {
                let mut refs = Vec::new();
                e.refs(&mut refs);
                refs.iter().any(|(n, _)| *n == name)
            };
            // Left: alternatives starting with the rule and mentioning it nowhere else.
            let (left, rest): (Vec<&Expr>, Vec<&Expr>) = alts
                .iter()
                .partition(|a| first_item(a).is_some_and(|f| is_ref_to(&f, &name)));
            if !left.is_empty()
                && left.iter().all(|a| !mentions(&drop_first(a)))
                && rest.iter().all(|a| !mentions(a))
                && !rest.is_empty()
            {
                let tails = left.iter().map(|a| drop_first(a)).collect();
                self.bodies[r] = Expr::Seq(vec![
                    Expr::Alt(rest.into_iter().cloned().collect()),
                    Expr::Repeat(Box::new(Expr::Alt(tails)), 0, None),
                ]);
                continue;
            }
            let (tail, rest): (Vec<&Expr>, Vec<&Expr>) = alts
                .iter()
                .partition(|a| last_item(a).is_some_and(|f| is_ref_to(&f, &name)));
            if !tail.is_empty()
                && tail.iter().all(|a| !mentions(&drop_last(a)))
                && rest.iter().all(|a| !mentions(a))
                && !rest.is_empty()
            {
                let heads = tail.iter().map(|a| drop_last(a)).collect();
                self.bodies[r] = Expr::Seq(vec![
                    Expr::Repeat(Box::new(Expr::Alt(heads)), 0, None),
                    Expr::Alt(rest.into_iter().cloned().collect()),
                ]);
            }
        }
    }

    /// Refuses a rule that can reach itself before any text: the rewrite could not
    /// turn it into iteration, and a call at the left edge would unfold every level at
    /// each derivative.
    fn refuse_left_recursion(&self, recursive: &[usize]) -> Result<()> {
        let n = self.names.len();
        let nullable = self.nullable();
        let edges: Vec<Vec<usize>> = (0..n)
            .map(|r| {
                let mut out = Vec::new();
                left_refs(
                    &self.bodies[r],
                    &|name| nullable[self.index[name]],
                    &mut |name| {
                        out.push(self.index[name]);
                    },
                );
                out
            })
            .collect();
        let cyclic = on_cycles(&edges);
        for &r in recursive {
            if cyclic[r] {
                return Err(invalid(
                    self.pos[r],
                    format!(
                        "rule {:?} is left-recursive (it can reach itself before matching any text) in a way not rewritten to iteration",
                        self.names[r]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Which rules can match the empty string (a fixpoint).
    fn nullable(&self) -> Vec<bool> {
        let mut nullable = vec![false; self.names.len()];
        loop {
            let mut changed = false;
            for r in 0..self.names.len() {
                if !nullable[r]
                    && expr_nullable(&self.bodies[r], &|name| nullable[self.index[name]])
                {
                    nullable[r] = true;
                    changed = true;
                }
            }
            if !changed {
                return nullable;
            }
        }
    }
}

/// The strongly connected components of a graph (Tarjan's algorithm, iterative: a chain
/// of thousands of rules must not recurse): the nodes in an order where each comes after
/// those it reaches outside its component, and each node's component.
fn components(edges: &[Vec<usize>]) -> (Vec<usize>, Vec<usize>) {
    let n = edges.len();
    let mut number = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![usize::MAX; n];
    let mut stack = Vec::new();
    let mut order = Vec::with_capacity(n);
    let mut count = 0;
    for root in 0..n {
        if number[root] != usize::MAX {
            continue;
        }
        let mut frames = vec![(root, 0usize)];
        number[root] = count;
        low[root] = count;
        count += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut next)) = frames.last_mut() {
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                if number[w] == usize::MAX {
                    number[w] = count;
                    low[w] = count;
                    count += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(number[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == number[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = v;
                    order.push(w);
                    if w == v {
                        break;
                    }
                }
            }
        }
    }
    (order, component)
}

/// Which nodes lie on a cycle: in a component of several, or with an edge to themselves
/// (linear, where asking each node whether it reaches itself was quadratic: 10 s for a
/// cycle of 20,000 rules).
fn on_cycles(edges: &[Vec<usize>]) -> Vec<bool> {
    let (_, component) = components(edges);
    let mut size = vec![0usize; edges.len()];
    component.iter().for_each(|&c| size[c] += 1);
    (0..edges.len())
        .map(|v| size[component[v]] > 1 || edges[v].contains(&v))
        .collect()
}

fn alternatives(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Alt(v) => v.clone(),
        other => vec![other.clone()],
    }
}

fn items(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Seq(v) => v.clone(),
        other => vec![other.clone()],
    }
}

fn first_item(e: &Expr) -> Option<Expr> {
    items(e).first().cloned()
}

fn last_item(e: &Expr) -> Option<Expr> {
    items(e).last().cloned()
}

fn drop_first(e: &Expr) -> Expr {
    Expr::Seq(items(e)[1..].to_vec())
}

fn drop_last(e: &Expr) -> Expr {
    let v = items(e);
    Expr::Seq(v[..v.len() - 1].to_vec())
}

fn is_ref_to(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Ref(n, _) if n == name)
}

fn expr_nullable(e: &Expr, rule: &dyn Fn(&str) -> bool) -> bool {
    match e {
        Expr::Literal(s) => s.is_empty(),
        Expr::Class { .. } | Expr::AnyChar => false,
        Expr::Lowered(_, nullable) => *nullable,
        Expr::Ref(name, _) => rule(name),
        Expr::Seq(v) => v.iter().all(|x| expr_nullable(x, rule)),
        Expr::Alt(v) => v.iter().any(|x| expr_nullable(x, rule)),
        Expr::Repeat(x, lo, _) => *lo == 0 || expr_nullable(x, rule),
    }
}

/// The rules `e` may refer to before any text: at its start, or after a nullable
/// prefix.
fn left_refs(e: &Expr, nullable: &dyn Fn(&str) -> bool, out: &mut dyn FnMut(&str)) {
    match e {
        Expr::Ref(name, _) => out(name),
        Expr::Seq(v) => {
            for x in v {
                left_refs(x, nullable, out);
                if !expr_nullable(x, nullable) {
                    break;
                }
            }
        }
        Expr::Alt(v) => v.iter().for_each(|x| left_refs(x, nullable, out)),
        Expr::Repeat(x, ..) => left_refs(x, nullable, out),
        Expr::Literal(_) | Expr::Class { .. } | Expr::AnyChar | Expr::Lowered(..) => {}
    }
}

struct Lowering {
    exprs: ExprSet,
    /// The template slot of each recursive rule.
    slots: FastMap<usize, u32>,
    /// Each rule lowered, outside templates (`false`) and inside (`true`).
    lowered: FastMap<(usize, bool), ExprId>,
    /// Which rules can match the empty string (decided on the syntax: the templates
    /// are not defined while rules are lowered).
    nullable: Vec<bool>,
    depth: u32,
}

impl Lowering {
    fn expr(&mut self, rules: &Rules, e: &Expr, in_template: bool) -> Result<ExprId> {
        Ok(match e {
            Expr::Literal(s) => self.exprs.literal(s.as_bytes()),
            Expr::Class { ranges, negated } => {
                let mut pattern = String::from(if *negated { "[^" } else { "[" });
                for &(lo, hi) in ranges {
                    pattern.push_str(&format!("\\x{{{:X}}}-\\x{{{:X}}}", lo as u32, hi as u32));
                }
                pattern.push(']');
                self.exprs.regex(&pattern)?
            }
            Expr::AnyChar => self.exprs.regex("(?s:.)")?,
            Expr::Lowered(e, _) => *e,
            Expr::Ref(name, _) => {
                let r = rules.index[name.as_str()];
                match self.slots.get(&r) {
                    Some(&slot) => {
                        let call = if in_template {
                            self.exprs.hole_call(slot)
                        } else {
                            self.exprs.call(slot, self.depth)
                        };
                        if self.nullable[r] {
                            self.exprs.union2(ExprId::EMPTY, call)
                        } else {
                            call
                        }
                    }
                    // Callees come first: a rule outside any cycle is lowered already.
                    None => self.lowered[&(r, in_template)],
                }
            }
            Expr::Seq(v) => {
                let parts = v
                    .iter()
                    .map(|x| self.expr(rules, x, in_template))
                    .collect::<Result<Vec<_>>>()?;
                self.exprs.concat(&parts)
            }
            Expr::Alt(v) => {
                let alts = v
                    .iter()
                    .map(|x| self.expr(rules, x, in_template))
                    .collect::<Result<Vec<_>>>()?;
                self.exprs.union(&alts)
            }
            Expr::Repeat(x, lo, hi) => {
                let inner = self.expr(rules, x, in_template)?;
                self.exprs.repeat(inner, *lo, *hi)
            }
        })
    }

    /// `body` without the empty string: a template's language (calls are never
    /// nullable).
    fn non_empty_part(&mut self, body: ExprId) -> Result<ExprId> {
        if !self.exprs.nullable(body) {
            return Ok(body);
        }
        let non_empty = self.exprs.regex("(?s:.)+")?;
        Ok(self.exprs.intersection(&[body, non_empty]))
    }
}
