//! `pattern` (ECMA-262 regular expressions, as JSON Schema specifies) -> a regex over the
//! JSON spelling of the string's characters.
//!
//! A JSON Schema pattern matches the *decoded* string; the regex we build matches the
//! string as written inside the JSON quotes. Each character class of the pattern is
//! therefore split: its ordinary members are written literally, and its members that JSON
//! must escape (`"`, `\`, U+0000-U+001F) are written as their canonical escapes (`\"`,
//! `\\`, `\n`, `\u0001`, as `JSON.stringify` writes them).
//!
//! ECMA semantics kept: `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`, `\s` is ECMA's white
//! space and line terminators, `.` is any character but a line terminator; characters are
//! Unicode code points (the `u` flag, as the JSON Schema test suite expects). A pattern is
//! unanchored unless it starts with `^` / ends with `$` (in each top-level alternative);
//! anchors inside groups are moved out exactly ([`branches`]). Not supported (an error
//! naming the pattern): backreferences, lookaround, word boundaries.

use crate::automaton::expr::FastMap;

use super::json::canonical_char;
use super::re::{class_char, Re};
use crate::automaton::Dfa;

/// A parsed pattern.
#[derive(Clone, Debug)]
pub(crate) enum Pat {
    Empty,
    Class(CharSet),
    Concat(Vec<Pat>),
    Alt(Vec<Pat>),
    Repeat(Box<Pat>, u32, Option<u32>),
    Start,
    End,
}

/// A set of characters: items, possibly negated.
#[derive(Clone, Debug)]
pub(crate) struct CharSet {
    negated: bool,
    items: Vec<Item>,
}

#[derive(Clone, Debug)]
enum Item {
    Range(char, char),
    /// `\d` (true: `\D`).
    Digit(bool),
    /// `\w` (true: `\W`).
    Word(bool),
    /// `\s` (true: `\S`).
    Space(bool),
    /// `\p{..}` / `\P{..}`, as regex syntax text.
    Prop(String),
    /// `.`
    Dot,
}

/// ECMA `\s`: WhiteSpace and LineTerminator.
const ECMA_SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// ECMA `.`: anything but a LineTerminator.
const ECMA_DOT: &str = r"[^\n\r\x{2028}\x{2029}]";

impl CharSet {
    fn single(c: char) -> CharSet {
        CharSet {
            negated: false,
            items: vec![Item::Range(c, c)],
        }
    }

    /// The one character of a set of one character.
    fn single_char(&self) -> Option<char> {
        match self.items[..] {
            [Item::Range(a, b)] if a == b && !self.negated => Some(a),
            _ => None,
        }
    }

    /// regex-syntax text of this class.
    fn to_regex(&self) -> String {
        let mut s = String::from("[");
        if self.negated {
            s.push('^');
        }
        if self.items.is_empty() {
            // [] matches nothing, [^] everything.
            return if self.negated {
                r"[\x{0}-\x{10FFFF}]".into()
            } else {
                r"[a&&b]".into()
            };
        }
        for item in &self.items {
            match item {
                Item::Range(a, b) if a == b => s.push_str(&class_char(*a)),
                Item::Range(a, b) => {
                    s.push_str(&class_char(*a));
                    s.push('-');
                    s.push_str(&class_char(*b));
                }
                Item::Digit(false) => s.push_str("0-9"),
                Item::Digit(true) => s.push_str("[^0-9]"),
                Item::Word(false) => s.push_str("A-Za-z0-9_"),
                Item::Word(true) => s.push_str("[^A-Za-z0-9_]"),
                Item::Space(false) => s.push_str(ECMA_SPACE),
                Item::Space(true) => {
                    s.push_str("[^");
                    s.push_str(ECMA_SPACE);
                    s.push(']');
                }
                Item::Prop(p) => s.push_str(p),
                Item::Dot => s.push_str(ECMA_DOT),
            }
        }
        s.push(']');
        s
    }

