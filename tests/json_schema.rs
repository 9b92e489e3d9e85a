//! JSON Schema -> regex: each keyword with strings that must and must not match, the
//! errors (kind, keyword, location), the options, and property tests against a real
//! validator (the `jsonschema` crate, formats asserted):
//! * every string drawn at random from a schema's regex parses and validates (soundness);
//! * random instances of a schema that validate match its regex (completeness, in the
//!   target form).

use crate::common::{finite_numbers, Rng};

use std::time::Instant;

use logitmask::json_schema::{
    regex_from_json_schema, regex_from_json_schema_str, Config, PropertyOrder,
};
use logitmask::{Dfa, ErrorKind, Index, IndexConfig};
use proptest::prelude::*;

fn compile(schema: &str, config: &Config) -> Dfa {
    let re =
        regex_from_json_schema_str(schema, config).unwrap_or_else(|e| panic!("{schema}: {e:?}"));
    Dfa::new(&re).unwrap_or_else(|e| panic!("{schema}: {e:?}"))
}

/// Asserts which texts the schema's regex (default config) accepts.
#[track_caller]
fn check(schema: &str, yes: &[&str], no: &[&str]) {
    check_with(schema, &Config::new(), yes, no);
}

#[track_caller]
fn check_with(schema: &str, config: &Config, yes: &[&str], no: &[&str]) {
    let dfa = compile(schema, config);
    for y in yes {
        assert!(dfa.is_match(y.as_bytes()), "{schema} should match {y}");
    }
    for n in no {
        assert!(!dfa.is_match(n.as_bytes()), "{schema} should not match {n}");
    }
}

