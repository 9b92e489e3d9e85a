//! Case-insensitive patterns without regex-syntax's case tables. regex-syntax folds a
//! `(?i)` pattern through its simple case folding table, ~21 KB of the gzipped wasm
//! (docs/index-layout.md, "Measured choices"); the same equivalences are kept here in
//! 6.7 KB (1 KB gzipped, `case_fold_table.rs`, checked against regex-syntax's by a test),
//! and a case-insensitive pattern is rewritten before it is parsed: its literals and
//! classes spelled out folded (`(?i)k` -> `[\x{4B}\x{6B}\x{212A}]`) and its `i` flags
//! dropped, so regex-syntax never folds and the wasm build leaves its `unicode-case`
//! feature out. The rewrite runs natively too (one code path; natively the tests compare
//! it with regex-syntax's own folding).
//!
//! What it follows is regex-syntax's translator: a literal folds to the characters
//! simple case folding makes equivalent; a bracketed class folds its union, a nested
//! class and each operand of `&&`, `--`, `~~` fold before they combine, negation comes
//! after folding (`(?i)[^k]` refuses `K` too); a `\p{..}` class folds (negated after);
//! Perl classes are closed under folding already. Without Unicode (`(?-u)`) only ASCII
//! letters fold, as regex-syntax does without tables.

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::OnceLock;

use regex_syntax::ast::{self, Ast, ClassSet, ClassSetBinaryOpKind, ClassSetItem, Flag, Visitor};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

use super::case_fold_table::CASE_FOLDS;
use super::unicode_class::{varint, ParseFailure};
use crate::error::{quote, Error, ErrorKind, Result};

/// Longest rewritten pattern: a folded `\p{L}` is ~700 ranges, ~15 KB of text, so a long
/// run of them must stop here, not in memory.
const MAX_REWRITTEN_BYTES: usize = 16 << 20;
/// Most folding work for one pattern, in ranges and table entries visited: a class of
/// every character visits the whole table (~3,000 entries), so 100,000 of them in one
/// pattern would take seconds; this stops them in about a tenth of one.
const MAX_FOLD_WORK: u64 = 20_000_000;

/// `pattern` with its case-insensitive parts spelled out and no `i` flag left (borrowed
/// when it has none).
///
/// Errors: [`ErrorKind::InvalidRegex`] for a pattern regex-syntax cannot parse (or a class
/// it cannot translate); [`ErrorKind::DfaTooLarge`] past [`MAX_REWRITTEN_BYTES`].
pub(crate) fn without_case_flags(pattern: &str) -> Result<Cow<'_, str>> {
    if !may_set_case_flag(pattern) {
        return Ok(Cow::Borrowed(pattern));
    }
    let invalid = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorKind::InvalidRegex,
            format!("invalid regex {}: {e}", quote(pattern)),
        )
    };
    let parsed = ast::parse::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| invalid(&e))?;
    let rewrite = Rewrite {
        pattern,
        scopes: vec![Scope::default()],
        edits: Vec::new(),
        added: 0,
        work: std::cell::Cell::new(0),
    };
    let edits = ast::visit(&parsed, rewrite).map_err(|e| match e {
        RewriteError::Regex(message) => invalid(&message),
        RewriteError::TooLarge => Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "the case-insensitive regex {} is too large to fold: spelled out, it passes {} MiB \
                 or {} million folding steps",
                quote(pattern),
                MAX_REWRITTEN_BYTES >> 20,
                MAX_FOLD_WORK / 1_000_000
            ),
        ),
    })?;
    if edits.is_empty() {
        return Ok(Cow::Borrowed(pattern));
    }
    // The visit met the nodes in the pattern's order: the edits are in order already.
    Ok(Cow::Owned(super::syntax::apply_edits(pattern, edits)))
}

/// Whether `pattern` may hold a flag group with `i` (`(?i)`, `(?si:`, `(?-i)`): a
/// quick scan, so that the patterns without one (nearly all) skip the parse.
fn may_set_case_flag(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    bytes.windows(2).enumerate().any(|(at, w)| {
        w == b"(?" && {
            bytes[at + 2..]
                .iter()
                .take_while(|b| b.is_ascii_alphabetic() || **b == b'-' || b.is_ascii_whitespace())
                .any(|&b| b == b'i')
        }
    })
}

