//! Structural tags (`Index::from_structural_tags`): free text with tool calls, through an
//! index with Llama 3's vocabulary. Texts with and without triggers, partial triggers,
//! nested braces inside arguments, EOS in free text, the at-least-one and calls-only
//! modes, grammar and regex contents, and coded errors.

use crate::grammars::{llama3, spellings, takes};
use logitmask::grammar::{self, StructuralTags, Syntax, Tag, TagContent};
use logitmask::{json_schema, ErrorKind, Index, IndexConfig};

const WEATHER: &str = r#"{"type":"object","properties":{"city":{"type":"string"},"filters":{"type":"object","properties":{"days":{"type":"integer"},"nested":{"type":"object"}}}},"required":["city"],"additionalProperties":false}"#;

/// Hermes-style tool calls: `<tool_call>{"name": "...", "arguments": ...}</tool_call>`.
fn hermes(tools: &[(&str, &str)]) -> StructuralTags {
    StructuralTags {
        triggers: vec!["<tool_call>".into()],
        tags: tools
            .iter()
            .map(|(name, schema)| Tag {
                begin: format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": "),
                content: TagContent::JsonSchema(schema.to_string()),
                end: "}</tool_call>".into(),
            })
            .collect(),
        ..StructuralTags::default()
    }
}

fn index(spec: &StructuralTags) -> Index {
    index_with(&llama3(), spec)
}

fn index_with(vocab: &std::sync::Arc<logitmask::Vocabulary>, spec: &StructuralTags) -> Index {
    Index::from_structural_tags(
        spec,
        vocab,
        &IndexConfig::new(),
        &json_schema::Config::new(),
        &grammar::Config::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn free_text_and_tool_calls() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let spec = hermes(&[
        ("get_weather", WEATHER),
        (
            "get_time",
            r#"{"type":"object","properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"]}"#,
        ),
    ]);
    let g = index(&spec);
    let call = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "filters": {"days": 3, "nested": {"a": {"b": [1, {"c": "}"}]}}}}}</tool_call>"#;
    for ok in [
        "",
        "Hello, no tools needed.",
        "A tag-like text: <tool_ but not the trigger, and </tool_call> alone",
        call,
        &format!("Let me check. {call} Done."),
        &format!("{call}{call}"),
        r#"<tool_call>{"name": "get_time", "arguments": {"zone": "CET"}}</tool_call>"#,
    ] {
        assert!(takes(&g, &spelled, ok), "{ok:?}");
    }
    for bad in [
        "Text with <tool_call> but no call",
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": 3}}</tool_call>"#,
        r#"<tool_call>{"name": "get_weather", "arguments": {"zone": "CET"}}</tool_call>"#,
        r#"<tool_call>{"name": "get_news", "arguments": {}}</tool_call>"#,
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}"#,
        &format!("{}</tool_call", &call[..call.len() - "</tool_call>".len()]),
    ] {
        assert!(!takes(&g, &spelled, bad), "{bad:?}");
    }
    // EOS is allowed in free text (after a call too), never inside a call.
    let eos = vocab.eos_token_ids()[0];
    let s = g.initial_state();
    assert!(g.allowed_tokens(s).unwrap().contains(eos));
    let inside = g.next_state(s, spelled[b"<".as_slice()]).unwrap().unwrap();
    assert!(
        g.allowed_tokens(inside).unwrap().contains(eos),
        "\"<\" is free text"
    );
}

#[test]
fn at_least_one_and_calls_only() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let call = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Lima"}}</tool_call>"#;
    let mut spec = hermes(&[("get_weather", WEATHER)]);
    spec.at_least_one = true;
    let g = index(&spec);
    assert!(!takes(&g, &spelled, "Just text."));
    assert!(takes(&g, &spelled, &format!("Sure: {call}")));
    spec.at_least_one = false;
    spec.calls_only = true;
    let g = index(&spec);
    assert!(!takes(&g, &spelled, &format!("Sure: {call}")));
    assert!(!takes(&g, &spelled, ""));
    assert!(takes(&g, &spelled, &format!("{call}\n{call}\n")));
    assert_eq!(
        g.forced_bytes(g.initial_state(), 64).unwrap(),
        b"",
        "whitespace may come first"
    );
}

