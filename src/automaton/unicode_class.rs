//! Unicode classes without regex-syntax's tables. regex-syntax resolves `\p{..}`, `\w`,
//! `\d` and `\s` through its Unicode tables, ~55 KB of the gzipped wasm as it codes them
//! (pairs of 32-bit characters, docs/index-layout.md, "Measured choices"); the same
//! classes are kept here in ~23 KB before gzip (`unicode_class_table.rs`, generated from
//! regex-syntax's and checked against them by a test), and a pattern is parsed to its
//! AST, each Unicode class in it replaced by the bracketed class of its ranges, and the
//! AST translated: the wasm build leaves regex-syntax's Unicode features out. The same
//! path runs natively, where regex-syntax still has every table: a class these tables do
//! not name (`\p{Age=6.0}`, `\p{Word_Break=..}`) is left to it there, and is an unknown
//! property in the wasm, as before.
//!
//! The tables: the general categories as one partition of the code points (the
//! unassigned ones, `Cn`, are what no run covers); the scripts likewise (`Unknown` and
//! `Katakana_Or_Hiragana`, which regex-syntax has no table for, keep no name and no run);
//! each script extension as its script's set XOR a few ranges;
//! each binary property as a base set (none, a general category or an earlier property)
//! XOR ranges. What a name means follows regex-syntax (UAX #44 loose matching, its order
//! of binary property, general category, script), pinned by the tests below.

use regex_syntax::ast::{self, Ast, ClassPerlKind, ClassSet, ClassSetItem, ClassUnicodeKind};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange, Hir};

use super::expr::FastMap;
use super::unicode_class_table as table;
use crate::error::{quote, Error, ErrorKind};

/// Most ranges the Unicode classes of one pattern may spell out (~330 `\w`): each range
/// is an AST node of ~100-180 bytes until the translation, so this bounds the memory.
const MAX_SPELLED_RANGES: usize = 1 << 18;

/// Why [`parse`] failed.
pub(crate) enum ParseFailure {
    Syntax(Box<regex_syntax::Error>),
    TooLarge,
}

/// Past [`MAX_SPELLED_RANGES`].
struct TooLarge;

impl ParseFailure {
    /// The crate's error for `pattern` (the text as the user wrote it), with regex-syntax's
    /// message as `describe` writes it.
    pub(crate) fn into_error(
        self,
        pattern: &str,
        describe: impl FnOnce(&regex_syntax::Error) -> String,
    ) -> Error {
        match self {
            ParseFailure::Syntax(e) => Error::with_source(
                ErrorKind::InvalidRegex,
                format!("invalid regex {}: {}", quote(pattern), describe(&e)),
                *e,
            ),
            ParseFailure::TooLarge => Error::new(
                ErrorKind::DfaTooLarge,
                format!(
                    "the Unicode classes of regex {} spell out more than {MAX_SPELLED_RANGES} \
                     character ranges",
                    quote(pattern)
                ),
            ),
        }
    }
}

/// `pattern` parsed as regex-syntax's `Parser` parses it (its defaults; `verbose`: the
/// `x` flag), with the Unicode classes resolved here.
pub(crate) fn parse(pattern: &str, verbose: bool) -> Result<Hir, ParseFailure> {
    let mut parsed = ast::parse::ParserBuilder::new()
        .ignore_whitespace(verbose)
        .build()
        .parse(pattern)
        .map_err(|e| ParseFailure::Syntax(Box::new(e.into())))?;
    if may_have_unicode_class(pattern) {
        Spell {
            pattern,
            unicode: true,
            spelled: 0,
            named: Default::default(),
        }
        .ast(&mut parsed)
        .map_err(|TooLarge| ParseFailure::TooLarge)?;
    }
    regex_syntax::hir::translate::TranslatorBuilder::new()
        .build()
        .translate(pattern, &parsed)
        .map_err(|e| ParseFailure::Syntax(Box::new(e.into())))
}

/// A cheap over-approximation: a `\p`, `\P` or Perl class escape somewhere.
fn may_have_unicode_class(pattern: &str) -> bool {
    pattern
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && b"pPwWdDsS".contains(&w[1]))
}

/// The AST walk: replaces, where Unicode is on, `\p{..}` and the Perl classes by
/// bracketed classes of their ranges. The Unicode flag follows regex-syntax's
/// translator: a flag set holds to the end of its group, across alternation branches.
struct Spell<'p> {
    pattern: &'p str,
    unicode: bool,
    /// Ranges spelled so far, against [`MAX_SPELLED_RANGES`].
    spelled: usize,
    /// The `\p{..}` classes met so far, by their text: a name is resolved once a pattern.
    named: FastMap<&'p str, Option<ClassUnicode>>,
}