/// The equivalences: every character with others, sorted, each with the next member of
/// its set (the largest wraps round to the smallest).
fn orbits() -> &'static [(u32, u32)] {
    static ORBITS: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    ORBITS.get_or_init(|| decode(CASE_FOLDS))
}

/// The table's encoding: per character, the distance from the previous one (a LEB128
/// varint) and the signed distance to the next member of its set (zigzag, LEB128).
fn decode(bytes: &[u8]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let (mut at, mut c) = (0, 0u32);
    while at < bytes.len() {
        c += varint(bytes, &mut at) as u32;
        let z = varint(bytes, &mut at) as i64;
        let delta = (z >> 1) ^ -(z & 1);
        out.push((c, (i64::from(c) + delta) as u32));
    }
    out
}

#[cfg(test)]
fn encode(pairs: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |v: u64| super::unicode_class::push_varint(&mut out, v);
    let mut prev = 0;
    for &(c, next) in pairs {
        push(u64::from(c - prev));
        prev = c;
        let delta = i64::from(next) - i64::from(c);
        push(((delta << 1) ^ (delta >> 63)) as u64);
    }
    out
}

/// Adds to `class` every character simple case folding makes equivalent to one of its own;
/// returns the work done (ranges and table entries visited).
fn fold(class: &mut ClassUnicode) -> u64 {
    let table = orbits();
    let next = |c: u32| table[table.partition_point(|&(x, _)| x < c)].1;
    let mut extra = Vec::new();
    let mut work = class.ranges().len() as u64;
    for r in class.ranges() {
        let (a, b) = (u32::from(r.start()), u32::from(r.end()));
        let from = table.partition_point(|&(c, _)| c < a);
        for &(c, first) in table[from..].iter().take_while(|&&(c, _)| c <= b) {
            work += 1;
            let mut m = first;
            while m != c {
                if let Some(ch) = char::from_u32(m) {
                    extra.push(ClassUnicodeRange::new(ch, ch));
                }
                m = next(m);
            }
        }
    }
    class.union(&ClassUnicode::new(extra));
    work
}

/// The flags in force: case-insensitive, Unicode off (`(?-u)`), verbose.
#[derive(Clone, Copy, Default)]
struct Scope {
    insensitive: bool,
    ascii: bool,
    verbose: bool,
}

impl Scope {
    fn apply(&mut self, flags: &ast::Flags) {
        if let Some(on) = flags.flag_state(Flag::CaseInsensitive) {
            self.insensitive = on;
        }
        if let Some(on) = flags.flag_state(Flag::Unicode) {
            self.ascii = !on;
        }
        if let Some(on) = flags.flag_state(Flag::IgnoreWhitespace) {
            self.verbose = on;
        }
    }
}

enum RewriteError {
    Regex(String),
    TooLarge,
}

/// Collects `(start, end, replacement)` edits while the AST is visited in order.
struct Rewrite<'p> {
    pattern: &'p str,
    /// The flags in force, one entry per open group.
    scopes: Vec<Scope>,
    edits: Vec<(usize, usize, String)>,
    /// Bytes the edits add, against [`MAX_REWRITTEN_BYTES`].
    added: usize,
    /// Folding work so far, against [`MAX_FOLD_WORK`].
    work: std::cell::Cell<u64>,
}

