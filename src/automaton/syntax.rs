//! Pattern rewrites before compilation: ASCII Perl classes, and JavaScript `RegExp`
//! flags as inline flags. The regex flavour itself is docs/regex.md.
//!
//! Both work on the pattern's text, guided by regex-syntax's AST (its spans), so the
//! rest of the pattern, and Unicode mode with it, is left exactly as written: `.` and
//! negated classes still match whole UTF-8 characters only, which a global `(?-u)` would
//! not guarantee.

use regex_syntax::ast::{self, Ast, ClassPerlKind, ClassSetItem, Visitor};

use crate::error::{quote, Error, ErrorKind, Result};

/// `pattern` with each Perl class replaced by its ASCII class: `\d` = `[0-9]`, `\w` =
/// `[0-9A-Za-z_]`, `\s` = `[\t\n\x0B\x0C\r ]`, and the negated ones (`\D`, `\W`, `\S`)
/// by their complements over Unicode characters, inside brackets too (`[\d.]`).
///
/// Errors: [`ErrorKind::InvalidRegex`] for a pattern regex-syntax cannot parse.
pub(crate) fn ascii_classes(pattern: &str) -> Result<String> {
    let parsed = ast::parse::Parser::new().parse(pattern).map_err(|e| {
        Error::with_source(
            ErrorKind::InvalidRegex,
            format!("invalid regex {}: {e}", quote(pattern)),
            e,
        )
    })?;
    let mut edits = ast::visit(&parsed, PerlClasses(Vec::new())).unwrap_or_default();
    crate::sort::sort_by_key(&mut edits, |e| e.0);
    Ok(apply_edits(pattern, edits))
}

/// `pattern` with each `(start, end, replacement)` edit made: byte spans of the pattern,
/// in order, none overlapping another.
pub(super) fn apply_edits(pattern: &str, edits: Vec<(usize, usize, String)>) -> String {
    let added: usize = edits.iter().map(|e| e.2.len()).sum();
    let mut out = String::with_capacity(pattern.len() + added);
    let mut at = 0;
    for (start, end, replacement) in edits {
        out.push_str(&pattern[at..start]);
        out.push_str(&replacement);
        at = end;
    }
    out.push_str(&pattern[at..]);
    out
}

/// Collects `(start, end, replacement)` for every Perl class of the AST.
struct PerlClasses(Vec<(usize, usize, String)>);

/// The POSIX class name with ASCII meaning for a Perl class.
fn posix_name(kind: &ClassPerlKind) -> &'static str {
    match kind {
        ClassPerlKind::Digit => "digit",
        ClassPerlKind::Space => "space",
        ClassPerlKind::Word => "word",
    }
}

impl Visitor for PerlClasses {
    type Output = Vec<(usize, usize, String)>;
    type Err = ();

    fn finish(self) -> std::result::Result<Self::Output, ()> {
        Ok(self.0)
    }

