//! JSON Schemas compiled to automaton expressions: what the regex text could not say
//! (intersections of patterns, formats and lengths; negated key presence; large counts),
//! checked on every text against the `jsonschema`-free oracle of the schema's meaning:
//! accepted texts are exactly the ones listed as valid.

use std::sync::Arc;

use logitmask::json_schema::{regex_from_json_schema_str, Config, PropertyOrder};
use logitmask::{ErrorKind, Index, IndexConfig, Vocabulary};

/// Every single byte as a token (ids 0..=255) and EOS 256: walks are byte by byte.
pub(crate) fn bytes_vocab() -> Arc<Vocabulary> {
    let tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).chain([None]).collect();
    Arc::new(Vocabulary::new(tokens, &[256]).unwrap())
}

/// Whether `index` (over single bytes) accepts `text` whole.
pub(crate) fn accepts(index: &Index, text: &str) -> bool {
    let mut s = index.initial_state();
    for &b in text.as_bytes() {
        match index.next_state(s, b as u32).unwrap() {
            Some(t) => s = t,
            None => return false,
        }
    }
    index.is_final(s).unwrap()
}

/// The error of a lazy index over `schema` (it must fail).
fn refusal(schema: &str, config: &Config) -> logitmask::Error {
    Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap_err()
}

fn check(schema: &str, config: &Config, valid: &[&str], invalid: &[&str]) -> Index {
    let vocab = bytes_vocab();
    for lazy in [true, false] {
        let index =
            Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(lazy), config)
                .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
        for t in valid {
            assert!(
                accepts(&index, t),
                "{schema} (lazy {lazy}) refuses valid {t}"
            );
        }
        for t in invalid {
            assert!(
                !accepts(&index, t),
                "{schema} (lazy {lazy}) accepts invalid {t}"
            );
        }
    }
    Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(true), config).unwrap()
}

