//! No input reaches a panic: arbitrary patterns, arbitrary index bytes, arbitrary ids
//! and states. In wasm32 a panic aborts the instance, so every one of these must come
//! back as an `Error` (or a valid result), never a crash.

use std::sync::Arc;

use logitmask::{Dfa, DfaConfig, Guide, Index, IndexConfig, StateId, Vocabulary};
use proptest::prelude::*;

fn vocab() -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    for t in ["ab", "abc", "{\"", "\":", "12", "é", "\u{4e2d}"] {
        tokens.push(Some(t.as_bytes().to_vec()));
    }
    tokens.push(None);
    let eos = tokens.len() as u32 - 1;
    Arc::new(Vocabulary::new(tokens, &[eos]).unwrap())
}

/// Regex-looking noise: metacharacters are frequent so that parsing goes deep.
fn pattern() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a",
        "b",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "?",
        "*",
        "+",
        "|",
        "\\",
        "^",
        "$",
        ".",
        "-",
        ",",
        "0",
        "9",
        "d",
        "w",
        "s",
        "b",
        "p",
        "u",
        "x",
        "(?",
        ":",
        "=",
        "!",
        "<",
        ">",
        "&&",
        "~~",
        "é",
        "\u{10FFFF}",
        "{2,3}",
        "{1000}",
        "\\d",
        "\\w",
        "\\b",
        "\\B",
        "(?i)",
        "(?-u:",
        "[^",
        "\\x",
        "\\u{",
        "P{Greek}",
    ]);
    prop::collection::vec(atoms, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_pattern_builds_or_errors(p in pattern(), lazy in any::<bool>()) {
        let v = vocab();
        let config = IndexConfig::new().lazy(lazy).max_states(2000).dfa_size_limit(Some(1 << 20));
        match Index::with_config(&p, &v, &config) {
            Ok(index) => {
                // Walk a little with every token to exercise the index too.
                let mut guide = Guide::new(Arc::new(index));
                for t in 0..v.size() as u32 + 2 {
                    if guide.is_allowed(t).unwrap_or(false) {
                        guide.advance(t).unwrap();
                        break;
                    }
                }
            }
            Err(e) => prop_assert!(!e.message().is_empty()),
        }
    }

    #[test]
    fn any_string_is_a_safe_pattern(p in ".{0,40}") {
        let _ = Dfa::with_config(&p, &DfaConfig::new().dfa_size_limit(Some(1 << 20)));
    }

    #[test]
    fn any_bytes_load_or_error(bytes in prop::collection::vec(any::<u8>(), 0..300), prefix in any::<bool>()) {
        let v = vocab();
        let mut input = bytes;
        if prefix {
            // Past the magic and version check, so parsing itself is exercised.
            let mut head = b"LOGITMSK".to_vec();
            head.extend_from_slice(&1u32.to_le_bytes());
            head.extend(input);
            input = head;
        }
        prop_assert!(Index::from_bytes(&input, &v).is_err());
    }

    #[test]
    fn any_state_and_token_is_checked(state in any::<u32>(), token in any::<u32>(), lazy in any::<bool>()) {
        let v = vocab();
        let index = Index::with_config("a(bc)*|[0-9]{2,4}", &v, &IndexConfig::new().lazy(lazy)).unwrap();
        let s = StateId::new(state);
        let _ = index.allowed_tokens(s);
        let _ = index.next_state(s, token);
        let _ = index.is_final(s);
        let mut guide = Guide::new(Arc::new(index));
        let _ = guide.advance(token);
        let _ = guide.rollback(token as usize);
        let mut short = vec![0u32; (token % 10) as usize];
        let _ = guide.fill_mask(&mut short);
        let mut logits = vec![0f32; (token % 300) as usize];
        let _ = guide.mask_logits(&mut logits);
    }
}