    /// Whether `c` is in the set.
    fn contains(&self, c: char, props: &mut PropCache) -> Result<bool, String> {
        let mut any = false;
        for item in &self.items {
            let hit = match item {
                Item::Range(a, b) => *a <= c && c <= *b,
                Item::Digit(neg) => c.is_ascii_digit() != *neg,
                Item::Word(neg) => (c.is_ascii_alphanumeric() || c == '_') != *neg,
                Item::Space(neg) => is_ecma_space(c) != *neg,
                Item::Prop(p) => props.contains(p, c)?,
                Item::Dot => !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'),
            };
            if hit {
                any = true;
                break;
            }
        }
        Ok(any != self.negated)
    }
}

fn is_ecma_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Unicode property classes, compiled once each, for membership tests.
#[derive(Default)]
pub(crate) struct PropCache {
    dfas: FastMap<String, Dfa>,
}

impl PropCache {
    fn contains(&mut self, prop: &str, c: char) -> Result<bool, String> {
        if !self.dfas.contains_key(prop) {
            let dfa = Dfa::new(prop)
                .map_err(|e| format!("unsupported Unicode property {prop}: {}", e.message()))?;
            self.dfas.insert(prop.to_string(), dfa);
        }
        let mut buf = [0u8; 4];
        Ok(self.dfas[prop].is_match(c.encode_utf8(&mut buf).as_bytes()))
    }
}

/// The characters JSON must escape inside a string.
fn json_specials() -> impl Iterator<Item = char> {
    (0u32..0x20)
        .map(|c| char::from_u32(c).unwrap())
        .chain(['"', '\\'])
}

/// The regex class for ordinary (unescaped) JSON string characters.
pub(crate) const PLAIN_CHAR: &str = r#"[^"\\\x00-\x1F]"#;

