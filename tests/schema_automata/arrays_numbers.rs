//! Arrays and numbers: uniqueItems over few values, multipleOf.

use super::*;

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