impl<'p> Spell<'p> {
    /// Recursion is bounded by the parser's nesting limit (250).
    fn ast(&mut self, node: &mut Ast) -> Result<(), TooLarge> {
        match node {
            Ast::Flags(set) => self.apply(&set.flags),
            Ast::ClassUnicode(c) if self.unicode => {
                if let Some(class) = self.named(c) {
                    *node = Ast::ClassBracketed(Box::new(self.bracketed(c.span, &class)?));
                }
            }
            Ast::ClassPerl(p) if self.unicode => {
                let class = perl(p);
                *node = Ast::ClassBracketed(Box::new(self.bracketed(p.span, &class)?));
            }
            Ast::ClassBracketed(b) if self.unicode => self.set(&mut b.kind)?,
            Ast::Repetition(r) => self.ast(&mut r.ast)?,
            Ast::Group(g) => {
                let outer = self.unicode;
                if let ast::GroupKind::NonCapturing(flags) = &g.kind {
                    self.apply(flags);
                }
                self.ast(&mut g.ast)?;
                self.unicode = outer;
            }
            Ast::Alternation(a) => a.asts.iter_mut().try_for_each(|x| self.ast(x))?,
            Ast::Concat(c) => c.asts.iter_mut().try_for_each(|x| self.ast(x))?,
            _ => {}
        }
        Ok(())
    }

    /// [`named`], remembered by the class's text.
    fn named(&mut self, c: &ast::ClassUnicode) -> Option<ClassUnicode> {
        let text = &self.pattern[c.span.start.offset..c.span.end.offset];
        if let Some(class) = self.named.get(text) {
            return class.clone();
        }
        let class = named(c);
        self.named.insert(text, class.clone());
        class
    }

    fn apply(&mut self, flags: &ast::Flags) {
        if let Some(on) = flags.flag_state(ast::Flag::Unicode) {
            self.unicode = on;
        }
    }

    fn set(&mut self, set: &mut ClassSet) -> Result<(), TooLarge> {
        match set {
            ClassSet::Item(item) => self.item(item),
            ClassSet::BinaryOp(op) => {
                self.set(&mut op.lhs)?;
                self.set(&mut op.rhs)
            }
        }
    }

    fn item(&mut self, item: &mut ClassSetItem) -> Result<(), TooLarge> {
        match item {
            ClassSetItem::Unicode(c) => {
                if let Some(class) = self.named(c) {
                    *item = ClassSetItem::Bracketed(Box::new(self.bracketed(c.span, &class)?));
                }
            }
            ClassSetItem::Perl(p) => {
                let class = perl(p);
                *item = ClassSetItem::Bracketed(Box::new(self.bracketed(p.span, &class)?));
            }
            ClassSetItem::Bracketed(b) => self.set(&mut b.kind)?,
            ClassSetItem::Union(u) => u.items.iter_mut().try_for_each(|i| self.item(i))?,
            _ => {}
        }
        Ok(())
    }

    /// `[..]` listing `class`'s ranges, every node at `span` (the class it stands for).
    fn bracketed(
        &mut self,
        span: ast::Span,
        class: &ClassUnicode,
    ) -> Result<ast::ClassBracketed, TooLarge> {
        self.spelled += class.ranges().len();
        if self.spelled > MAX_SPELLED_RANGES {
            return Err(TooLarge);
        }
        let literal = |c: char| ast::Literal {
            span,
            kind: ast::LiteralKind::Verbatim,
            c,
        };
        let items = class
            .ranges()
            .iter()
            .map(|r| {
                if r.start() == r.end() {
                    ClassSetItem::Literal(literal(r.start()))
                } else {
                    ClassSetItem::Range(ast::ClassSetRange {
                        span,
                        start: literal(r.start()),
                        end: literal(r.end()),
                    })
                }
            })
            .collect();
        Ok(ast::ClassBracketed {
            span,
            negated: false,
            kind: ClassSet::Item(ClassSetItem::Union(ast::ClassSetUnion { span, items })),
        })
    }
}

/// A class of the tables, by family and index, and `\w` (the union of five): each is
/// decoded once per thread (a partition's decoding walks all of it), at most the tables'
/// ~450 classes, ~25,000 ranges.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    GeneralCategory(usize),
    Script(usize),
    ScriptExtension(usize),
    Binary(usize),
    Word,
}

thread_local! {
    static DECODED: std::cell::RefCell<FastMap<Key, ClassUnicode>> =
        Default::default();
}

fn cached(key: Key, decode: impl FnOnce() -> ClassUnicode) -> ClassUnicode {
    if let Some(class) = DECODED.with(|d| d.borrow().get(&key).cloned()) {
        return class;
    }
    let class = decode();
    DECODED.with(|d| d.borrow_mut().insert(key, class.clone()));
    class
}

/// A Perl class in Unicode mode, as regex-syntax defines it (`\w`: alphabetic, marks,
/// decimal digits, connector punctuation, join controls; `\d`: `Nd`; `\s`: `White_Space`).
fn perl(p: &ast::ClassPerl) -> ClassUnicode {
    let mut class = match p.kind {
        ClassPerlKind::Digit => general_category(gc_index("nd")),
        ClassPerlKind::Space => binary_property(bool_index("whitespace")),
        ClassPerlKind::Word => cached(Key::Word, || {
            let mut word = binary_property(bool_index("alphabetic"));
            for gc in ["m", "nd", "pc"] {
                word.union(&general_category(gc_index(gc)));
            }
            word.union(&binary_property(bool_index("joincontrol")));
            word
        }),
    };
    if p.negated {
        class.negate();
    }
    class
}