impl Pat {
    /// Character-length range `(min, max)` of the strings this pattern matches.
    pub(crate) fn len_range(&self) -> (u64, Option<u64>) {
        match self {
            Pat::Empty | Pat::Start | Pat::End => (0, Some(0)),
            Pat::Class(_) => (1, Some(1)),
            Pat::Concat(v) => v.iter().fold((0, Some(0)), |(a, b), p| {
                let (x, y) = p.len_range();
                (
                    a.saturating_add(x),
                    b.and_then(|b| y.map(|y| b.saturating_add(y))),
                )
            }),
            Pat::Alt(v) => {
                let mut lo = u64::MAX;
                let mut hi = Some(0u64);
                for p in v {
                    let (x, y) = p.len_range();
                    lo = lo.min(x);
                    hi = match (hi, y) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                if v.is_empty() {
                    (0, Some(0))
                } else {
                    (lo, hi)
                }
            }
            Pat::Repeat(p, min, max) => {
                let (x, y) = p.len_range();
                (
                    x.saturating_mul(*min as u64),
                    match (y, max) {
                        (Some(0), _) => Some(0),
                        (Some(y), Some(m)) => Some(y.saturating_mul(*m as u64)),
                        _ => None,
                    },
                )
            }
        }
    }

    /// The regex for the JSON spelling of the strings this pattern matches in full
    /// (anchors must have been removed).
    pub(crate) fn to_json_re(&self, props: &mut PropCache) -> Result<Re, String> {
        Ok(match self {
            Pat::Empty => Re::empty(),
            Pat::Start | Pat::End => return Err("an anchor (^ or $) inside a group".into()),
            // One character (most of a literal's): itself, or its canonical escape. The
            // class below costs a class text and a pass over the specials per character,
            // which was most of compiling a pattern of 600 literal alternatives.
            Pat::Class(cs) => {
                if let Some(c) = cs.single_char() {
                    let mut s = String::new();
                    if json_specials().any(|x| x == c) {
                        canonical_char(c, &mut s);
                    } else {
                        s.push(c);
                    }
                    return Ok(Re::lit(s));
                }
                let mut alts = vec![Re::class(format!("[{}&&{}]", cs.to_regex(), PLAIN_CHAR))];
                for c in json_specials() {
                    if cs.contains(c, props)? {
                        let mut s = String::new();
                        canonical_char(c, &mut s);
                        alts.push(Re::lit(s));
                    }
                }
                Re::alt(alts)
            }
            Pat::Concat(v) => Re::concat(
                v.iter()
                    .map(|p| p.to_json_re(props))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Pat::Alt(v) => Re::alt(
                v.iter()
                    .map(|p| p.to_json_re(props))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Pat::Repeat(p, min, max) => Re::repeat(p.to_json_re(props)?, *min, *max),
        })
    }
}

/// One top-level alternative of a pattern, split at its anchors.
pub(crate) struct Branch {
    pub(crate) anchored_start: bool,
    pub(crate) anchored_end: bool,
    pub(crate) items: Vec<Pat>,
}

/// Distributing anchors that sit inside groups makes at most this many alternatives.
const MAX_ANCHOR_BRANCHES: usize = 64;

/// Splits a parsed pattern into top-level alternatives with their anchors.
///
/// Without the multiline flag, `^` holds only at the string's start and `$` only at
/// its end, so an anchor inside a group is still exact to move out: the alternatives
/// that hold an anchor are distributed over the pattern (`^(a$|b)` is `^a$` or `^b`),
/// and in each resulting sequence the items before a `^` or after a `$` can only match
/// the empty string (dropped where they may, the sequence dead where they may not).
/// A repetition of a group holding anchors is rewritten the same way (see
/// [`anchored_star`]).
pub(crate) fn branches(p: Pat) -> Result<Vec<Branch>, String> {
    Ok(expand_anchors(p)?
        .into_iter()
        .filter_map(settle_anchors)
        .collect())
}

/// The ways of matching `p` as sequences of anchor-free items and anchors, their
/// union being `p`.
fn expand_anchors(p: Pat) -> Result<Vec<Vec<Pat>>, String> {
    let too_many = || {
        format!(
            "anchors (^ or $) inside groups that expand to more than {MAX_ANCHOR_BRANCHES} alternatives"
        )
    };
    if !contains_anchor(&p) {
        return Ok(vec![vec![p]]);
    }
    match p {
        Pat::Alt(v) => {
            let mut out = Vec::new();
            for a in v {
                out.extend(expand_anchors(a)?);
                if out.len() > MAX_ANCHOR_BRANCHES {
                    return Err(too_many());
                }
            }
            Ok(out)
        }
        Pat::Concat(v) => {
            let mut acc: Vec<Vec<Pat>> = vec![Vec::new()];
            for item in v {
                let ways = expand_anchors(item)?;
                if acc.len().saturating_mul(ways.len()) > MAX_ANCHOR_BRANCHES {
                    return Err(too_many());
                }
                acc = acc
                    .iter()
                    .flat_map(|prefix| {
                        ways.iter().map(move |w| {
                            let mut seq = prefix.clone();
                            seq.extend(w.iter().cloned());
                            seq
                        })
                    })
                    .collect();
            }
            Ok(acc)
        }
        Pat::Repeat(x, min, max) => {
            // x* below; x{m,} = x^m x*, x{m,n} = x^m (x?)^(n-m): small counts only.
            let x = *x;
            if min > 3 || max.is_some_and(|n| n > 4) {
                return Err(
                    "a repeated group holding an anchor (^ or $) with a count above 4".into(),
                );
            }
            if min == 0 && max.is_none() {
                return anchored_star(x);
            }
            let mut parts = vec![x.clone(); min as usize];
            match max {
                None => parts.push(Pat::Repeat(Box::new(x), 0, None)),
                Some(n) => {
                    for _ in min..n {
                        parts.push(Pat::Alt(vec![Pat::Empty, x.clone()]));
                    }
                }
            }
            expand_anchors(Pat::Concat(parts))
        }
        other => Ok(vec![vec![other]]),
    }
}

/// `x*` where `x` holds anchors. An iteration that starts with `^` must come first
/// (every iteration before it matched nothing), one that ends with `$` last, and one
/// with both is the whole string; so `x*` is `(^S)? P* (E$)?` or `^B$`, where `P`, `S`,
/// `E`, `B` are `x`'s ways with no anchor, a start, an end, and both.
fn anchored_star(x: Pat) -> Result<Vec<Vec<Pat>>, String> {
    let ways: Vec<Branch> = expand_anchors(x)?
        .into_iter()
        .filter_map(settle_anchors)
        .collect();
    let body = |b: &Branch| Pat::Concat(b.items.clone());
    let plain: Vec<Pat> = ways
        .iter()
        .filter(|b| !b.anchored_start && !b.anchored_end)
        .map(body)
        .collect();
    let plain_star = Pat::Repeat(Box::new(Pat::Alt(plain)), 0, None);
    let starts: Vec<Option<&Branch>> = std::iter::once(None)
        .chain(
            ways.iter()
                .filter(|b| b.anchored_start && !b.anchored_end)
                .map(Some),
        )
        .collect();
    let ends: Vec<Option<&Branch>> = std::iter::once(None)
        .chain(
            ways.iter()
                .filter(|b| !b.anchored_start && b.anchored_end)
                .map(Some),
        )
        .collect();
    let mut out = Vec::new();
    for s in &starts {
        for e in &ends {
            let mut seq = Vec::new();
            if let Some(s) = s {
                seq.push(Pat::Start);
                seq.push(body(s));
            }
            seq.push(plain_star.clone());
            if let Some(e) = e {
                seq.push(body(e));
                seq.push(Pat::End);
            }
            out.push(seq);
        }
    }
    for b in ways.iter().filter(|b| b.anchored_start && b.anchored_end) {
        out.push(vec![Pat::Start, body(b), Pat::End]);
    }
    if out.len() > MAX_ANCHOR_BRANCHES {
        return Err(format!(
            "anchors (^ or $) inside groups that expand to more than {MAX_ANCHOR_BRANCHES} alternatives"
        ));
    }
    Ok(out)
}

/// One way of matching, its anchors moved to its ends: the items before the last `^`
/// and after the first `$` must match the empty string (else the way is dead, `None`);
/// a `^` after a `$` leaves only the empty string.
fn settle_anchors(seq: Vec<Pat>) -> Option<Branch> {
    let mut items = Vec::new();
    for p in seq {
        match p {
            Pat::Concat(v) => items.extend(v),
            Pat::Empty => {}
            p => items.push(p),
        }
    }
    let nullable = |p: &Pat| p.len_range().0 == 0;
    let last_start = items.iter().rposition(|p| matches!(p, Pat::Start));
    let first_end = items.iter().position(|p| matches!(p, Pat::End));
    let (anchored_start, anchored_end) = (last_start.is_some(), first_end.is_some());
    if let (Some(s), Some(e)) = (last_start, first_end) {
        if s > e {
            // `$` then `^`: the string is empty.
            return items.iter().all(nullable).then(|| Branch {
                anchored_start: true,
                anchored_end: true,
                items: Vec::new(),
            });
        }
    }
    let from = last_start.map_or(0, |s| s + 1);
    let to = first_end.unwrap_or(items.len());
    let outside_empty = items[..from].iter().chain(&items[to..]).all(nullable);
    outside_empty.then(|| Branch {
        anchored_start,
        anchored_end,
        items: items.drain(from..to).collect(),
    })
}

fn contains_anchor(p: &Pat) -> bool {
    match p {
        Pat::Start | Pat::End => true,
        Pat::Concat(v) | Pat::Alt(v) => v.iter().any(contains_anchor),
        Pat::Repeat(p, _, _) => contains_anchor(p),
        _ => false,
    }
}

/// Parses an ECMA-262 pattern.
pub(crate) fn parse(pattern: &str) -> Result<Pat, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = Parser {
        c: &chars,
        i: 0,
        depth: 0,
    };
    let pat = p.alt()?;
    if p.i < chars.len() {
        return Err(format!("unbalanced ')' at offset {}", p.i));
    }
    Ok(pat)
}

struct Parser<'a> {
    c: &'a [char],
    i: usize,
    /// Groups open at the cursor (bounded, so that no pattern exhausts the stack).
    depth: usize,
}

/// Groups nest at most this deep in a pattern.
const MAX_GROUP_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.c.get(self.i + k).copied()
    }
    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn alt(&mut self) -> Result<Pat, String> {
        let mut alts = vec![self.concat()?];
        while self.eat('|') {
            alts.push(self.concat()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Pat::Alt(alts)
        })
    }

    fn concat(&mut self) -> Result<Pat, String> {
        let mut items = Vec::new();
        while let Some(ch) = self.peek() {
            if ch == '|' || ch == ')' {
                break;
            }
            let atom = self.atom()?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Pat::Empty,
            1 => items.pop().unwrap(),
            _ => Pat::Concat(items),
        })
    }

    /// `{n}`, `{n,}`, `{n,m}` at the cursor, without consuming it.
    fn brace_quantifier(&self) -> Option<(u32, Option<u32>, usize)> {
        let mut j = self.i;
        if self.c.get(j) != Some(&'{') {
            return None;
        }
        j += 1;
        let start = j;
        while self.c.get(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        if j == start {
            return None;
        }
        let n: String = self.c[start..j].iter().collect();
        let n: u32 = n.parse().ok()?;
        let max = if self.c.get(j) == Some(&',') {
            j += 1;
            let s2 = j;
            while self.c.get(j).is_some_and(|c| c.is_ascii_digit()) {
                j += 1;
            }
            if j == s2 {
                None
            } else {
                let m: String = self.c[s2..j].iter().collect();
                Some(m.parse().ok()?)
            }
        } else {
            Some(n)
        };
        if self.c.get(j) != Some(&'}') {
            return None;
        }
        Some((n, max, j + 1 - self.i))
    }

    fn quantified(&mut self, mut atom: Pat) -> Result<Pat, String> {
        loop {
            let (min, max) = match self.peek() {
                Some('*') => {
                    self.i += 1;
                    (0, None)
                }
                Some('+') => {
                    self.i += 1;
                    (1, None)
                }
                Some('?') => {
                    self.i += 1;
                    (0, Some(1))
                }
                Some('{') => match self.brace_quantifier() {
                    Some((n, m, len)) => {
                        self.i += len;
                        if m.is_some_and(|m| m < n) {
                            return Err("a quantifier {n,m} with m < n".into());
                        }
                        (n, m)
                    }
                    None => return Ok(atom),
                },
                _ => return Ok(atom),
            };
            // Lazy quantifiers match the same strings.
            self.eat('?');
            if matches!(atom, Pat::Start | Pat::End) {
                return Err("a quantified anchor".into());
            }
            if matches!(atom, Pat::Repeat(..)) {
                return Err("a quantifier after a quantifier".into());
            }
            if min > 1000 || max.is_some_and(|m| m > 1000) {
                return Err("a repetition count above 1000".into());
            }
            atom = Pat::Repeat(Box::new(atom), min, max);
        }
    }

    fn atom(&mut self) -> Result<Pat, String> {
        let ch = self.peek().unwrap();
        self.i += 1;
        Ok(match ch {
            '^' => Pat::Start,
            '$' => Pat::End,
            '.' => Pat::Class(CharSet {
                negated: false,
                items: vec![Item::Dot],
            }),
            '(' => {
                if self.eat('?') {
                    match self.peek() {
                        Some(':') => {
                            self.i += 1;
                        }
                        Some('<') if !matches!(self.peek_at(1), Some('=') | Some('!')) => {
                            // Named group.
                            while let Some(c) = self.peek() {
                                self.i += 1;
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        _ => {
                            return Err(
                                "lookaround or group modifiers ((?=, (?!, (?<=, (?<!)".into()
                            )
                        }
                    }
                }
                self.depth += 1;
                if self.depth > MAX_GROUP_DEPTH {
                    return Err(format!("groups nested more than {MAX_GROUP_DEPTH} deep"));
                }
                let inner = self.alt()?;
                self.depth -= 1;
                if !self.eat(')') {
                    return Err("an unclosed group".into());
                }
                // A group is an atom: `(?:a{2})?` quantifies the group, not `{2}`.
                match inner {
                    Pat::Repeat(..) => Pat::Concat(vec![inner]),
                    other => other,
                }
            }
            ')' => return Err("unbalanced ')'".into()),
            '*' | '+' | '?' => return Err(format!("nothing to repeat before '{ch}'")),
            '{' => {
                self.i -= 1;
                if self.brace_quantifier().is_some() {
                    return Err("nothing to repeat before '{'".into());
                }
                self.i += 1;
                Pat::Class(CharSet::single('{'))
            }
            '[' => Pat::Class(self.class()?),
            '\\' => self.escape()?,
            c => Pat::Class(CharSet::single(c)),
        })
    }

    fn escape(&mut self) -> Result<Pat, String> {
        let Some(ch) = self.peek() else {
            return Err("a trailing backslash".into());
        };
        self.i += 1;
        let set = |item| {
            Ok(Pat::Class(CharSet {
                negated: false,
                items: vec![item],
            }))
        };
        match ch {
            'd' => set(Item::Digit(false)),
            'D' => set(Item::Digit(true)),
            'w' => set(Item::Word(false)),
            'W' => set(Item::Word(true)),
            's' => set(Item::Space(false)),
            'S' => set(Item::Space(true)),
            'b' | 'B' => Err("a word boundary (\\b, \\B)".into()),
            '1'..='9' => Err("a backreference".into()),
            'k' if self.peek() == Some('<') => Err("a named backreference".into()),
            'p' | 'P' => Ok(Pat::Class(CharSet {
                negated: false,
                items: vec![self.property(ch)?],
            })),
            _ => {
                self.i -= 1;
                let c = self.char_escape()?;
                Ok(Pat::Class(CharSet::single(c)))
            }
        }
    }

    /// `\p{..}` after the `p`/`P`.
    fn property(&mut self, ch: char) -> Result<Item, String> {
        if !self.eat('{') {
            return Err("\\p without {..}".into());
        }
        let start = self.i;
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == '}' {
                let name: String = self.c[start..self.i - 1].iter().collect();
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '=')
                {
                    return Err(format!("a malformed Unicode property \\{ch}{{{name}}}"));
                }
                return Ok(Item::Prop(format!("\\{ch}{{{name}}}")));
            }
        }
        Err("an unclosed \\p{".into())
    }

    /// A character escape (after the backslash): returns the character.
    fn char_escape(&mut self) -> Result<char, String> {
        let ch = self.peek().ok_or("a trailing backslash")?;
        self.i += 1;
        Ok(match ch {
            't' => '\t',
            'n' => '\n',
            'v' => '\u{0B}',
            'f' => '\u{0C}',
            'r' => '\r',
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => '\0',
            'c' => {
                let l = self
                    .peek()
                    .filter(|c| c.is_ascii_alphabetic())
                    .ok_or("\\c without a letter")?;
                self.i += 1;
                char::from_u32(l as u32 % 32).unwrap()
            }
            'x' => {
                let v = self.hex(2).ok_or("\\x without two hex digits")?;
                char::from_u32(v).unwrap()
            }
            'u' => {
                if self.eat('{') {
                    let start = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                        self.i += 1;
                    }
                    let h: String = self.c[start..self.i].iter().collect();
                    if !self.eat('}') || h.is_empty() {
                        return Err("a malformed \\u{..}".into());
                    }
                    let v = u32::from_str_radix(&h, 16).map_err(|_| "a malformed \\u{..}")?;
                    return char::from_u32(v)
                        .ok_or_else(|| "a \\u{..} that is no Unicode scalar".into());
                }
                let v = self.hex(4).ok_or("\\u without four hex digits")?;
                if (0xD800..0xDC00).contains(&v)
                    && self.peek() == Some('\\')
                    && self.peek_at(1) == Some('u')
                {
                    let save = self.i;
                    self.i += 2;
                    if let Some(lo) = self.hex(4).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                        return Ok(
                            char::from_u32(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)).unwrap(),
                        );
                    }
                    self.i = save;
                }
                char::from_u32(v).ok_or("a lone surrogate \\u escape")?
            }
            c if c.is_ascii_alphanumeric() => return Err(format!("an unknown escape \\{c}")),
            c => c,
        })
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let s: String = self.c.get(self.i..self.i + n)?.iter().collect();
        if !s.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.i += n;
        u32::from_str_radix(&s, 16).ok()
    }

    /// A class `[...]` after the `[`.
    fn class(&mut self) -> Result<CharSet, String> {
        let negated = self.eat('^');
        let mut items = Vec::new();
        loop {
            let Some(ch) = self.peek() else {
                return Err("an unclosed character class".into());
            };
            if ch == ']' {
                self.i += 1;
                break;
            }
            let first = self.class_atom()?;
            // A range?
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                if let Item::Range(a, a2) = first {
                    if a == a2 {
                        self.i += 1;
                        let second = self.class_atom()?;
                        match second {
                            Item::Range(b, b2) if b == b2 => {
                                if b < a {
                                    return Err("a class range out of order".into());
                                }
                                items.push(Item::Range(a, b));
                                continue;
                            }
                            _ => return Err("a class range with a class bound".into()),
                        }
                    }
                }
            }
            items.push(first);
        }
        Ok(CharSet { negated, items })
    }

    fn class_atom(&mut self) -> Result<Item, String> {
        let ch = self.peek().unwrap();
        self.i += 1;
        if ch != '\\' {
            return Ok(Item::Range(ch, ch));
        }
        let Some(e) = self.peek() else {
            return Err("a trailing backslash".into());
        };
        match e {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.i += 1;
                Ok(match e {
                    'd' => Item::Digit(false),
                    'D' => Item::Digit(true),
                    'w' => Item::Word(false),
                    'W' => Item::Word(true),
                    's' => Item::Space(false),
                    _ => Item::Space(true),
                })
            }
            'b' => {
                self.i += 1;
                Ok(Item::Range('\u{08}', '\u{08}'))
            }
            '-' => {
                self.i += 1;
                Ok(Item::Range('-', '-'))
            }
            'p' | 'P' => {
                self.i += 1;
                self.property(e)
            }
            _ => {
                let c = self.char_escape()?;
                Ok(Item::Range(c, c))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_re(p: &str) -> String {
        let mut props = PropCache::default();
        let b = branches(parse(p).unwrap()).unwrap();
        Re::alt(
            b.into_iter()
                .map(|b| Pat::Concat(b.items).to_json_re(&mut props).unwrap()),
        )
        .render()
    }

    #[test]
    fn classes_split_json_specials() {
        let re = json_re(r#"^["a]$"#);
        let dfa = Dfa::new(&re).unwrap();
        assert!(dfa.is_match(b"a"));
        assert!(dfa.is_match(br#"\""#));
        assert!(!dfa.is_match(br#"""#));
        let dfa = Dfa::new(&json_re(r"^\s$")).unwrap();
        assert!(dfa.is_match(br"\n"));
        assert!(dfa.is_match(b" "));
        assert!(dfa.is_match(br"\u000b"));
        assert!(!dfa.is_match(b"\n"));
    }

    /// Patterns with anchors inside groups, against a backtracking-free reference: the
    /// `regex` crate's unanchored search (without the multiline flag its `^`/`$` are
    /// ECMA's), over every string of up to 6 characters from a small alphabet.
    // The reference (`regex_automata::meta`) is a native dev-dependency only.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn anchors_inside_groups_move_out_exactly() {
        let patterns = [
            r"^(a|b$)",
            r"(^a|b)b$",
            r"^([0-9x]+\.[0-9x]+$|%V%)",
            r"^(/?((\.{2})|([a-z]*))($|/))*$",
            r"(a$)|(^b)",
            r"^(a(^b|c))",
            r"^([^,]|$)",
            r"/^[0-9]{2}$/",
            r"a$^",
            r"$^",
            r"(a^)?b",
            r"(x($|y)){2}",
            r"^(a$|b){1,3}$",
        ];
        let alphabet = ['a', 'b', 'c', 'x', 'y', '/', '.', '1', ','];
        let mut strings = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..4 {
            frontier = frontier
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(frontier.iter().cloned());
        }
        let mut props = PropCache::default();
        for p in patterns {
            let reference = regex_automata::meta::Regex::new(p).unwrap();
            let alts: Vec<Re> = branches(parse(p).unwrap())
                .unwrap()
                .into_iter()
                .map(|b| {
                    let free = || Re::raw(r"[\s\S]*");
                    let mut parts = Vec::new();
                    if !b.anchored_start {
                        parts.push(free());
                    }
                    parts.push(Pat::Concat(b.items).to_json_re(&mut props).unwrap());
                    if !b.anchored_end {
                        parts.push(free());
                    }
                    Re::concat(parts)
                })
                .collect();
            // No way left: the pattern matches nothing.
            let dfa = (!alts.is_empty()).then(|| Dfa::new(&Re::alt(alts).render()).unwrap());
            for s in &strings {
                assert_eq!(
                    dfa.as_ref().is_some_and(|d| d.is_match(s.as_bytes())),
                    reference.is_match(s.as_str()),
                    "pattern {p:?} on {s:?}"
                );
            }
        }
        assert!(branches(parse(r"(a$){9}").unwrap()).is_err());
    }

    #[test]
    fn lengths() {
        assert_eq!(parse("a{2,3}b").unwrap().len_range(), (3, Some(4)));
        assert_eq!(parse("a|bc*").unwrap().len_range(), (1, None));
    }
}
