//! Structural tags: free text with tagged segments whose content is constrained, the way
//! small models call tools (`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
//! between free text). The whole output is one grammar:
//!
//! * free text: any text that contains no trigger (EOS allowed there);
//! * at a trigger, the tag whose `begin` starts with it: `begin`, its content (a JSON
//!   Schema's value, a grammar's text, a regex's match, or any text without `end`), `end`;
//! * then free text again; [`StructuralTags::at_least_one`] asks for one tag or more,
//!   [`StructuralTags::calls_only`] for tags only, with whitespace between them.
//!
//! Each content is compiled into one expression set: a schema through the JSON Schema
//! compiler (recursion expanded in place), a grammar's rules renamed apart and lowered
//! with the others (so each grammar's recursion is its own template), a regex directly.

use super::ast::{Expr, Grammar, Pos, Rule};
use super::{gbnf, lark, lower, Config, Syntax, MAX_GRAMMAR_BYTES};
use crate::automaton::expr::{ExprId, ExprSet};
use crate::error::{Error, ErrorKind, Result};
use crate::json_schema;

/// Tags a specification may hold.
pub const MAX_TAGS: usize = 1024;

/// What a tag holds between its `begin` and `end`.
#[derive(Clone, Debug)]
pub enum TagContent {
    /// A value of this JSON Schema (its text; property order as written), compiled with
    /// the schema options given with the tags.
    JsonSchema(String),
    /// A text of this grammar.
    Grammar {
        /// The grammar's text.
        text: String,
        /// Its syntax.
        syntax: Syntax,
    },
    /// A full match of this regex (the syntax of `Index::new`).
    Regex(String),
    /// Any text that does not contain the tag's `end` (the tag ends at its first `end`).
    Text,
}

/// A tagged segment: `begin`, the content, `end`.
#[derive(Clone, Debug)]
pub struct Tag {
    /// The text that opens the tag; it starts with one of the triggers.
    pub begin: String,
    /// What comes between.
    pub content: TagContent,
    /// The text that closes the tag.
    pub end: String,
}

/// Free text with tagged segments (see the module's docs).
#[derive(Clone, Debug, Default)]
pub struct StructuralTags {
    /// Texts that open a tag: free text never contains one; where one is written, a tag
    /// whose `begin` starts with it follows.
    pub triggers: Vec<String>,
    /// The tags.
    pub tags: Vec<Tag>,
    /// At least one tag in the output.
    pub at_least_one: bool,
    /// Tags only (one or more), with whitespace (`[ \t\r\n]*`) between and around them.
    pub calls_only: bool,
}

fn invalid_spec(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!("structural tags: {what}"),
    )
}

/// Checks the specification's shape: triggers, tags, their sizes.
fn check(spec: &StructuralTags) -> Result<()> {
    if spec.tags.is_empty() {
        return Err(invalid_spec("no tags"));
    }
    if spec.tags.len() > MAX_TAGS {
        return Err(invalid_spec(format!(
            "{} tags (at most {MAX_TAGS})",
            spec.tags.len()
        )));
    }
    if spec.triggers.is_empty() && !spec.calls_only {
        return Err(invalid_spec(
            "no triggers (free text needs them to know where a tag starts)",
        ));
    }
    if let Some(i) = spec.triggers.iter().position(String::is_empty) {
        return Err(invalid_spec(format!("trigger {i} is empty")));
    }
    let size: usize = spec.triggers.iter().map(String::len).sum::<usize>()
        + spec
            .tags
            .iter()
            .map(|t| {
                t.begin.len()
                    + t.end.len()
                    + match &t.content {
                        TagContent::JsonSchema(s) | TagContent::Regex(s) => s.len(),
                        TagContent::Grammar { text, .. } => text.len(),
                        TagContent::Text => 0,
                    }
            })
            .sum::<usize>();
    if size > MAX_GRAMMAR_BYTES {
        return Err(invalid_spec(format!(
            "{size} bytes of text (at most {MAX_GRAMMAR_BYTES})"
        )));
    }
    for (i, tag) in spec.tags.iter().enumerate() {
        if !spec.calls_only
            && !spec
                .triggers
                .iter()
                .any(|t| tag.begin.starts_with(t.as_str()))
        {
            return Err(invalid_spec(format!(
                "tag {i}'s begin {:?} starts with none of the triggers",
                tag.begin
            )));
        }
        if matches!(tag.content, TagContent::Text) && tag.end.is_empty() {
            return Err(invalid_spec(format!(
                "tag {i} holds free text but has no end"
            )));
        }
    }
    Ok(())
}

