//! Lark, the subset llguidance takes (its syntax reference): rules (lowercase, `start` the
//! start) and terminals (uppercase), string literals (`"..."`, `"..."i`), regexes
//! (`/.../flags`, Rust regex syntax), ranges (`"a".."z"`), groups, `[optional]`, `|`,
//! `*` `+` `?` `{m}` `{m,}` `{m,n}` `~ n` `~ m..n`; in terminals also `&` (and) and
//! prefix `~` (not); `%ignore`, `%import common.NAME` (Lark's common terminals, written
//! here), `%json { schema }` (through the JSON Schema compiler), the `lazy` option of a
//! terminal; `//` and `#` comments; priorities and aliases (`-> name`) are read and have
//! no effect on the language.
//!
//! There is no lexer: a terminal is a regular language, inlined where it is used, and
//! `%ignore`'s text may come before each terminal of a rule and at the end. The grammar
//! means the texts it derives, as a GBNF grammar does; where a lexer would split a text
//! into other terminals (the longest match), it may refuse texts this accepts
//! (docs/grammars.md, "Lark").
//!
//! Refused with `UnsupportedGrammar`: special tokens (`<...>`, `<[id]>`), grammar
//! references (`@name`), templates, `%declare`/`%override`/`%extend`, imports other than
//! `common`, `%regex { ... }`, the lexeme options other than `lazy` and `capture`
//! (`stop`, `suffix`, `max_tokens`, `temperature`), and `%llguidance` options.

use super::ast::{Expr, Grammar, Pos, Rule};
use super::cursor::Cursor;
use super::{invalid, unsupported};
use crate::automaton::expr::{ExprId, ExprSet, FastMap};
use crate::error::{Error, Result};
use crate::json_reader::JsonReader;
use crate::json_schema;

/// Nesting of groups, negations and terminal references past which a grammar is refused
/// (the parser and the resolver recurse per level).
const MAX_NESTING: usize = 256;

