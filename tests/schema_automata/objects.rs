//! Objects: key presence, patternProperties, propertyNames, dependencies, property order.

use super::*;

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