/// [`check`] for a lazy index only: intersections of objects whose undeclared
/// properties hold free-form values have far more states than an eager build takes.
fn check_lazy(schema: &str, config: &Config, valid: &[&str], invalid: &[&str]) -> Index {
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap_or_else(|e| panic!("{schema}: {e:?}"));
    for t in valid {
        assert!(accepts(&index, t), "{schema} refuses valid {t}");
    }
    for t in invalid {
        assert!(!accepts(&index, t), "{schema} accepts invalid {t}");
    }
    index
}

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
fn not_required_forbids_the_key_exactly() {
    let config = Config::new().allow_additional_properties(true);
    let props = r#""properties":{"a":{"type":"integer"},"b":{"type":"integer"}}"#;
    // Not both.
    let schema = format!(r#"{{"type":"object",{props},"not":{{"required":["a","b"]}}}}"#);
    check(
        &schema,
        &config,
        &[r#"{"a":1}"#, r#"{"b":2}"#, "{}", r#"{"c":3}"#],
        &[r#"{"a":1,"b":2}"#],
    );
    // Neither (not anyOf = allOf of nots), also as an undeclared key.
    let schema = r#"{"type":"object","not":{"anyOf":[{"required":["x"]},{"required":["y"]}]}}"#;
    check(
        schema,
        &config,
        &["{}", r#"{"z":1}"#],
        &[r#"{"x":1}"#, r#"{"y":{}}"#, r#"{"z":1,"x":2}"#],
    );
    // not not = the schema itself; not of a type.
    let schema = r#"{"not":{"not":{"type":"object","required":["k"]}}}"#;
    check(schema, &config, &[r#"{"k":null}"#], &["{}", "1", r#""k""#]);
    let schema = r#"{"not":{"type":["object","array","string","boolean","null"]}}"#;
    check(
        schema,
        &config,
        &["1", "-2.5"],
        &["{}", "[]", r#""1""#, "true", "null"],
    );
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
fn pattern_properties_split_undeclared_names_exactly() {
    let config = Config::new().allow_additional_properties(true);
    // Names matching ^x- take integers, the others strings; a declared name that
    // matches takes both its own schema and the pattern's.
    let schema = r#"{"type":"object","properties":{"x-id":{"minimum":10}},
        "patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#;
    check(
        schema,
        &config,
        &[
            r#"{"x-id":12}"#,
            r#"{"x-a":1}"#,
            r#"{"b":"s"}"#,
            r#"{"x-id":10,"x-b":-1,"c":""}"#,
            "{}",
        ],
        &[
            r#"{"x-id":9}"#,
            r#"{"x-id":"s"}"#,
            r#"{"x-a":"s"}"#,
            r#"{"b":1}"#,
            r#"{"x-a":1.5}"#,
        ],
    );
    // Overlapping patterns: a name matching both takes both schemas.
    let schema = r#"{"type":"object","patternProperties":{"^a":{"type":"integer"},"b$":{"minimum":5}},"additionalProperties":false}"#;
    check(
        schema,
        &config,
        &[r#"{"a":1}"#, r#"{"ab":7}"#, r#"{"b":5.5}"#, "{}"],
        &[r#"{"ab":3}"#, r#"{"ab":7.5}"#, r#"{"c":1}"#, r#"{"b":1}"#],
    );
    // Many patterns, mostly disjoint: only the sets that overlap are cells.
    let schema = r#"{"type":"object","additionalProperties":false,"patternProperties":{
        "^a":{"type":"integer"},"b$":{"type":"integer","minimum":5},"^x-":{"type":"string"},
        "^[0-9]+$":{"type":"boolean"},"^c":{"type":"null"},"^d":{"type":"array"},
        "e":{"enum":[1,"e"]}}}"#;
    check(
        schema,
        &Config::new(),
        &[
            r#"{"ab":5}"#,
            r#"{"a":1,"x-1":"s","12":true}"#,
            r#"{"c":null,"d":[]}"#,
            r#"{"ae":1}"#,
            r#"{"xe":"e"}"#,
        ],
        &[
            r#"{"ab":4}"#,
            r#"{"12":1}"#,
            r#"{"zz":1}"#,
            r#"{"cb":null}"#,
            r#"{"ae":"e"}"#,
            r#"{"de":[]}"#,
        ],
    );
    assert!(random_texts_validate(schema, &Config::new(), 200) > 50);
}

#[test]
fn pattern_properties_of_both_sides_of_all_of_apply_to_every_name() {
    let config = Config::new().allow_additional_properties(true);
    let schema = r#"{"type":"object","allOf":[
        {"patternProperties":{"^a":{"type":"integer"}}},
        {"patternProperties":{"b$":{"minimum":5},"^a":{"maximum":9}}}]}"#;
    check(
        schema,
        &config,
        &[r#"{"ab":5}"#, r#"{"a":1}"#, r#"{"b":7}"#, r#"{"c":"x"}"#],
        &[r#"{"ab":4}"#, r#"{"a":"s"}"#, r#"{"b":1}"#, r#"{"a":10}"#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // Declared names of one side take the other side's patterns (and nothing else: its
    // undeclared names are free).
    let schema = r#"{"type":"object","allOf":[
        {"properties":{"x":{"type":"string"}},"patternProperties":{"^a":{"type":"integer"}}},
        {"properties":{"y":{"type":"boolean"},"ay":{}}}]}"#;
    check(
        schema,
        &config,
        &[
            r#"{"x":"s","y":true,"a1":1}"#,
            r#"{"z":null}"#,
            r#"{"ay":3}"#,
        ],
        &[r#"{"y":1}"#, r#"{"a1":"s"}"#, r#"{"ay":"s"}"#, r#"{"x":1}"#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // A side's additionalProperties beside the other side's patterns: refused.
    let e = refusal(
        r#"{"allOf":[{"additionalProperties":false,"properties":{"x":{}}},{"patternProperties":{"^a":{}}}]}"#,
        &config,
    );
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema, "{e:?}");
}

#[test]
fn property_names_filter_every_key() {
    let config = Config::new().allow_additional_properties(true);
    let schema = r#"{"type":"object","propertyNames":{"pattern":"^[a-z]+$","maxLength":3},
        "properties":{"ab":{"type":"integer"},"TOOLONG":{}},"required":["ab"]}"#;
    check(
        schema,
        &config,
        &[r#"{"ab":1}"#, r#"{"ab":1,"xyz":null}"#],
        &[
            r#"{"ab":1,"abcd":1}"#,
            r#"{"ab":1,"A":1}"#,
            r#"{"ab":1,"TOOLONG":1}"#,
            r#"{"ab":"s"}"#,
            r#"{"ab":1,"":1}"#,
        ],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    check(
        r#"{"propertyNames":{"enum":["a","b"]}}"#,
        &config,
        &[r#"{"a":1,"b":2}"#, "{}", "1", r#""c""#],
        &[r#"{"c":1}"#, r#"{"a":1,"ab":2}"#],
    );
    check(
        r#"{"propertyNames":{"maxLength":2},"patternProperties":{"^x":{"type":"integer"}}}"#,
        &config,
        &[r#"{"x1":1}"#, r#"{"y":"s"}"#],
        &[r#"{"x12":1}"#, r#"{"x1":"s"}"#, r#"{"abc":1}"#],
    );
    // A name filter that no string passes: only the empty object.
    check(
        r#"{"type":"object","propertyNames":{"type":"integer"}}"#,
        &config,
        &["{}"],
        &[r#"{"a":1}"#],
    );
}

#[test]
fn dependencies_are_presence_conditions() {
    let config = Config::new().allow_additional_properties(true);
    let props = r#""properties":{"card":{"type":"string"},"billing":{"type":"string"},"cvv":{"type":"integer"}}"#;
    // dependentRequired (2019-09+) and draft-04..07 dependencies with a list.
    for deps in [
        r#""dependentRequired":{"card":["billing"]}"#,
        r#""dependencies":{"card":["billing"]}"#,
    ] {
        let schema = format!(r#"{{"type":"object",{props},{deps}}}"#);
        check(
            &schema,
            &config,
            &["{}", r#"{"billing":"x"}"#, r#"{"card":"1","billing":"x"}"#],
            &[r#"{"card":"1"}"#, r#"{"card":"1","cvv":1}"#],
        );
    }
    // A schema dependency: with "card", "cvv" is required and "billing" absent.
    for deps in [
        r#""dependentSchemas":{"card":{"required":["cvv"],"not":{"required":["billing"]}}}"#,
        r#""dependencies":{"card":{"required":["cvv"],"not":{"required":["billing"]}}}"#,
    ] {
        let schema = format!(r#"{{"type":"object",{props},{deps}}}"#);
        check(
            &schema,
            &config,
            &[
                "{}",
                r#"{"billing":"x","cvv":1}"#,
                r#"{"card":"1","cvv":2}"#,
            ],
            &[r#"{"card":"1"}"#, r#"{"card":"1","billing":"x","cvv":1}"#],
        );
    }
}

/// Random texts that a lazy index over single bytes lets a guide write for `schema`,
/// each validated by the `jsonschema` crate: none may be invalid. Returns how many were
/// written (the walks lean towards structure and the end, so that they finish).
pub(crate) fn random_texts_validate(schema: &str, config: &Config, walks: usize) -> usize {
    use logitmask::test_support::Rng;
    use logitmask::Guide;
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&value).unwrap();
    let vocab = bytes_vocab();
    let index = Arc::new(
        Index::from_json_schema_str(schema, &vocab, &IndexConfig::new().lazy(true), config)
            .unwrap(),
    );
    let mut rng = Rng::new(schema.len() as u64);
    let mut written = 0;
    'walks: for _ in 0..walks {
        let mut guide = Guide::new(index.clone());
        let mut text = Vec::new();
        for step in 0..400 {
            if guide.can_finish() && rng.probability(0.7) {
                break;
            }
            let allowed: Vec<u32> = guide
                .allowed_tokens()
                .unwrap()
                .iter()
                .filter(|&t| t < 256)
                .collect();
            if allowed.is_empty() {
                assert!(guide.can_finish(), "{schema}: stuck after {text:?}");
                break;
            }
            let structural: Vec<u32> = allowed
                .iter()
                .copied()
                .filter(|&b| b"\"{}[],:0123456789abxyz".contains(&(b as u8)))
                .collect();
            let pool = if !structural.is_empty() && (step > 30 || rng.probability(0.7)) {
                &structural
            } else {
                &allowed
            };
            let b = pool[rng.below(pool.len())];
            guide.advance(b).unwrap();
            text.push(b as u8);
        }
        if !guide.can_finish() {
            continue 'walks;
        }
        let text = String::from_utf8(text).expect("whole characters at the end");
        let instance: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            // Valid JSON beyond f64 (`3E061598`): serde_json cannot hold it.
            Err(e) if e.to_string().contains("number out of range") => continue,
            Err(e) => panic!("{schema}: not JSON: {text}: {e}"),
        };
        assert!(
            validator.is_valid(&instance),
            "{schema}: wrote an invalid text: {text}"
        );
        written += 1;
    }
    written
}

#[test]
fn one_of_with_overlapping_branches_takes_each_minus_the_others() {
    let config = Config::new().allow_additional_properties(true);
    // Distinct required keys: exactly one of them.
    let schema =
        r#"{"oneOf":[{"type":"object","required":["a"]},{"type":"object","required":["b"]}]}"#;
    check(
        schema,
        &config,
        &[r#"{"a":1}"#, r#"{"b":2}"#, r#"{"a":1,"c":3}"#],
        &[
            r#"{"a":1,"b":2}"#,
            r#"{"b":2,"a":1}"#,
            "{}",
            r#"{"c":1}"#,
            "1",
        ],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // A discriminator property that only one branch requires: the other takes the
    // values outside its enum, in every spelling.
    let schema = r#"{"type":"object","oneOf":[
        {"properties":{"kind":{"enum":["x"]},"v":{"type":"string"}}},
        {"properties":{"kind":{"enum":["y","z"]}},"required":["kind"]}]}"#;
    check(
        schema,
        &config,
        &[
            r#"{"kind":"x","v":"s"}"#,
            "{}",
            r#"{"v":"s"}"#,
            r#"{"kind":"y"}"#,
            r#"{"kind":"z","v":1}"#,
            r#"{"kind":"y","v":"s"}"#,
        ],
        &[r#"{"kind":"q"}"#, r#"{"kind":"x","v":1}"#, r#"{"v":1}"#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // Branches whose complements are exact and leave nothing: no value validates.
    let e = refusal(
        r#"{"oneOf":[{"type":"object"},{"type":"object","required":[]}]}"#,
        &config,
    );
    assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{e:?}");
    // Patterns' complements are exact: each branch minus the other.
    check(
        r#"{"oneOf":[{"type":"string","pattern":"a"},{"type":"string","pattern":"b"}]}"#,
        &config,
        &[r#""a""#, r#""xbx""#],
        &[r#""ab""#, r#""c""#, "1"],
    );
    // Unanchored literal patterns, as a status field writes them: once one has matched,
    // the others' branches are empty (`ExprSet::meets_own_complement` says so at once).
    // Control characters in their canonical escapes are strings like any other.
    let schema = r#"{"type":"string","oneOf":[{"pattern":"NEW"},{"pattern":"ON_AB"},
        {"pattern":"BA"},{"pattern":"xy"}]}"#;
    check(
        schema,
        &config,
        &[
            r#""NEW""#,
            r#""ON_AB""#,
            r#""zBAz""#,
            r#""NEWz\nx""#,
            r#""\txy\u001f""#,
        ],
        &[
            r#""NEWBA""#,
            r#""ON_ABA""#,
            r#""NEW\nON_AB""#,
            r#""xyBA""#,
            r#""zz""#,
        ],
    );
    assert!(random_texts_validate(schema, &config, 300) > 100);
    // Complements known only in part that leave nothing: a refusal naming oneOf.
    let e = refusal(
        r#"{"oneOf":[{"type":"integer","multipleOf":2},{"type":"integer","multipleOf":3}]}"#,
        &config,
    );
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema, "{e:?}");
    assert!(e.message().contains("oneOf"), "{e:?}");
}

#[test]
fn not_of_properties_and_enums_is_exact() {
    let config = Config::new().allow_additional_properties(true);
    // Failing `properties`: the property present with a value its schema refuses.
    let schema = r#"{"type":"object","not":{"properties":{"a":{"type":"string"}}}}"#;
    check(
        schema,
        &config,
        &[r#"{"a":1}"#, r#"{"a":null,"b":"x"}"#],
        &["{}", r#"{"a":"x"}"#, r#"{"b":1}"#],
    );
    // An excluded string is excluded in every spelling; booleans and null one by one.
    let schema = r#"{"type":["string","boolean","null"],"not":{"enum":["ab",true,null]}}"#;
    check(
        schema,
        &config,
        &[r#""abc""#, r#""a""#, r#""""#, "false"],
        &[
            r#""ab""#,
            r#""\u0061b""#,
            r#""a\u0062""#,
            r#""\u0061\u0062""#,
            "true",
            "null",
        ],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    let schema =
        r#"{"type":"object","not":{"properties":{"k":{"const":"v\"/"}}},"required":["k"]}"#;
    check(
        schema,
        &config,
        &[r#"{"k":"v"}"#, r#"{"k":1}"#],
        &[
            r#"{"k":"v\"/"}"#,
            r#"{"k":"v\u0022\/"}"#,
            r#"{"k":"\u0076\"\u002F"}"#,
        ],
    );
}

#[test]
fn not_of_patterns_lengths_bounds_items_and_numbers_is_exact() {
    let config = Config::new().allow_additional_properties(true);
    // A pattern's complement, over canonically spelled strings.
    let schema = r#"{"type":"string","minLength":1,"not":{"pattern":"^[.,*\\-\\s]+$"}}"#;
    check(
        schema,
        &config,
        &[r#""a""#, r#""a.""#, r#"".a""#, r#""-x-""#],
        &[r#""""#, r#"".""#, r#""..""#, r#""-. ""#, r#""\u002e""#, "1"],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // Excluded numbers in every spelling: the open intervals between them.
    let schema = r#"{"type":"integer","minimum":1024,"maximum":65535,"not":{"enum":[6379,6380]}}"#;
    check(
        schema,
        &config,
        &["1024", "6378", "6381", "65535"],
        &["6379", "6380", "1023", "65536"],
    );
    let schema = r#"{"type":"number","not":{"enum":[1,2.5,"x"]}}"#;
    check(
        schema,
        &config,
        &["0", "1.5", "3", "2.4", "-1"],
        &["1", "1.0", "2.5", "25e-1", "10E-1", "0.1e1", r#""x""#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // Keywords that fail only on their own type.
    check(
        r#"{"not":{"minLength":3}}"#,
        &config,
        &[r#""ab""#, r#""""#],
        &[r#""abc""#, "1", "null", "[]"],
    );
    check(
        r#"{"not":{"maximum":5,"exclusiveMinimum":1}}"#,
        &config,
        &["6", "5.5", "1", "0", "-3"],
        &["5", "4", "1.5", r#""x""#, "{}"],
    );
    check(
        r#"{"not":{"maxItems":1}}"#,
        &config,
        &["[1,2]", "[[],[],[]]"],
        &["[]", "[1]", r#""ab""#],
    );
    // `items` fails on an item failing it; `contains` on no item holding it.
    let schema = r#"{"not":{"items":{"type":"string"}}}"#;
    check(
        schema,
        &config,
        &["[1]", r#"["a",1]"#, "[null]"],
        &[r#"["a"]"#, "[]", "1", r#""a""#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    check(
        r#"{"type":"array","not":{"contains":{"const":1}}}"#,
        &config,
        &["[]", "[2]", r#"["1"]"#],
        &["[1]", "[2,1]", "[1.0]"],
    );
    // An unknown format is an annotation: every string holds it, none fails it.
    check(
        r#"{"type":"string","oneOf":[{"format":"made-up"},{"minLength":3}]}"#,
        &config,
        &[r#""ab""#, r#""""#],
        &[r#""abc""#, "1"],
    );
    // Several `contains` in one array: an item for each.
    let schema =
        r#"{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"type":"string"}}]}"#;
    check(
        schema,
        &config,
        &[r#"[1,"a"]"#, r#"["a",3,1]"#, r#"[1,"1"]"#],
        &["[1]", r#"["a"]"#, "[]", "[1,2]"],
    );
    // Few random walks meet both items before they stop.
    assert!(random_texts_validate(schema, &config, 400) > 5);
    // A dependency fails where its property is present and its names are not.
    check(
        r#"{"type":"object","not":{"dependentRequired":{"a":["b"]}}}"#,
        &config,
        &[r#"{"a":1}"#, r#"{"a":1,"c":2}"#],
        &[r#"{"a":1,"b":2}"#, "{}", r#"{"b":1}"#],
    );
    // Before 2019-09 a `$ref`'s siblings are ignored, in a complement too.
    check(
        r##"{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"not":{"$ref":"#/definitions/s","minLength":3}}"##,
        &config,
        &["1", "null", "[]"],
        &[r#""a""#, r#""abcd""#],
    );
}

#[test]
fn not_of_what_cannot_be_negated_takes_the_part_that_can() {
    let config = Config::new().allow_additional_properties(true);
    // `additionalProperties: false` has no complement JSON Schema can state: failing
    // it (an undeclared key) is said internally, with canonical spellings of the key
    // only; failing `type` or `required` is kept.
    let schema = r#"{"not":{"type":"object","required":["a"],"additionalProperties":false,"properties":{"a":{}}}}"#;
    check(
        schema,
        &config,
        &["1", r#""s""#, "{}", r#"{"b":1}"#, r#"{"a":1,"b":2}"#],
        // The second is valid (`b`, spelled with an escape, is undeclared), refused with
        // the part left out (spellings other than the canonical one).
        &[r#"{"a":1}"#, r#"{"a":1,"\u0062":2}"#],
    );
    assert!(random_texts_validate(schema, &config, 200) > 50);
    // Nothing of the complement can be stated: a refusal naming `not`.
    let e = refusal(r#"{"not":{"multipleOf":3}}"#, &config);
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema, "{e:?}");
    assert!(e.message().contains("\"not\""), "{e:?}");
}

#[test]
fn if_then_else_is_a_union_of_intersections() {
    let config = Config::new().allow_additional_properties(true);
    let schema = r#"{"type":"object",
        "if":{"properties":{"kind":{"const":"a"}},"required":["kind"]},
        "then":{"required":["x"]},"else":{"required":["y"]}}"#;
    check(
        schema,
        &config,
        &[
            r#"{"kind":"a","x":1}"#,
            r#"{"kind":"b","y":1}"#,
            r#"{"y":1}"#,
            r#"{"kind":1,"y":2}"#,
        ],
        &[
            r#"{"kind":"a","y":1}"#,
            r#"{"kind":"b","x":1}"#,
            "{}",
            r#"{"kind":"\u0061","y":1}"#,
        ],
    );
    assert!(random_texts_validate(schema, &config, 300) > 50);
    // `then` or `else` alone; `if` that holds for other types vacuously.
    check(
        r#"{"if":{"type":"string"},"then":{"minLength":2}}"#,
        &config,
        &[r#""ab""#, "1", "null"],
        &[r#""a""#, r#""""#],
    );
    check(
        r#"{"if":{"minimum":10},"else":{"type":"integer","minimum":0,"multipleOf":2}}"#,
        &config,
        &["10", "11", "4", "0", "10.5", r#""s""#],
        &["3", "9", "2.5", "-2"],
    );
    // Its complement, under `not`: `if` and not `then`, or neither `if` nor `else`.
    check(
        r#"{"not":{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"null"}}}"#,
        &config,
        &[r#""a""#, "1", "[]", "{}"],
        &[r#""ab""#, "null"],
    );
    // Before draft-07, `if`/`then`/`else` are not keywords.
    check(
        r#"{"$schema":"http://json-schema.org/draft-06/schema#","if":{"type":"string"},"then":{"minLength":2}}"#,
        &config,
        &[r#""a""#],
        &[],
    );
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

/// `{"p0": .., "p1": .., ...}` with `n` properties, `p{i}` an integer when `i` is even and
/// a boolean when odd, the ones in `required` required, and `extra` as JSON text.
fn many_properties(n: usize, required: &[usize], extra: &str) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| {
            let t = if i % 2 == 0 { "integer" } else { "boolean" };
            format!(r#""p{i}":{{"type":"{t}"}}"#)
        })
        .collect();
    let req: Vec<String> = required.iter().map(|i| format!(r#""p{i}""#)).collect();
    format!(
        r#"{{"type":"object","properties":{{{}}},"required":[{}]{extra}}}"#,
        props.join(","),
        req.join(",")
    )
}

#[test]
fn any_order_objects_of_any_size_unfold_only_what_texts_write() {
    let any = Config::new()
        .property_order(PropertyOrder::Any)
        .allow_additional_properties(true);
    let schema = many_properties(40, &[3, 17, 39], "");
    let vocab = bytes_vocab();
    let index =
        Index::from_json_schema_str(&schema, &vocab, &IndexConfig::new().lazy(true), &any).unwrap();
    let backwards: Vec<String> = (0..40)
        .rev()
        .map(|i| format!(r#""p{i}":{}"#, if i % 2 == 0 { "1" } else { "true" }))
        .collect();
    let backwards = format!("{{{}}}", backwards.join(","));
    for ok in [
        r#"{"p39":true,"p3":false,"p17":true}"#,
        r#"{"p17":false,"x":[1,{"y":2}],"p39":true,"p0":0,"p3":true}"#,
        r#"{"p3":true,"p17":true,"p39":true,"zz":null}"#,
        backwards.as_str(),
    ] {
        assert!(accepts(&index, ok), "refuses valid {ok}");
    }
    for bad in [
        // A required member missing, a member twice, a declared name with another type.
        r#"{"p39":true,"p3":false}"#,
        r#"{"p39":true,"p3":false,"p17":true,"p3":true}"#,
        r#"{"p39":true,"p3":false,"p17":true,"p0":true}"#,
        r#"{}"#,
    ] {
        assert!(!accepts(&index, bad), "accepts invalid {bad}");
    }
    // Only the sets of members the texts wrote became states, not 2^40.
    assert!(
        index.state_count() < 5_000,
        "{} states",
        index.state_count()
    );
    // Past 1,024 properties in any order, a clear refusal when compiling, not at a mask.
    let huge = many_properties(1025, &[], "");
    let e = refusal(&huge, &any);
    assert!(
        e.kind() == ErrorKind::UnsupportedSchema && e.to_string().contains("1025"),
        "{e}"
    );
    // Regex text still lists every order, so it stops at 6 members and says where to go.
    let e = regex_from_json_schema_str(&schema, &any).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
    assert!(e.to_string().contains("Index::from_json_schema"), "{e}");
}

#[test]
fn any_order_objects_hold_counts_and_write_only_valid_texts() {
    let any = Config::new()
        .property_order(PropertyOrder::Any)
        .allow_additional_properties(true);
    let schema = many_properties(9, &[2, 5], r#","minProperties":3,"maxProperties":4"#);
    // Lazy only: an eager build of 9 members beside free-form extras is every subset.
    let vocab = bytes_vocab();
    let index =
        Index::from_json_schema_str(&schema, &vocab, &IndexConfig::new().lazy(true), &any).unwrap();
    let (valid, invalid): (&[&str], &[&str]) = (
        &[
            r#"{"p5":true,"p2":1,"p8":3}"#,
            r#"{"q":1,"p5":true,"p2":1}"#,
            r#"{"p2":1,"q":1,"p5":true,"p0":2}"#,
        ],
        &[
            r#"{"p5":true,"p2":1}"#,
            r#"{"p5":true,"p2":1,"p8":3,"p0":4,"p1":true}"#,
            r#"{"p5":true,"p2":1,"p2":3}"#,
        ],
    );
    for t in valid {
        assert!(accepts(&index, t), "refuses valid {t}");
    }
    for t in invalid {
        assert!(!accepts(&index, t), "accepts invalid {t}");
    }
    assert!(random_texts_validate(&schema, &any, 200) > 50);
    let open = many_properties(
        12,
        &[],
        r#","additionalProperties":{"type":"string"},"minProperties":2"#,
    );
    let written = random_texts_validate(&open, &any, 200);
    assert!(written > 50, "{written}");
}

#[test]
fn auto_order_takes_small_objects_in_any_order_and_large_ones_in_schema_order() {
    use logitmask::json_schema::AUTO_ANY_ORDER_MAX_PROPERTIES;
    let auto = Config::new()
        .property_order(PropertyOrder::Auto)
        .whitespace(None);
    let vocab = bytes_vocab();
    let text = |order: &[usize]| {
        let members: Vec<String> = order
            .iter()
            .map(|i| format!(r#""p{i}":{}"#, if i % 2 == 0 { "1" } else { "true" }))
            .collect();
        format!("{{{}}}", members.join(","))
    };
    let n = AUTO_ANY_ORDER_MAX_PROPERTIES;
    // A small object nested in a large one: the inner in any order, the outer in schema order.
    let inner = many_properties(n, &[0], "");
    let outer_props: Vec<String> = (0..=n)
        .map(|i| {
            format!(
                r#""q{i}":{}"#,
                if i == 0 {
                    inner.clone()
                } else {
                    r#"{"type":"integer"}"#.to_string()
                }
            )
        })
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}},"required":["q0"]}}"#,
        outer_props.join(",")
    );
    let reversed: Vec<usize> = (0..n).rev().collect();
    let in_order: Vec<usize> = (0..n).collect();
    let lazy = Index::from_json_schema_str(&schema, &vocab, &IndexConfig::new().lazy(true), &auto)
        .unwrap();
    let eager =
        Index::from_json_schema_str(&schema, &vocab, &IndexConfig::new().lazy(false), &auto)
            .unwrap();
    for (inner_order, outer_rest, lazy_ok, eager_ok) in [
        (&in_order, r#","q1":1,"q2":2"#, true, true),
        (&reversed, r#","q1":1,"q2":2"#, true, false),
        (&reversed, r#","q2":2,"q1":1"#, false, false),
    ] {
        let t = format!(r#"{{"q0":{}{outer_rest}}}"#, text(inner_order));
        assert_eq!(accepts(&lazy, &t), lazy_ok, "lazy: {t}");
        assert_eq!(accepts(&eager, &t), eager_ok, "eager: {t}");
    }
    // Still exact: a member twice, or the required one missing, is refused in any order.
    for bad in [text(&[3, 0, 3]), text(&[5, 2])] {
        assert!(!accepts(&lazy, &format!(r#"{{"q0":{bad}}}"#)), "{bad}");
    }
    // In any order nothing after `{"` is forced; in schema order the first required key is.
    let person = r#"{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}"#;
    let forced = |order| {
        let c = Config::new().property_order(order).whitespace(None);
        let ix = Index::from_json_schema_str(person, &vocab, &IndexConfig::new().lazy(true), &c)
            .unwrap();
        ix.forced_bytes(ix.initial_state(), 64).unwrap()
    };
    assert_eq!(forced(PropertyOrder::Schema), br#"{"name":""#);
    assert_eq!(forced(PropertyOrder::Auto), br#"{""#);
}

#[test]
fn properties_merged_from_several_places_interleave_keeping_each_places_order() {
    // `properties` beside an `allOf` branch's: schema order is each place's own order,
    // and the two places interleave.
    let schema = r#"{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
        "allOf":[{"properties":{"c":{"type":"integer"},"d":{"type":"integer"}},"required":["d"]}]}"#;
    check(
        schema,
        &Config::new(),
        &[
            r#"{"a":1,"b":2,"c":3,"d":4}"#,
            r#"{"c":3,"a":1,"d":4,"b":2}"#,
            r#"{"c":3,"d":4,"a":1}"#,
            r#"{"d":4}"#,
        ],
        &[
            // A place's own order broken, a required member missing, a member twice.
            r#"{"b":2,"a":1,"d":4}"#,
            r#"{"d":4,"c":3}"#,
            r#"{"a":1,"b":2}"#,
            r#"{"a":1,"d":4,"a":1}"#,
        ],
    );
    // Undeclared members still come after the declared ones in schema order.
    check(
        schema,
        &Config::new().allow_additional_properties(true),
        &[r#"{"c":3,"a":1,"d":4,"z":0}"#, r#"{"d":4,"z":0,"y":[]}"#],
        &[r#"{"z":0,"a":1,"d":4}"#, r#"{"d":4,"z":0,"a":1}"#],
    );
    // A `$ref` with siblings, and places sharing a name (one group, in schema order).
    let shared = r##"{"$ref":"#/$defs/base","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},
        "allOf":[{"properties":{"y":{"type":"integer"},"z":{"type":"integer"}}}],
        "$defs":{"base":{"properties":{"p":{"type":"integer"},"q":{"type":"integer"}}}}}"##;
    check(
        shared,
        &Config::new(),
        &[
            r#"{"p":1,"x":2,"q":3,"y":4,"z":5}"#,
            r#"{"x":2,"y":4,"p":1,"z":5,"q":3}"#,
        ],
        &[r#"{"q":3,"p":1}"#, r#"{"z":5,"y":4}"#, r#"{"y":4,"x":2}"#],
    );
    assert!(random_texts_validate(schema, &Config::new(), 200) > 50);
    // Regex text keeps the one schema order.
    let re = regex_from_json_schema_str(schema, &Config::new()).unwrap();
    let re = regex_automata::meta::Regex::new(&format!("^(?:{re})$")).unwrap();
    assert!(re.is_match(r#"{"a":1,"b":2,"c":3,"d":4}"#));
    assert!(!re.is_match(r#"{"c":3,"a":1,"d":4,"b":2}"#));
}

#[test]
fn unique_items_over_few_values_are_sets_written_in_any_order() {
    let letters =
        r#"{"type":"array","items":{"enum":["a","b","c",1]},"uniqueItems":true,"minItems":1}"#;
    let c = Config::new();
    check(
        letters,
        &c,
        &[r#"["a"]"#, r#"["c","a"]"#, r#"["b","c","a"]"#, r#"[1,"a"]"#],
        &[
            r#"[]"#,
            r#"["a","a"]"#,
            r#"["a","b","a"]"#,
            r#"["d"]"#,
            r#"[1,1]"#,
        ],
    );
    assert!(random_texts_validate(letters, &c, 200) > 50);
    let flags = r#"{"type":"array","items":{"type":"boolean"},"uniqueItems":true}"#;
    check(
        flags,
        &c,
        &["[]", "[true]", "[false,true]"],
        &["[true,true]", "[false,true,false]"],
    );
    // maxItems and an item schema that removes a value.
    let capped = r#"{"type":"array","items":{"enum":["a","b","c"],"not":{"const":"b"}},"uniqueItems":true,"maxItems":1}"#;
    check(
        capped,
        &c,
        &["[]", r#"["c"]"#],
        &[r#"["b"]"#, r#"["a","c"]"#],
    );
    // Items through a reference, beside another use of it.
    let referenced = r##"{"type":"object","properties":{
        "tags":{"type":"array","items":{"$ref":"#/$defs/tag"},"uniqueItems":true},
        "main":{"$ref":"#/$defs/tag"}},"$defs":{"tag":{"enum":["x","y"]}}}"##;
    check(
        referenced,
        &c,
        &[r#"{"tags":["y","x"],"main":"x"}"#, r#"{"main":"y"}"#],
        &[r#"{"tags":["x","x"]}"#, r#"{"tags":["z"]}"#],
    );
    // Uniqueness over open item languages is no regular language: a clear refusal.
    let open = r#"{"type":"array","items":{"type":"string"},"uniqueItems":true}"#;
    assert_eq!(refusal(open, &c).kind(), ErrorKind::UnsupportedSchema);
    let many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
    let many = format!(
        r#"{{"items":{{"enum":[{}]}},"uniqueItems":true}}"#,
        many.join(",")
    );
    let e = refusal(&many, &c);
    assert!(
        e.kind() == ErrorKind::UnsupportedSchema && e.to_string().contains("65"),
        "{e}"
    );
    // Regex text cannot say it either.
    let e = regex_from_json_schema_str(letters, &c).unwrap_err();
    assert!(e.to_string().contains("uniqueItems"), "{e}");
}

#[test]
fn multiple_of_any_integer_reads_remainders() {
    let c = Config::new();
    check(
        r#"{"type":"integer","multipleOf":3}"#,
        &c,
        &["0", "3", "-9", "123456789", "300", "999999999999999999999"],
        &["1", "10", "-4", "3.0", "1000000000000000000000", "03"],
    );
    check(
        r#"{"type":"integer","multipleOf":7,"minimum":10,"maximum":100}"#,
        &c,
        &["14", "98", "70"],
        &["7", "105", "15", "0", "-14"],
    );
    check(
        r#"{"type":"number","multipleOf":12,"exclusiveMinimum":-30}"#,
        &c,
        &["-24", "0", "36", "1200"],
        &["-36", "6", "36.5", "13"],
    );
    // The validator reads integers as f64: kept within 2^53 (the automaton is exact past
    // it, e.g. 895011129426025252151 = 7 * 127858732775146464593, which f64 loses).
    let sevens =
        r#"{"type":"integer","multipleOf":7,"minimum":-1000000000000,"maximum":1000000000000}"#;
    assert!(random_texts_validate(sevens, &c, 100) > 30);
    let items = r#"{"type":"array","items":{"type":"integer","multipleOf":13,"minimum":-500,"maximum":500}}"#;
    assert!(random_texts_validate(items, &c, 100) > 30);
    // Regex text has no such regex; an index takes divisors up to a million.
    let e = regex_from_json_schema_str(r#"{"type":"integer","multipleOf":3}"#, &c).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
    let e = refusal(r#"{"type":"integer","multipleOf":1000003}"#, &c);
    assert_eq!(e.kind(), ErrorKind::UnsupportedSchema);
}

/// Objects of every subset (up to `most` members) of `members` (a name and its value
/// texts), each value combination, in the given order (`true`) and reversed.
fn object_texts(members: &[(&str, &[&str])], most: usize) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let n = members.len();
    for mask in 0u32..1 << n {
        if mask.count_ones() as usize > most {
            continue;
        }
        let mut combos: Vec<Vec<String>> = vec![Vec::new()];
        for (name, values) in (0..n).filter(|i| mask >> i & 1 == 1).map(|i| &members[i]) {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(format!(r#""{name}":{v}"#));
                        c
                    })
                })
                .collect();
        }
        for c in combos {
            out.push((format!("{{{}}}", c.join(",")), true));
            if c.len() > 1 {
                let rev: Vec<String> = c.iter().rev().cloned().collect();
                out.push((format!("{{{}}}", rev.join(",")), false));
            }
        }
    }
    out
}

/// Every text a lazy index accepts is valid by the `jsonschema` crate; returns how many
/// were accepted, and the valid texts among those marked in order that it refused.
fn agrees_with_validator(
    schema: &str,
    config: &Config,
    texts: &[(String, bool)],
) -> (usize, Vec<String>) {
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&value).unwrap();
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        config,
    )
    .unwrap();
    let (mut accepted, mut refused) = (0, Vec::new());
    for (text, in_order) in texts {
        let valid = validator.is_valid(&serde_json::from_str(text).unwrap());
        if accepts(&index, text) {
            assert!(valid, "{schema}: accepts invalid {text}");
            accepted += 1;
        } else if valid && *in_order {
            refused.push(text.clone());
        }
    }
    (accepted, refused)
}

/// `anyOf` groups whose branches would multiply past the distribution cap (3 x 3 x 3
/// here) are intersected: each group's branches merged with the schema's own keywords,
/// the groups' unions intersected.
#[test]
fn any_of_groups_past_the_cap_intersect_instead_of_multiplying() {
    let c = Config::new().allow_additional_properties(true);
    let schema = r#"{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"allOf":[
        {"anyOf":[{"required":["a"],"properties":{"a":{"type":"string"}}},{"required":["b"],"properties":{"b":{"type":"integer"}}},{"properties":{"c":{"const":true}},"required":["c"]}]},
        {"anyOf":[{"required":["x"]},{"properties":{"y":{"type":"string","maxLength":3}},"required":["y"]},{"properties":{"id":{"minimum":10}}}]},
        {"anyOf":[{"properties":{"a":{"maxLength":2}},"required":["a"]},{"required":["z"]},{"properties":{"b":{"maximum":5}},"required":["b"]}]}]}"#;
    check_lazy(
        schema,
        &c,
        &[
            r#"{"id":12,"a":"hi"}"#,
            r#"{"id":1,"b":3,"y":"abc"}"#,
            r#"{"id":1,"x":0,"a":"abc","z":1}"#,
            r#"{"id":12,"y":"ab","a":"hi"}"#,
            // Each part's undeclared properties (the others' declared ones, and true
            // extras) may come anywhere: the mark of the intersection (distributed, an
            // object keeps undeclared properties after the declared ones).
            r#"{"y":"ab","id":1,"b":2}"#,
            r#"{"zz":1,"id":12,"a":"hi"}"#,
            r#"{"id":10,"c":true,"z":null}"#,
        ],
        &[
            r#"{"id":1,"a":"hi"}"#,
            r#"{"id":12,"a":"abc"}"#,
            r#"{"id":11,"c":true}"#,
            r#"{"id":12,"b":6}"#,
            r#"{"a":"hi"}"#,
            r#"{"id":2,"y":"abcd","a":"hi"}"#,
            r#"{"id":12,"a":"hi","a":"hi"}"#,
        ],
    );
    // Every object of up to four of these members, in order and reversed: none
    // accepted that the validator refuses, every valid one in order accepted.
    let members: [(&str, &[&str]); 8] = [
        ("id", &["1", "12"]),
        ("a", &[r#""hi""#, r#""abc""#]),
        ("b", &["3", "6"]),
        ("c", &["true"]),
        ("x", &["0"]),
        ("y", &[r#""ab""#, r#""abcd""#]),
        ("z", &["1"]),
        ("zz", &["null"]),
    ];
    let texts = object_texts(&members, 4);
    let (accepted, refused) = agrees_with_validator(schema, &c, &texts);
    assert!(refused.is_empty(), "refuses valid {refused:?}");
    assert!(accepted > 100, "{accepted} accepted of {}", texts.len());
    // Where the parts' intersection is empty: a schema error that says so, found by the
    // compiler (strings that must start with texts that differ) or by the automaton
    // (strings that must end so), never a regex's error.
    let group = |p: &str, anchor: fn(&str) -> String| {
        let alts: Vec<String> = (0..5)
            .map(|i| {
                let pattern = anchor(&format!("{p}{i}"));
                format!(r#"{{"properties":{{"a":{{"type":"string","pattern":"{pattern}"}}}},"required":["a"]}}"#)
            })
            .collect();
        format!(r#"{{"anyOf":[{}]}}"#, alts.join(","))
    };
    let starts = |t: &str| format!("^{t}");
    let ends = |t: &str| format!("{t}$");
    let empty = format!(
        r#"{{"type":"object","allOf":[{},{}]}}"#,
        group("x", starts),
        group("y", starts)
    );
    let e = refusal(&empty, &c);
    assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{e:?}");
    let empty = format!(
        r#"{{"type":"object","additionalProperties":false,"properties":{{"a":{{}}}},"allOf":[{},{}]}}"#,
        group("x", ends),
        group("y", ends)
    );
    let e = refusal(&empty, &c);
    assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{e:?}");
}

/// A `oneOf` whose branches' complements contradict (one requires a property that
/// another's complement says is absent) drops those combinations before the automaton
/// would have to search objects of any depth to prove them empty.
#[test]
fn one_of_complements_that_contradict_leave_no_search() {
    let c = Config::new().allow_additional_properties(true);
    let alarm = r##"{"definitions":{"base":{"type":"object","properties":{"name":{"type":"string","minLength":1},"cell":{"type":"string","pattern":"^[^/]+/[^/]+$"},"message":{"type":"string"},"delay":{"type":"integer","minimum":0}},"required":["name","cell"]},
        "expected":{"allOf":[{"$ref":"#/definitions/base"},{"properties":{"expected":{}},"required":["expected"]}]},
        "min":{"allOf":[{"$ref":"#/definitions/base"},{"properties":{"min":{"type":"number"}},"required":["min"]},{"not":{"required":["max"]}}]},
        "max":{"allOf":[{"$ref":"#/definitions/base"},{"properties":{"max":{"type":"number"}},"required":["max"]},{"not":{"required":["min"]}}]},
        "minmax":{"allOf":[{"$ref":"#/definitions/base"},{"properties":{"min":{"type":"number"},"max":{"type":"number"}},"required":["min","max"]}]}},
        "oneOf":[{"$ref":"#/definitions/expected"},{"$ref":"#/definitions/min"},{"$ref":"#/definitions/max"},{"$ref":"#/definitions/minmax"}]}"##;
    check_lazy(
        alarm,
        &c,
        &[
            r#"{"name":"t","cell":"a/b","message":"hot","delay":10,"max":30}"#,
            r#"{"name":"t","cell":"a/b","min":1}"#,
            r#"{"name":"t","cell":"a/b","min":1,"max":3}"#,
            r#"{"name":"t","cell":"a/b","expected":[1]}"#,
            r#"{"name":"t","cell":"a/b","delay":0,"expected":null}"#,
        ],
        &[
            r#"{"name":"t","cell":"a/b"}"#,
            r#"{"name":"t","cell":"a/b","expected":1,"max":3}"#,
            r#"{"name":"t","cell":"a/b","max":"3"}"#,
            r#"{"name":"t","cell":"ab","max":3}"#,
            r#"{"name":"","cell":"a/b","min":1}"#,
            r#"{"name":"t","cell":"a/b","expected":1,"min":1,"max":2}"#,
        ],
    );
    let members: [(&str, &[&str]); 7] = [
        ("name", &[r#""t""#, r#""""#]),
        ("cell", &[r#""a/b""#, r#""ab""#]),
        ("message", &[r#""m""#]),
        ("delay", &["0", "-1"]),
        ("expected", &["1"]),
        ("min", &["1"]),
        ("max", &["3", r#""3""#]),
    ];
    let texts = object_texts(&members, 5);
    let (accepted, refused) = agrees_with_validator(alarm, &c, &texts);
    assert!(refused.is_empty(), "refuses valid {refused:?}");
    assert!(accepted > 15, "{accepted} accepted of {}", texts.len());
    // Four branches, each taking the others' complements (xAPI's inverse functional
    // identifier): the shortest object of one part is in all of them, found without a
    // search through the free-form values of undeclared properties.
    let xapi = r#"{"oneOf":[
        {"type":"object","properties":{"mbox":{"type":"string","format":"uri","pattern":"^mailto:"}},"patternProperties":{"^(mbox_sha1sum|account|openid)$":{"type":"null"}},"required":["mbox"]},
        {"type":"object","properties":{"mbox_sha1sum":{"type":"string","pattern":"^[a-zA-Z0-9]{20,}$"}},"patternProperties":{"^(mbox|account|openid)$":{"type":"null"}},"required":["mbox_sha1sum"]},
        {"type":"object","properties":{"openid":{"type":"string","format":"uri","minLength":1}},"patternProperties":{"^(mbox|account|mbox_sha1sum)$":{"type":"null"}},"required":["openid"]},
        {"type":"object","properties":{"account":{"type":"object","properties":{"homePage":{"type":"string","format":"uri"},"name":{"type":"string"}},"required":["homePage","name"],"additionalProperties":false}},"patternProperties":{"^(mbox|mbox_sha1sum|openid)$":{"type":"null"}},"required":["account"]}]}"#;
    check_lazy(
        xapi,
        &c,
        &[
            r#"{"mbox":"mailto:a@b.c"}"#,
            r#"{"mbox_sha1sum":"abcdefghij0123456789"}"#,
            r#"{"openid":"http://x.org/me","mbox":null}"#,
            r#"{"account":{"homePage":"http://x.org","name":"me"}}"#,
        ],
        &[
            "{}",
            r#"{"mbox":"mailto:a@b.c","openid":"http://x.org/me"}"#,
            r#"{"mbox":"http://x"}"#,
            r#"{"account":{"homePage":"http://x.org"}}"#,
            r#"{"mbox_sha1sum":"short"}"#,
        ],
    );
}

/// A node with `n` levels of children below it: `{"name":"x","children":[...]}`.
fn tree_text(n: usize) -> String {
    let mut text = r#"{"name":"x"}"#.to_string();
    for _ in 0..n {
        text = format!(r#"{{"name":"x","children":[{text},{{"name":"y"}}]}}"#);
    }
    text
}

const TREE: &str = r##"{"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
    "properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
    "required":["name"]}}}"##;

/// A lazy index calls one shared template per recursive definition, a level
/// instantiated only when a text reaches it: 32 re-entries by default, as the option
/// says, and the same texts as the expansion in place at the same depth.
#[test]
fn recursive_references_are_calls_as_deep_as_the_option_says() {
    let vocab = bytes_vocab();
    let lazy = |config: &Config| {
        Index::from_json_schema_str(TREE, &vocab, &IndexConfig::new().lazy(true), config).unwrap()
    };
    let index = lazy(&Config::new());
    for n in [0, 1, 5, 31, 32] {
        assert!(accepts(&index, &tree_text(n)), "depth {n}");
    }
    assert!(!accepts(&index, &tree_text(33)));
    assert!(!accepts(
        &index,
        r#"{"name":"x","children":[{"children":[]}]}"#
    ));

    // At depth 3 the eager index (the definition expanded in place 3 times) and the
    // lazy one (calls) accept exactly the same trees.
    let config = Config::new().max_recursion_depth(3);
    let eager = Index::from_json_schema_str(TREE, &vocab, &IndexConfig::new().lazy(false), &config)
        .unwrap();
    let lazy3 = lazy(&config);
    for n in 0..=5 {
        let text = tree_text(n);
        assert_eq!(accepts(&eager, &text), n <= 3, "eager, depth {n}");
        assert_eq!(accepts(&lazy3, &text), n <= 3, "lazy, depth {n}");
    }
}

/// Mutual recursion: expanded in place, every definition is compiled once per
/// combination of the others above it (depth 12 ran out of work); as calls, each
/// definition is one template and any depth up to the limit compiles at once. Every
/// call counts toward the depth, whichever definition it enters.
#[test]
fn mutual_recursion_compiles_once_at_any_depth() {
    let schema = r##"{"$ref":"#/$defs/a","$defs":{
        "a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"},"c":{"$ref":"#/$defs/c"},"a":{"$ref":"#/$defs/a"}}},
        "b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"c":{"$ref":"#/$defs/c"},"b":{"$ref":"#/$defs/b"}}},
        "c":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"b":{"$ref":"#/$defs/b"},"c":{"$ref":"#/$defs/c"}}}}}"##;
    let chain = |n: usize| {
        let mut text = "{}".to_string();
        for i in 0..n {
            text = format!(r#"{{"{}":{text}}}"#, ["a", "b", "c"][i % 3]);
        }
        text
    };
    let index = Index::from_json_schema_str(
        schema,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        &Config::new().max_recursion_depth(64),
    )
    .unwrap();
    assert!(accepts(&index, &chain(10)));
    assert!(accepts(&index, &chain(64)));
    assert!(!accepts(&index, &chain(65)));
    assert!(!accepts(&index, r#"{"a":{"b":1}}"#));

    // A cycle of 300 definitions: each template is compiled on its own, after the
    // root, so the chain does not nest 300 compiles (past the 256 sub-schema limit).
    let defs: Vec<String> = (0..300)
        .map(|i| {
            format!(
                r##""d{i}":{{"type":"object","properties":{{"k":{{"$ref":"#/$defs/d{}"}}}}}}"##,
                (i + 1) % 300
            )
        })
        .collect();
    let cycle = format!(
        r##"{{"$ref":"#/$defs/d0","$defs":{{{}}}}}"##,
        defs.join(",")
    );
    let index = Index::from_json_schema_str(
        &cycle,
        &bytes_vocab(),
        &IndexConfig::new().lazy(true),
        &Config::new(),
    )
    .unwrap();
    let nested = |n: usize| format!("{}{{}}{}", r#"{"k":"#.repeat(n), "}".repeat(n));
    assert!(accepts(&index, &nested(32)));
    assert!(!accepts(&index, &nested(33)));
}

/// A grammar of rules: a recursive `oneOf` whose branches are told apart by patterns
/// on `type` (their complements hold calls under a negation, so deeper levels take
/// strings away). Every text a guide writes validates, and valid nested texts pass.
#[test]
fn recursive_one_of_with_complements_writes_only_valid_texts() {
    let schema = r##"{"$ref":"#/definitions/rule","definitions":{
        "rule":{"oneOf":[{"$ref":"#/definitions/sym"},{"$ref":"#/definitions/seq"},{"$ref":"#/definitions/rep"}]},
        "sym":{"type":"object","properties":{"type":{"type":"string","pattern":"^SYM"},"name":{"type":"string"}},"required":["type","name"]},
        "seq":{"type":"object","properties":{"type":{"type":"string","pattern":"^SEQ$"},"members":{"type":"array","items":{"$ref":"#/definitions/rule"}}},"required":["type","members"]},
        "rep":{"type":"object","properties":{"type":{"type":"string","pattern":"^(REP|SEQ)$"},"content":{"$ref":"#/definitions/rule"}},"required":["type","content"]}}}"##;
    let config = Config::new().allow_additional_properties(true);
    check_lazy(
        schema,
        &config,
        &[
            r#"{"type":"SYM","name":"a"}"#,
            r#"{"type":"SEQ","members":[{"type":"SYM","name":"a"},{"type":"REP","content":{"type":"SYM","name":"b"}}]}"#,
            r#"{"type":"REP","content":{"type":"SEQ","members":[]}}"#,
        ],
        &[
            // Both `seq` and `rep` (type SEQ, members and content): oneOf fails.
            r#"{"type":"SEQ","members":[],"content":{"type":"SYM","name":"a"}}"#,
            r#"{"type":"SEQ","members":[{"type":"SEQ","members":[],"content":{"type":"SYM","name":"a"}}]}"#,
            r#"{"type":"REP","content":{"type":"OTHER"}}"#,
        ],
    );
    // Random walks nest far deeper than texts do, and every level they reach is states
    // the index keeps: 300 walks at the default 32 levels hold ~76 MB, past the default
    // determinization limit (32 MiB), against 12 MB at 3 levels and 50 MB at 8.
    assert!(random_texts_validate(schema, &config.max_recursion_depth(6), 300) > 100);
}

/// A recursive reference under `not`: a deeper level takes strings away, so such
/// recursion is expanded in place (as in an eager index) instead of called, and no text
/// a validator rejects is accepted at any nesting.
#[test]
fn recursion_under_a_complement_stays_exact() {
    let schema = r##"{"type":"object","properties":{"next":{"not":{"$ref":"#"}}}}"##;
    let mut texts = Vec::new();
    let mut inner = "{}".to_string();
    for _ in 0..6 {
        texts.push((inner.clone(), true));
        texts.push((format!(r#"{{"next":1,"x":{inner}}}"#), true));
        inner = format!(r#"{{"next":{inner}}}"#);
    }
    let (accepted, _) = agrees_with_validator(
        schema,
        &Config::new().allow_additional_properties(true),
        &texts,
    );
    assert!(accepted >= 6, "{accepted}");
}

/// `oneOf` of closed objects: a branch's complement is "an object with a key the
/// branch does not declare", which no keyword states; the compiler says it internally
/// (canonical spellings, free-form values). Each branch then takes the objects the
/// others cannot hold: compared with the `jsonschema` crate on every object of up to
/// three of four members, in both orders.
#[test]
fn one_of_closed_objects_tell_branches_apart_by_undeclared_keys() {
    let schema = r#"{"type":"object","oneOf":[
        {"additionalProperties":false,"properties":{"key":{"type":"string","maxLength":3}}},
        {"additionalProperties":false,"properties":{"keys":{"type":"array","items":{"type":"string"}}}},
        {"required":["id"],"properties":{"id":{"type":"integer"}}}]}"#;
    let config = Config::new().allow_additional_properties(true);
    let texts = object_texts(
        &[
            // `id` first: the third branch's declared property, before undeclared ones
            // (schema order, the default).
            ("id", &["7", r#""7""#]),
            ("key", &[r#""ab""#, r#""abcd""#, "1"]),
            ("keys", &["[]", r#"["x"]"#, "[1]"]),
            ("other", &["null"]),
        ],
        3,
    );
    let (accepted, refused) = agrees_with_validator(schema, &config, &texts);
    assert!(refused.is_empty(), "valid texts refused: {refused:?}");
    assert!(accepted >= 10, "{accepted}");
    check_lazy(
        schema,
        &config,
        &[
            r#"{"key":"ab"}"#,
            r#"{"keys":["x"]}"#,
            r#"{"id":1}"#,
            r#"{"id":1,"key":"abcd"}"#,
        ],
        // Empty: both closed branches hold. Both keys, or `id` not an integer: none does.
        &[
            "{}",
            r#"{"key":"ab","keys":[]}"#,
            r#"{"id":"x"}"#,
            r#"{"key":"abcd"}"#,
        ],
    );
}

/// `oneOf` whose branches an object value's names tell apart (OpenAPI 1.2's dataType,
/// Github_medium---o12174): an `enum` of objects without the name another branch
/// requires, or with one a closed branch forbids, is disjoint from that branch; the value
/// that also satisfies a third branch drops out. Compared with the `jsonschema` crate.
#[test]
fn one_of_enum_objects_are_told_apart_by_required_and_forbidden_names() {
    let schema = r#"{"type":"object","oneOf":[
        {"required":["$ref"],"properties":{"$ref":{"type":"string"}},"additionalProperties":false},
        {"enum":[{"type":"void"},{"type":"boolean"}]},
        {"required":["type"],"properties":{"type":{"type":"string","not":{"enum":["boolean","integer"]}}},"additionalProperties":false}]}"#;
    let config = Config::new();
    let texts = object_texts(
        &[
            ("$ref", &[r#""/a""#, "1"]),
            (
                "type",
                &[r#""void""#, r#""boolean""#, r#""integer""#, r#""x""#],
            ),
        ],
        2,
    );
    // Sound (the validator checks every accepted text); the third branch takes the
    // complement of an enum of objects, which is said only in part (a subset:
    // docs/json-schema.md), so its own texts may be refused, and only those.
    let (accepted, refused) = agrees_with_validator(schema, &config, &texts);
    assert!(
        refused
            .iter()
            .all(|t| t.starts_with(r#"{"type":"#) && !t.contains("boolean")),
        "valid texts refused: {refused:?}"
    );
    assert!(accepted >= 2, "{accepted}");
    check_lazy(
        schema,
        &config,
        &[r#"{"$ref":"/a"}"#, r#"{"type":"boolean"}"#],
        // `void` satisfies the enum and the third branch: oneOf refuses it.
        &[r#"{"type":"void"}"#, r#"{"type":"integer"}"#, "{}"],
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

/// A lazy index whose caches are cleared at every call (`cache_bytes(0)`) gives the rows,
/// states and finality of one that never clears, along random walks through a recursive
/// grammar and a free-form value; its state ids stay valid across clears (a walk goes on
/// from ids it was handed before them).
#[test]
fn cleared_caches_give_the_same_rows() {
    use logitmask::test_support::Rng;
    let grammar = r##"{"$ref":"#/definitions/rule","definitions":{
        "rule":{"oneOf":[{"$ref":"#/definitions/sym"},{"$ref":"#/definitions/seq"}]},
        "sym":{"type":"object","properties":{"type":{"type":"string","pattern":"^SYM"},"name":{"type":"string","maxLength":3}},"required":["type","name"]},
        "seq":{"type":"object","properties":{"type":{"type":"string","pattern":"^SEQ$"},"members":{"type":"array","items":{"$ref":"#/definitions/rule"},"maxItems":3}},"required":["type","members"]}}}"##;
    let vocab = bytes_vocab();
    for schema in [
        grammar,
        "{}",
        r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer","multipleOf":7}}}}"#,
    ] {
        let config = Config::new().allow_additional_properties(true);
        let build = |cache: usize| {
            Index::from_json_schema_str(
                schema,
                &vocab,
                &IndexConfig::new().cache_bytes(cache),
                &config,
            )
            .unwrap()
        };
        let (plain, cleared) = (build(usize::MAX), build(0));
        let mut rng = Rng::new(38);
        let mut held = Vec::new();
        for walk in 0..40 {
            // Every fourth walk starts from a state handed out by an earlier walk.
            let (mut a, mut b) = match held.len() {
                0 => (plain.initial_state(), cleared.initial_state()),
                n if walk % 4 == 3 => held[rng.below(n)],
                _ => (plain.initial_state(), cleared.initial_state()),
            };
            for _ in 0..300 {
                let row_a = plain.allowed_tokens(a).unwrap().to_vec();
                let row_b = cleared.allowed_tokens(b).unwrap().to_vec();
                assert_eq!(row_a, row_b, "{schema}: rows differ");
                assert_eq!(plain.is_final(a).unwrap(), cleared.is_final(b).unwrap());
                let text: Vec<u32> = row_a.iter().copied().filter(|&t| t < 256).collect();
                if text.is_empty() {
                    break;
                }
                let structural: Vec<u32> = text
                    .iter()
                    .copied()
                    .filter(|&t| b"\"{}[],:0123456789SEQYM".contains(&(t as u8)))
                    .collect();
                let pool = if !structural.is_empty() && rng.chance(3, 4) {
                    &structural
                } else {
                    &text
                };
                let t = pool[rng.below(pool.len())];
                a = plain.next_state(a, t).unwrap().unwrap();
                b = cleared.next_state(b, t).unwrap().unwrap();
                if rng.chance(1, 20) {
                    held.push((a, b));
                }
            }
        }
        assert_eq!(plain.cache_clears(), 0);
        assert!(
            cleared.cache_clears() > 10,
            "{schema}: {} clears",
            cleared.cache_clears()
        );
    }
}