/// ECMA-262-looking noise for the `pattern` keyword.
fn ecma_pattern() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "?",
        "*",
        "+",
        "|",
        "\\",
        "^",
        "$",
        ".",
        "-",
        "1",
        ",",
        "\\d",
        "\\w",
        "\\s",
        "\\b",
        "\\u",
        "\\u{",
        "\\uD800",
        "\\uDC00",
        "\\x",
        "\\c",
        "\\0",
        "\\p{L}",
        "\\P{",
        "(?:",
        "(?=",
        "(?<n>",
        "\\k<n>",
        "\\1",
        "[^",
        "{2,1}",
        "{1001}",
        "é",
        "\u{1F600}",
        "]]",
    ]);
    prop::collection::vec(atoms, 0..16).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn any_schema_pattern_converts_or_errors(p in ecma_pattern(), min in 0u32..4, max in prop::option::of(0u32..6)) {
        let mut schema = serde_json::json!({"type": "string", "pattern": p, "minLength": min});
        if let Some(max) = max {
            schema["maxLength"] = max.into();
        }
        let config = logitmask::json_schema::Config::new();
        if let Ok(re) = logitmask::json_schema::regex_from_json_schema_str(&schema.to_string(), &config) {
            let _ = Dfa::with_config(&re, &DfaConfig::new().dfa_size_limit(Some(1 << 20)));
        }
    }

    #[test]
    fn any_json_text_is_a_safe_schema(text in "[\\[\\]{}\":,0-9a-z .eE+-]{0,60}") {
        let _ = logitmask::json_schema::regex_from_json_schema_str(&text, &logitmask::json_schema::Config::new());
    }
}

/// Random schemas from a soup of keywords and values, nested a few levels.
fn schema_soup() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        (-5i64..5).prop_map(Value::from),
        Just(json!(0.5)),
        Just(json!(1e300)),
        Just(json!("string")),
        Just(json!(["integer", "null"])),
        Just(json!("#")),
        Just(json!("#/$defs/a")),
        Just(json!("date-time")),
        Just(json!("^a+$")),
        Just(json!(["a", 1, null])),
    ];
    let keys = prop::sample::select(vec![
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "contains",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "$ref",
        "$defs",
        "a",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "if",
        "then",
    ]);
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec((keys.clone(), inner.clone()), 0..6).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
            prop::collection::vec(inner, 0..4).prop_map(Value::Array),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_schema_soup_converts_or_errors(schema in schema_soup()) {
        let config = logitmask::json_schema::Config::new();
        match logitmask::json_schema::regex_from_json_schema_str(&schema.to_string(), &config) {
            Ok(re) => {
                let _ = Dfa::with_config(&re, &DfaConfig::new().dfa_size_limit(Some(1 << 20)));
            }
            Err(e) => prop_assert!(!e.message().is_empty()),
        }
    }
}