impl Rewrite<'_> {
    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().expect("the pattern's own scope")
    }

    fn edit(&mut self, span: &ast::Span, text: String) -> Result<(), RewriteError> {
        self.added += text.len();
        if self.pattern.len() + self.added > MAX_REWRITTEN_BYTES {
            return Err(RewriteError::TooLarge);
        }
        self.edits.push((span.start.offset, span.end.offset, text));
        Ok(())
    }

    /// `flags`' text without `i` (and without a `-` left with nothing after it).
    fn flags_without_i(flags: &ast::Flags) -> String {
        let mut out = String::new();
        for item in &flags.items {
            match item.kind {
                ast::FlagsItemKind::Negation => out.push('-'),
                ast::FlagsItemKind::Flag(flag) => out.push_str(match flag {
                    Flag::CaseInsensitive => "",
                    Flag::MultiLine => "m",
                    Flag::DotMatchesNewLine => "s",
                    Flag::SwapGreed => "U",
                    Flag::Unicode => "u",
                    Flag::CRLF => "R",
                    Flag::IgnoreWhitespace => "x",
                }),
            }
        }
        if out.ends_with('-') {
            out.pop();
        }
        out
    }

    /// The class `text` stands for alone (a `\p{..}`, a Perl or a bracketed class),
    /// parsed in the scope's verbose mode, never folded.
    fn class_of(&self, text: &str, verbose: bool) -> Result<ClassUnicode, RewriteError> {
        let hir = super::unicode_class::parse(text, verbose).map_err(|e| match e {
            ParseFailure::Syntax(e) => RewriteError::Regex(e.to_string()),
            ParseFailure::TooLarge => RewriteError::TooLarge,
        })?;
        let not_a_class = || RewriteError::Regex(format!("{text:?} is not a class"));
        match hir.kind() {
            HirKind::Class(Class::Unicode(c)) => Ok(c.clone()),
            // A class of one character (`\p{Zl}`) comes back as that character.
            HirKind::Literal(l) => {
                let mut chars = std::str::from_utf8(&l.0)
                    .map_err(|_| not_a_class())?
                    .chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(ClassUnicode::new([ClassUnicodeRange::new(c, c)])),
                    _ => Err(not_a_class()),
                }
            }
            _ => Err(not_a_class()),
        }
    }

    /// [`fold`], charged to the pattern's folding work.
    fn fold(&self, class: &mut ClassUnicode) -> Result<(), RewriteError> {
        self.work.set(self.work.get() + fold(class));
        if self.work.get() > MAX_FOLD_WORK {
            return Err(RewriteError::TooLarge);
        }
        Ok(())
    }

    fn text(&self, span: &ast::Span) -> &str {
        &self.pattern[span.start.offset..span.end.offset]
    }

    /// `class` folded, then negated if `negated`: regex-syntax's order for every class
    /// written negated (`(?i)[^k]` refuses `K` too).
    fn fold_and_negate(
        &self,
        mut class: ClassUnicode,
        negated: bool,
    ) -> Result<ClassUnicode, RewriteError> {
        self.fold(&mut class)?;
        if negated {
            class.negate();
        }
        Ok(class)
    }

    /// A named class as written in `text` (`\P{Lu}`, `[[:^lower:]]` parse negated), its
    /// positive form folded before the negation.
    fn named_class(
        &self,
        text: &str,
        negated: bool,
        verbose: bool,
    ) -> Result<ClassUnicode, RewriteError> {
        let mut class = self.class_of(text, verbose)?;
        if negated {
            class.negate();
        }
        self.fold_and_negate(class, negated)
    }

    /// A bracketed class's set, folded as regex-syntax folds it (before the enclosing
    /// class's negation).
    fn set(&self, set: &ClassSet, verbose: bool) -> Result<ClassUnicode, RewriteError> {
        match set {
            ClassSet::Item(item) => self.item(item, verbose),
            ClassSet::BinaryOp(op) => {
                let mut lhs = self.set(&op.lhs, verbose)?;
                let mut rhs = self.set(&op.rhs, verbose)?;
                self.fold(&mut lhs)?;
                self.fold(&mut rhs)?;
                match op.kind {
                    ClassSetBinaryOpKind::Intersection => lhs.intersect(&rhs),
                    ClassSetBinaryOpKind::Difference => lhs.difference(&rhs),
                    ClassSetBinaryOpKind::SymmetricDifference => lhs.symmetric_difference(&rhs),
                }
                Ok(lhs)
            }
        }
    }

    fn item(&self, item: &ClassSetItem, verbose: bool) -> Result<ClassUnicode, RewriteError> {
        let one = |a: char, b: char| ClassUnicode::new([ClassUnicodeRange::new(a, b)]);
        Ok(match item {
            ClassSetItem::Empty(_) => ClassUnicode::empty(),
            ClassSetItem::Literal(l) => one(l.c, l.c),
            ClassSetItem::Range(r) => one(r.start.c, r.end.c),
            ClassSetItem::Ascii(a) => {
                self.named_class(&format!("[{}]", self.text(&a.span)), a.negated, verbose)?
            }
            ClassSetItem::Perl(p) => self.class_of(self.text(&p.span), verbose)?,
            ClassSetItem::Unicode(u) => {
                self.named_class(self.text(&u.span), u.is_negated(), verbose)?
            }
            ClassSetItem::Bracketed(b) => {
                self.fold_and_negate(self.set(&b.kind, verbose)?, b.negated)?
            }
            ClassSetItem::Union(u) => {
                let mut class = ClassUnicode::empty();
                for item in &u.items {
                    class.union(&self.item(item, verbose)?);
                }
                class
            }
        })
    }

    /// Without Unicode: regex-syntax folds ASCII letters only, without tables, so the
    /// class is left to it with its `i` made explicit.
    fn ascii_bracket(&self, span: &ast::Span, verbose: bool) -> String {
        let x = if verbose { "x" } else { "" };
        format!("(?i-u{x}:{})", self.text(span))
    }
}

