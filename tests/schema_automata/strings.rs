//! Strings: patterns and formats intersected with lengths, anchors, counted repetitions,
//! large string enums.

use super::*;

#[test]
fn pattern_with_a_length_it_does_not_imply_is_an_intersection() {
    let schema = r#"{"type":"string","pattern":"^[a-z]+(-[a-z]+)*$","minLength":3,"maxLength":5}"#;
    check(
        schema,
        &Config::new(),
        &[r#""abc""#, r#""ab-cd""#, r#""a-b""#],
        &[r#""ab""#, r#""abcdef""#, r#""ab-""#, r#""AB-c""#],
    );
    // The regex text cannot say it, and says why.
    let e = regex_from_json_schema_str(schema, &Config::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
    assert!(e.message().contains("Index"), "{e:?}");
}

#[test]
fn several_patterns_and_formats_on_one_string_intersect() {
    let schema = r#"{"allOf":[{"type":"string","pattern":"^[0-9a-f-]+$"},{"format":"uuid"},{"pattern":"^0"}]}"#;
    check(
        schema,
        &Config::new(),
        &[r#""0b4e9a12-3c4d-4e5f-8a6b-7c8d9e0f1a2b""#],
        &[
            r#""1b4e9a12-3c4d-4e5f-8a6b-7c8d9e0f1a2b""#,
            r#""0B4E9A12-3C4D-4E5F-8A6B-7C8D9E0F1A2B""#,
            r#""0abc""#,
        ],
    );
}

#[test]
fn unknown_formats_are_annotations_unless_asked() {
    let schema = r#"{"type":"string","format":"color","maxLength":4}"#;
    check(
        schema,
        &Config::new(),
        &[r#""red""#, r#""""#],
        &[r#""green""#, "1"],
    );
    let e = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(false),
        &Config::new().unknown_formats_are_errors(true),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
    assert!(e.message().contains("color"), "{e:?}");
}

#[test]
fn large_counts_stay_small_in_lazy_mode() {
    let schema = r#"{"type":"array","items":{"type":"string","maxLength":32767},"maxItems":1000}"#;
    // Lazy only: an eager build would have to reach every count.
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        &Config::new(),
    )
    .unwrap();
    assert!(
        accepts(&index, r#"["a","bc"]"#) && accepts(&index, "[]") && !accepts(&index, r#"["a",1]"#)
    );
    let long = format!(r#"["{}"]"#, "x".repeat(2000));
    assert!(accepts(&index, &long));
    assert!(index.memory_usage() < 16 << 20, "{}", index.memory_usage());
}

#[test]
fn anchors_inside_groups_hold_at_the_ends() {
    let config = Config::new();
    check(
        r#"{"type":"string","pattern":"^(a$|b)"}"#,
        &config,
        &[r#""a""#, r#""b""#, r#""bcd""#],
        &[r#""ab""#, r#""c""#, r#""""#],
    );
    check(
        r#"{"type":"string","pattern":"^(\\/?((\\.{2})|([a-z0-9\\-]*))($|\\/))*$"}"#,
        &config,
        &[r#""""#, r#""a/b""#, r#""/a/../b/""#, r#""../x""#],
        &[r#""a//b.""#, r#""A""#, r#""a.b""#],
    );
}

#[test]
fn repetitions_beside_an_unanchored_end_count_to_their_minimum() {
    let config = Config::new().allow_additional_properties(true);
    // `[a-z]{2,255}` anywhere is two letters anywhere: no count to 255 in the automaton.
    check(
        r#"{"type":"string","pattern":"[a-z]{2,255}"}"#,
        &config,
        &[
            r#""ab""#,
            r#""1xab2""#,
            r#""a1bc""#,
            &format!(r#""{}""#, "q".repeat(300)),
        ],
        &[r#""a""#, r#""a1b2""#, r#""""#],
    );
    // Anchored at the start only: the count at the end is trimmed, not the one before.
    check(
        r#"{"type":"string","pattern":"^a{2}[0-9]{1,3}"}"#,
        &config,
        &[r#""aa1""#, r#""aa12345x""#],
        &[r#""a1""#, r#""aa""#, r#""xaa1""#],
    );
    // Keys: a pattern property over a long unanchored count.
    check(
        r#"{"type":"object","patternProperties":{"[A-Za-z0-9-_.:]{1,255}":{"type":"string"}}}"#,
        &config,
        &[r#"{"child-1":"x"}"#, r#"{"":1}"#, r#"{"--":"y"}"#],
        &[r#"{"a":1}"#, r#"{"x y":2}"#],
    );
}

/// An `enum` of many strings is one trie in the automaton: exactly its values (escaped
/// canonically), beside other values of the same `enum`, under `not` too.
#[test]
fn large_string_enums_are_tries() {
    let mut values: Vec<serde_json::Value> = (0..300)
        .map(|i| serde_json::Value::String(format!("v{i}-{}", i * 7919 % 1000)))
        .collect();
    values.extend([
        serde_json::json!("a\"b"),
        serde_json::json!("é\n"),
        serde_json::json!(""),
        serde_json::json!(12),
        serde_json::json!(null),
        serde_json::json!(true),
        serde_json::json!([1, "x"]),
    ]);
    let schema = serde_json::json!({"type": "object", "properties": {"k": {"enum": values}}, "required": ["k"]})
        .to_string();
    check(
        &schema,
        &Config::new(),
        &[
            r#"{"k":"v0-0"}"#,
            r#"{"k":"v299-781"}"#,
            r#"{"k":"a\"b"}"#,
            r#"{"k":"é\n"}"#,
            r#"{"k":""}"#,
            r#"{"k":12}"#,
            r#"{"k":null}"#,
            r#"{"k":true}"#,
            r#"{"k":[1,"x"]}"#,
        ],
        &[
            r#"{"k":"v0-"}"#,
            r#"{"k":"v0-01"}"#,
            r#"{"k":"v299-981"}"#,
            r#"{"k":"a"}"#,
            r#"{"k":false}"#,
            r#"{"k":13}"#,
        ],
    );
    // The complement: any string but those.
    let not = serde_json::json!({"type": "object", "properties": {"k": {"type": "string", "not": {"enum": values}}}, "required": ["k"]})
        .to_string();
    check(
        &not,
        &Config::new(),
        &[r#"{"k":"v0-"}"#, r#"{"k":"zz"}"#],
        &[r#"{"k":"v0-0"}"#, r#"{"k":"v17-623"}"#],
    );
}