/// The general categories' short names in [`table::GC_NAMES`]'s order: the partition's
/// leaves (`Cn`, unassigned, last of them), then the groups.
const GC_CODES: [&str; 38] = [
    "lu", "ll", "lt", "lm", "lo", "mn", "mc", "me", "nd", "nl", "no", "pc", "pd", "ps", "pe", "pi",
    "pf", "po", "sm", "sc", "sk", "so", "zs", "zl", "zp", "cc", "cf", "cs", "co", "cn", "lc", "l",
    "m", "n", "p", "s", "z", "c",
];
const CS: usize = 27;
const CN: usize = 29;

fn gc_index(name: &str) -> usize {
    find(table::GC_NAMES, name).expect("a general category of the table")
}

fn bool_index(name: &str) -> usize {
    find(table::BOOL_NAMES, name).expect("a binary property of the table")
}

/// The class `\p{..}` names, negated as written; `None` for a name these tables lack
/// (left to regex-syntax).
fn named(c: &ast::ClassUnicode) -> Option<ClassUnicode> {
    let mut class = match &c.kind {
        ClassUnicodeKind::OneLetter(letter) => alone(&normalize(&letter.to_string())),
        ClassUnicodeKind::Named(name) => alone(&normalize(name)),
        ClassUnicodeKind::NamedValue { name, value, .. } => {
            by_value(&normalize(name), &normalize(value))
        }
    }?;
    if c.is_negated() {
        class.negate();
    }
    Some(class)
}

/// `\p{name}`: a binary property, else a general category, else a script. `cf`, `sc` and
/// `lc` are the general categories, not the properties they also abbreviate.
fn alone(norm: &str) -> Option<ClassUnicode> {
    if !matches!(norm, "cf" | "sc" | "lc") {
        if let Some(j) = find(table::BOOL_NAMES, norm) {
            return Some(binary_property(j));
        }
        // Another property's name (`\p{Script}`, `\p{Age}`): regex-syntax's to refuse.
        if find(table::VALUE_PROPERTIES, norm).is_some()
            || find(table::OTHER_PROPERTIES, norm).is_some()
        {
            return None;
        }
    }
    gc_value(norm).or_else(|| find(table::SCRIPT_NAMES, norm).map(script))
}

/// `\p{name=value}` for the general category, the script and the script extensions.
fn by_value(name: &str, value: &str) -> Option<ClassUnicode> {
    match find(table::VALUE_PROPERTIES, name)? {
        0 => gc_value(value),
        1 => find(table::SCRIPT_NAMES, value).map(script),
        _ => find(table::SCRIPT_NAMES, value).map(script_extension),
    }
}

fn gc_value(norm: &str) -> Option<ClassUnicode> {
    Some(match norm {
        "any" => ClassUnicode::new([ClassUnicodeRange::new('\0', '\u{10FFFF}')]),
        "ascii" => ClassUnicode::new([ClassUnicodeRange::new('\0', '\x7F')]),
        "assigned" => {
            let mut class = general_category(gc_index("cn"));
            class.negate();
            class
        }
        _ => general_category(find(table::GC_NAMES, norm)?),
    })
}

/// The entry of `names` (entries split by `,`, aliases by `/`; an entry may be empty)
/// that has `norm`.
fn find(names: &str, norm: &str) -> Option<usize> {
    if norm.is_empty() {
        return None;
    }
    names
        .split(',')
        .position(|entry| entry.split('/').any(|alias| alias == norm))
}

/// UAX #44 loose matching as regex-syntax does it: ASCII only, case, spaces, `_` and `-`
/// ignored, an `is` prefix dropped (but `isc` stays, the `ISO_Comment` abbreviation).
fn normalize(name: &str) -> String {
    let bytes = name.as_bytes();
    let is_prefix = bytes.len() >= 2 && bytes[..2].eq_ignore_ascii_case(b"is");
    let rest = if is_prefix { &bytes[2..] } else { bytes };
    let mut out: String = rest
        .iter()
        .filter(|b| b.is_ascii() && !matches!(b, b' ' | b'_' | b'-'))
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect();
    if is_prefix && out == "c" {
        out = "isc".to_string();
    }
    out
}

/// The general category [`GC_CODES`]`[index]`: a leaf is a category of the partition
/// (`Cn` what no run covers); a group is the leaves of its letter (`LC`: `Lu`, `Ll`, `Lt`).
fn general_category(index: usize) -> ClassUnicode {
    cached(Key::GeneralCategory(index), || {
        decode_general_category(index)
    })
}

