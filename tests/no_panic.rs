//! No input reaches a panic (a trap in wasm, which breaks the module for good): the
//! schemas found to trap it (`testdata/repros/`), each compiled and walked, and every
//! schema of the development corpus compiled natively, each to an index or a coded
//! error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use logitmask::json_schema::Config;
use logitmask::{Index, IndexConfig, Vocabulary};

use crate::schema_automata::{accepts, bytes_vocab, random_texts_validate};

/// The schemas of `testdata/repros/schema-traps.jsonl`, as JSON text.
fn trap_repros() -> Vec<(String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/repros/schema-traps.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["what"].as_str().unwrap().to_string(),
                v["schema"].to_string(),
            )
        })
        .collect()
}

/// An index over `schema` (lazy or eager) with a first row, or its error; a panic is
/// caught and reported as `Err(None)`.
pub(crate) fn compile_and_first_row(
    schema: &str,
    vocab: &Arc<Vocabulary>,
    config: &IndexConfig,
) -> Result<Index, Option<logitmask::Error>> {
    catch_unwind(AssertUnwindSafe(|| {
        let index = Index::from_json_schema_str(schema, vocab, config, &Config::new())?;
        index.allowed_tokens(index.initial_state())?;
        Ok(index)
    }))
    .map_err(|_| None)?
    .map_err(Some)
}

#[test]
fn trap_repros_compile_and_write_only_valid_texts() {
    let vocab = bytes_vocab();
    for (what, schema) in trap_repros() {
        // Lazy (the default) must compile; an eager index writes the recursion out and
        // may run past a size limit, which must then be a coded error.
        for lazy in [true, false] {
            let config = IndexConfig::new().lazy(lazy);
            match compile_and_first_row(&schema, &vocab, &config) {
                Ok(_) => {}
                Err(Some(e)) if !lazy => assert_ne!(e.code(), "", "{what}: {e:?}"),
                Err(Some(e)) => panic!("{what}: refused with {e:?}; it validates values"),
                Err(None) => panic!("{what} (lazy {lazy}): panicked"),
            }
        }
        let written = random_texts_validate(&schema, &Config::new(), 60);
        assert!(written > 10, "{what}: only {written} of 60 walks finished");
    }
}

/// An `enum` beside a recursive `$ref` (the first repro's shape, from SchemaStore's
/// pulumi.json): the values are intersected with the recursive rest in the automaton,
/// since no checker of their own can hold the rest's template. Texts on each side,
/// judged by the `jsonschema` crate.
#[test]
fn enum_beside_a_recursive_ref_is_intersected() {
    let schema = r##"{"$defs":{"t":{"type":"object","properties":{"next":{"$ref":"#/$defs/t"}}}},
        "properties":{"x":{"allOf":[{"$ref":"#/$defs/t"},
            {"enum":[{"next":{}},{"next":{"next":{}}},{"next":3},5,"s"]}]}}}"##;
    let vocab = bytes_vocab();
    let index = Index::from_json_schema_str(
        schema,
        &vocab,
        &IndexConfig::new().lazy(true),
        &Config::new(),
    )
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&value).unwrap();
    let accepts = |text: &str| accepts(&index, text);
    for text in [
        r#"{}"#,
        r#"{"x":{"next":{}}}"#,
        r#"{"x":{"next":{"next":{}}}}"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(validator.is_valid(&v), "{text} is valid");
        assert!(accepts(text), "refuses valid {text}");
    }
    for text in [
        r#"{"x":{"next":3}}"#,
        r#"{"x":5}"#,
        r#"{"x":"s"}"#,
        r#"{"x":{}}"#,
        r#"{"x":{"next":{"next":{"next":{}}}}}"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(!validator.is_valid(&v), "{text} is invalid");
        assert!(!accepts(text), "accepts invalid {text}");
    }
}

/// The development corpus's schemas (`testdata/schemabench-schemas/`): `(id, schema text)`.
pub(crate) fn corpus_schemas() -> Vec<(String, String)> {
    use std::io::Read;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/schemabench-schemas/schemas.jsonl.gz"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["schema"].to_string(),
            )
        })
        .collect()
}

