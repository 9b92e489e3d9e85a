//! GBNF, llama.cpp's grammar syntax (its `grammars/README.md`): rules `name ::= ...`,
//! `root` the start, literals `"..."` and classes `[...]` with escapes (`\n`, `\xXX`,
//! `\uXXXX`, `\UXXXXXXXX`), `.`, groups, `|`, `*` `+` `?` `{m}` `{m,}` `{m,n}`, `#`
//! comments. A rule ends at a newline outside parentheses, unless the line ends with
//! `|` (or the rule's `::=`). Terminals are code points, matched as UTF-8.
//!
//! Token references (`<[id]>`, `<token>`, `!<...>`) are refused: the automaton matches
//! text, whatever tokens spell it.

use super::ast::{Expr, Grammar, Rule};
use super::cursor::Cursor;
use super::{invalid, unsupported};
use crate::error::Result;

/// Nesting of groups past which a grammar is refused (the parser recurses per group).
const MAX_NESTING: usize = 256;

/// Parses GBNF text; `root` is the start rule.
pub(crate) fn parse(text: &str) -> Result<Grammar> {
    let mut p = Parser {
        cur: Cursor::new(text),
        nesting: 0,
    };
    let mut rules = Vec::new();
    p.space(true);
    while !p.done() {
        rules.push(p.rule()?);
        p.space(true);
    }
    Ok(Grammar {
        rules,
        start: "root".to_string(),
    })
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
    /// Skips spaces, tabs and comments, and newlines where `newlines` allows them.
    fn space(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => {}
                '\r' | '\n' if newlines => {}
                '#' => {
                    self.skip_line();
                    continue;
                }
                _ => return,
            }
            self.bump();
        }
    }

    /// `name ::= alternatives` up to the end of its line (or of the text).
    fn rule(&mut self) -> Result<Rule> {
        let pos = self.pos();
        let name = self
            .name()
            .ok_or_else(|| self.error("expected a rule name"))?;
        self.space(false);
        self.expect("::=")?;
        self.space(true);
        let body = self.alternatives(false)?;
        match self.peek() {
            None | Some('\n') | Some('\r') => Ok(Rule { name, body, pos }),
            Some(c) => Err(self.error(format!(
                "unexpected {c:?}: expected a newline after rule {name:?}"
            ))),
        }
    }

    /// Sequences separated by `|`; a newline after `|` continues the rule.
    fn alternatives(&mut self, nested: bool) -> Result<Expr> {
        let mut alts = vec![self.sequence(nested)?];
        while self.peek() == Some('|') {
            self.bump();
            self.space(true);
            alts.push(self.sequence(nested)?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().expect("one")
        } else {
            Expr::Alt(alts)
        })
    }

    /// Items one after another, up to `|`, `)`, or (outside groups) a newline.
    fn sequence(&mut self, nested: bool) -> Result<Expr> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None | Some('|') | Some(')') => break,
                Some('\n') | Some('\r') if !nested => break,
                _ => {}
            }
            let item = self.item()?;
            items.push(self.repetition(item)?);
            self.space(nested);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one")
        } else {
            Expr::Seq(items)
        })
    }

    fn item(&mut self) -> Result<Expr> {
        let pos = self.pos();
        match self.peek() {
            Some('"') => {
                self.bump();
                let mut text = String::new();
                loop {
                    match self.peek() {
                        None | Some('\n') => return Err(invalid(pos, "unterminated literal")),
                        Some('"') => {
                            self.bump();
                            return Ok(Expr::Literal(text));
                        }
                        _ => text.push(self.char_in_terminal()?),
                    }
                }
            }
            Some('[') => self.class(),
            Some('.') => {
                self.bump();
                Ok(Expr::AnyChar)
            }
            Some('(') => {
                self.bump();
                self.nesting += 1;
                if self.nesting > MAX_NESTING {
                    return Err(invalid(pos, format!("groups nested deeper than {MAX_NESTING}")));
                }
                self.space(true);
                let inner = self.alternatives(true)?;
                self.space(true);
                self.expect(")")
                    .map_err(|_| invalid(pos, "this group is not closed"))?;
                self.nesting -= 1;
                Ok(inner)
            }
            Some('<') | Some('!') => Err(unsupported(
                pos,
                "token references (<[id]>, <token>, !<...>): the automaton matches text, whatever tokens spell it",
            )),
            Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '_' => {
                let name = self.name().expect("a name character");
                Ok(Expr::Ref(name, pos))
            }
            Some(c) => Err(self.error(format!("unexpected {c:?}"))),
            None => Err(self.error("unexpected end of the grammar")),
        }
    }

    /// `[...]`: code points and ranges, `^` first to negate.
    fn class(&mut self) -> Result<Expr> {
        let pos = self.pos();
        self.bump();
        let negated = self.peek() == Some('^');
        if negated {
            self.bump();
        }
        let mut ranges = Vec::new();
        loop {
            match self.peek() {
                None | Some('\n') => return Err(invalid(pos, "unterminated character class")),
                Some(']') => {
                    self.bump();
                    return Ok(Expr::Class { ranges, negated });
                }
                _ => {
                    let lo = self.char_in_terminal()?;
                    let hi = if self.peek() == Some('-')
                        && !matches!(self.chars.get(self.at + 1), None | Some(']') | Some('\n'))
                    {
                        self.bump();
                        self.char_in_terminal()?
                    } else {
                        lo
                    };
                    if hi < lo {
                        return Err(invalid(pos, format!("the range {lo:?}-{hi:?} is reversed")));
                    }
                    ranges.push((lo, hi));
                }
            }
        }
    }

    /// One code point of a literal or a class, escapes decoded.
    fn char_in_terminal(&mut self) -> Result<char> {
        let pos = self.pos();
        let c = self
            .bump()
            .ok_or_else(|| self.error("unexpected end of the grammar"))?;
        if c != '\\' {
            return Ok(c);
        }
        let e = self
            .bump()
            .ok_or_else(|| invalid(pos, "a lone \\ at the end"))?;
        let hex = |p: &mut Parser, n: usize| -> Result<char> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = p
                    .bump()
                    .and_then(|c| c.to_digit(16))
                    .ok_or_else(|| invalid(pos, format!("\\{e} needs {n} hex digits")))?;
                v = v * 16 + d;
            }
            char::from_u32(v).ok_or_else(|| invalid(pos, format!("\\{e}{v:X} is no code point")))
        };
        match e {
            'x' => hex(self, 2),
            'u' => hex(self, 4),
            'U' => hex(self, 8),
            't' => Ok('\t'),
            'r' => Ok('\r'),
            'n' => Ok('\n'),
            '\\' | '"' | '[' | ']' => Ok(e),
            _ => Err(invalid(pos, format!("unknown escape \\{e}"))),
        }
    }

    /// A postfix `*`, `+`, `?`, `{m}`, `{m,}` or `{m,n}` on `item`, if written.
    fn repetition(&mut self, item: Expr) -> Result<Expr> {
        let pos = self.pos();
        let (lo, hi) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                self.bump();
                self.space(false);
                let lo = self.number(pos)?;
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
                if hi.is_some_and(|h| h < lo) {
                    return Err(invalid(
                        pos,
                        format!("the repetition {{{lo},{}}} is reversed", hi.unwrap_or(0)),
                    ));
                }
                (lo, hi)
            }
            _ => return Ok(item),
        };
        self.bump();
        Ok(Expr::Repeat(Box::new(item), lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Expr {
        parse(text).unwrap().rules.remove(0).body
    }

    #[test]
    fn rules_end_at_newlines_outside_groups_and_continue_after_bars() {
        let g = parse("root ::= a | \n  b\na ::= \"x\" (\n \"y\"\n)\nb ::= [a-c]\n").unwrap();
        assert_eq!(g.rules.len(), 3);
        assert!(matches!(&g.rules[0].body, Expr::Alt(v) if v.len() == 2));
        assert_eq!(
            g.rules[1].body,
            Expr::Seq(vec![Expr::Literal("x".into()), Expr::Literal("y".into())])
        );
    }

    #[test]
    fn escapes_classes_and_counts() {
        assert_eq!(
            body(r#"r ::= "\x41\u00e9\n\"""#),
            Expr::Literal("Aé\n\"".into())
        );
        assert_eq!(
            body(r#"r ::= [^"\\\x7F\x00-\x1F]"#),
            Expr::Class {
                ranges: vec![('"', '"'), ('\\', '\\'), ('\x7f', '\x7f'), ('\0', '\x1f')],
                negated: true
            }
        );
        assert_eq!(
            body("r ::= [0-9]{0,15}"),
            Expr::Repeat(
                Box::new(Expr::Class {
                    ranges: vec![('0', '9')],
                    negated: false
                }),
                0,
                Some(15)
            )
        );
        assert!(matches!(body("r ::= x{2,}"), Expr::Repeat(_, 2, None)));
        assert!(matches!(body("r ::= x{3}"), Expr::Repeat(_, 3, Some(3))));
        assert_eq!(body("r ::= "), Expr::empty());
    }

    #[test]
    fn errors_say_where() {
        for (text, at) in [
            ("root ::= \"abc", "line 1, column 10"),
            ("root ::= x\n  y ::= [a-", "line 2, column 9"),
            ("root ::= (\"a\"", "line 1, column 10"),
            ("root ::= \"\\q\"", "line 1, column 11"),
            ("root = \"a\"", "line 1, column 6"),
            ("root ::= x{3,1}", "line 1, column 11"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidGrammar, "{text}");
            assert!(e.to_string().contains(at), "{text}: {e}");
        }
        let e = parse("root ::= <think> x").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::UnsupportedGrammar);
    }
}