#[test]
fn grammar_regex_and_text_contents() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let spec = StructuralTags {
        triggers: vec!["<".into()],
        tags: vec![
            Tag {
                begin: "<sum>".into(),
                content: TagContent::Grammar {
                    text: "root ::= num (\"+\" num)*\nnum ::= [0-9]+".into(),
                    syntax: Syntax::Gbnf,
                },
                end: "</sum>".into(),
            },
            Tag {
                begin: "<list>".into(),
                content: TagContent::Grammar {
                    text: "start: item (\",\" item)*\nitem: /[a-z]+/\n%ignore \" \"".into(),
                    syntax: Syntax::Lark,
                },
                end: "</list>".into(),
            },
            Tag {
                begin: "<date>".into(),
                content: TagContent::Regex("[0-9]{4}-[0-9]{2}-[0-9]{2}".into()),
                end: "</date>".into(),
            },
            Tag {
                begin: "<think>".into(),
                content: TagContent::Text,
                end: "</think>".into(),
            },
        ],
        ..StructuralTags::default()
    };
    let g = index(&spec);
    for ok in [
        "a <sum>1+22</sum> b <list>x, yz</list>",
        "<date>2026-12-05</date>",
        "<think>anything <b>at all</think> then",
    ] {
        assert!(takes(&g, &spelled, ok), "{ok:?}");
    }
    for bad in [
        "a < b",
        "<sum>1+</sum>",
        "<date>2026-1-5</date>",
        "<think>never closed",
        "<list>X</list>",
    ] {
        assert!(!takes(&g, &spelled, bad), "{bad:?}");
    }
}

#[test]
fn malformed_specifications_are_coded_errors() {
    let vocab = llama3();
    let build = |spec: &StructuralTags| {
        Index::from_structural_tags(
            spec,
            &vocab,
            &IndexConfig::new(),
            &json_schema::Config::new(),
            &grammar::Config::new(),
        )
        .unwrap_err()
    };
    let mut spec = hermes(&[("f", "{}")]);
    spec.triggers = vec!["<call>".into()];
    assert_eq!(
        build(&spec).kind(),
        ErrorKind::InvalidArgument,
        "a begin no trigger starts"
    );
    assert_eq!(
        build(&StructuralTags::default()).kind(),
        ErrorKind::InvalidArgument
    );
    let e = build(&hermes(&[("f", r#"{"type": "nope"}"#)]));
    assert!(e.to_string().starts_with("tag 0:"), "{e}");
    let mut spec = hermes(&[("f", "{}")]);
    spec.tags[0].content = TagContent::Grammar {
        text: "root ::= undefined".into(),
        syntax: Syntax::Gbnf,
    };
    let e = build(&spec);
    assert_eq!(e.kind(), ErrorKind::InvalidGrammar);
    assert!(e.to_string().contains("tag 0"), "{e}");
}

/// Not a test of speed (benches print those): prints where a 5-tool list's first mask
/// goes natively, for `cargo test --release -- --ignored --nocapture tags::timing`.
#[test]
#[ignore]
fn timing() {
    let vocab = llama3();
    vocab.prepare();
    let names = [
        "get_weather",
        "get_time",
        "search",
        "send_email",
        "book_table",
    ];
    let schema = r#"{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}"#;
    let tools: Vec<(&str, &str)> = names.iter().map(|n| (*n, schema)).collect();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let g = index_with(&vocab, &hermes(&tools));
        let compiled = t.elapsed();
        g.allowed_tokens(g.initial_state()).unwrap();
        eprintln!("compile {compiled:?}, first mask {:?}", t.elapsed());
    }
}