    fn visit_pre(&mut self, ast: &Ast) -> std::result::Result<(), ()> {
        if let Ast::ClassPerl(c) = ast {
            let caret = if c.negated { "^" } else { "" };
            self.0.push((
                c.span.start.offset,
                c.span.end.offset,
                format!("[{caret}[:{}:]]", posix_name(&c.kind)),
            ));
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> std::result::Result<(), ()> {
        if let ClassSetItem::Perl(c) = item {
            let caret = if c.negated { "^" } else { "" };
            self.0.push((
                c.span.start.offset,
                c.span.end.offset,
                format!("[:{caret}{}:]", posix_name(&c.kind)),
            ));
        }
        Ok(())
    }
}

/// The pattern of a JavaScript `RegExp` with these `flags` (its `.source` and `.flags`):
/// `i`, `s` and `m` become the inline flags of the same name around the source, `u` is
/// accepted as is (patterns are always Unicode-aware here). `g`, `y`, `d` (about how
/// `exec` scans, meaningless for a full match) and `v` (set notation, not supported)
/// are an [`ErrorKind::InvalidRegex`] error naming the flag.
///
/// `m` keeps its JavaScript meaning: `^` and `$` also match just after and before a
/// `\n`. The whole text must still match (a full match); without `m`, `^` and `$` match
/// only at the text's two ends.
// Used by the JS bindings (feature "wasm") and the tests.
#[cfg_attr(not(feature = "wasm"), allow(dead_code))]
pub(crate) fn pattern_from_js_regexp(source: &str, flags: &str) -> Result<String> {
    let mut inline = String::new();
    for flag in flags.chars() {
        match flag {
            'i' | 's' | 'm' => {
                if !inline.contains(flag) {
                    inline.push(flag);
                }
            }
            'u' => {}
            'g' | 'y' | 'd' => {
                return Err(Error::new(
                    ErrorKind::InvalidRegex,
                    format!(
                        "RegExp flag '{flag}' is not supported: it changes how exec() scans a string, while an index \
                         matches the whole text; drop it (supported flags: i, s, m, u)"
                    ),
                ))
            }
            'v' => {
                return Err(Error::new(
                    ErrorKind::InvalidRegex,
                    "RegExp flag 'v' (set notation) is not supported; write the pattern with the u flag \
                     (supported flags: i, s, m, u)",
                ))
            }
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidRegex,
                    format!("RegExp flag {other:?} is not supported (supported flags: i, s, m, u)"),
                ))
            }
        }
    }
    Ok(if inline.is_empty() {
        source.to_string()
    } else {
        format!("(?{inline}:{source})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dfa;

    #[test]
    fn ascii_classes_rewrite_outside_and_inside_brackets() {
        assert_eq!(ascii_classes(r"\d+").unwrap(), "[[:digit:]]+");
        assert_eq!(ascii_classes(r"[\w.\S]").unwrap(), "[[:word:].[:^space:]]");
        assert_eq!(
            ascii_classes(r"\D\W\s").unwrap(),
            "[^[:digit:]][^[:word:]][[:space:]]"
        );
        assert_eq!(
            ascii_classes(r"\\d\p{L}é").unwrap(),
            r"\\d\p{L}é",
            "escaped backslash, other classes"
        );
        assert_eq!(
            ascii_classes(r"(?x) \d # a digit").unwrap(),
            "(?x) [[:digit:]] # a digit"
        );
        let dfa = Dfa::new(&ascii_classes(r"\d\w\s\D").unwrap()).unwrap();
        assert!(dfa.is_match("1_ é".as_bytes()));
        assert!(
            !dfa.is_match("٣_ x".as_bytes()),
            "Arabic-Indic digit is not [0-9]"
        );
        assert!(!dfa.is_match("1é x".as_bytes()), "é is not [0-9A-Za-z_]");
        assert!(
            !dfa.is_match(b"1_ \xff"),
            "\\D still matches whole UTF-8 characters only"
        );
        assert_eq!(
            ascii_classes("(").unwrap_err().kind(),
            ErrorKind::InvalidRegex
        );
    }

    #[test]
    fn regexp_flags_map_to_inline_flags_or_errors() {
        assert_eq!(pattern_from_js_regexp("a|b", "").unwrap(), "a|b");
        assert_eq!(pattern_from_js_regexp("a|b", "u").unwrap(), "a|b");
        assert_eq!(pattern_from_js_regexp("a|b", "isum").unwrap(), "(?ism:a|b)");
        let m = Dfa::new(&pattern_from_js_regexp("a$\n^b", "m").unwrap()).unwrap();
        assert!(m.is_match(b"a\nb"));
        assert!(
            Dfa::new("a$\n^b").is_err(),
            "without m, ^ and $ in the middle match nothing"
        );
        for flag in ["g", "y", "d", "v", "x"] {
            let e = pattern_from_js_regexp("a", flag).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidRegex);
            assert!(e.message().contains(flag), "{e}");
        }
    }
}