/// The tags' language as an automaton expression, templates defined.
pub(crate) fn compile(
    spec: &StructuralTags,
    schema_config: &json_schema::Config,
    config: &Config,
) -> Result<(ExprSet, ExprId)> {
    check(spec)?;
    let mut exprs = ExprSet::new();
    let mut rules = Vec::new();
    let mut alternatives = Vec::new();
    let mut memo = json_schema::EmbedMemo::default();
    let pos = Pos { line: 1, column: 1 };
    for (i, tag) in spec.tags.iter().enumerate() {
        let in_tag = |e: Error| Error::new(e.kind(), format!("tag {i}: {e}"));
        let content = match &tag.content {
            TagContent::JsonSchema(schema) => {
                let e = json_schema::embed_json_schema_str(
                    schema,
                    schema_config,
                    &mut exprs,
                    &mut memo,
                )
                .map_err(in_tag)?;
                lowered(&exprs, e)
            }
            TagContent::Regex(pattern) => {
                let e = exprs.regex(pattern).map_err(in_tag)?;
                lowered(&exprs, e)
            }
            TagContent::Text => {
                let e = without(&mut exprs, &[tag.end.as_str()]);
                lowered(&exprs, e)
            }
            TagContent::Grammar { text, syntax } => {
                // Alone first, for its errors in its own names.
                super::compile(text, *syntax, config).map_err(in_tag)?;
                let (grammar, set) = match syntax {
                    Syntax::Gbnf => (gbnf::parse(text).map_err(in_tag)?, exprs),
                    Syntax::Lark => lark::parse_into(text, exprs).map_err(in_tag)?,
                };
                exprs = set;
                let prefix = format!("tag {i}.");
                rules.extend(grammar.rules.into_iter().map(|r| Rule {
                    name: format!("{prefix}{}", r.name),
                    body: renamed(&r.body, &prefix),
                    pos: r.pos,
                }));
                Expr::Ref(format!("{prefix}{}", grammar.start), pos)
            }
        };
        let begin = exprs.literal(tag.begin.as_bytes());
        let end = exprs.literal(tag.end.as_bytes());
        alternatives.push(Expr::Seq(vec![
            lowered(&exprs, begin),
            content,
            lowered(&exprs, end),
        ]));
    }
    let tag = Expr::Alt(alternatives);
    let body = if spec.calls_only {
        let ws = exprs.regex("[ \\t\\r\\n]*")?;
        let ws = lowered(&exprs, ws);
        Expr::Seq(vec![
            ws.clone(),
            tag.clone(),
            Expr::Repeat(Box::new(Expr::Seq(vec![ws.clone(), tag])), 0, None),
            ws,
        ])
    } else {
        let triggers: Vec<&str> = spec.triggers.iter().map(String::as_str).collect();
        let free = without(&mut exprs, &triggers);
        let free = lowered(&exprs, free);
        let min = u32::from(spec.at_least_one);
        Expr::Seq(vec![
            free.clone(),
            Expr::Repeat(Box::new(Expr::Seq(vec![tag, free])), min, None),
        ])
    };
    // A name no grammar can write (a space), so no tag's rule meets it.
    rules.push(Rule {
        name: " tags".into(),
        body,
        pos,
    });
    let grammar = Grammar {
        rules,
        start: " tags".into(),
    };
    let lowered = lower::lower(&grammar, config, exprs)?;
    Ok((lowered.exprs, lowered.root))
}

fn lowered(exprs: &ExprSet, e: ExprId) -> Expr {
    Expr::Lowered(e, exprs.nullable(e))
}

/// Any text that contains none of `texts`.
fn without(exprs: &mut ExprSet, texts: &[&str]) -> ExprId {
    let any = exprs.any_text();
    let alts: Vec<ExprId> = texts.iter().map(|t| exprs.literal(t.as_bytes())).collect();
    let one = exprs.union(&alts);
    let containing = exprs.concat(&[any, one, any]);
    exprs.difference(any, containing)
}

/// `e` with every rule reference prefixed (a tag's grammar, apart from the others').
fn renamed(e: &Expr, prefix: &str) -> Expr {
    match e {
        Expr::Ref(name, pos) => Expr::Ref(format!("{prefix}{name}"), *pos),
        Expr::Seq(v) => Expr::Seq(v.iter().map(|x| renamed(x, prefix)).collect()),
        Expr::Alt(v) => Expr::Alt(v.iter().map(|x| renamed(x, prefix)).collect()),
        Expr::Repeat(x, lo, hi) => Expr::Repeat(Box::new(renamed(x, prefix)), *lo, *hi),
        Expr::Literal(_) | Expr::Class { .. } | Expr::AnyChar | Expr::Lowered(..) => e.clone(),
    }
}