/// Every schema of the development corpus (5,767) compiles natively to a lazy index
/// with a first row, or is refused with a coded error; none panics. Over single bytes
/// (every path of the compiler and the automaton is the same for any vocabulary) and
/// the default options.
#[test]
fn every_corpus_schema_compiles_or_is_refused_with_a_code() {
    let vocab = bytes_vocab();
    let config = IndexConfig::new().lazy(true);
    let schemas = corpus_schemas();
    assert_eq!(schemas.len(), 5767);
    let mut panicked = Vec::new();
    let mut refused = std::collections::BTreeMap::<&str, usize>::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (id, schema) in &schemas {
        match compile_and_first_row(schema, &vocab, &config) {
            Ok(_) => {}
            Err(Some(e)) => *refused.entry(e.code()).or_default() += 1,
            Err(None) => panicked.push(id.clone()),
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "corpus: {} schemas, refused by code {refused:?}",
        schemas.len()
    );
    assert!(panicked.is_empty(), "panicked: {panicked:?}");
    // The corpus run of record refused 37 (docs/schemabench.md); far more is a regression.
    let total: usize = refused.values().sum();
    assert!(total < 100, "{total} refused: {refused:?}");
}

/// What the schema fuzzer (`fuzz_schemas.rs`) found, minimized: each schema is refused
/// with the code it deserves, or compiled to an index that refuses the invalid text
/// the fuzzer saw written (checked against the `jsonschema` crate here too).
#[test]
fn fuzzer_findings_stay_fixed() {
    use logitmask::ErrorKind;
    let vocab = bytes_vocab();
    let compile = |schema: &str| {
        Index::from_json_schema_str(schema, &vocab, &IndexConfig::new(), &Config::new())
    };
    // Refused: no value validates (`type` replaced what `not: {}` left; a const or
    // enum failing `patternProperties` was not checked against them).
    for schema in [
        r#"{"not":{},"type":"array"}"#,
        r#"{"type":"array","not":{}}"#,
        r#"{"const":{"c":true,"é":1},"patternProperties":{"^[^a]{0,2}|[0-9]$":{"type":"object"}}}"#,
        r#"{"enum":[{"a":"\n","type":"number","é":true}],"patternProperties":{"^[xyz]*":{"type":"array"}}}"#,
    ] {
        let err = compile(schema).map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidSchema, "{schema}: {err}");
    }
    // Refused with a coded error, not a stack overflow: the complement of a `not`/`if`
    // that refers back to itself never ends.
    for schema in [
        r##"{"if":{"not":{"$ref":"#"}},"then":true}"##,
        r##"{"oneOf":[{"if":{"allOf":[{"not":{"$ref":"#"}}]},"then":true}]}"##,
        r##"{"if":{"anyOf":[{"not":{"$ref":"#"}}]},"then":true}"##,
        // Complements nesting compiles deeper than the stack holds (found in the hour).
        r##"{"not":{"oneOf":[{"$ref":"#"},{"enum":["a"]}]}}"##,
        r##"{"not":{"oneOf":[{"$ref":"#"},{"const":"\n"}]}}"##,
        r##"{"anyOf":[{"if":{"enum":[],"prefixItems":[{"oneOf":[{"$ref":"#/definitions/B"},true]}]},"then":{"type":"number"}}],"definitions":{"B":{"anyOf":[{"$ref":"#"}]}}}"##,
    ] {
        // Refused, or (where the frames on the way are small enough, as in a build
        // whose compiler functions are split finer) compiled: never a stack overflow.
        match compile(schema) {
            Err(err) => assert_eq!(err.kind(), ErrorKind::UnsupportedSchema, "{schema}: {err}"),
            Ok(index) => {
                index.allowed_tokens(index.initial_state()).unwrap();
                eprintln!("compiled: {schema}");
            }
        }
    }
    // Complements that feed each other (each `not`/`if` parsed holds more): refused in
    // milliseconds, where the hour's run saw 8 to 28 s.
    for schema in [
        r##"{"$ref":"#","else":true,"if":{"anyOf":[{"oneOf":[{"$ref":"#"},{"properties":{"a":true,"b":{"const":"x-y","not":{"type":"number"},"type":["array","null","integer"]},"id":{"$ref":"#","dependentRequired":{"id":["a"]},"exclusiveMinimum":5,"patternProperties":{"^(a|bc)?[^a]{0,2}x-y{0,2}|(a|bc)$":{"type":"object"}},"properties":{"b":false},"propertyNames":{"pattern":"^[a-c]x-y$"},"type":"integer"}},"required":["a"],"type":"object"}]},{"additionalProperties":false,"dependencies":{"é":["c"]},"enum":[[null,false],null],"minProperties":2,"patternProperties":{"ab+[^a][a-c]{0,2}$":{"patternProperties":{"[0-9]{0,2}$":{"else":{"enum":["a\"b",1]},"if":false,"then":{"const":[],"contains":{"exclusiveMaximum":-10,"maxLength":1,"minLength":3,"minimum":2,"multipleOf":7,"pattern":"^[^a]?[0-9]*|[xyz]","type":"string"},"format":"byte","maxItems":2,"minLength":2,"pattern":"^ab*(a|bc)?a{2}$"}}}},"properties":{},"required":[],"type":"object"}]},"then":{"not":{"$ref":"#"}}}"##,
        r##"{"else":true,"if":{"$ref":"#","items":{"dependencies":{"c":{"allOf":[{"oneOf":[{"$ref":"#"}]}]}},"dependentSchemas":{"c":{"$ref":"#/$defs/Z"}},"else":{"$ref":"#","enum":["\n",[],[false,2.5]],"minLength":5},"if":{"type":"boolean"},"minProperties":300,"required":[],"then":{"anyOf":[{"$ref":"#","type":"null"},{"$ref":"#","enum":["a",true,[true,null],-0.5],"exclusiveMinimum":1e-07,"type":"number"},{"additionalProperties":true,"dependentSchemas":{"c":{"type":"string"}},"maxProperties":1,"patternProperties":{"^x-y{0,2}[xyz]{3,}ab?":{"type":"null"}},"properties":{},"required":[],"type":"object"}],"contains":{"enum":["a",null,null,[]],"type":"array"},"enum":[[1,-0.5],null],"items":{"minProperties":1,"properties":{"a":false,"id":true,"x-y":true},"required":["x-y"],"type":"object"},"maxItems":300,"type":"array"}},"maxItems":3,"maxLength":3},"then":{"else":{"contains":{"type":"integer"},"exclusiveMaximum":12345678901,"items":{"enum":[1.0,""]},"minContains":0,"minItems":1,"prefixItems":[{"format":"byte","minLength":1},{"not":{"type":"number"},"uniqueItems":false},false],"type":"number"},"if":{"$ref":"#"},"then":{"exclusiveMaximum":0.1,"maxLength":0,"maximum":1,"pattern":"^[xyz]{2}x-y$","type":"integer"}}}"##,
    ] {
        let start = std::time::Instant::now();
        let outcome = compile(schema).map(|_| ());
        assert!(
            start.elapsed().as_secs() < 3,
            "{schema}: {:?}",
            start.elapsed()
        );
        if let Err(e) = outcome {
            assert!(e.kind() != ErrorKind::InvalidArgument, "{schema}: {e}");
        }
    }
    // Texts the fuzzer saw written, invalid: never accepted (the schema may be refused).
    for (schema, invalid, valid) in [
        // `not: {required}` holds only for objects without the name.
        (r#"{"not":{"required":["b"]}}"#, "5", Some("{}")),
        // A `oneOf` branch cut at the recursion depth matched nothing, so the other
        // branch was written alone where a value satisfied both.
        (
            r##"{"properties":{"id":true,"x-y":{"oneOf":[{"$ref":"#"},{"dependentRequired":{"x-y":["a"]}}]}}}"##,
            r#"{"x-y":{"x-y":{"x-y":{"id":1,"x-y":{}}}}}"#,
            None,
        ),
        // `minContains` without `contains` beside a `$ref` governed the target's
        // `contains` (found in the second hour).
        (
            r##"{"$defs":{"A":{"contains":{"type":"array"}},"B":{"$ref":"#/$defs/A","minContains":0}},"$ref":"#/$defs/B"}"##,
            r#"[{"id":7}]"#,
            Some("[[]]"),
        ),
    ] {
        let value: serde_json::Value = serde_json::from_str(schema).unwrap();
        let validator = jsonschema::validator_for(&value).unwrap();
        assert!(!validator.is_valid(&serde_json::from_str(invalid).unwrap()));
        match compile(schema) {
            Ok(index) => {
                assert!(!accepts(&index, invalid), "{schema} accepts {invalid}");
                if let Some(valid) = valid {
                    assert!(validator.is_valid(&serde_json::from_str(valid).unwrap()));
                    assert!(accepts(&index, valid), "{schema} refuses {valid}");
                }
            }
            Err(e) => assert!(e.kind() == ErrorKind::UnsupportedSchema, "{schema}: {e}"),
        }
    }
}
