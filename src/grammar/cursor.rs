//! A cursor over a grammar's text, shared by the syntaxes' parsers: code points with
//! their line and column, for errors that say where.

use super::ast::Pos;
use super::invalid;
use crate::error::Result;

pub(crate) struct Cursor {
    pub(crate) chars: Vec<char>,
    pub(crate) at: usize,
    line: u32,
    column: u32,
}

impl Cursor {
    pub(crate) fn new(text: &str) -> Cursor {
        Cursor {
            chars: text.chars().collect(),
            at: 0,
            line: 1,
            column: 1,
        }
    }

    pub(crate) fn done(&self) -> bool {
        self.at >= self.chars.len()
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// The code point `n` after the current one.
    pub(crate) fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.at + n).copied()
    }

    pub(crate) fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    pub(crate) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Where the cursor is, to come back to ([`restore`](Self::restore)).
    pub(crate) fn mark(&self) -> (usize, u32, u32) {
        (self.at, self.line, self.column)
    }

    pub(crate) fn restore(&mut self, mark: (usize, u32, u32)) {
        (self.at, self.line, self.column) = mark;
    }

    pub(crate) fn error(&self, what: impl std::fmt::Display) -> crate::Error {
        invalid(self.pos(), what)
    }

    pub(crate) fn expect(&mut self, s: &str) -> Result<()> {
        for want in s.chars() {
            if self.peek() != Some(want) {
                return Err(self.error(format!("expected \"{s}\"")));
            }
            self.bump();
        }
        Ok(())
    }

    /// A name of letters, digits, `-` and `_` (both syntaxes allow `-`), if one starts here.
    pub(crate) fn name(&mut self) -> Option<String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            self.bump();
        }
        (self.at > start).then(|| self.chars[start..self.at].iter().collect())
    }

    /// A decimal count.
    pub(crate) fn number(&mut self, pos: Pos) -> Result<u32> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        digits
            .parse()
            .map_err(|_| invalid(pos, format!("expected a count, not {digits:?}")))
    }

    /// Skips the rest of the line (a comment).
    pub(crate) fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.bump();
        }
    }
}
