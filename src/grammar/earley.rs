//! An Earley recognizer over a parsed grammar: the tests' oracle ([`GrammarOracle`],
//! hidden from the docs, used by tests/grammars.rs), independent of the
//! automaton (no lowering, no templates, no depth bound, no rewriting of recursion).
//! Over code points; a text is accepted when the start rule derives it, and a prefix is
//! viable when some item is still alive after it (every rule of the grammars tested can
//! derive some text).

use super::ast::{Expr, Grammar};
use crate::automaton::expr::FastMap;
use crate::test_support::Rng;

/// An Earley recognizer of a GBNF grammar: the oracle the grammar tests hold the
/// automaton to (no lowering, no templates, no depth bound). Over code points.
#[doc(hidden)]
pub struct GrammarOracle(Cfg);

impl GrammarOracle {
    /// The oracle of GBNF `text` (parse errors as [`check`](super::check) gives them).
    pub fn gbnf(text: &str) -> crate::Result<GrammarOracle> {
        Ok(GrammarOracle(Cfg::new(&super::gbnf::parse(text)?)))
    }

    /// Whether the grammar derives `text`.
    pub fn accepts(&self, text: &str) -> bool {
        self.0.accepts(text)
    }

    /// Whether some text of the grammar begins with `text`.
    pub fn viable(&self, text: &str) -> bool {
        self.0.viable(text)
    }

    /// A random text of the grammar, recursion cut short past `depth`.
    pub fn generate(&self, rng: &mut Rng, depth: usize) -> String {
        self.0.generate(rng, depth)
    }
}

#[derive(Clone, Debug)]
enum Sym {
    Rule(usize),
    Char(char),
    Class(Vec<(char, char)>, bool),
    Any,
}

impl Sym {
    fn matches(&self, c: char) -> bool {
        match self {
            Sym::Char(x) => *x == c,
            Sym::Class(ranges, negated) => {
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
            }
            Sym::Any => true,
            Sym::Rule(_) => false,
        }
    }
}

/// A context-free grammar: productions per nonterminal, 0 the start.
pub(crate) struct Cfg {
    prods: Vec<Vec<Vec<Sym>>>,
    nullable: Vec<bool>,
}

