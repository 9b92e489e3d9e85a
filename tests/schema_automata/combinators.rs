//! anyOf, oneOf, not, if/then/else: complements and intersections, exact where JSON
//! Schema can state them, checked against the jsonschema crate where texts are many.

use super::*;

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
