//! Recursive references as calls, recursion under complements, and lazy caches cleared
//! along walks of a recursive grammar.

use super::*;

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

/// A query language (from the schema corpus, `Github_medium---o3626`): five mutually
/// recursive definitions behind a `oneOf` at every level, two of which overlap (an
/// object with both `pattern` and `code`), so each branch takes the others'
/// complements, and three of those complements recurse in turn. A complement names the
/// complement of a definition instead of copying it, so it recurses as the definition
/// does; copied (to the complements' own depth limit) it nested past 256 sub-schemas and
/// the compile was refused after a quarter of a second.
#[test]
fn recursive_one_of_over_overlapping_definitions_compiles() {
    let schema = r##"{"$schema":"http://json-schema.org/draft-04/schema#",
        "definitions":{
          "location":{"type":"object","properties":{"location":{"type":"string"}}},
          "pattern":{"type":"object","allOf":[{"properties":{"pattern":{"type":"object"}},"required":["pattern"]},{"$ref":"#/definitions/location"}]},
          "code":{"type":"object","allOf":[{"properties":{"code":{"type":"string"}},"required":["code"]},{"$ref":"#/definitions/location"}]},
          "not":{"type":"object","properties":{"not":{"oneOf":[{"$ref":"#/definitions/pattern"},{"$ref":"#/definitions/code"},{"$ref":"#/definitions/not"},{"$ref":"#/definitions/and"}]}},"required":["not"]},
          "and":{"type":"object","properties":{"and":{"type":"array","items":{"oneOf":[{"$ref":"#/definitions/pattern"},{"$ref":"#/definitions/code"},{"$ref":"#/definitions/not"},{"$ref":"#/definitions/and"}]}}},"required":["and"]}},
        "type":"object",
        "properties":{"condition":{"oneOf":[{"$ref":"#/definitions/pattern"},{"$ref":"#/definitions/code"},{"$ref":"#/definitions/not"},{"$ref":"#/definitions/and"}]}},
        "required":["condition"]}"##;
    let config = Config::new().allow_additional_properties(true);
    check_lazy(
        schema,
        &config,
        &[
            r#"{"condition":{"pattern":{}}}"#,
            r#"{"condition":{"code":"x","location":"here"}}"#,
            r#"{"condition":{"not":{"not":{"not":{"code":"x"}}}}}"#,
            r#"{"condition":{"and":[{"code":"x"},{"not":{"pattern":{}}},{"and":[]}]}}"#,
        ],
        &[
            // Both `pattern` and `code`: two branches hold, at each depth.
            r#"{"condition":{"pattern":{},"code":"x"}}"#,
            r#"{"condition":{"not":{"pattern":{},"code":"x"}}}"#,
            r#"{"condition":{"and":[{"not":{"pattern":{},"code":"x"}}]}}"#,
            // Both `not` and `and`.
            r#"{"condition":{"not":{"code":"x"},"and":[]}}"#,
            r#"{"condition":{"not":{"code":1}}}"#,
        ],
    );
    // Every nesting of `not` and `and` three deep over leaves valid and invalid
    // (two branches at once, a wrong type), against a validator.
    let leaves = [
        r#"{"pattern":{}}"#,
        r#"{"code":"x"}"#,
        r#"{"pattern":{},"code":"x"}"#,
        r#"{"code":1}"#,
    ];
    let mut level: Vec<String> = leaves.iter().map(|l| l.to_string()).collect();
    let mut texts = Vec::new();
    for _ in 0..3 {
        let mut next = Vec::new();
        for inner in &level {
            texts.push((format!(r#"{{"condition":{inner}}}"#), true));
            next.push(format!(r#"{{"not":{inner}}}"#));
            next.push(format!(r#"{{"and":[{inner}]}}"#));
            next.push(format!(r#"{{"and":[{{"code":"y"}},{inner}]}}"#));
        }
        level = next;
    }
    let (accepted, refused) = agrees_with_validator(schema, &config, &texts);
    // Every wrapping keeps a leaf's verdict: half are valid, all of them accepted.
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(accepted, texts.len() / 2);
}

/// Expanded in place, a cycle through several definitions counts every entry into it
/// (A -> B -> A is two), as calls do: per definition, each of k definitions could be
/// entered `depth + 1` times, k times the nesting (and compile) the option says.
#[test]
fn in_place_recursion_counts_every_entry_into_the_cycle() {
    let schema = r##"{"$ref":"#/definitions/a","definitions":{
        "a":{"type":"object","properties":{"b":{"$ref":"#/definitions/b"}}},
        "b":{"type":"object","properties":{"a":{"$ref":"#/definitions/a"}}}}}"##;
    let config = Config::new().max_recursion_depth(2);
    let nested = |levels: usize| {
        let keys = ["b", "a"];
        let mut text = "{}".to_string();
        for i in (0..levels).rev() {
            text = format!(r#"{{"{}":{text}}}"#, keys[i % 2]);
        }
        text
    };
    // An eager index expands in place (a lazy one calls, and calls count alike).
    let valid: Vec<String> = (0..=2).map(nested).collect();
    let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
    check(schema, &config, &valid, &[&nested(3)]);
}