impl Cfg {
    pub(crate) fn new(g: &Grammar) -> Cfg {
        let mut cfg = Cfg {
            prods: Vec::new(),
            nullable: Vec::new(),
        };
        let mut ids: FastMap<String, usize> = FastMap::default();
        ids.insert(g.start.clone(), 0);
        cfg.prods.push(Vec::new());
        for r in &g.rules {
            let n = ids.len();
            ids.entry(r.name.clone()).or_insert_with(|| {
                cfg.prods.push(Vec::new());
                n
            });
        }
        for r in &g.rules {
            let syms = cfg.symbols(&r.body, &ids);
            cfg.prods[ids[&r.name]].push(syms);
        }
        cfg.nullable = vec![false; cfg.prods.len()];
        loop {
            let mut changed = false;
            for n in 0..cfg.prods.len() {
                if !cfg.nullable[n]
                    && cfg.prods[n].iter().any(|p| {
                        p.iter()
                            .all(|s| matches!(s, Sym::Rule(m) if cfg.nullable[*m]))
                    })
                {
                    cfg.nullable[n] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        cfg
    }

    fn fresh(&mut self, prods: Vec<Vec<Sym>>) -> Sym {
        self.prods.push(prods);
        Sym::Rule(self.prods.len() - 1)
    }

    fn symbols(&mut self, e: &Expr, ids: &FastMap<String, usize>) -> Vec<Sym> {
        match e {
            Expr::Literal(s) => s.chars().map(Sym::Char).collect(),
            Expr::Class { ranges, negated } => vec![Sym::Class(ranges.clone(), *negated)],
            Expr::AnyChar => vec![Sym::Any],
            // The oracle reads GBNF only, whose parse lowers nothing ahead.
            Expr::Lowered(..) => unreachable!("a lowered terminal in a GBNF parse"),
            Expr::Ref(name, _) => vec![Sym::Rule(ids[name])],
            Expr::Seq(v) => v.iter().flat_map(|x| self.symbols(x, ids)).collect(),
            Expr::Alt(v) => {
                let prods = v.iter().map(|x| self.symbols(x, ids)).collect();
                vec![self.fresh(prods)]
            }
            Expr::Repeat(x, lo, hi) => {
                let one = self.symbols(x, ids);
                let mut out: Vec<Sym> = (0..*lo).flat_map(|_| one.clone()).collect();
                match hi {
                    None => {
                        // Y -> e Y | ε
                        let y = self.prods.len();
                        self.prods.push(Vec::new());
                        let mut rec = one.clone();
                        rec.push(Sym::Rule(y));
                        self.prods[y] = vec![rec, Vec::new()];
                        out.push(Sym::Rule(y));
                    }
                    Some(h) => {
                        // Optional copies nested: Z_k -> e Z_{k+1} | ε.
                        let mut next: Option<Sym> = None;
                        for _ in *lo..*h {
                            let mut p = one.clone();
                            if let Some(n) = next.take() {
                                p.push(n);
                            }
                            next = Some(self.fresh(vec![p, Vec::new()]));
                        }
                        out.extend(next);
                    }
                }
                out
            }
        }
    }

    /// The Earley sets after each code point of `text` (`None` once a set is empty).
    fn run(&self, text: &str) -> (bool, bool) {
        type Item = (usize, usize, usize, usize); // (nonterminal, production, dot, origin)
        let mut sets: Vec<Vec<Item>> = vec![Vec::new()];
        let mut seen: Vec<std::collections::HashSet<Item>> = vec![Default::default()];
        let add = |sets: &mut Vec<Vec<Item>>,
                   seen: &mut Vec<std::collections::HashSet<Item>>,
                   k: usize,
                   it: Item| {
            if seen[k].insert(it) {
                sets[k].push(it);
            }
        };
        for p in 0..self.prods[0].len() {
            add(&mut sets, &mut seen, 0, (0, p, 0, 0));
        }
        let chars: Vec<char> = text.chars().collect();
        for k in 0..=chars.len() {
            let mut i = 0;
            while i < sets[k].len() {
                let (n, p, dot, origin) = sets[k][i];
                i += 1;
                let prod = &self.prods[n][p];
                match prod.get(dot) {
                    Some(Sym::Rule(m)) => {
                        for q in 0..self.prods[*m].len() {
                            add(&mut sets, &mut seen, k, (*m, q, 0, k));
                        }
                        if self.nullable[*m] {
                            add(&mut sets, &mut seen, k, (n, p, dot + 1, origin));
                        }
                    }
                    Some(term) => {
                        if k < chars.len() && term.matches(chars[k]) {
                            if sets.len() == k + 1 {
                                sets.push(Vec::new());
                                seen.push(Default::default());
                            }
                            add(&mut sets, &mut seen, k + 1, (n, p, dot + 1, origin));
                        }
                    }
                    None => {
                        let done: Vec<Item> = sets[origin]
                            .iter()
                            .filter(|&&(n2, p2, d2, _)| {
                                matches!(self.prods[n2][p2].get(d2), Some(Sym::Rule(m)) if *m == n)
                            })
                            .copied()
                            .collect();
                        for (n2, p2, d2, o2) in done {
                            add(&mut sets, &mut seen, k, (n2, p2, d2 + 1, o2));
                        }
                    }
                }
            }
            if sets.len() == k + 1 && k < chars.len() {
                return (false, false);
            }
        }
        let last = &sets[chars.len()];
        let accepted = last
            .iter()
            .any(|&(n, p, dot, origin)| n == 0 && origin == 0 && dot == self.prods[n][p].len());
        (accepted, !last.is_empty())
    }

    /// Whether the start derives `text`.
    pub(crate) fn accepts(&self, text: &str) -> bool {
        self.run(text).0
    }

    /// Whether some text the start derives begins with `text`.
    pub(crate) fn viable(&self, text: &str) -> bool {
        self.run(text).1
    }

    /// A random text of the grammar; past `depth` nested nonterminals the shortest
    /// productions are taken, so recursion stays shallow.
    pub(crate) fn generate(&self, rng: &mut Rng, depth: usize) -> String {
        let mut out = String::new();
        self.gen(0, rng, depth, &mut out);
        out
    }

    fn gen(&self, n: usize, rng: &mut Rng, depth: usize, out: &mut String) {
        let prods = &self.prods[n];
        let p = if depth == 0 {
            // The production with the fewest nonterminals (a way out).
            (0..prods.len())
                .min_by_key(|&p| {
                    prods[p]
                        .iter()
                        .filter(|s| matches!(s, Sym::Rule(_)))
                        .count()
                })
                .unwrap_or(0)
        } else {
            rng.below(prods.len())
        };
        for s in &prods[p] {
            match s {
                Sym::Rule(m) => self.gen(*m, rng, depth.saturating_sub(1), out),
                Sym::Char(c) => out.push(*c),
                Sym::Any => out.push(['a', 'é', ' ', '\n', '"', '漢'][rng.below(6)]),
                Sym::Class(ranges, false) => {
                    let (lo, hi) = ranges[rng.below(ranges.len())];
                    let span = hi as u32 - lo as u32 + 1;
                    let c =
                        char::from_u32(lo as u32 + rng.below(span.min(1 << 16) as usize) as u32)
                            .unwrap_or(lo);
                    out.push(c);
                }
                Sym::Class(ranges, true) => {
                    let c = ['a', 'Z', '0', ' ', 'é', '漢', '\n', '-']
                        .into_iter()
                        .find(|&c| s.matches(c))
                        .or_else(|| {
                            (0x20u32..0x3000)
                                .filter_map(char::from_u32)
                                .find(|&c| s.matches(c))
                        })
                        .unwrap_or('a');
                    let _ = ranges;
                    out.push(c);
                }
            }
        }
    }
}