fn decode_general_category(index: usize) -> ClassUnicode {
    let leaves: u32 = match GC_CODES[index] {
        "lc" => 0b111,
        group if group.len() == 1 => (0..=CN)
            .filter(|&i| GC_CODES[i].as_bytes()[0] == group.as_bytes()[0])
            .fold(0, |mask, i| mask | 1 << i),
        _ => 1 << index,
    };
    let mut class = partition(table::GC, |cat| leaves & (1 << cat) != 0);
    if leaves & (1 << CN) != 0 {
        let mut unassigned = partition(table::GC, |_| true);
        unassigned.negate();
        class.union(&unassigned);
    }
    if leaves & (1 << CS) != 0 {
        // With the surrogates (`C`), regex-syntax's table has one range across them.
        let ranges = class.ranges();
        if let Some(i) = ranges.iter().position(|r| r.end() == '\u{D7FF}') {
            if ranges.get(i + 1).is_some_and(|r| r.start() == '\u{E000}') {
                let mut joined = ranges.to_vec();
                joined[i] = ClassUnicodeRange::new(ranges[i].start(), ranges[i + 1].end());
                joined.remove(i + 1);
                class = ClassUnicode::new(joined);
            }
        }
    }
    class
}

/// Script `index` of [`table::SCRIPT_NAMES`].
fn script(index: usize) -> ClassUnicode {
    cached(Key::Script(index), || {
        partition(table::SCRIPTS, |s| s == index)
    })
}

fn script_extension(index: usize) -> ClassUnicode {
    cached(Key::ScriptExtension(index), || {
        let mut at = 0;
        for _ in 0..index {
            skip_toggles(table::SCRIPT_EXTENSIONS, &mut at);
        }
        xor(&script(index), table::SCRIPT_EXTENSIONS, &mut at)
    })
}

/// Binary property `index` of [`table::BOOL_NAMES`]: its base (0: none, 1 + g: general
/// category g, 1 + 38 + j: property j, an earlier one) XOR its ranges.
fn binary_property(index: usize) -> ClassUnicode {
    cached(Key::Binary(index), || decode_binary_property(index))
}

fn decode_binary_property(index: usize) -> ClassUnicode {
    let mut at = 0;
    for _ in 0..index {
        varint(table::BOOL, &mut at);
        skip_toggles(table::BOOL, &mut at);
    }
    let base = match varint(table::BOOL, &mut at) as usize {
        0 => ClassUnicode::empty(),
        b if b <= 38 => general_category(b - 1),
        b => binary_property(b - 39),
    };
    xor(&base, table::BOOL, &mut at)
}

/// The runs of a partition (gap from the previous run, length - 1, category) whose
/// category `keep` wants.
fn partition(bytes: &[u8], keep: impl Fn(usize) -> bool) -> ClassUnicode {
    let (mut at, mut next) = (0, 0u32);
    let mut ranges = Vec::new();
    while at < bytes.len() {
        let start = next + varint(bytes, &mut at) as u32;
        let end = start + varint(bytes, &mut at) as u32;
        let category = usize::from(bytes[at]);
        at += 1;
        if keep(category) {
            push(&mut ranges, start, end);
        }
        next = end + 1;
    }
    ClassUnicode::new(ranges)
}

/// `base` XOR the toggles at `at` (a count, then each boundary's distance from the last:
/// a range's start, then one past its end).
fn xor(base: &ClassUnicode, bytes: &[u8], at: &mut usize) -> ClassUnicode {
    let count = varint(bytes, at) as usize;
    let mut toggles = Vec::with_capacity(count);
    let mut last = 0u32;
    for _ in 0..count {
        last += varint(bytes, at) as u32;
        toggles.push(last);
    }
    let mut ranges = Vec::new();
    for pair in toggles.chunks(2) {
        push(&mut ranges, pair[0], pair[1] - 1);
    }
    let mut class = ClassUnicode::new(ranges);
    class.symmetric_difference(base);
    class
}

fn skip_toggles(bytes: &[u8], at: &mut usize) {
    for _ in 0..varint(bytes, at) {
        varint(bytes, at);
    }
}

/// Adds `start..=end` (code points; surrogates, which no class holds, trimmed off).
fn push(ranges: &mut Vec<ClassUnicodeRange>, start: u32, end: u32) {
    let start = if (0xD800..=0xDFFF).contains(&start) {
        0xE000
    } else {
        start
    };
    let end = if (0xD800..=0xDFFF).contains(&end) {
        0xD7FF
    } else {
        end
    };
    if let (Some(a), Some(b)) = (char::from_u32(start), char::from_u32(end)) {
        if a <= b {
            ranges.push(ClassUnicodeRange::new(a, b));
        }
    }
}

/// A LEB128 varint at `at` (the tables are ours, generated and tested: well formed).
pub(super) fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b < 0x80 {
            return value;
        }
    }
}