/// `[...]` listing `class`'s ranges as `\x{..}` escapes (valid in every mode).
fn spelled(class: &ClassUnicode) -> String {
    let mut out = String::from("[");
    if class.ranges().is_empty() {
        // No character: what regex-syntax makes of an empty class.
        out.push_str("^\\x{0}-\\x{10FFFF}");
    }
    for r in class.ranges() {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(r.start()));
        if r.end() != r.start() {
            let _ = write!(out, "-\\x{{{:X}}}", u32::from(r.end()));
        }
    }
    out.push(']');
    out
}

impl Visitor for Rewrite<'_> {
    type Output = Vec<(usize, usize, String)>;
    type Err = RewriteError;

    fn finish(self) -> Result<Self::Output, RewriteError> {
        Ok(self.edits)
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), RewriteError> {
        let scope = *self.scope();
        match node {
            Ast::Group(g) => {
                let mut inner = scope;
                if let ast::GroupKind::NonCapturing(flags) = &g.kind {
                    inner.apply(flags);
                    if flags.flag_state(Flag::CaseInsensitive).is_some() {
                        self.edit(&flags.span, Self::flags_without_i(flags))?;
                    }
                }
                self.scopes.push(inner);
            }
            Ast::Flags(set) => {
                self.scope().apply(&set.flags);
                if set.flags.flag_state(Flag::CaseInsensitive).is_some() {
                    let rest = Self::flags_without_i(&set.flags);
                    if rest.is_empty() {
                        self.edit(&set.span, "(?:)".to_string())?;
                    } else {
                        self.edit(&set.flags.span, rest)?;
                    }
                }
            }
            Ast::Literal(l) if scope.insensitive => {
                if scope.ascii {
                    if l.c.is_ascii_alphabetic() {
                        let (lower, upper) = (l.c.to_ascii_lowercase(), l.c.to_ascii_uppercase());
                        self.edit(
                            &l.span,
                            format!("[\\x{:02X}\\x{:02X}]", upper as u32, lower as u32),
                        )?;
                    }
                } else {
                    let alone = [ClassUnicodeRange::new(l.c, l.c)];
                    let mut class = ClassUnicode::new(alone);
                    self.fold(&mut class)?;
                    if class.ranges() != alone {
                        self.edit(&l.span, spelled(&class))?;
                    }
                }
            }
            Ast::ClassUnicode(c) if scope.insensitive && !scope.ascii => {
                let class = self.named_class(self.text(&c.span), c.is_negated(), scope.verbose)?;
                self.edit(&c.span, spelled(&class))?;
            }
            Ast::ClassBracketed(b) if scope.insensitive => {
                let text = if scope.ascii {
                    self.ascii_bracket(&b.span, scope.verbose)
                } else {
                    spelled(&self.fold_and_negate(self.set(&b.kind, scope.verbose)?, b.negated)?)
                };
                self.edit(&b.span, text)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn visit_post(&mut self, node: &Ast) -> Result<(), RewriteError> {
        if let Ast::Group(_) = node {
            self.scopes.pop();
        }
        Ok(())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    //! Natively regex-syntax has its case tables: the rewrite is checked against them.
    use super::*;
    use regex_syntax::hir::Hir;

    /// Every character's set under regex-syntax's simple case folding, in the table's form.
    fn regex_syntax_orbits() -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for c in (0u32..=0x10FFFF).filter_map(char::from_u32) {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            let members: Vec<char> = class.iter().flat_map(|r| r.start()..=r.end()).collect();
            if members.len() > 1 {
                let next = members
                    .iter()
                    .copied()
                    .find(|&m| m > c)
                    .unwrap_or(members[0]);
                pairs.push((u32::from(c), u32::from(next)));
            }
        }
        pairs
    }

    /// The table is regex-syntax's folding; `LOGITMASK_UPDATE_DOCS=1` writes it again
    /// (after a regex-syntax update with new Unicode data).
    #[test]
    fn the_table_is_regex_syntaxs_simple_case_folding() {
        let want = regex_syntax_orbits();
        assert!(want.len() > 2_900, "{} characters fold", want.len());
        if decode(CASE_FOLDS) != want && std::env::var_os("LOGITMASK_UPDATE_DOCS").is_some() {
            let bytes = encode(&want);
            let mut file = String::from(
                "//! Generated by `case_fold::tests::the_table_is_regex_syntaxs_simple_case_folding`\n\
                 //! (`LOGITMASK_UPDATE_DOCS=1 cargo test --lib case_fold`): regex-syntax's simple case\n\
                 //! folding, every character that has others with the next of its set, encoded as\n\
                 //! `case_fold.rs`'s `decode` reads it.\n\n\
                 #[rustfmt::skip]\n\
                 pub(super) const CASE_FOLDS: &[u8] = &[\n",
            );
            for line in bytes.chunks(16) {
                let hex: Vec<String> = line.iter().map(|b| format!("0x{b:02x}")).collect();
                file.push_str(&format!("    {},\n", hex.join(", ")));
            }
            file.push_str("];\n");
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/automaton/case_fold_table.rs"
            );
            std::fs::write(path, file).unwrap();
            return;
        }
        assert_eq!(
            decode(CASE_FOLDS),
            want,
            "LOGITMASK_UPDATE_DOCS=1 cargo test --lib case_fold writes it"
        );
        assert_eq!(decode(&encode(&want)), want);
    }

    fn hir(pattern: &str) -> Hir {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(pattern)
            .unwrap()
    }

    /// The rewritten pattern parses, without folding, to what regex-syntax makes of the
    /// original with its own tables; and no `i` flag is left outside `(?-u)` classes.
    fn same(pattern: &str) {
        let rewritten = without_case_flags(pattern).unwrap();
        assert_eq!(
            hir(&rewritten),
            hir(pattern),
            "{pattern:?} -> {rewritten:?}"
        );
    }

    #[test]
    fn rewritten_patterns_mean_what_regex_syntax_makes_of_them() {
        for pattern in [
            "(?i)k",
            "(?i)straße",
            "(?i)ǅ|Σ|ς|σ|µ|ſ|ı|İ|ﬀ",
            "a(?i)b|c",
            "(?i:ab)c(?-i:d)e",
            "(?i)a(?-i)b(?i)c",
            "(?is)a.b",
            "(?si-m:a.b)",
            "(?i)[a-z]",
            "(?i)[^a-z]",
            "(?i)[^k]",
            "(?i)[k-k]",
            "(?i)[\\p{Lu}]",
            "(?i)\\p{Lu}",
            "(?i)\\P{Lu}",
            "(?i)\\p{Greek}+",
            "(?i)\\p{gc!=Ll}",
            "(?i)\\pL",
            "(?i)\\p{Zl}",
            "(?i)[[:upper:]]",
            "(?i)[[:^lower:]x]",
            "(?i)[a-z&&[^aeiou]]",
            "(?i)[a-z--k]",
            "(?i)[a-f~~d-k]",
            "(?i)[a[^b]]",
            "(?i)[\\w\\d]\\W\\s",
            "(?i)[^\\x{0}-\\x{10FFFF}]",
            "(?i)[]k]",
            "(?i)[\\x{0}-\\x{10FFFF}]",
            "(?ix) a b [ c d ] \\p{ Lu }",
            "(?i)(?x: k [ j ] )",
            "(?i-u)ab[c-e]",
            "(?i)a(?-u:b[x-z])c",
            "(?i)(a)(?P<name>b)(?<other>c)",
            "(?i)a{2,3}b*?",
            "\\(?i\\)",
            "[(?i)]",
            "(?i)",
            "(?-i)a",
        ] {
            same(pattern);
        }
    }

    /// Random patterns of literals (many with case partners), ranges, nested and
    /// negated classes with set operations, `\p` and Perl classes, under flags that turn
    /// `i`, `u` and `x` on and off in groups and midway.
    #[test]
    fn random_patterns_mean_what_regex_syntax_makes_of_them() {
        use crate::test_support::Rng;
        fn ch(rng: &mut Rng) -> String {
            let table = orbits();
            let c = match rng.below(4) {
                0 => table[rng.below(table.len())].0,
                1 => u32::from(b'a') + rng.below(26) as u32,
                2 => rng.below(0x3000) as u32,
                _ => rng.below(0x11_0000) as u32,
            };
            let c = char::from_u32(c).unwrap_or('k');
            format!("\\x{{{:X}}}", u32::from(c))
        }
        fn class(rng: &mut Rng, depth: u32) -> String {
            let mut items = String::new();
            for _ in 0..1 + rng.below(3) {
                items.push_str(&match rng.below(if depth > 1 { 5 } else { 7 }) {
                    0 | 1 => ch(rng),
                    2 => format!("{}-{}", ch(rng), ch(rng)).replace('-', "-"),
                    3 => ["[:upper:]", "[:^alpha:]", "[:digit:]", "[:^lower:]"][rng.below(4)]
                        .to_string(),
                    4 => [
                        "\\pL",
                        "\\p{Lu}",
                        "\\P{Ll}",
                        "\\p{Greek}",
                        "\\w",
                        "\\D",
                        "\\p{Zl}",
                    ][rng.below(7)]
                    .to_string(),
                    5 => class(rng, depth + 1),
                    _ => format!(
                        "{}{}{}",
                        class(rng, depth + 1),
                        ["&&", "--", "~~"][rng.below(3)],
                        class(rng, depth + 1)
                    ),
                });
            }
            let caret = if rng.chance(1, 3) { "^" } else { "" };
            format!("[{caret}{items}]")
        }
        fn node(rng: &mut Rng, depth: u32) -> String {
            match rng.below(if depth > 2 { 5 } else { 8 }) {
                0 | 1 => ch(rng),
                2 => class(rng, 0),
                3 => ["\\pL", "\\P{Lu}", "\\p{Greek}", "\\W", "."][rng.below(5)].to_string(),
                4 => ["(?i)", "(?-i)", "(?iu)", "(?i-u)", "(?u)"][rng.below(5)].to_string(),
                5 => format!(
                    "(?{}:{})",
                    ["i", "-i", "i-u", "ix", "s"][rng.below(5)],
                    seq(rng, depth + 1)
                ),
                6 => format!("({}|{})", seq(rng, depth + 1), seq(rng, depth + 1)),
                _ => format!("(?:{})*", seq(rng, depth + 1)),
            }
        }
        fn seq(rng: &mut Rng, depth: u32) -> String {
            (0..1 + rng.below(4)).map(|_| node(rng, depth)).collect()
        }
        let mut rng = Rng::new(42);
        let (mut checked, mut rewritten) = (0, 0);
        for _ in 0..3_000 {
            let pattern = format!("(?i){}", seq(&mut rng, 0));
            // Some mixes are not regexes (a class of non-ASCII bytes without Unicode).
            if regex_syntax::ParserBuilder::new()
                .build()
                .parse(&pattern)
                .is_err()
            {
                continue;
            }
            same(&pattern);
            checked += 1;
            rewritten += usize::from(matches!(without_case_flags(&pattern), Ok(Cow::Owned(_))));
        }
        assert!(
            checked > 1_500 && rewritten > 1_000,
            "{checked} patterns checked, {rewritten} rewritten"
        );
    }

    #[test]
    fn patterns_without_case_flags_are_not_parsed_again() {
        for pattern in ["abc", "(?:a|b)", "(?s:.)", "(?m)^a$", "(?P<i>x)", "[(?]"] {
            assert!(
                matches!(without_case_flags(pattern), Ok(Cow::Borrowed(_))),
                "{pattern}"
            );
        }
        assert!(may_set_case_flag("(?i)"));
        assert!(may_set_case_flag("(?x i:a)"));
        assert!(may_set_case_flag("(?-i)"));
    }

    #[test]
    fn bad_and_huge_patterns_are_clean_errors() {
        let e = without_case_flags("(?i)(a").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        let e = without_case_flags("(?i)\\p{NoSuchProperty}").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        assert!(e.to_string().contains("NoSuchProperty"), "{e}");
        let huge = format!("(?i){}", "\\pL".repeat(5_000));
        let e = without_case_flags(&huge).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        // Short once spelled out, but each class visits the whole table: stopped by work.
        let wide = format!("(?i){}", "[\\x{0}-\\x{10FFFF}]".repeat(20_000));
        let e = without_case_flags(&wide).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.to_string().contains("folding steps"), "{e}");
    }
}