#[track_caller]
fn error(schema: &str, kind: ErrorKind, parts: &[&str]) {
    let e = regex_from_json_schema_str(schema, &Config::new()).expect_err(schema);
    assert_eq!(e.kind(), kind, "{schema}: {e}");
    for p in parts {
        assert!(
            e.message().contains(p),
            "{schema}: message {:?} should contain {p:?}",
            e.message()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Types, enum, const, any

#[test]
fn types() {
    check(
        r#"{"type":"null"}"#,
        &["null"],
        &["nul", "true", "0", "\"null\""],
    );
    check(
        r#"{"type":"boolean"}"#,
        &["true", "false"],
        &["null", "1", "True"],
    );
    check(
        r#"{"type":"integer"}"#,
        &["0", "-1", "123456789012345678901234567890"],
        &["01", "1.0", "1e3", "-", "+1", "--1"],
    );
    check(
        r#"{"type":"number"}"#,
        &["0", "-0", "1.5", "-0.25", "1e3", "1E+3", "2.5e-7", "123"],
        &["01", ".5", "1.", "1e", "+1", "0x1", "NaN", "Infinity"],
    );
    check(
        r#"{"type":"string"}"#,
        &[r#""""#, r#""abc""#, r#""é😀""#, r#""a\"b\\c\/\n\u00e9""#],
        &[r#""a"b""#, "\"a\nb\"", r#""\x""#, r#""\ud83d""#, "abc"],
    );
    check(
        r#"{"type":["string","null"]}"#,
        &["null", r#""x""#],
        &["1", "true"],
    );
    check(
        r#"{"type":"array"}"#,
        &["[]", "[1,\"a\",[null]]"],
        &["[1,]", "[", "{}"],
    );
    check(
        r#"{"type":"object"}"#,
        &["{}", r#"{"a":1,"b":{"c":[]}}"#],
        &["{1:2}", r#"{"a"}"#, "[]"],
    );
}

#[test]
fn empty_schema_and_true_are_any_value_with_bounded_nesting() {
    for s in [
        "{}",
        "true",
        r#"{"title":"anything","description":"really"}"#,
    ] {
        check(
            s,
            &[
                "null",
                "1",
                r#""s""#,
                "[[1]]",
                r#"{"a":{"b":2}}"#,
                r#"[{"a":1}]"#,
            ],
            &[
                "[[[1]]]",
                r#"[{"a":[]}]"#,
                r#"{"a":{"b":{"c":1}}}"#,
                "",
                "nul",
            ],
        );
    }
    check_with(
        "{}",
        &Config::new().any_value_depth(0),
        &["1", "null"],
        &["[]", "{}"],
    );
    check_with(
        "{}",
        &Config::new().any_value_depth(3),
        &["[[[1]]]"],
        &["[[[[1]]]]"],
    );
    error("false", ErrorKind::InvalidSchema, &["false"]);
}

#[test]
fn enum_and_const() {
    check(
        r#"{"enum":["a","b\"c",1,null,true]}"#,
        &[r#""a""#, r#""b\"c""#, "1", "1.0", "null", "true"],
        &[r#""b""#, "2", "false", r#""A""#],
    );
    check(r#"{"const":2.5}"#, &["2.5", "2.50"], &["2.6", "25", "2"]);
    check(
        r#"{"const":1e21}"#,
        &["1e+21", "1000000000000000000000"],
        &["1e21x"],
    );
    // Objects in any key order (up to 4 members), arrays in order.
    check(
        r#"{"const":{"a":1,"b":[true,null]}}"#,
        &[r#"{"a":1,"b":[true,null]}"#, r#"{"b":[true,null],"a":1}"#],
        &[r#"{"a":1}"#, r#"{"a":1,"b":[null,true]}"#],
    );
    // Other keywords filter the values.
    check(
        r#"{"type":"string","enum":["a",1,"bb"]}"#,
        &[r#""a""#, r#""bb""#],
        &["1"],
    );
    check(
        r#"{"enum":["a","bb","ccc"],"maxLength":2}"#,
        &[r#""a""#, r#""bb""#],
        &[r#""ccc""#],
    );
    check(r#"{"enum":[1,5,10],"minimum":4}"#, &["5", "10"], &["1"]);
    // Values of several types, each checked against its type's keywords only (the check
    // is compiled for the values' types; integral values also as numbers).
    check(
        r#"{"enum":[2.0,1.5,3.5,"ab","abc",{"x":1},{"x":1,"y":2},[1,2,3]],"minimum":2,"maximum":4,"maxLength":2,"minProperties":2,"maxItems":2}"#,
        &["2", "3.5", r#""ab""#, r#"{"x":1,"y":2}"#],
        &["1.5", r#""abc""#, r#"{"x":1}"#, "[1,2,3]"],
    );
    check(
        r#"{"enum":[4,6,"x"],"multipleOf":4}"#,
        &["4", r#""x""#],
        &["6"],
    );
    check(r#"{"type":"integer","enum":[1,1.5]}"#, &["1"], &["1.5"]);
    check(
        r#"{"enum":[[1,1],[1,2]],"uniqueItems":true}"#,
        &["[1,2]"],
        &["[1,1]"],
    );
    error(r#"{"enum":[]}"#, ErrorKind::InvalidSchema, &["no value"]);
    error(
        r#"{"type":"string","const":1}"#,
        ErrorKind::InvalidSchema,
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// Objects

#[test]
fn properties_in_schema_order_with_optional_ones_absent() {
    let s = r#"{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"},"c":{"type":"boolean"}},"required":["a"]}"#;
    check(
        s,
        &[
            r#"{"a":"x"}"#,
            r#"{"b":1,"a":"x"}"#,
            r#"{"a":"x","c":true}"#,
            r#"{"b":1,"a":"x","c":false}"#,
        ],
        &[
            "{}",
            r#"{"b":1}"#,
            r#"{"a":"x","b":1}"#,
            r#"{"a":1}"#,
            r#"{"a":"x",}"#,
            r#"{,"a":"x"}"#,
            r#"{"a":"x","d":1}"#,
            r#"{"a":"x","a":"x"}"#,
        ],
    );
    // All optional: the empty object and any subset in order.
    check(
        r#"{"properties":{"x":{"type":"null"},"y":{"type":"null"}}}"#,
        &[
            "{}",
            r#"{"x":null}"#,
            r#"{"y":null}"#,
            r#"{"x":null,"y":null}"#,
        ],
        &[r#"{"y":null,"x":null}"#, r#"{,}"#, r#"{"x":null,}"#],
    );
    // Names only in `required` come after `properties`, with free-form values.
    check(
        r#"{"properties":{"a":{"type":"null"}},"required":["z"]}"#,
        &[r#"{"z":1}"#, r#"{"a":null,"z":[1]}"#],
        &[r#"{"a":null}"#],
    );
    // Keys are escaped as JSON.
    check(
        r#"{"properties":{"q\"k\n":{"const":1}},"required":["q\"k\n"]}"#,
        &[r#"{"q\"k\n":1}"#],
        &[],
    );
}

#[test]
fn property_order_any() {
    let s = r#"{"properties":{"a":{"type":"integer"},"b":{"type":"boolean"},"c":{"type":"null"}},"required":["a","b"]}"#;
    let any = Config::new().property_order(PropertyOrder::Any);
    check_with(
        s,
        &any,
        &[
            r#"{"b":true,"a":1}"#,
            r#"{"c":null,"a":1,"b":false}"#,
            r#"{"a":1,"b":true}"#,
        ],
        &[r#"{"a":1}"#, r#"{"a":1,"a":1,"b":true}"#],
    );
    let many = format!(
        r#"{{"properties":{{{}}}}}"#,
        (0..7)
            .map(|i| format!(r#""p{i}":{{"type":"null"}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let e = regex_from_json_schema_str(&many, &any).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
}

#[test]
fn additional_properties() {
    let p = r#""properties":{"a":{"type":"integer"}}"#;
    // Absent: none by default, any with allow_additional_properties (JSON Schema's rule).
    check(&format!("{{{p}}}"), &[r#"{"a":1}"#], &[r#"{"a":1,"b":2}"#]);
    check_with(
        &format!("{{{p}}}"),
        &Config::new().allow_additional_properties(true),
        &[r#"{"a":1,"b":2}"#, r#"{"b":[1],"c":{}}"#, r#"{"ab":"x"}"#],
        // A declared name never passes as an undeclared one (with another value).
        &[r#"{"a":"x"}"#, r#"{"a":1,"a":"x"}"#, r#"{"b":2,"a":1}"#],
    );
    check(
        &format!(r#"{{{p},"additionalProperties":false}}"#),
        &["{}", r#"{"a":1}"#],
        &[r#"{"a":1,"b":2}"#],
    );
    check(
        &format!(r#"{{{p},"additionalProperties":true}}"#),
        &[r#"{"a":1,"b":"x"}"#, r#"{"": 1}"#.replace(' ', "").as_str()],
        &[r#"{"a":"x"}"#],
    );
    check(
        &format!(r#"{{{p},"additionalProperties":{{"type":"string"}}}}"#),
        &[r#"{"a":1,"b":"x","c":"y"}"#, r#"{"b":"x"}"#],
        &[r#"{"a":1,"b":2}"#, r#"{"a":"x"}"#],
    );
    // Only additionalProperties: a map.
    check(
        r#"{"type":"object","additionalProperties":{"type":"integer"}}"#,
        &["{}", r#"{"x":1,"y\n":2}"#],
        &[r#"{"x":"1"}"#],
    );
}

#[test]
fn min_and_max_properties() {
    check(
        r#"{"type":"object","minProperties":1,"maxProperties":2}"#,
        &[r#"{"a":1}"#, r#"{"a":1,"b":2}"#],
        &["{}", r#"{"a":1,"b":2,"c":3}"#],
    );
    check(
        r#"{"properties":{"a":{},"b":{},"c":{}},"minProperties":2}"#,
        &[
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"c":2}"#,
            r#"{"a":1,"b":2,"c":3}"#,
        ],
        &[r#"{"a":1}"#, "{}"],
    );
    check(
        r#"{"properties":{"a":{},"b":{}},"maxProperties":1}"#,
        &["{}", r#"{"b":1}"#],
        &[r#"{"a":1,"b":2}"#],
    );
}

#[test]
fn twenty_optional_properties_stay_small_and_fast() {
    let props: Vec<String> = (0..20)
        .map(|i| format!(r#""field_{i}":{{"type":"string"}}"#))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}}}}"#,
        props.join(",")
    );
    let t = Instant::now();
    let re = regex_from_json_schema_str(&schema, &Config::new()).unwrap();
    assert!(re.len() < 20_000, "regex of {} bytes", re.len());
    let index = Index::from_json_schema_str(
        &schema,
        &crate::common::o200k(),
        &IndexConfig::new().lazy(false),
        &Config::new(),
    )
    .unwrap();
    let elapsed = t.elapsed();
    println!(
        "20 optional properties: regex {} bytes, {} states, {:?}",
        re.len(),
        index.state_count(),
        elapsed
    );
    assert!(elapsed.as_secs() < 20, "index built in {elapsed:?}");
    let dfa = Dfa::new(&re).unwrap();
    assert!(dfa.is_match(br#"{"field_3":"x","field_19":"y"}"#));
    assert!(!dfa.is_match(br#"{"field_19":"y","field_3":"x"}"#));
}

#[test]
fn many_properties_compile() {
    // 300 properties, some required: regex syntax limits group nesting, the regex must
    // stay within it and stay small.
    let props: Vec<String> = (0..300)
        .map(|i| format!(r#""p{i}":{{"type":"integer"}}"#))
        .collect();
    let schema = format!(
        r#"{{"properties":{{{}}},"required":["p7","p150"]}}"#,
        props.join(",")
    );
    // Compact: with the default whitespace the complete DFA of 300 properties is over the
    // work budget (an index builds it lazily; see schema_automata).
    let re = regex_from_json_schema_str(&schema, &Config::new().whitespace(None)).unwrap();
    assert!(re.len() < 400_000, "{} bytes", re.len());
    let dfa = Dfa::new(&re).unwrap();
    assert!(dfa.is_match(br#"{"p7":1,"p150":2}"#));
    assert!(dfa.is_match(br#"{"p0":0,"p7":1,"p8":1,"p150":2,"p299":3}"#));
    assert!(!dfa.is_match(br#"{"p7":1}"#));
    assert!(!dfa.is_match(br#"{"p150":2,"p7":1}"#));
    assert!(!dfa.is_match(br#"{"p7":1,,"p150":2}"#));
}

// ---------------------------------------------------------------------------------------
// Arrays

#[test]
fn items_and_prefix_items() {
    check(
        r#"{"type":"array","items":{"type":"integer"}}"#,
        &["[]", "[1]", "[1,2,3]"],
        &["[1,\"a\"]", "[,]", "[1,]"],
    );
    check(r#"{"type":"array","items":false}"#, &["[]"], &["[1]"]);
    check(
        r#"{"prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}"#,
        &["[]", "[1]", r#"[1,"a"]"#],
        &[r#"["a"]"#, r#"[1,"a",2]"#],
    );
    check(
        r#"{"prefixItems":[{"type":"integer"}],"items":{"type":"boolean"}}"#,
        &["[1,true,false]"],
        &["[true]", "[1,2]"],
    );
    // draft-04 tuple form.
    check(
        r#"{"items":[{"type":"integer"}],"additionalItems":{"type":"null"}}"#,
        &["[1,null,null]", "[]"],
        &["[1,1]"],
    );
    check(
        r#"{"type":"array","minItems":2,"maxItems":3}"#,
        &["[1,2]", "[1,2,3]"],
        &["[1]", "[1,2,3,4]"],
    );
    check(
        r#"{"prefixItems":[{"const":1},{"const":2}],"minItems":1,"maxItems":1}"#,
        &["[1]"],
        &["[]", "[1,2]"],
    );
}

#[test]
fn contains() {
    let s = r#"{"type":"array","items":{"type":"integer"},"contains":{"const":7}}"#;
    check(
        s,
        &["[7]", "[1,7]", "[7,1,2]", "[1,2,7,3]"],
        &["[]", "[1,2]"],
    );
    check(
        r#"{"contains":{"const":7},"minItems":3,"maxItems":4}"#,
        &["[7,0,0]", "[0,0,0,7]"],
        &["[7,0]", "[0,0,0]", "[7,0,0,0,0]"],
    );
    check(
        r#"{"contains":{"const":7},"minContains":2}"#,
        &["[7,7]", "[1,7,2,7,3]"],
        &["[7]", "[7,1]"],
    );
    check(
        r#"{"contains":{"const":7},"minContains":0}"#,
        &["[]", "[1]"],
        &[],
    );
    error(
        r#"{"contains":{"const":7},"maxContains":1}"#,
        ErrorKind::UnsupportedSchema,
        &["\"maxContains\"", "at #"],
    );
    // Found by tests/robustness.rs: a huge minItems with contains once wrote one
    // alternative per position until memory ran out (24 GB).
    error(
        r#"{"contains":{},"minItems":1e+300}"#,
        ErrorKind::UnsupportedSchema,
        &["\"contains\"", "minItems above 256"],
    );
    error(
        r#"{"contains":{},"minItems":257}"#,
        ErrorKind::UnsupportedSchema,
        &["minItems above 256"],
    );
    check(
        r#"{"contains":{"const":7},"minItems":3}"#,
        &["[7,1,2]", "[1,2,7]", "[1,7,2,3]"],
        &["[7]", "[7,1]", "[1,2,3]"],
    );
}

#[test]
fn unique_items() {
    error(
        r#"{"type":"array","uniqueItems":true}"#,
        ErrorKind::UnsupportedSchema,
        &["\"uniqueItems\"", "at #"],
    );
    check(
        r#"{"type":"array","uniqueItems":true,"maxItems":1}"#,
        &["[]", "[1]"],
        &["[1,1]"],
    );
    check(
        r#"{"type":"array","uniqueItems":false,"maxItems":2}"#,
        &["[1,1]"],
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// Strings

#[test]
fn lengths_count_characters_and_escapes_count_one() {
    let s = r#"{"type":"string","minLength":2,"maxLength":3}"#;
    check(
        s,
        &[
            r#""ab""#,
            r#""abc""#,
            r#""é😀""#,
            r#""a\n""#,
            r#""\u00e9\"\\""#,
        ],
        &[r#""a""#, r#""abcd""#, r#""😀""#, r#""\n""#],
    );
}

#[test]
fn patterns() {
    // Unanchored: anywhere in the string.
    check(
        r#"{"type":"string","pattern":"ab+"}"#,
        &[r#""ab""#, r#""xxabbby""#],
        &[r#""a""#, r#""ba""#],
    );
    check(
        r#"{"type":"string","pattern":"^[a-z]+$"}"#,
        &[r#""abc""#],
        &[r#""abc1""#, r#""""#],
    );
    check(
        r#"{"type":"string","pattern":"^a|b$"}"#,
        &[r#""ax""#, r#""xb""#],
        &[r#""xa""#],
    );
    // ECMA classes: \d is ASCII only; . is no line terminator; JSON escapes inside.
    check(
        r#"{"pattern":"^\\d\\w\\s.$"}"#,
        &[r#""1a x""#, r#""1_\tx""#, r#""1a\n\"""#],
        &[r#""١a x""#, r#""1a \n""#],
    );
    check(
        r#"{"pattern":"^[\"\\\\]+$"}"#,
        &[r#""\"\\""#],
        &[r#""a""#, "\"\"\""],
    );
    check(r#"{"pattern":"^\\p{Lu}{2}$"}"#, &[r#""ÉA""#], &[r#""éA""#]);
    // With lengths, where the pattern has one variable part.
    check(
        r#"{"pattern":"^[A-Z][a-z]*$","maxLength":4,"minLength":2}"#,
        &[r#""Ab""#, r#""Abcd""#],
        &[r#""A""#, r#""Abcde""#],
    );
    check(
        r#"{"pattern":"^[0-9]{5}$","maxLength":5}"#,
        &[r#""12345""#],
        &[r#""1234""#],
    );
    error(
        r#"{"pattern":"^(a|bc)+$","maxLength":4}"#,
        ErrorKind::UnsupportedSchema,
        &["\"pattern\""],
    );
    error(
        r#"{"pattern":"(a)\\1"}"#,
        ErrorKind::UnsupportedSchema,
        &["\"pattern\"", "backreference"],
    );
    error(
        r#"{"pattern":"a(?=b)"}"#,
        ErrorKind::UnsupportedSchema,
        &["lookaround"],
    );
    error(
        r#"{"pattern":"a\\bb"}"#,
        ErrorKind::UnsupportedSchema,
        &["word boundary"],
    );
    error(
        r#"{"properties":{"x":{"pattern":"a(?!b)"}}}"#,
        ErrorKind::UnsupportedSchema,
        &["at #/properties/x"],
    );
    error(
        r#"{"pattern":"["}"#,
        ErrorKind::UnsupportedSchema,
        &["\"pattern\""],
    );
    // Two patterns cannot be intersected.
    error(
        r#"{"allOf":[{"pattern":"a"},{"pattern":"b"}]}"#,
        ErrorKind::UnsupportedSchema,
        &["\"pattern\""],
    );
}

#[test]
fn formats() {
    let f = |name: &str, yes: &[&str], no: &[&str]| {
        let q = |s: &&str| format!("\"{s}\"");
        let yes: Vec<String> = yes.iter().map(q).collect();
        let no: Vec<String> = no.iter().map(q).collect();
        check(
            &format!(r#"{{"type":"string","format":"{name}"}}"#),
            &yes.iter().map(String::as_str).collect::<Vec<_>>(),
            &no.iter().map(String::as_str).collect::<Vec<_>>(),
        );
    };
    f(
        "date",
        &["2024-02-29", "2000-02-29", "1999-12-31"],
        &[
            "2023-02-29",
            "1900-02-29",
            "2024-04-31",
            "2024-13-01",
            "24-01-01",
        ],
    );
    f(
        "time",
        &["23:59:59Z", "00:00:00.5+05:30", "23:59:60Z", "12:00:00z"],
        &["24:00:00Z", "12:00:00", "12:60:00Z", "22:59:60Z"],
    );
    f(
        "date-time",
        &["2024-01-31T12:30:00Z", "2024-01-31t12:30:00.123-08:00"],
        &["2024-01-31 12:30:00Z", "2024-01-32T12:30:00Z"],
    );
    f(
        "duration",
        &["P1Y2M3DT4H5M6S", "PT1M", "P2W", "P1D"],
        &["P", "PT", "P1Y2D", "P1W1D", "1D"],
    );
    f(
        "uuid",
        &[
            "123e4567-e89b-12d3-a456-426614174000",
            "123E4567-E89B-12D3-A456-426614174000",
        ],
        &[
            "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-42661417400g",
        ],
    );
    f(
        "email",
        &[
            "joe.bloggs@example.com",
            "a@b",
            r#"\"joe bloggs\"@example.com"#,
            "x@[127.0.0.1]",
            "x@[IPv6:::1]",
        ],
        &[
            "joe..bloggs@example.com",
            ".a@b.c",
            "a@-b.com",
            "@example.com",
            "a@b_c.com",
        ],
    );
    f(
        "uri",
        &[
            "https://example.com/a?b=c#d",
            "urn:isbn:0451450523",
            "mailto:a@b.c",
            "http://[::1]:80/",
        ],
        &["//example.com", "example.com", "http://a b", "1http://x"],
    );
    f(
        "ipv4",
        &["127.0.0.1", "255.255.255.255", "0.0.0.0"],
        &["256.0.0.1", "01.0.0.1", "1.2.3", "1.2.3.4.5"],
    );
    f(
        "ipv6",
        &[
            "::1",
            "::",
            "2001:db8::8a2e:370:7334",
            "::ffff:192.168.0.1",
            "1:2:3:4:5:6:7:8",
        ],
        &["1:2:3:4:5:6:7:8:9", "12345::", "1::2::3", ":1"],
    );
    f(
        "hostname",
        &["example.com", "a", "a-b.c-d.e", "a--b.com"],
        &["-a.com", "a-.com", "a..b", ".a", "a_b.com", "xn--abc.com"],
    );
    f(
        "iri",
        &[
            "http://example.com/caf\u{e9}?q=\u{3b1}#x",
            "urn:isbn:0451450523",
            "mailto:j@ex.org",
        ],
        &["not-an-iri", "http://a b", "//no-scheme", "caf\u{e9}"],
    );
    f(
        "iri-reference",
        &["/caf\u{e9}/x?y", "../a", "#frag", "", "http://\u{e9}.org"],
        &["a b", "%zz"],
    );
    f(
        "uri-template",
        &[
            "http://example.com/{user}/items{?page,limit}",
            "{+path:6}/x",
            "{/list*}",
            "plain",
            "",
        ],
        &["{", "{}", "{a b}", "{x:0}", "{x:10000}", "a}b"],
    );
    f(
        "byte",
        &["", "TWFu", "TWE=", "TQ=="],
        &["TWF", "T===", "TW=u", "TWFu="],
    );
    f(
        "idn-hostname",
        &["example.com", "a-b.c"],
        &["-a.com", "a..b"],
    );
    f("idn-email", &["joe@example.com"], &["joe", "@example.com"]);
    // Regexes: a subset that both ECMA-262 and Python's re accept (groups nest 3 deep).
    // The texts are JSON string bodies: `\\d` is the regex `\d`.
    f(
        "regex",
        &[
            "",
            "^[a-z0-9_-]{3,16}$",
            r"\\d+(?:\\.\\d+)?",
            "(a|b)*c",
            r#"[^\\\\\"]+"#,
            "x{2,}?",
            "((a))",
            r"\\bword\\b",
            "a|",
        ],
        &[
            "*",
            r"\\",
            "(a",
            "a)",
            "[z-a]",
            "x{3,1}",
            "^*",
            "a**",
            "[]",
            "(((((a)))))",
            "(?<n>a)",
            r"\\e",
        ],
    );
    // An unknown format is an annotation (JSON Schema 2020-12), unless asked otherwise.
    check(
        r#"{"type":"string","format":"path"}"#,
        &[r#""anything""#],
        &["1"],
    );
    let e = regex_from_json_schema_str(
        r#"{"type":"string","format":"path"}"#,
        &Config::new().unknown_formats_are_errors(true),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
    assert!(
        e.message().contains("\"format\"") && e.message().contains("path"),
        "{e:?}"
    );
    // A format only constrains strings: elsewhere it is no error.
    check(r#"{"type":"integer","format":"int32"}"#, &["1"], &[]);
}

// ---------------------------------------------------------------------------------------
// Numbers

#[test]
fn integer_ranges_are_exact() {
    check(
        r#"{"type":"integer","minimum":-15,"maximum":1234}"#,
        &["-15", "-1", "0", "9", "10", "999", "1234"],
        &["-16", "1235", "-0", "9999"],
    );
    check(
        r#"{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}"#,
        &["1", "9"],
        &["0", "10"],
    );
    check(
        r#"{"type":"integer","minimum":2.5,"maximum":4.5}"#,
        &["3", "4"],
        &["2", "5"],
    );
    check(
        r#"{"type":"integer","minimum":-10.5,"maximum":-2.5}"#,
        &["-10", "-3"],
        &["-11", "-2"],
    );
    check(
        r#"{"type":"integer","minimum":99}"#,
        &["99", "100", "123456789012345678901234567890"],
        &["98", "-100"],
    );
    check(
        r#"{"type":"integer","maximum":-1}"#,
        &["-1", "-123456789012345678901"],
        &["0", "1"],
    );
    check(
        r#"{"type":"integer","minimum":1e30}"#,
        &[
            "1000000000000000000000000000000",
            "10000000000000000000000000000000",
        ],
        &["999999999999999999999999999999"],
    );
    // draft-04 boolean exclusivity.
    check(
        r#"{"type":"integer","minimum":5,"exclusiveMinimum":true,"maximum":7,"exclusiveMaximum":true}"#,
        &["6"],
        &["5", "7"],
    );
    error(
        r#"{"type":"integer","minimum":5,"maximum":4}"#,
        ErrorKind::InvalidSchema,
        &[],
    );
}

#[test]
fn number_ranges_are_exact() {
    check(
        r#"{"type":"number","minimum":1.5,"exclusiveMaximum":3.25}"#,
        &["1.5", "1.50", "1.51", "2", "3.2", "3.2499999"],
        &["1.49", "3.25", "3.250", "4", "-2", "1e0"],
    );
    check(
        r#"{"type":"number","exclusiveMinimum":-1,"maximum":0}"#,
        &["-0.5", "0", "-0.999", "0.0"],
        &["-1", "-1.0", "0.1", "-0"],
    );
    check(
        r#"{"type":"number","minimum":0}"#,
        &["0", "1e-7", "1e+21", "3.5"],
        &["-1", "-1e-7"],
    );
    check(
        r#"{"type":"number","maximum":0.001}"#,
        &["0.001", "-5", "1e-7", "-1e+21"],
        &["0.0011", "1e+21"],
    );
    check(
        r#"{"type":"number","minimum":0,"maximum":1e-9}"#,
        &["0", "0.000000001"],
        &["0.0000000011"],
    );
}

#[test]
fn multiple_of() {
    check(
        r#"{"type":"number","multipleOf":0.01}"#,
        &["1", "1.5", "1.25", "-3.10"],
        &["1.255", "0.001"],
    );
    check(
        r#"{"type":"number","multipleOf":0.01,"minimum":0,"maximum":1}"#,
        &["0", "0.5", "0.99", "1"],
        &["1.01", "0.005"],
    );
    check(
        r#"{"type":"integer","multipleOf":5}"#,
        &["0", "5", "-10", "1235"],
        &["1", "12", "-3"],
    );
    check(
        r#"{"type":"integer","multipleOf":4,"minimum":0}"#,
        &["0", "4", "100", "1236"],
        &["-4", "2", "1234"],
    );
    check(
        r#"{"type":"integer","multipleOf":3,"minimum":1,"maximum":10}"#,
        &["3", "6", "9"],
        &["1", "12", "0"],
    );
    check(
        r#"{"type":"integer","multipleOf":0.5}"#,
        &["1", "-7"],
        &["1.5"],
    );
    error(
        r#"{"type":"integer","multipleOf":3}"#,
        ErrorKind::UnsupportedSchema,
        &["\"multipleOf\"", "at #"],
    );
}

// ---------------------------------------------------------------------------------------
// Composition

#[test]
fn any_of_one_of_all_of() {
    check(
        r#"{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]}"#,
        &["1", r#""a""#],
        &[r#""ab""#, "null"],
    );
    // Siblings apply to every branch.
    check(
        r#"{"type":"integer","anyOf":[{"minimum":10},{"maximum":-10}]}"#,
        &["10", "-10"],
        &["0"],
    );
    // oneOf as anyOf where the branches exclude each other.
    check(
        r#"{"oneOf":[{"type":"integer"},{"type":"string"}]}"#,
        &["1", r#""a""#],
        &["null"],
    );
    check(
        r#"{"type":"object","oneOf":[{"properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind"]},{"properties":{"kind":{"const":"b"}},"required":["kind"]}]}"#,
        &[r#"{"kind":"a","x":1}"#, r#"{"kind":"b"}"#],
        &[r#"{"kind":"c"}"#],
    );
    error(
        r#"{"oneOf":[{"type":"integer"},{"type":"number"}]}"#,
        ErrorKind::UnsupportedSchema,
        &["\"oneOf\"", "at #"],
    );
    // allOf merges, never concatenates.
    check(
        r#"{"allOf":[{"properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]},{"properties":{"a":{"minimum":0}}}]}"#,
        &[r#"{"a":1,"b":"x"}"#],
        &[r#"{"a":-1,"b":"x"}"#, r#"{"a":1}"#, r#"{"a":1}{"b":"x"}"#],
    );
    check(
        r#"{"allOf":[{"type":"string","maxLength":3},{"minLength":2}]}"#,
        &[r#""ab""#, r#""abc""#],
        &[r#""a""#, r#""abcd""#],
    );
    check(
        r#"{"allOf":[{"type":["integer","string"]},{"type":["string","null"]}]}"#,
        &[r#""a""#],
        &["1", "null"],
    );
}

#[test]
fn refs_and_recursion() {
    check(
        r##"{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"a":{"$ref":"#/$defs/pos"}},"required":["a"]}"##,
        &[r#"{"a":1}"#],
        &[r#"{"a":0}"#],
    );
    check(
        r##"{"definitions":{"s":{"type":"string"}},"items":{"$ref":"#/definitions/s"},"type":"array"}"##,
        &[r#"["a"]"#],
        &["[1]"],
    );
    check(
        r##"{"$defs":{"x":{"$anchor":"it","type":"null"}},"$ref":"#it"}"##,
        &["null"],
        &["1"],
    );
    // A linked list: recursion to max_recursion_depth, then the optional `next` is absent.
    let list = r##"{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}},"required":["v"]}"##;
    check(
        list,
        &[
            r#"{"v":1}"#,
            r#"{"v":1,"next":{"v":2,"next":{"v":3,"next":{"v":4}}}}"#,
        ],
        &[r#"{"v":1,"next":{"v":2,"next":{"v":3,"next":{"v":4,"next":{"v":5}}}}}"#],
    );
    check_with(
        list,
        &Config::new().max_recursion_depth(1),
        &[r#"{"v":1,"next":{"v":2}}"#],
        &[r#"{"v":1,"next":{"v":2,"next":{"v":3}}}"#],
    );
    error(
        r#"{"$ref":"http://example.com/x.json"}"#,
        ErrorKind::UnsupportedSchema,
        &["\"$ref\"", "not in this document"],
    );
    error(
        r##"{"$ref":"#/$defs/missing"}"##,
        ErrorKind::InvalidSchema,
        &["$ref"],
    );
    // Draft-07: siblings of $ref are ignored.
    check(
        r##"{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"i":{"type":"integer"}},"$ref":"#/definitions/i","maximum":0}"##,
        &["5"],
        &["a"],
    );
}

#[test]
fn unsupported_keywords_are_errors_naming_keyword_and_location() {
    error(
        r#"{"properties":{"a":{"not":{"multipleOf":3}}}}"#,
        ErrorKind::UnsupportedSchema,
        &["unsupported keyword \"not\" at #/properties/a"],
    );
    error(
        r#"{"if":{"multipleOf":3},"then":{"minimum":1}}"#,
        ErrorKind::UnsupportedSchema,
        &["\"if\"", "at #", "complement"],
    );
    error(
        r#"{"items":{"patternProperties":{"^a":{}}}}"#,
        ErrorKind::UnsupportedSchema,
        &["\"patternProperties\" at #/items"],
    );
    // Supported now (a presence condition): "a" only with "b".
    check(
        r#"{"dependentRequired":{"a":["b"]}}"#,
        &["{}"],
        &[r#"{"a":1}"#],
    );
    error(
        r#"{"propertyNames":{"maxLength":3}}"#,
        ErrorKind::UnsupportedSchema,
        &["\"propertyNames\""],
    );
    error(
        r##"{"$dynamicRef":"#x"}"##,
        ErrorKind::UnsupportedSchema,
        &["\"$dynamicRef\""],
    );
    // Malformed.
    error(
        r#"{"type":"str"}"#,
        ErrorKind::InvalidSchema,
        &["\"type\"", "str"],
    );
    error(
        r#"{"minLength":-1}"#,
        ErrorKind::InvalidSchema,
        &["\"minLength\""],
    );
    error(
        r#"{"properties":{"a":3}}"#,
        ErrorKind::InvalidSchema,
        &["#/properties/a"],
    );
    error("[", ErrorKind::InvalidSchema, &["not valid JSON"]);
    // `not` that only excludes types is supported.
    check(
        r#"{"not":{"type":["string","object","array"]}}"#,
        &["1", "null", "true"],
        &[r#""a""#, "[]"],
    );
    check(
        r#"{"type":"number","not":{"type":"integer"}}"#,
        &["1.5"],
        &["1", "2"],
    );
    // Annotations and unknown keywords are ignored.
    check(
        r#"{"type":"integer","title":"t","description":"d","examples":[1],"default":1,"x-custom":{"not":{}}}"#,
        &["1"],
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// Options, limits, API

#[test]
fn whitespace_option() {
    let ws = Config::new().whitespace(Some(r"[ \n]{0,2}"));
    let s = r#"{"properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]}"#;
    check_with(
        s,
        &ws,
        &[
            r#"{"a":[1,2]}"#,
            "{ \"a\" : [ 1 ,\n2 ] }",
            "{\n \"a\": []\n}",
        ],
        &["{   \"a\":[]}", " {\"a\":[]}"],
    );
    // The default: nothing, one space, or a newline and up to 12 spaces or 4 tabs.
    check(
        s,
        &[
            r#"{"a":[1,2]}"#,
            r#"{ "a": [1, 2] }"#,
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}",
            "{\n\t\"a\": []\n}",
        ],
        &[
            "{  \"a\":[]}",
            "{\n\n\"a\":[]}",
            "{\r\n\"a\":[]}",
            "{\n             \"a\":[]}",
            "{\n\t\t\t\t\t\"a\":[]}",
        ],
    );
    assert_eq!(
        Config::new().get_whitespace(),
        Some(logitmask::json_schema::DEFAULT_WHITESPACE)
    );
    // Compact: None or "".
    for compact in [
        Config::new().whitespace(None),
        Config::new().whitespace(Some("")),
    ] {
        check_with(
            s,
            &compact,
            &[r#"{"a":[1,2]}"#],
            &[r#"{ "a":[1,2]}"#, "{\"a\":[1, 2]}"],
        );
    }
    let e = regex_from_json_schema_str("{}", &Config::new().whitespace(Some(r"\s*"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = regex_from_json_schema_str("{}", &Config::new().whitespace(Some(r"[ x]"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn size_limits_are_errors() {
    let e = regex_from_json_schema_str(
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        &Config::new().max_regex_size(10),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
    // A schema whose DFA exceeds the index limits fails with an error, quickly.
    let t = Instant::now();
    let e = Index::from_json_schema_str(
        r#"{"type":"array","items":{"type":"string","format":"email"}}"#,
        &crate::common::o200k(),
        &IndexConfig::new().lazy(false).dfa_size_limit(Some(50_000)),
        &Config::new(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DfaTooLarge, "{e:?}");
    // A large count is data in the automaton, not an unrolled regex: a lazy index
    // builds at once and holds only the states its walks reach...
    let schema = r#"{"type":"array","items":{"type":"string","maxLength":5000}}"#;
    let lazy = Index::from_json_schema_str(
        schema,
        &crate::common::o200k(),
        &IndexConfig::new().lazy(true),
        &Config::new(),
    )
    .unwrap();
    let first = lazy.allowed_tokens(lazy.initial_state()).unwrap();
    assert!(!first.is_empty());
    assert!(lazy.state_count() < 100, "{}", lazy.state_count());
    // ... while an eager one must build every state and meets max_states.
    let e = Index::from_json_schema_str(
        schema,
        &crate::common::o200k(),
        &IndexConfig::new().lazy(false).max_states(2_000),
        &Config::new(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooManyStates, "{e:?}");
    assert!(t.elapsed().as_secs() < 30);
}

#[test]
fn value_and_text_apis_agree() {
    let text = r#"{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer"}},"required":["a","b"]}"#;
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    let by_text = Dfa::new(&regex_from_json_schema_str(text, &Config::new()).unwrap()).unwrap();
    let by_value = Dfa::new(&regex_from_json_schema(&value, &Config::new()).unwrap()).unwrap();
    // Text keeps schema order; a serde_json::Value (without preserve_order) is sorted.
    assert!(by_text.is_match(br#"{"b":1,"a":2}"#));
    assert!(by_value.is_match(br#"{"a":2,"b":1}"#));
}

// ---------------------------------------------------------------------------------------
// Property tests against a real validator

/// Schemas covering the supported keywords, for the property tests.
const SCHEMAS: &[&str] = &[
    r#"{"type":"string","format":"regex"}"#,
    r#"{"type":"string","format":"iri"}"#,
    r#"{"type":"string","format":"iri-reference"}"#,
    r#"{"type":"string","format":"uri-template"}"#,
    r#"{"type":"string","format":"idn-hostname"}"#,
    r#"{"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0,"maximum":130},"tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3},"ok":{"type":"boolean"}},"required":["name"]}"#,
    r#"{"type":"number","minimum":-2.5,"exclusiveMaximum":1000.75}"#,
    r#"{"type":"integer","exclusiveMinimum":-1000,"maximum":99999999999}"#,
    r#"{"type":"number","multipleOf":0.25,"minimum":-3,"maximum":3}"#,
    r#"{"type":"string","minLength":1,"maxLength":4}"#,
    r#"{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"}"#,
    r#"{"type":"string","pattern":"x\\d"}"#,
    r#"{"anyOf":[{"type":"null"},{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":"boolean"},"minItems":1}]}"#,
    r#"{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"contains":{"const":5},"maxItems":4}"#,
    r#"{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string","maxLength":2},"maxProperties":3}"#,
    r##"{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["v"]}},"$ref":"#/$defs/node"}"##,
    r#"{"oneOf":[{"type":"object","properties":{"t":{"const":"x"},"n":{"type":"number"}},"required":["t","n"]},{"type":"object","properties":{"t":{"const":"y"}},"required":["t"]}]}"#,
    r#"{"type":"string","format":"date-time"}"#,
    r#"{"type":"string","format":"email"}"#,
    r#"{"type":"string","format":"ipv6"}"#,
    r#"{"type":"string","format":"uri"}"#,
    r#"{"type":"string","format":"hostname"}"#,
    r#"{"type":"string","format":"duration"}"#,
    r#"{"enum":[{"a":1,"b":[1,2]},"x",null,2.5]}"#,
    "{}",
];

/// A random full match of the DFA: a walk that stops at final states at random and,
/// past a length budget, heads for the nearest final state.
fn sample(dfa: &Dfa, dist: &[u32], seed: u64, budget: usize) -> Vec<u8> {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut s = dfa.start();
    let mut out = Vec::new();
    loop {
        if dfa.is_final(s) && (out.len() >= budget || next() % 4 == 0) {
            return out;
        }
        let moves: Vec<(u8, u32)> = (0..=255u8)
            .map(|b| (b, dfa.step(s, b)))
            .filter(|&(_, t)| t != 0)
            .collect();
        if moves.is_empty() {
            assert!(dfa.is_final(s));
            return out;
        }
        let (b, t) = if out.len() >= budget {
            *moves
                .iter()
                .min_by_key(|&&(_, t)| dist[t as usize])
                .unwrap()
        } else {
            // Prefer ASCII now and then, so that text stays readable and varied.
            let ascii: Vec<&(u8, u32)> = moves.iter().filter(|(b, _)| *b < 0x80).collect();
            if !ascii.is_empty() && next() % 3 != 0 {
                *ascii[(next() % ascii.len() as u64) as usize]
            } else {
                moves[(next() % moves.len() as u64) as usize]
            }
        };
        out.push(b);
        s = t;
    }
}

/// Shortest distance (in bytes) from each state to a final state.
fn distances(dfa: &Dfa) -> Vec<u32> {
    let n = dfa.state_count();
    let mut dist = vec![u32::MAX; n];
    for (s, d) in dist.iter_mut().enumerate().skip(1) {
        if dfa.is_final(s as u32) {
            *d = 0;
        }
    }
    loop {
        let mut changed = false;
        for s in 1..n {
            for b in 0..=255u8 {
                let t = dfa.step(s as u32, b) as usize;
                if t != 0 && dist[t] != u32::MAX && dist[t] + 1 < dist[s] {
                    dist[s] = dist[t] + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            return dist;
        }
    }
}

struct Prepared {
    dfa: Dfa,
    dist: Vec<u32>,
    validator: jsonschema::Validator,
    schema: serde_json::Value,
}

fn prepared() -> &'static Vec<Prepared> {
    static P: std::sync::OnceLock<Vec<Prepared>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|s| {
                let dfa = compile(s, &Config::new());
                let dist = distances(&dfa);
                let schema: serde_json::Value = serde_json::from_str(s).unwrap();
                let validator = jsonschema::options()
                    .should_validate_formats(true)
                    .build(&schema)
                    .unwrap();
                Prepared {
                    dfa,
                    dist,
                    validator,
                    schema,
                }
            })
            .collect()
    })
}

proptest! {
    // 256 cases each by default; PROPTEST_CASES=n for a longer hunt.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    /// Soundness: whatever the regex allows parses as JSON and validates.
    #[test]
    fn regex_strings_validate(which in 0..SCHEMAS.len(), seed in any::<u64>(), budget in 0usize..120) {
        let p = &prepared()[which];
        let bytes = sample(&p.dfa, &p.dist, seed, budget);
        let text = String::from_utf8(bytes).expect("UTF-8");
        let value: serde_json::Value = serde_json::from_str(&finite_numbers(&text))
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {text}", SCHEMAS[which]));
        prop_assert!(p.validator.is_valid(&value), "{}: {} does not validate", SCHEMAS[which], text);
    }

    /// Completeness: random instances that validate match, written in the target form.
    #[test]
    fn valid_instances_match(which in 0..SCHEMAS.len(), seed in any::<u64>()) {
        let p = &prepared()[which];
        let mut g = Gen(Rng::new(seed));
        for _ in 0..20 {
            let text = g.instance(&p.schema, &p.schema, 0);
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
            if p.validator.is_valid(&value) {
                prop_assert!(p.dfa.is_match(text.as_bytes()), "{}: valid {} does not match", SCHEMAS[which], text);
            }
        }
    }
}

/// Random instances of a schema, as text in the target form (declared properties in
/// schema order). Biased towards valid ones; the validator decides.
struct Gen(Rng);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below_u64(n.max(1))
    }

    fn instance(
        &mut self,
        s: &serde_json::Value,
        root: &serde_json::Value,
        depth: usize,
    ) -> String {
        use serde_json::Value as V;
        let obj = match s {
            V::Object(o) => o,
            _ => return "null".into(),
        };
        if let Some(V::String(r)) = obj.get("$ref") {
            let target = root.pointer(r.trim_start_matches('#')).unwrap();
            if depth > 3 {
                return "null".into();
            }
            return self.instance(target, root, depth + 1);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(V::Array(bs)) = obj.get(key) {
                let b = &bs[self.below(bs.len() as u64) as usize];
                return self.instance(b, root, depth);
            }
        }
        if let Some(V::Array(vals)) = obj.get("enum") {
            let v = &vals[self.below(vals.len() as u64) as usize];
            return serde_json::to_string(v).unwrap();
        }
        if let Some(v) = obj.get("const") {
            return serde_json::to_string(v).unwrap();
        }
        let num = |k: &str| obj.get(k).and_then(V::as_f64);
        let ty = obj.get("type").and_then(V::as_str).unwrap_or(
            [
                "null", "boolean", "integer", "number", "string", "array", "object",
            ][self.below(7) as usize],
        );
        match ty {
            "null" => "null".into(),
            "boolean" => {
                if self.below(2) == 0 {
                    "true".into()
                } else {
                    "false".into()
                }
            }
            "integer" | "number" => {
                let lo = num("minimum")
                    .or(num("exclusiveMinimum"))
                    .unwrap_or(-1e6)
                    .max(-1e12);
                let hi = num("maximum")
                    .or(num("exclusiveMaximum"))
                    .unwrap_or(1e6)
                    .min(1e12);
                let x = lo + (hi - lo) * (self.below(1_000_001) as f64 / 1e6);
                if ty == "integer" {
                    format!("{}", x.round() as i64)
                } else if let Some(m) = num("multipleOf") {
                    let k = (x / m).round();
                    let v = k * m;
                    // JSON.stringify of a multiple computed exactly in decimal.
                    let d = m.to_string().split('.').nth(1).map_or(0, str::len);
                    let t = format!("{v:.d$}");
                    let t = if t.contains('.') {
                        t.trim_end_matches('0').trim_end_matches('.').to_string()
                    } else {
                        t
                    };
                    if t == "-0" {
                        "0".into()
                    } else {
                        t
                    }
                } else {
                    let v = (x * 1000.0).round() / 1000.0;
                    let t = format!("{v}");
                    if t == "-0" {
                        "0".into()
                    } else {
                        t
                    }
                }
            }
            "string" => {
                if let Some(V::String(f)) = obj.get("format") {
                    let samples: &[&str] = match f.as_str() {
                        "date-time" => &["2024-02-29T23:59:59Z", "1999-01-01T00:00:00.5+05:30"],
                        "email" => &["a.b@example.com", "x@[127.0.0.1]"],
                        "ipv6" => &["::1", "fe80::1:2", "1:2:3:4:5:6:7:8"],
                        "uri" => &["https://example.com/x?y#z", "urn:a:b"],
                        "hostname" => &["example.com", "a-b.c"],
                        "duration" => &["P1Y2M", "PT3S", "P4W"],
                        _ => &["x"],
                    };
                    return format!("\"{}\"", samples[self.below(samples.len() as u64) as usize]);
                }
                if let Some(V::String(p)) = obj.get("pattern") {
                    let samples: &[&str] = match p.as_str() {
                        "^[A-Z]{2}-[0-9]{3}$" => &["AB-123", "ZZ-000"],
                        _ => &["x1", "abx9", "é x0 \""],
                    };
                    return serde_json::to_string(
                        samples[self.below(samples.len() as u64) as usize],
                    )
                    .unwrap();
                }
                let max = num("maxLength").unwrap_or(6.0) as u64;
                let min = num("minLength").unwrap_or(0.0) as u64;
                let n = min + self.below(max - min + 1);
                let alphabet = ['a', 'Z', '0', ' ', 'é', '😀', '"', '\\', '\n', '/'];
                let s: String = (0..n)
                    .map(|_| alphabet[self.below(alphabet.len() as u64) as usize])
                    .collect();
                serde_json::to_string(&s).unwrap()
            }
            "array" => {
                let max = num("maxItems").unwrap_or(3.0) as u64;
                let min = num("minItems").unwrap_or(0.0) as u64;
                let n = min + self.below(max.min(4).max(min) - min + 1);
                let prefix = obj.get("prefixItems").and_then(V::as_array);
                let items: Vec<String> = (0..n as usize)
                    .map(|i| match prefix.and_then(|p| p.get(i)) {
                        Some(p) => self.instance(p, root, depth + 1),
                        None => match obj.get("items") {
                            Some(it) => self.instance(it, root, depth + 1),
                            None => "1".into(),
                        },
                    })
                    .collect();
                let mut items = items;
                if let Some(c) = obj.get("contains") {
                    if !items.is_empty() {
                        let i = self.below(items.len() as u64) as usize;
                        items[i] = self.instance(c, root, depth + 1);
                    }
                }
                format!("[{}]", items.join(","))
            }
            _ => {
                let props = obj.get("properties").and_then(V::as_object);
                let required: Vec<&str> = obj
                    .get("required")
                    .and_then(V::as_array)
                    .map(|r| r.iter().filter_map(V::as_str).collect())
                    .unwrap_or_default();
                let mut members = Vec::new();
                // serde_json's map is sorted; the schema order is the text order, which
                // the SCHEMAS above keep sorted-compatible where it matters: walk the
                // schema text order instead.
                if let Some(props) = props {
                    for (k, v) in ordered(s, props) {
                        if required.contains(&k.as_str()) || self.below(2) == 0 {
                            members.push(format!(
                                "{}:{}",
                                serde_json::to_string(&k).unwrap(),
                                self.instance(v, root, depth + 1)
                            ));
                        }
                    }
                }
                if let Some(extra @ V::Object(_)) = obj.get("additionalProperties") {
                    for i in 0..self.below(3) {
                        members.push(format!(
                            "\"x{i}\":{}",
                            self.instance(extra, root, depth + 1)
                        ));
                    }
                }
                format!("{{{}}}", members.join(","))
            }
        }
    }
}

/// The properties of `schema` in the order its text in [`SCHEMAS`] declares them.
fn ordered<'a>(
    schema: &serde_json::Value,
    props: &'a serde_json::Map<String, serde_json::Value>,
) -> Vec<(String, &'a serde_json::Value)> {
    // Find the schema text that produced this value and order keys by first position.
    let text = SCHEMAS.iter().find(|t| {
        let v: serde_json::Value = serde_json::from_str(t).unwrap();
        contains_value(&v, schema)
    });
    let mut keys: Vec<(usize, String)> = props
        .keys()
        .map(|k| {
            let pos = text
                .and_then(|t| t.find(&format!("\"{k}\":")))
                .unwrap_or(usize::MAX);
            (pos, k.clone())
        })
        .collect();
    keys.sort();
    keys.into_iter()
        .map(|(_, k)| (k.clone(), &props[&k]))
        .collect()
}

fn contains_value(hay: &serde_json::Value, needle: &serde_json::Value) -> bool {
    if hay == needle {
        return true;
    }
    match hay {
        serde_json::Value::Object(o) => o.values().any(|v| contains_value(v, needle)),
        serde_json::Value::Array(a) => a.iter().any(|v| contains_value(v, needle)),
        _ => false,
    }
}