/// The writer of [`varint`] (the generators of the tables).
#[cfg(test)]
pub(super) fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    //! Natively regex-syntax has every Unicode table: the tables here are generated from
    //! its classes and names (`LOGITMASK_UPDATE_DOCS=1 cargo test --lib unicode_class`
    //! writes `unicode_class_table.rs`), and every name is checked to mean what it makes
    //! of it.
    use super::*;
    use regex_syntax::hir::{Class, HirKind};
    use std::collections::{BTreeMap, BTreeSet};

    /// regex-syntax's own class for `text` (a `\p{..}`), if it resolves one.
    fn reference(text: &str) -> Option<ClassUnicode> {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(text)
            .ok()?;
        match hir.kind() {
            HirKind::Class(Class::Unicode(c)) => Some(c.clone()),
            HirKind::Literal(l) => {
                let c = std::str::from_utf8(&l.0).ok()?.chars().next()?;
                Some(ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
            }
            _ => None,
        }
    }

    /// The file of a regex-syntax source, found through `cargo metadata`.
    fn regex_syntax_source(file: &str) -> String {
        let out = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo metadata runs");
        let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let manifest = meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| {
                p["name"] == "regex-syntax" && p["version"].as_str().unwrap().starts_with("0.8")
            })
            .map(|p| p["manifest_path"].as_str().unwrap().to_string())
            .next()
            .expect("regex-syntax 0.8 among the packages");
        let dir = std::path::Path::new(&manifest).parent().unwrap();
        std::fs::read_to_string(dir.join("src/unicode_tables").join(file)).unwrap()
    }

    /// The string literals of a generated table file with the `[`/`]` nesting of each:
    /// enough to read `PROPERTY_NAMES` and `PROPERTY_VALUES` (strings only, no escapes).
    fn literals(source: &str) -> Vec<(usize, String)> {
        let body = &source[source.find("= &[").unwrap()..];
        let (mut depth, mut out, mut chars) = (0, Vec::new(), body.chars());
        while let Some(c) = chars.next() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                '"' => out.push((depth, chars.by_ref().take_while(|&c| c != '"').collect())),
                _ => {}
            }
        }
        out
    }

    /// `PROPERTY_NAMES`: normalized alias -> canonical property.
    fn property_names() -> Vec<(String, String)> {
        let lits = literals(&regex_syntax_source("property_names.rs"));
        lits.chunks(2)
            .map(|p| (p[0].1.clone(), p[1].1.clone()))
            .collect()
    }

    /// `PROPERTY_VALUES`: canonical property -> (normalized alias, canonical value).
    fn property_values() -> BTreeMap<String, Vec<(String, String)>> {
        let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        let lits = literals(&regex_syntax_source("property_values.rs"));
        let mut current = String::new();
        let mut pending: Option<String> = None;
        for (depth, s) in lits {
            if depth == 1 {
                current = s;
            } else if let Some(alias) = pending.take() {
                out.entry(current.clone()).or_default().push((alias, s));
            } else {
                pending = Some(s);
            }
        }
        out
    }

    fn toggles(class: &ClassUnicode) -> Vec<u32> {
        class
            .ranges()
            .iter()
            .flat_map(|r| [u32::from(r.start()), u32::from(r.end()) + 1])
            .collect()
    }

    /// The boundaries where exactly one of `a`, `b` toggles.
    fn xor_toggles(a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut all: Vec<u32> = a.iter().chain(b).copied().collect();
        all.sort_unstable();
        let mut out: Vec<u32> = Vec::new();
        for t in all {
            if out.last() == Some(&t) {
                out.pop();
            } else {
                out.push(t);
            }
        }
        out
    }

    fn push_toggles(out: &mut Vec<u8>, toggles: &[u32]) {
        push_varint(out, toggles.len() as u64);
        let mut last = 0;
        for &t in toggles {
            push_varint(out, u64::from(t - last));
            last = t;
        }
    }

    /// A partition's runs: (start, end, category), sorted, none overlapping.
    fn encode_partition(mut runs: Vec<(u32, u32, usize)>) -> Vec<u8> {
        runs.sort_unstable();
        let (mut out, mut next) = (Vec::new(), 0u32);
        for (start, end, category) in runs {
            assert!(start >= next, "runs overlap at {start:#X}");
            push_varint(&mut out, u64::from(start - next));
            push_varint(&mut out, u64::from(end - start));
            out.push(u8::try_from(category).unwrap());
            next = end + 1;
        }
        out
    }

    fn aliases_of(pairs: &[(String, String)], canonical: &str) -> String {
        let mut names: Vec<&str> = pairs
            .iter()
            .filter(|(_, c)| c == canonical)
            .map(|(a, _)| a.as_str())
            .collect();
        names.sort_unstable();
        names.join("/")
    }

    fn bytes_const(name: &str, bytes: &[u8]) -> String {
        let mut out = format!("#[rustfmt::skip]\npub(super) const {name}: &[u8] = &[\n");
        for line in bytes.chunks(16) {
            let hex: Vec<String> = line.iter().map(|b| format!("0x{b:02x}")).collect();
            out.push_str(&format!("    {},\n", hex.join(", ")));
        }
        out.push_str("];\n");
        out
    }

    fn str_const(name: &str, entries: &[String]) -> String {
        let mut out = format!("pub(super) const {name}: &str = \"\\\n");
        let text = entries.join(",");
        let mut line = String::new();
        for (i, part) in text.split_inclusive(['/', ',']).enumerate() {
            if line.len() + part.len() > 90 && i > 0 {
                out.push_str(&format!("    {line}\\\n"));
                line.clear();
            }
            line.push_str(part);
        }
        out.push_str(&format!("    {line}\";\n"));
        out
    }

    /// The generated file, from regex-syntax's names and classes.
    fn generate() -> String {
        let names = property_names();
        let values = property_values();
        let gc_pairs = &values["General_Category"];
        let script_pairs = &values["Script"];
        assert_eq!(
            values["Script_Extensions"], *script_pairs,
            "scx names are the scripts'"
        );

        // General categories: the leaves' runs, Cn left out (what no run covers).
        let (mut gc_names, mut gc_classes) = (Vec::new(), Vec::new());
        let mut runs = Vec::new();
        for (i, code) in GC_CODES.iter().enumerate() {
            let canonical = &gc_pairs.iter().find(|(a, _)| a == code).unwrap().1;
            let Some(class) = reference(&format!("\\p{{gc={canonical}}}")) else {
                assert_eq!(*code, "cs", "regex-syntax has no surrogate class");
                gc_names.push(String::new());
                gc_classes.push(ClassUnicode::empty());
                continue;
            };
            gc_classes.push(class.clone());
            gc_names.push(aliases_of(gc_pairs, canonical));
            if i < CN {
                for r in class.ranges() {
                    runs.push((u32::from(r.start()), u32::from(r.end()), i));
                }
            }
        }
        let gc = encode_partition(runs);

        // Scripts, with their extensions (each its script's set XOR toggles). Those
        // regex-syntax has no table for (`Unknown`, `Katakana_Or_Hiragana`) keep no name.
        let mut canon: Vec<&str> = script_pairs.iter().map(|(_, c)| c.as_str()).collect();
        canon.sort_unstable();
        canon.dedup();
        let (mut script_names, mut runs, mut scx) = (Vec::new(), Vec::new(), Vec::new());
        for (i, c) in canon.iter().enumerate() {
            let base = reference(&format!("\\p{{sc={c}}}"));
            let want = reference(&format!("\\p{{scx={c}}}"));
            let (Some(base), Some(want)) = (base.clone(), want.clone()) else {
                assert!(
                    base.is_none() && want.is_none(),
                    "{c}: a script or its extensions only"
                );
                script_names.push(String::new());
                push_toggles(&mut scx, &[]);
                continue;
            };
            script_names.push(aliases_of(script_pairs, c));
            for r in base.ranges() {
                runs.push((u32::from(r.start()), u32::from(r.end()), i));
            }
            push_toggles(&mut scx, &xor_toggles(&toggles(&want), &toggles(&base)));
        }
        let scripts = encode_partition(runs);

        // Binary properties: the canonical names regex-syntax resolves alone, smallest
        // first, each on the base that leaves it the fewest toggles.
        let canonical_props: BTreeSet<&str> = names.iter().map(|(_, c)| c.as_str()).collect();
        let mut props: Vec<(&str, ClassUnicode)> = canonical_props
            .iter()
            .filter_map(|&c| Some((c, reference(&format!("\\p{{{c}}}"))?)))
            .collect();
        props.sort_by_key(|(c, class)| (class.ranges().len(), *c));
        let (mut bools, mut bool_names) = (Vec::new(), Vec::new());
        for (j, (c, class)) in props.iter().enumerate() {
            let want = toggles(class);
            let mut best = (want.clone(), 0usize);
            let bases = gc_classes.iter().chain(props[..j].iter().map(|(_, c)| c));
            for (k, base) in bases.enumerate() {
                let t = xor_toggles(&want, &toggles(base));
                if t.len() < best.0.len() {
                    best = (t, k + 1);
                }
            }
            push_varint(&mut bools, best.1 as u64);
            push_toggles(&mut bools, &best.0);
            bool_names.push(aliases_of(&names, c));
        }

        // Property names: the three with values, and the other properties' names that a
        // general category or a script would otherwise answer for.
        let value_props: Vec<String> = ["General_Category", "Script", "Script_Extensions"]
            .iter()
            .map(|p| aliases_of(&names, p))
            .collect();
        let known: BTreeSet<&str> = props.iter().map(|(c, _)| *c).collect();
        let mut others: Vec<String> = names
            .iter()
            .filter(|(_, c)| {
                !known.contains(c.as_str())
                    && !["General_Category", "Script", "Script_Extensions"].contains(&c.as_str())
            })
            .map(|(a, _)| a.clone())
            .filter(|a| {
                gc_pairs.iter().chain(script_pairs).any(|(v, _)| v == a)
                    || ["any", "assigned", "ascii"].contains(&a.as_str())
            })
            .collect();
        others.sort_unstable();

        let mut file = String::from(
            "//! Generated by `unicode_class::tests::the_tables_are_regex_syntaxs`\n\
             //! (`LOGITMASK_UPDATE_DOCS=1 cargo test --lib unicode_class`) from regex-syntax's\n\
             //! Unicode tables and names, coded as `unicode_class.rs` reads them.\n\n",
        );
        file.push_str(&str_const("GC_NAMES", &gc_names));
        file.push_str(&str_const("SCRIPT_NAMES", &script_names));
        file.push_str(&str_const("BOOL_NAMES", &bool_names));
        file.push_str(&str_const("VALUE_PROPERTIES", &value_props));
        file.push_str(&str_const("OTHER_PROPERTIES", &[others.join("/")]));
        file.push_str(&bytes_const("GC", &gc));
        file.push_str(&bytes_const("SCRIPTS", &scripts));
        file.push_str(&bytes_const("SCRIPT_EXTENSIONS", &scx));
        file.push_str(&bytes_const("BOOL", &bools));
        file
    }

    /// The table is regex-syntax's; `LOGITMASK_UPDATE_DOCS=1` writes it again (after a
    /// regex-syntax update with new Unicode data).
    #[test]
    fn the_tables_are_regex_syntaxs() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/automaton/unicode_class_table.rs"
        );
        let want = generate();
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want && std::env::var_os("LOGITMASK_UPDATE_DOCS").is_some() {
            std::fs::write(path, want).unwrap();
            return;
        }
        assert!(
            have == want,
            "LOGITMASK_UPDATE_DOCS=1 cargo test --lib unicode_class writes it"
        );
    }
    fn ours(pattern: &str) -> Option<Hir> {
        parse(pattern, false).ok()
    }

    fn theirs(pattern: &str) -> Option<Hir> {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(pattern)
            .ok()
    }

    /// Ours and regex-syntax's HIR for `pattern` are the same (a short message if not: the
    /// classes' symmetric difference when both are classes).
    fn same(pattern: &str) {
        let (a, b) = (ours(pattern), theirs(pattern));
        if a == b {
            return;
        }
        let short = |h: &Option<Hir>| {
            let text = format!("{h:?}");
            text.chars().take(200).collect::<String>()
        };
        if let (Some(x), Some(y)) = (&a, &b) {
            if let (HirKind::Class(Class::Unicode(x)), HirKind::Class(Class::Unicode(y))) =
                (x.kind(), y.kind())
            {
                let mut d = x.clone();
                d.symmetric_difference(y);
                panic!(
                    "{pattern}: the classes differ in {:?}",
                    &d.ranges()[..d.ranges().len().min(6)]
                );
            }
        }
        panic!("{pattern}: ours {} theirs {}", short(&a), short(&b));
    }

    /// Every alias regex-syntax knows (properties, general categories, scripts) and some
    /// it does not, spelled several ways, alone and as a property's value: the same class
    /// or the same refusal. And every name of the tables here resolves here (so the wasm,
    /// where regex-syntax has no tables, has it too).
    #[test]
    fn every_name_means_what_regex_syntax_makes_of_it() {
        let names = property_names();
        let values = property_values();
        let mut all: BTreeSet<String> = names
            .iter()
            .flat_map(|(a, c)| [a.clone(), c.clone()])
            .collect();
        for p in ["General_Category", "Script", "Age", "Word_Break"] {
            all.extend(values[p].iter().flat_map(|(a, c)| [a.clone(), c.clone()]));
        }
        all.extend(
            [
                "any", "Assigned", "ASCII", "isc", "is", "c", "L&", "foo", "Is_Greek", "", "_",
            ]
            .map(String::from),
        );
        let mut checked = 0;
        for name in &all {
            let variants = [
                name.clone(),
                name.to_uppercase(),
                format!("Is{name}"),
                format!(" {}-", name.replace('_', " ")),
            ];
            for v in &variants {
                for pattern in [
                    format!("\\p{{{v}}}"),
                    format!("\\P{{{v}}}"),
                    format!("\\p{{gc={v}}}"),
                    format!("\\p{{sc:{v}}}"),
                    format!("\\p{{scx={v}}}"),
                    format!("\\p{{Script_Extensions={v}}}"),
                    format!("\\p{{General_Category!={v}}}"),
                    format!("\\p{{{v}=Greek}}"),
                    format!("\\P{{{v}!=Lu}}"),
                ] {
                    same(&pattern);
                    checked += 1;
                }
            }
        }
        assert!(checked > 20_000, "{checked} patterns");
        for letter in ('A'..='Z').chain('a'..='z') {
            for pattern in [format!("\\p{letter}"), format!("\\P{letter}")] {
                same(&pattern);
            }
        }
        // Everything the tables name resolves without regex-syntax's tables.
        for (list, form) in [
            (table::GC_NAMES, "gc={}"),
            (table::SCRIPT_NAMES, "sc={}"),
            (table::SCRIPT_NAMES, "scx={}"),
            (table::BOOL_NAMES, "{}"),
        ] {
            for alias in list.split([',', '/']).filter(|a| !a.is_empty()) {
                let text = format!("\\p{{{}}}", form.replace("{}", alias));
                let parsed = ast::parse::Parser::new().parse(&text).unwrap();
                let Ast::ClassUnicode(c) = &parsed else {
                    panic!("{text}")
                };
                assert!(named(c).is_some(), "{text} resolves here");
            }
        }
    }

    /// Perl classes, classes in brackets and set operations, the Unicode flag's scopes,
    /// verbose mode: the same HIR as regex-syntax's.
    #[test]
    fn patterns_mean_what_regex_syntax_makes_of_them() {
        for pattern in [
            r"\w",
            r"\W",
            r"\d",
            r"\D",
            r"\s",
            r"\S",
            r"\w+@\w+",
            r"[\w\d]",
            r"[^\w]",
            r"[^\W\d]",
            r"[\w&&\p{Greek}]",
            r"[\p{L}--\p{Lu}]",
            r"[\pL~~\pN]",
            r"[[^\p{Lu}]\d]",
            r"[a-z\p{Greek}0-9]",
            r"(?-u:\w)\w",
            r"(?-u)\w|\w",
            r"a(?-u:\w(?u:\w))\w",
            r"(?-u:[\w\d])[\w\d]",
            r"((?-u)\w)\w",
            r"(?x) \p{ Greek } \w ",
            r"(?x)[ \p{Lu} \d ]",
            r"[[:alpha:]\pL]",
            r"(?i)\p{Lu}\w",
            r"(?i)[\p{Ll}&&\p{Latin}]",
            r"\p{Any}",
            r"\P{Any}",
            r"[^\p{Any}]",
            r"\p{Assigned}",
            r"\P{Cn}",
            r"\p{C}",
            r"\p{L}\p{M}*",
            r"\p{Decimal_Number}",
            r"\p{Nd}",
            r"\p{White_Space}",
            r"\p{Emoji}",
            r"\p{sc=Hira}",
            r"\p{scx=Hira}",
            r"\p{Greek}\P{Greek}\p{Greek}[\p{Greek}--\p{Greek}][^\p{Greek}]\p{ Greek }",
            r"(?x)\p{ Greek }\p{Greek}(?-x:\p{ Greek })",
            r"\p{Age=6.0}",
            r"\p{Word_Break=ALetter}",
            r"\p{NoSuchThing}",
            r"(?-u)\p{L}",
            r"[\p{",
            r"\pZ",
        ] {
            same(pattern);
        }
    }

    /// Random patterns of classes, flags and groups.
    #[test]
    fn random_patterns_mean_what_regex_syntax_makes_of_them() {
        let pieces = [
            r"\w",
            r"\W",
            r"\d",
            r"\D",
            r"\s",
            r"\S",
            r"\pL",
            r"\PN",
            r"\p{Greek}",
            r"\P{sc=Latn}",
            r"\p{scx=Deva}",
            r"\p{Lu}",
            r"\p{Alphabetic}",
            r"\p{Emoji}",
            r"a",
            r"Ω",
            r".",
            r"[\w\p{Cyrillic}]",
            r"[^\d\s]",
            r"[\pL&&[^a-z]]",
            r"[\p{N}--\d]",
            r"[[:digit:]\p{Nl}]",
            r"\p{gc!=Lo}",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..600 {
            let mut pattern = String::new();
            let mut open = 0;
            for _ in 0..1 + next(8) {
                match next(10) {
                    0 => {
                        pattern.push_str(["(?-u:", "(?u:", "(", "(?x:"][next(4)]);
                        open += 1;
                    }
                    1 if open > 0 => {
                        pattern.push(')');
                        open -= 1;
                    }
                    2 => pattern.push_str(["(?-u)", "(?u)", "|"][next(3)]),
                    3 => pattern.push_str(["*", "+", "{2}"][next(3)]),
                    _ => pattern.push_str(pieces[next(pieces.len())]),
                }
            }
            pattern.push_str(&")".repeat(open));
            same(&pattern);
        }
    }

    /// Spelled-out classes are bounded: ~330 `\w` are refused, cleanly; one repeated is not.
    #[test]
    fn too_many_classes_are_a_clean_error() {
        assert!(matches!(
            parse(&r"\w".repeat(400), false),
            Err(ParseFailure::TooLarge)
        ));
        assert!(parse(r"\w{400}", false).is_ok());
        let e = parse(&r"\p{L}".repeat(1000), false)
            .err()
            .unwrap()
            .into_error("x", |e| e.to_string());
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
    }

    #[test]
    fn normalize_is_uax44_loose_matching() {
        for (name, norm) in [
            ("Line_Break", "linebreak"),
            ("Line-break", "linebreak"),
            ("BA", "ba"),
            ("isGreek", "greek"),
            ("IS_Greek", "greek"),
            ("isc", "isc"),
            ("is c", "isc"),
            ("is_c", "isc"),
            ("Gré ek", "grek"),
        ] {
            assert_eq!(normalize(name), norm, "{name}");
        }
    }
}