/// FNV-1a 64, the serialized index's (unkeyed) checksum: recomputed so that mutations
/// reach the checks behind it, as a forger would.
fn with_fixed_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 8;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &bytes[..body] {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    bytes[body..].copy_from_slice(&h.to_le_bytes());
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Issue 15: a forged index (mutated bytes, checksum recomputed) is refused, or loads
    /// as one that agrees with itself: every token a row allows advances, every other
    /// token is refused.
    #[test]
    fn forged_index_bytes_are_refused_or_self_consistent(
        flips in prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
    ) {
        let v = vocab();
        let real = crate::common::eager_index("(ab|c)+d?|x[0-9]{2}", &v).unwrap();
        let mut bytes = real.to_bytes().unwrap();
        let body = bytes.len() - 8;
        for (at, bit) in flips {
            bytes[12 + at.index(body - 12)] ^= 1 << bit;
        }
        let bytes = with_fixed_checksum(bytes);
        match std::panic::catch_unwind(|| Index::from_bytes(&bytes, &v)) {
            Err(_) => prop_assert!(false, "panic"),
            Ok(Err(_)) => {}
            Ok(Ok(loaded)) => {
                for s in loaded.states() {
                    let row = loaded.allowed_tokens(s).unwrap();
                    for t in 0..v.size() as u32 {
                        if v.eos_token_ids().contains(&t) {
                            continue;
                        }
                        let next = loaded.next_state(s, t).unwrap();
                        prop_assert_eq!(row.contains(t), next.is_some(), "state {:?} token {}", s, t);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Issue 15: whatever the depth options say, a recursive schema converts or fails
    /// with a coded error (options past their caps are InvalidArgument).
    #[test]
    fn depth_options_are_capped(
        recursion in 0usize..1000,
        any_depth in 0usize..1000,
        size in prop::sample::select(vec![1usize << 10, 1 << 20, 1 << 24, 1 << 30]),
        tree in any::<bool>(),
    ) {
        use logitmask::json_schema::{regex_from_json_schema_str, Config};
        let schema = if tree {
            r##"{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}},"x":{}}}"##
        } else {
            r##"{"type":"object","properties":{"next":{"$ref":"#"},"v":{}}}"##
        };
        let config = Config::new().max_recursion_depth(recursion).any_value_depth(any_depth).max_regex_size(size);
        if let Err(e) = regex_from_json_schema_str(schema, &config) {
            let capped = recursion > logitmask::json_schema::MAX_RECURSION_DEPTH_LIMIT
                || any_depth > logitmask::json_schema::MAX_ANY_VALUE_DEPTH_LIMIT
                || size > logitmask::json_schema::MAX_REGEX_SIZE_LIMIT;
            prop_assert!(!capped || e.kind() == logitmask::ErrorKind::InvalidArgument, "{:?}", e);
        }
    }
}

/// Work budgets (issue 15): the tokenizer loaders charge one step per input byte and 32 per
/// token before decoding, the JSON Schema compiler its sub-schemas, merges and regex nodes;
/// past the budget each stops with `BuildTooExpensive`, at the same point on every machine.
#[test]
fn loaders_and_the_schema_compiler_have_work_budgets() {
    use logitmask::json_schema::{regex_from_json_schema, Config};
    use logitmask::tokenizer::LoadOptions;
    use logitmask::ErrorKind;

    let json = r#"{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}"#;
    let exact = json.len() as u64 + 2 * 32;
    let e =
        Vocabulary::from_tokenizer_json(json, &LoadOptions::new().max_work(exact - 1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e}");
    assert!(e.message().contains("max_work / maxWork"), "{e}");
    assert_eq!(
        Vocabulary::from_tokenizer_json(json, &LoadOptions::new().max_work(exact))
            .unwrap()
            .size(),
        2
    );

    let ranks = "IQ== 0\nIg== 1\n"; // three lines (the last empty), one special token
    let exact = ranks.len() as u64 + 4 * 32;
    let e = Vocabulary::from_tiktoken(
        ranks,
        &[("<|end|>", 2)],
        &LoadOptions::new().max_work(exact - 1),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e}");
    assert_eq!(
        Vocabulary::from_tiktoken(
            ranks,
            &[("<|end|>", 2)],
            &LoadOptions::new().max_work(exact)
        )
        .unwrap()
        .size(),
        3
    );

    // anyOf groups side by side multiply: 4^6 combinations of objects.
    let group = |k: usize| {
        serde_json::json!({"anyOf": (0..4).map(|b| serde_json::json!({
            "type": "object",
            "properties": {format!("p{k}_{b}"): {"type": "string", "maxLength": 20}},
            "required": [format!("p{k}_{b}")]
        })).collect::<Vec<_>>()})
    };
    let schema = serde_json::json!({"allOf": (0..6).map(group).collect::<Vec<_>>()});
    let e = regex_from_json_schema(&schema, &Config::new().max_work(100_000)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e}");
    assert!(
        e.message().contains("JSON Schema") && e.message().contains("max_work / maxWork"),
        "{e}"
    );
    // A small schema fits a small budget; the same budget fails the same way twice.
    assert!(regex_from_json_schema(&group(0), &Config::new().max_work(100_000)).is_ok());
    let again = regex_from_json_schema(&schema, &Config::new().max_work(100_000)).unwrap_err();
    assert_eq!(again.message(), e.message());
}

/// Free-form values (`{}`) nest 32 levels deep in a lazy index, whose states exist only
/// once a text reaches them; their complete automaton has at least 2^32 states (one per
/// stack of open objects and arrays). Serializing such an index, or building one eagerly,
/// is refused before any determinization, naming the option; it used to determinize
/// for 8 s up to the DFA size limit.
#[test]
fn deep_free_form_values_are_refused_before_a_complete_build() {
    use logitmask::json_schema::Config;
    use logitmask::ErrorKind;

    let vocab = vocab();
    let lazy = IndexConfig::new().lazy(true);
    let index = Index::from_json_schema_str("{}", &vocab, &lazy, &Config::new()).unwrap();
    // The lazy index works...
    let open = index.next_state(index.initial_state(), 258).unwrap(); // `{"`
    assert!(!index
        .allowed_tokens(open.unwrap())
        .unwrap()
        .to_vec()
        .is_empty());
    // ...but has no complete automaton to serialize.
    let e = index.to_bytes().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooManyStates, "{e}");
    assert!(
        e.message().contains("2^32") && e.message().contains("anyValueDepth"),
        "{e}"
    );
    // The same depth built eagerly is refused at once too, with or without byte tokens.
    let deep = Config::new().any_value_depth(32);
    let e = Index::from_json_schema_str("{}", &vocab, &IndexConfig::new().lazy(false), &deep)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooManyStates, "{e}");
    // Values that reach no free-form container have no such floor.
    let closed = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}"#;
    let index = Index::from_json_schema_str(closed, &vocab, &lazy, &Config::new()).unwrap();
    let loaded = Index::from_bytes(&index.to_bytes().unwrap(), &vocab).unwrap();
    assert_eq!(loaded.state_count(), index.state_count());
    // A shallow free-form depth serializes from a lazy index as from an eager one.
    let shallow = Config::new().any_value_depth(3);
    let a = Index::from_json_schema_str("{}", &vocab, &lazy, &shallow).unwrap();
    let b = Index::from_json_schema_str("{}", &vocab, &IndexConfig::new().lazy(false), &shallow)
        .unwrap();
    assert_eq!(a.to_bytes().unwrap().len(), b.to_bytes().unwrap().len());
}

/// Derivatives are charged what they cost (8 budget steps a node, a step being about
/// 20 ns): free-form values 10 levels deep, whose complete automaton is under the 2^17
/// floor but far past what the limits hold, stop on the work budget (about a second)
/// rather than after 14 s at the DFA size limit. (Eager builds derive every class of every
/// state: only rows on demand share transitions between classes, `ExprDfa::complete`.)
#[test]
fn derivative_work_is_charged_what_it_costs() {
    use logitmask::json_schema::Config;
    use logitmask::ErrorKind;

    let depth10 = Config::new().any_value_depth(10);
    let e = Index::from_json_schema_str("{}", &vocab(), &IndexConfig::new().lazy(false), &depth10)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BuildTooExpensive, "{e}");
}

/// A declared property name beside undeclared properties makes "any key but these": a
/// trie as deep as the name. A 30,000-byte name overflowed the stack (a trap in wasm);
/// now names up to `MAX_NAME_BYTES` (512) compile in every target and longer ones are
/// an `UnsupportedSchema` error, on a thread with wasm's 1 MiB of stack.
#[test]
fn long_property_names_compile_or_are_refused() {
    use logitmask::json_schema::{regex_from_json_schema, Config};
    use logitmask::ErrorKind;
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let vocab = vocab();
            for (len, fits) in [(512, true), (513, false), (30_000, false), (300_000, false)] {
                let name = "é".repeat(len / 2) + &"a".repeat(len % 2);
                let schema = serde_json::json!({
                    "type": "object",
                    "properties": {name.clone(): {"type": "string"}, "b": {"type": "integer"}}
                });
                let text = schema.to_string();
                let lazy = Index::from_json_schema_str(
                    &text,
                    &vocab,
                    &IndexConfig::new().lazy(true),
                    &Config::new(),
                );
                let regex = regex_from_json_schema(&schema, &Config::new());
                for (what, e) in [("lazy", lazy.err()), ("regex", regex.err())] {
                    match e {
                        None => assert!(fits, "{what}: a {len}-byte name compiled"),
                        Some(e) if fits => panic!("{what}: a {len}-byte name: {e}"),
                        Some(e) => {
                            assert_eq!(e.kind(), ErrorKind::UnsupportedSchema, "{what}: {e}");
                            assert!(e.message().contains("property name of"), "{e}");
                        }
                    }
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