/// Lark's common terminals (its `common.lark`), as regexes: what `%import common.NAME`
/// defines.
const COMMON: &[(&str, &str)] = &[
    ("DIGIT", "[0-9]"),
    ("HEXDIGIT", "[a-fA-F0-9]"),
    ("INT", "[0-9]+"),
    ("SIGNED_INT", "[+-]?[0-9]+"),
    ("DECIMAL", r"[0-9]+\.[0-9]*|\.[0-9]+"),
    (
        "FLOAT",
        r"[0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?",
    ),
    (
        "SIGNED_FLOAT",
        r"[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)",
    ),
    (
        "NUMBER",
        r"[0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+",
    ),
    (
        "SIGNED_NUMBER",
        r"[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+)",
    ),
    ("ESCAPED_STRING", r#""([^"\\\n]|\\[^\n])*""#),
    ("LCASE_LETTER", "[a-z]"),
    ("UCASE_LETTER", "[A-Z]"),
    ("LETTER", "[A-Za-z]"),
    ("WORD", "[A-Za-z]+"),
    ("CNAME", "[_A-Za-z][_A-Za-z0-9]*"),
    ("WS_INLINE", "[ \\t]+"),
    ("WS", "[ \\t\\f\\r\\n]+"),
    ("CR", "\\r"),
    ("LF", "\\n"),
    ("NEWLINE", "(\\r?\\n)+"),
    ("SH_COMMENT", "#[^\\n]*"),
    ("CPP_COMMENT", "//[^\\n]*"),
    ("C_COMMENT", r"/\*([^*]|\*+[^*/])*\*+/"),
    ("SQL_COMMENT", "--[^\\n]*"),
];

/// A definition's body as written.
#[derive(Clone, Debug)]
enum Item {
    /// A string literal, and whether it is case-insensitive (`"..."i`).
    Str(String, bool),
    /// A regex and its flags.
    Regex(String, String, Pos),
    Range(char, char),
    Name(String, Pos),
    /// A JSON Schema's text (its property order is the text's).
    Json(String, Pos),
    Seq(Vec<Item>),
    Alt(Vec<Item>),
    And(Vec<Item>, Pos),
    Not(Box<Item>, Pos),
    Repeat(Box<Item>, u32, Option<u32>),
}

struct Def {
    name: String,
    pos: Pos,
    body: Item,
    /// The `lazy` option: the shortest match only.
    lazy: bool,
}

/// What a Lark text says.
#[derive(Default)]
struct Parsed {
    defs: Vec<Def>,
    ignore: Vec<Item>,
}

fn is_terminal(name: &str) -> bool {
    name.trim_start_matches('_')
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// Parses Lark text: its rules, their terminals lowered into the expression set returned
/// with them.
pub(crate) fn parse(text: &str) -> Result<(Grammar, ExprSet)> {
    parse_into(text, ExprSet::new())
}

/// [`parse`], the terminals lowered into `exprs` (which other parts of a larger
/// expression share: structural tags).
pub(crate) fn parse_into(text: &str, exprs: ExprSet) -> Result<(Grammar, ExprSet)> {
    let parsed = Parser {
        cur: Cursor::new(text),
        nesting: 0,
    }
    .file()?;
    Resolver::new(parsed, exprs)?.grammar()
}

struct Parser {
    cur: Cursor,
    nesting: usize,
}

impl std::ops::Deref for Parser {
    type Target = Cursor;
    fn deref(&self) -> &Cursor {
        &self.cur
    }
}

impl std::ops::DerefMut for Parser {
    fn deref_mut(&mut self) -> &mut Cursor {
        &mut self.cur
    }
}

impl Parser {
    /// Skips spaces, tabs and comments (`//`, `#`), and newlines where `newlines` allows.
    fn space(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => {}
                '\r' | '\n' if newlines => {}
                '#' => {
                    self.skip_line();
                    continue;
                }
                '/' if self.peek_at(1) == Some('/') => {
                    self.skip_line();
                    continue;
                }
                _ => return,
            }
            self.bump();
        }
    }

    fn file(mut self) -> Result<Parsed> {
        let mut out = Parsed::default();
        loop {
            self.space(true);
            if self.done() {
                return Ok(out);
            }
            if self.peek() == Some('%') {
                self.directive(&mut out)?;
            } else {
                out.defs.push(self.definition()?);
            }
            self.space(false);
            if let Some(c) = self.peek().filter(|c| !matches!(c, '\n' | '\r')) {
                return Err(self.error(format!("unexpected {c:?}: expected the end of the line")));
            }
        }
    }

    fn directive(&mut self, out: &mut Parsed) -> Result<()> {
        let pos = self.pos();
        self.bump();
        let word = self.name().unwrap_or_default();
        self.space(false);
        match word.as_str() {
            "ignore" => {
                let item = self.alternatives()?;
                out.ignore.push(item);
                Ok(())
            }
            "import" => self.import(out, pos),
            "llguidance" => match self.json(pos)? {
                text if is_empty_object(&text) => Ok(()),
                _ => Err(unsupported(
                    pos,
                    "%llguidance options (only an empty {} is taken)",
                )),
            },
            "declare" | "override" | "extend" => Err(unsupported(pos, format!("%{word}"))),
            "json" | "regex" => Err(invalid(pos, format!("%{word} stands in a rule's body"))),
            _ => Err(invalid(pos, format!("unknown directive %{word}"))),
        }
    }

    /// `%import common.NAME [-> ALIAS]` or `%import common (A, B, ...)`.
    fn import(&mut self, out: &mut Parsed, pos: Pos) -> Result<()> {
        let module = self.name().unwrap_or_default();
        if module != "common" {
            return Err(unsupported(
                pos,
                format!("%import of {module:?} (only Lark's \"common\" terminals are built in)"),
            ));
        }
        let mut names = Vec::new();
        if self.peek() == Some('.') {
            self.bump();
            let name = self
                .name()
                .ok_or_else(|| self.error("expected a terminal name"))?;
            self.space(false);
            let alias = self.alias()?.unwrap_or_else(|| name.clone());
            names.push((name, alias));
        } else {
            self.space(false);
            self.expect("(")?;
            loop {
                self.space(true);
                let name = self
                    .name()
                    .ok_or_else(|| self.error("expected a terminal name"))?;
                names.push((name.clone(), name));
                self.space(true);
                if self.peek() == Some(',') {
                    self.bump();
                    continue;
                }
                self.expect(")")?;
                break;
            }
        }
        for (name, alias) in names {
            let Some(&(_, pattern)) = COMMON.iter().find(|(n, _)| *n == name) else {
                return Err(invalid(
                    pos,
                    format!("common.{name} is not one of Lark's common terminals"),
                ));
            };
            out.defs.push(Def {
                name: alias,
                pos,
                body: Item::Regex(pattern.to_string(), String::new(), pos),
                lazy: false,
            });
        }
        Ok(())
    }

    /// `-> name` (an alias: it names the tree node, nothing the language sees).
    fn alias(&mut self) -> Result<Option<String>> {
        if !(self.peek() == Some('-') && self.peek_at(1) == Some('>')) {
            return Ok(None);
        }
        self.bump();
        self.bump();
        self.space(false);
        let name = self
            .name()
            .ok_or_else(|| self.error("expected a name after ->"))?;
        self.space(false);
        Ok(Some(name))
    }

    /// `[?!]name[.priority][options]: body`.
    fn definition(&mut self) -> Result<Def> {
        let pos = self.pos();
        while matches!(self.peek(), Some('?') | Some('!')) {
            self.bump();
        }
        let name = self
            .name()
            .ok_or_else(|| self.error("expected a rule or terminal name, or a %directive"))?;
        // A priority orders a lexer's choices; without a lexer it changes nothing.
        if self.peek() == Some('.')
            && self
                .peek_at(1)
                .is_some_and(|c| c.is_ascii_digit() || c == '-')
        {
            self.bump();
            if self.peek() == Some('-') {
                self.bump();
            }
            self.number(pos)?;
        }
        let lazy = if self.peek() == Some('[') {
            self.options()?
        } else {
            false
        };
        if self.peek() == Some('{') {
            return Err(unsupported(pos, format!("templates ({name}{{...}})")));
        }
        self.space(false);
        if self.peek() != Some(':') {
            return Err(self.error(format!("expected ':' after {name:?}")));
        }
        self.bump();
        self.space(false);
        let body = self.alternatives()?;
        Ok(Def {
            name,
            pos,
            body,
            lazy,
        })
    }

    /// `[lazy, capture, capture="x"]`: whether `lazy` is among them.
    fn options(&mut self) -> Result<bool> {
        self.bump();
        let mut lazy = false;
        loop {
            self.space(false);
            let pos = self.pos();
            let key = self
                .name()
                .ok_or_else(|| self.error("expected an option name"))?;
            self.space(false);
            if self.peek() == Some('=') {
                self.bump();
                self.space(false);
                match self.peek() {
                    Some('"') => {
                        self.string()?;
                    }
                    _ => {
                        while self.peek().is_some_and(|c| !matches!(c, ',' | ']' | '\n')) {
                            self.bump();
                        }
                    }
                }
                self.space(false);
            }
            match key.as_str() {
                "lazy" => lazy = true,
                // Captures name parts of the output; the language is the same.
                "capture" | "stop_capture" => {}
                "stop" | "suffix" | "max_tokens" | "temperature" => {
                    return Err(unsupported(
                        pos,
                        format!("the lexeme option {key:?} (only lazy and capture are taken)"),
                    ))
                }
                _ => return Err(invalid(pos, format!("unknown option {key:?}"))),
            }
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {
                    self.bump();
                    return Ok(lazy);
                }
                _ => return Err(self.error("expected ',' or ']' in the options")),
            }
        }
    }

    /// Conjunctions separated by `|`; a rule continues on a line that starts with `|`.
    fn alternatives(&mut self) -> Result<Item> {
        let mut alts = vec![self.conjunction()?];
        loop {
            self.space(self.nesting > 0);
            if self.peek() == Some('|') {
                self.bump();
                self.space(true);
                alts.push(self.conjunction()?);
                continue;
            }
            if self.nesting == 0 && matches!(self.peek(), Some('\n') | Some('\r')) {
                let mark = self.mark();
                self.space(true);
                if self.peek() == Some('|') {
                    continue;
                }
                self.restore(mark);
            }
            break;
        }
        Ok(if alts.len() == 1 {
            alts.pop().expect("one")
        } else {
            Item::Alt(alts)
        })
    }

    /// Sequences separated by `&` (which binds tighter than `|`).
    fn conjunction(&mut self) -> Result<Item> {
        let pos = self.pos();
        let mut parts = vec![self.sequence()?];
        while self.peek() == Some('&') {
            self.bump();
            self.space(self.nesting > 0);
            parts.push(self.sequence()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Item::And(parts, pos)
        })
    }

    /// Items one after another, up to `|`, `&`, a closing bracket, an alias or (outside
    /// groups) a newline.
    fn sequence(&mut self) -> Result<Item> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None | Some('|') | Some('&') | Some(')') | Some(']') => break,
                Some('\n') | Some('\r') if self.nesting == 0 => break,
                Some('-') if self.peek_at(1) == Some('>') => {
                    self.alias()?;
                    break;
                }
                _ => {}
            }
            let item = self.item()?;
            items.push(self.postfix(item)?);
            self.space(self.nesting > 0);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one")
        } else {
            Item::Seq(items)
        })
    }

    fn deeper(&mut self, pos: Pos) -> Result<()> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(invalid(pos, format!("nested deeper than {MAX_NESTING}")));
        }
        Ok(())
    }

    fn item(&mut self) -> Result<Item> {
        let pos = self.pos();
        match self.peek() {
            Some('~') => {
                self.bump();
                self.space(false);
                self.deeper(pos)?;
                let inner = self.item()?;
                self.nesting -= 1;
                Ok(Item::Not(Box::new(inner), pos))
            }
            Some(open @ ('(' | '[')) => {
                self.bump();
                self.deeper(pos)?;
                self.space(true);
                let inner = self.alternatives()?;
                self.space(true);
                let close = if open == '(' { ")" } else { "]" };
                self.expect(close)
                    .map_err(|_| invalid(pos, "this group is not closed"))?;
                self.nesting -= 1;
                Ok(if open == '(' { inner } else { Item::Repeat(Box::new(inner), 0, Some(1)) })
            }
            Some('"') => {
                let (text, insensitive) = self.string()?;
                if !(self.peek() == Some('.') && self.peek_at(1) == Some('.')) {
                    return Ok(Item::Str(text, insensitive));
                }
                self.bump();
                self.bump();
                self.space(false);
                let (hi, _) = self.string()?;
                match (single(&text), single(&hi)) {
                    (Some(a), Some(b)) if a <= b => Ok(Item::Range(a, b)),
                    _ => Err(invalid(pos, "a range \"a\"..\"z\" takes two characters, in order")),
                }
            }
            Some('/') => self.regex(),
            Some('%') => {
                self.bump();
                match self.name().as_deref() {
                    Some("json") => {
                        self.space(true);
                        Ok(Item::Json(self.json(pos)?, pos))
                    }
                    Some("regex") => Err(unsupported(pos, "%regex { ... }")),
                    _ => Err(invalid(pos, "expected %json in a rule's body")),
                }
            }
            Some('<') => Err(unsupported(
                pos,
                "special tokens (<...>, <[id]>): the automaton matches text, whatever tokens spell it",
            )),
            Some('@') => Err(unsupported(pos, "references to other grammars (@name)")),
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                Ok(Item::Name(self.name().expect("a name character"), pos))
            }
            Some(c) => Err(self.error(format!("unexpected {c:?}"))),
            None => Err(self.error("unexpected end of the grammar")),
        }
    }

    /// A postfix `*`, `+`, `?`, `{m}`, `{m,}`, `{,n}`, `{m,n}`, `~ n` or `~ m..n`.
    fn postfix(&mut self, item: Item) -> Result<Item> {
        // `x ~ 3` is written with spaces before the `~` too.
        let before = self.mark();
        self.space(false);
        if self.peek() != Some('~') {
            self.restore(before);
        }
        let pos = self.pos();
        let (lo, hi) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                self.bump();
                self.space(false);
                let lo = if self.peek() == Some(',') {
                    0
                } else {
                    self.number(pos)?
                };
                self.space(false);
                let hi = if self.peek() == Some(',') {
                    self.bump();
                    self.space(false);
                    match self.peek() {
                        Some(c) if c.is_ascii_digit() => Some(self.number(pos)?),
                        _ => None,
                    }
                } else {
                    Some(lo)
                };
                self.space(false);
                if self.peek() != Some('}') {
                    return Err(invalid(pos, "expected } to close the repetition"));
                }
                (lo, hi)
            }
            Some('~') => {
                let mark = self.mark();
                self.bump();
                self.space(false);
                if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    // A prefix `~` (not) of the next item.
                    self.restore(mark);
                    self.restore(before);
                    return Ok(item);
                }
                let lo = self.number(pos)?;
                let hi = if self.peek() == Some('.') && self.peek_at(1) == Some('.') {
                    self.bump();
                    self.bump();
                    self.number(pos)?
                } else {
                    lo
                };
                return self.counted(item, lo, Some(hi), pos);
            }
            _ => return Ok(item),
        };
        self.bump();
        self.counted(item, lo, hi, pos)
    }

    fn counted(&mut self, item: Item, lo: u32, hi: Option<u32>, pos: Pos) -> Result<Item> {
        if hi.is_some_and(|h| h < lo) {
            return Err(invalid(
                pos,
                format!("the repetition {lo}..{} is reversed", hi.unwrap_or(0)),
            ));
        }
        self.postfix(Item::Repeat(Box::new(item), lo, hi))
    }

    /// `"..."` with Python's escapes, and whether an `i` flag follows.
    fn string(&mut self) -> Result<(String, bool)> {
        let pos = self.pos();
        self.bump();
        let mut text = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => return Err(invalid(pos, "unterminated string")),
                Some('"') => break,
                Some('\\') => text.push_str(&self.escape(pos)?),
                Some(c) => text.push(c),
            }
        }
        let insensitive = self.peek() == Some('i')
            && !self
                .peek_at(1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if insensitive {
            self.bump();
        }
        Ok((text, insensitive))
    }

    /// The escape after a `\` in a string (an unknown one stays as written, as Python
    /// keeps it).
    fn escape(&mut self, pos: Pos) -> Result<String> {
        let e = self
            .bump()
            .ok_or_else(|| invalid(pos, "a lone \\ at the end"))?;
        let digits = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            'n' => return Ok("\n".into()),
            't' => return Ok("\t".into()),
            'r' => return Ok("\r".into()),
            'f' => return Ok("\x0C".into()),
            'v' => return Ok("\x0B".into()),
            '0' => return Ok("\0".into()),
            '\\' | '"' | '\'' => return Ok(e.to_string()),
            other => return Ok(format!("\\{other}")),
        };
        let mut v = 0u32;
        for _ in 0..digits {
            let d = self
                .bump()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| invalid(pos, format!("\\{e} needs {digits} hex digits")))?;
            v = v * 16 + d;
        }
        char::from_u32(v)
            .map(String::from)
            .ok_or_else(|| invalid(pos, format!("\\{e}{v:X} is no code point")))
    }

    /// `/pattern/flags`.
    fn regex(&mut self) -> Result<Item> {
        let pos = self.pos();
        self.bump();
        let mut pattern = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => return Err(invalid(pos, "unterminated regex")),
                Some('/') => break,
                Some('\\') if self.peek() == Some('/') => {
                    self.bump();
                    pattern.push('/');
                }
                Some('\\') => {
                    pattern.push('\\');
                    if let Some(c) = self.bump() {
                        pattern.push(c);
                    }
                }
                Some(c) => pattern.push(c),
            }
        }
        let mut flags = String::new();
        while let Some(c) = self.peek().filter(|c| "imsxlu".contains(*c)) {
            self.bump();
            // `l` and `u` (Python's locale and Unicode flags) change nothing here.
            if "imsx".contains(c) {
                flags.push(c);
            }
        }
        Ok(Item::Regex(pattern, flags, pos))
    }

    /// The JSON value starting here (the schema of `%json`), checked: its text.
    fn json(&mut self, pos: Pos) -> Result<String> {
        let rest: String = self.chars[self.at..].iter().collect();
        if rest.trim_start().is_empty() {
            return Err(invalid(pos, "%json: expected a schema"));
        }
        let mut reader = JsonReader::new(&rest);
        reader
            .raw_value()
            .map_err(|e| invalid(pos, format!("%json: the schema is not valid JSON: {e}")))?;
        let text = rest[..reader.offset()].to_string();
        for _ in 0..text.chars().count() {
            self.bump();
        }
        Ok(text)
    }
}

/// Whether JSON `text` is an empty object.
fn is_empty_object(text: &str) -> bool {
    let mut reader = JsonReader::new(text);
    reader.begin_object().is_ok() && matches!(reader.next_key(), Ok(None))
}

/// The one character of `s`, if it has one.
fn single(s: &str) -> Option<char> {
    let mut chars = s.chars();
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

/// Turns the definitions into rules over lowered terminals.
struct Resolver {
    defs: FastMap<String, Def>,
    /// Rule names in the order written.
    rules: Vec<String>,
    ignore: Vec<Item>,
    exprs: ExprSet,
    terminals: FastMap<String, ExprId>,
    /// Terminals being lowered (a terminal must not reach itself).
    resolving: Vec<String>,
    /// `%ignore`'s texts, any number of them (the empty text without `%ignore`).
    ignored: ExprId,
    /// The `%json` schemas lowered so far (their shared parts once).
    json_memo: json_schema::EmbedMemo,
}

impl Resolver {
    fn new(parsed: Parsed, exprs: ExprSet) -> Result<Resolver> {
        let mut defs = FastMap::default();
        let mut rules = Vec::new();
        for def in parsed.defs {
            if let Some(first) = defs.get(&def.name) {
                let first: &Def = first;
                return Err(invalid(
                    def.pos,
                    format!("{:?} is defined twice (first at {})", def.name, first.pos),
                ));
            }
            if !is_terminal(&def.name) {
                rules.push(def.name.clone());
            }
            defs.insert(def.name.clone(), def);
        }
        Ok(Resolver {
            defs,
            rules,
            ignore: parsed.ignore,
            exprs,
            terminals: FastMap::default(),
            resolving: Vec::new(),
            ignored: ExprId::EMPTY,
            json_memo: json_schema::EmbedMemo::default(),
        })
    }

    fn grammar(mut self) -> Result<(Grammar, ExprSet)> {
        let ignore = std::mem::take(&mut self.ignore);
        if !ignore.is_empty() {
            let alts = ignore
                .iter()
                .map(|i| self.terminal_expr(i))
                .collect::<Result<Vec<_>>>()?;
            let one = self.exprs.union(&alts);
            self.ignored = self.exprs.repeat(one, 0, None);
        }
        // Every terminal lowered, used or not: its errors are the grammar's.
        let mut names: Vec<(String, Pos)> = self
            .defs
            .values()
            .filter(|d| is_terminal(&d.name))
            .map(|d| (d.name.clone(), d.pos))
            .collect();
        crate::sort::sort_by_key(&mut names, |(_, pos)| (pos.line, pos.column));
        for (name, pos) in names {
            self.terminal(&name, pos)?;
        }
        let mut rules = Vec::new();
        for name in std::mem::take(&mut self.rules) {
            let (body, pos, lazy) = {
                let d = &self.defs[&name];
                (d.body.clone(), d.pos, d.lazy)
            };
            let body = if lazy {
                // A lazy rule's body is a terminal (llguidance takes it on those only).
                let e = self.terminal_expr(&body)?;
                let e = self.shortest(e)?;
                self.lexeme(e)
            } else {
                self.rule_expr(&body)?
            };
            rules.push(Rule { name, body, pos });
        }
        let Some(start) = rules.iter().find(|r| r.name == "start").map(|r| r.pos) else {
            return Err(invalid(
                Pos { line: 1, column: 1 },
                "the grammar has no \"start\" rule",
            ));
        };
        let mut start_name = "start".to_string();
        if self.ignored != ExprId::EMPTY {
            // `%ignore`'s text may also end the output. The name cannot be written in Lark.
            start_name = " start".to_string();
            let trailing = Expr::Lowered(self.ignored, true);
            rules.push(Rule {
                name: start_name.clone(),
                body: Expr::Seq(vec![Expr::Ref("start".into(), start), trailing]),
                pos: start,
            });
        }
        Ok((
            Grammar {
                rules,
                start: start_name,
            },
            self.exprs,
        ))
    }

    /// A rule's body: rules stay references, terminals are lowered, each after the
    /// ignored text.
    fn rule_expr(&mut self, item: &Item) -> Result<Expr> {
        Ok(match item {
            Item::Name(name, pos) if !is_terminal(name) => Expr::Ref(name.clone(), *pos),
            Item::Str(..) | Item::Regex(..) | Item::Range(..) | Item::Json(..) | Item::Name(..) => {
                let e = self.terminal_expr(item)?;
                self.lexeme(e)
            }
            Item::Seq(v) => Expr::Seq(v.iter().map(|x| self.rule_expr(x)).collect::<Result<_>>()?),
            Item::Alt(v) => Expr::Alt(v.iter().map(|x| self.rule_expr(x)).collect::<Result<_>>()?),
            Item::Repeat(x, lo, hi) => Expr::Repeat(Box::new(self.rule_expr(x)?), *lo, *hi),
            Item::And(_, pos) | Item::Not(_, pos) => {
                return Err(invalid(
                    *pos,
                    "& and ~ combine terminals: use them in a terminal's (uppercase) definition",
                ))
            }
        })
    }

    /// A terminal of a rule, with the ignored text before it.
    fn lexeme(&mut self, e: ExprId) -> Expr {
        let e = self.exprs.concat2(self.ignored, e);
        Expr::Lowered(e, self.exprs.nullable(e))
    }

    /// The terminal named `name`, lowered once.
    fn terminal(&mut self, name: &str, pos: Pos) -> Result<ExprId> {
        if let Some(&e) = self.terminals.get(name) {
            return Ok(e);
        }
        if self.resolving.iter().any(|n| n == name) {
            return Err(invalid(
                pos,
                format!("terminal {name} refers to itself (terminals are regular: recursion needs a rule, in lowercase)"),
            ));
        }
        if self.resolving.len() >= MAX_NESTING {
            return Err(invalid(
                pos,
                format!("terminals refer to each other deeper than {MAX_NESTING}"),
            ));
        }
        let Some(def) = self.defs.get(name) else {
            return Err(invalid(pos, format!("terminal {name} is not defined")));
        };
        let (body, lazy) = (def.body.clone(), def.lazy);
        self.resolving.push(name.to_string());
        let e = self.terminal_expr(&body)?;
        self.resolving.pop();
        let e = if lazy { self.shortest(e)? } else { e };
        self.terminals.insert(name.to_string(), e);
        Ok(e)
    }

    /// A terminal's language.
    fn terminal_expr(&mut self, item: &Item) -> Result<ExprId> {
        Ok(match item {
            Item::Str(text, false) => self.exprs.literal(text.as_bytes()),
            Item::Str(text, true) => {
                let pattern = format!("(?i:{})", regex_syntax::escape(text));
                self.exprs.regex(&pattern)?
            }
            Item::Regex(pattern, flags, pos) => {
                let pattern = if flags.is_empty() {
                    pattern.clone()
                } else {
                    format!("(?{flags}:{pattern})")
                };
                self.exprs
                    .regex(&pattern)
                    .map_err(|e| invalid(*pos, format!("regex /{pattern}/: {e}")))?
            }
            Item::Range(lo, hi) => {
                let pattern = format!("[\\x{{{:X}}}-\\x{{{:X}}}]", *lo as u32, *hi as u32);
                self.exprs.regex(&pattern)?
            }
            Item::Name(name, pos) if is_terminal(name) => self.terminal(name, *pos)?,
            Item::Name(name, pos) => {
                return Err(invalid(
                    *pos,
                    format!(
                    "a terminal refers to the rule {name}: terminals may refer to terminals only"
                ),
                ))
            }
            Item::Json(schema, pos) => json_schema::embed_json_schema_str(
                schema,
                &json_schema::Config::new(),
                &mut self.exprs,
                &mut self.json_memo,
            )
            .map_err(|e| Error::new(e.kind(), format!("%json at {pos}: {e}")))?,
            Item::Seq(v) => {
                let parts = v
                    .iter()
                    .map(|x| self.terminal_expr(x))
                    .collect::<Result<Vec<_>>>()?;
                self.exprs.concat(&parts)
            }
            Item::Alt(v) => {
                let alts = v
                    .iter()
                    .map(|x| self.terminal_expr(x))
                    .collect::<Result<Vec<_>>>()?;
                self.exprs.union(&alts)
            }
            Item::And(v, _) => {
                let parts = v
                    .iter()
                    .map(|x| self.terminal_expr(x))
                    .collect::<Result<Vec<_>>>()?;
                self.exprs.intersection(&parts)
            }
            Item::Not(x, _) => {
                // Within valid text (llguidance's `~` may match invalid UTF-8).
                let x = self.terminal_expr(x)?;
                let text = self.exprs.any_text();
                self.exprs.difference(text, x)
            }
            Item::Repeat(x, lo, hi) => {
                let x = self.terminal_expr(x)?;
                self.exprs.repeat(x, *lo, *hi)
            }
        })
    }

    /// The texts of `e` none of whose proper prefixes is in `e` (a lazy terminal ends
    /// at its first match).
    fn shortest(&mut self, e: ExprId) -> Result<ExprId> {
        let more = self.exprs.regex("(?s:.)+")?;
        let longer = self.exprs.concat2(e, more);
        Ok(self.exprs.difference(e, longer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<()> {
        super::super::check(
            text,
            super::super::Syntax::Lark,
            &super::super::Config::new(),
        )
    }

    #[test]
    fn the_docs_example_compiles() {
        let docs = include_str!("../../docs/grammars.md");
        let start = docs.find("```lark\n").expect("a Lark example") + 8;
        let end = start + docs[start..].find("```").unwrap();
        check(&docs[start..end]).unwrap();
    }

    #[test]
    fn rules_continue_on_lines_starting_with_a_bar_and_in_groups() {
        let (g, _) = parse(
            "start: a\n  | b\n  // between\n  | (c\n d)\na: \"a\"\nb: \"b\"\nc: \"c\"\nd: \"d\"\n",
        )
        .unwrap();
        let start = g.rules.iter().find(|r| r.name == "start").unwrap();
        assert!(
            matches!(&start.body, Expr::Alt(v) if v.len() == 3),
            "{:?}",
            start.body
        );
        // A bar first means an empty alternative, as in Lark.
        let (g, _) = parse("start: | \"x\"\n").unwrap();
        assert!(matches!(&g.rules[0].body, Expr::Alt(v) if v[0] == Expr::Seq(vec![])));
        // `~ 3` after spaces is a count; `~` before an item is a negation.
        let parsed = Parser {
            cur: Cursor::new("A: \"a\" ~ 2..3 ~\"b\"\n"),
            nesting: 0,
        }
        .file()
        .unwrap();
        let Item::Seq(items) = &parsed.defs[0].body else {
            panic!("{:?}", parsed.defs[0].body)
        };
        assert!(
            matches!(&items[0], Item::Repeat(_, 2, Some(3))),
            "{items:?}"
        );
        assert!(matches!(&items[1], Item::Not(..)), "{items:?}");
    }
}
