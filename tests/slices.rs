//! Rows on request through vocabulary slices (src/index/sliced.rs) against rows from
//! one walk of the whole token trie (`row_slices(false)`), on real vocabularies.
//!
//! Patterns and schemas are drawn from pieces that put states inside JSON strings (with
//! and without counts), identifiers, digits, and near misses of the slices' classes (a
//! class without DEL, without `é`, with a pattern that refuses a letter), so that the
//! check must stop at the right character. Two indexes are walked side by side with the
//! same random allowed tokens (their state numbers differ: each numbers states in the
//! order it meets them), and every row must be identical. Each test also requires that
//! slices served a share of the rows, so that it cannot pass by never using them.

use std::sync::Arc;

use crate::common::{id_of, o200k, r50k, read_tiktoken, Rng};
use logitmask::{json_schema, Index, IndexConfig, TokenSet, Vocabulary};

/// A random token of `row` with text (EOS left out), or `None` where the row has none.
fn random_text_token(vocab: &Vocabulary, row: &TokenSet, rng: &mut Rng) -> Option<u32> {
    let text: Vec<u32> = row.iter().filter(|&id| !vocab.is_eos(id)).collect();
    (!text.is_empty()).then(|| text[rng.below(text.len())])
}

/// Pieces of patterns, `{n}` standing for a random count.
const PIECES: [&str; 23] = [
    r#""(?:[^"\\\x00-\x1F]|\\["\\/bfnrt]){0,{n}}""#,
    r#""(?:[^"\\\x00-\x1F]|\\["\\/bfnrt])*""#,
    r#"[^"\\\x00-\x1F]{{n}}"#,
    r#"[^"\\\x00-\x1F\x7F]{0,{n}}"#,
    r#"[^"\\\x00-\x1Fé]*"#,
    r#"[a-z]{1,{n}}"#,
    r#"[a-zA-Z0-9_-]+"#,
    r#"[a-zA-Z0-9]{{n}}"#,
    r#"[0-9]{1,{n}}"#,
    r#"[a-f0-9]{8}"#,
    r#"(?:foo|bar|baz)"#,
    r#"[ ]?"#,
    r#"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"#,
    r#"(?:[^"\\\x00-\x1F]{0,5}|[0-9]{0,40})"#,
    r#"[^"\\\x00-\x1Fq]{0,{n}}x"#,
    r#".{0,{n}}"#,
    // Strings that refuse a few characters (the JSON string slice minus some bytes),
    // ASCII only, and a near miss: `#` refused at first, allowed after a digit.
    r#""[^"\\\x00-\x1F<>*#%&:+?/]*""#,
    r#""[a-zA-Z0-9_-]{1,{n}}""#,
    r#""[^"\\\x00-\x1F\x{80}-\x{10FFFF}]{0,{n}}""#,
    r#""(?:[a-z]|[0-9]#?)*""#,
    // Characters of two bytes, not longer: some lead bytes refused, not all.
    r#""[^"\\\x00-\x1F\x{800}-\x{10FFFF}]*""#,
    // Words after spaces, outside strings: led tokens (` foo`) taken in bulk where the
    // space leads to a state that covers the letters, and near misses (a word count, a
    // digit refused after the space).
    r#"(?:[ ]+[a-z]{1,{n}})*"#,
    r#"[ \t\n]*(?:[a-z][a-z0-9_]*|[1-9][0-9]*)[ ]*[-+*/=]"#,
];

fn random_pattern(rng: &mut Rng) -> String {
    let mut p = String::new();
    for _ in 0..1 + rng.below(3) {
        let piece = PIECES[rng.below(PIECES.len())];
        let n = [1, 2, 3, 5, 8, 13, 31, 32, 33, 40, 200][rng.below(11)];
        p.push_str(&piece.replace("{n}", &n.to_string()));
    }
    p
}

fn random_string_schema(rng: &mut Rng) -> String {
    let mut keys = vec![r#""type":"string""#.to_string()];
    if rng.chance(1, 2) {
        keys.push(format!(
            r#""maxLength":{}"#,
            [1, 4, 16, 31, 32, 33, 100][rng.below(7)]
        ));
    }
    if rng.chance(1, 3) {
        keys.push(format!(r#""minLength":{}"#, rng.below(6)));
    }
    if rng.chance(1, 3) {
        let patterns = [
            r"^[a-z0-9-]+$",
            r"^[A-Z][a-z]*$",
            r"^\\d{3}-\\d{4}$",
            r"^[^q]*$",
            r"^.*x$",
        ];
        keys.push(format!(
            r#""pattern":"{}""#,
            patterns[rng.below(patterns.len())]
        ));
    }
    if rng.chance(1, 4) {
        let formats = ["date-time", "email", "uuid", "uri"];
        keys = vec![
            r#""type":"string""#.into(),
            format!(r#""format":"{}""#, formats[rng.below(formats.len())]),
        ];
    }
    format!("{{{}}}", keys.join(","))
}

fn random_schema(rng: &mut Rng) -> String {
    let props: Vec<String> = (0..1 + rng.below(3))
        .map(|i| {
            let value = match rng.below(4) {
                0 => r#"{"type":"integer"}"#.to_string(),
                1 => format!(
                    r#"{{"type":"array","items":{},"maxItems":3}}"#,
                    random_string_schema(rng)
                ),
                _ => random_string_schema(rng),
            };
            format!(r#""p{i}":{value}"#)
        })
        .collect();
    format!(
        r#"{{"type":"object","properties":{{{}}},"required":["p0"]}}"#,
        props.join(",")
    )
}

/// Walks `a` (slices) and `b` (whole-trie walks) side by side with random allowed
/// tokens for `steps` steps, `walks` times; every row must be equal.
fn assert_same_rows_along_walks(
    a: &Index,
    b: &Index,
    rng: &mut Rng,
    walks: usize,
    steps: usize,
    what: &str,
) {
    for _ in 0..walks {
        let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
        for step in 0..steps {
            let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
            assert!(
                *ra == *rb,
                "{what}: step {step}: {} ids through slices, {} by a whole walk",
                ra.len(),
                rb.len()
            );
            let Some(id) = random_text_token(a.vocabulary(), &ra, rng) else {
                break;
            };
            sa = a.next_state(sa, id).unwrap().expect("allowed");
            sb = b.next_state(sb, id).unwrap().expect("allowed by both");
        }
    }
}

/// Slices on, or the oracle: one whole walk per row. Rows from the bounds of counts
/// are off in both, so that every row here is the slices' own (tests/bounds.rs tests
/// bounds over slices).
fn lazy(slices: bool) -> IndexConfig {
    IndexConfig::new()
        .lazy(false)
        .lazy(true)
        .row_slices(slices)
        .row_bounds(false)
}

fn check_patterns(vocab: &Arc<Vocabulary>, seed: u64, cases: usize) {
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let mut rng = Rng::new(seed);
    let (mut rows, mut sliced) = (0, 0);
    for case in 0..cases {
        let pattern = random_pattern(&mut rng);
        let a = Index::with_config(&pattern, vocab, &lazy(true)).unwrap();
        let b = Index::with_config(&pattern, vocab, &lazy(false)).unwrap();
        assert_same_rows_along_walks(&a, &b, &mut rng, 3, 12, &format!("case {case}: {pattern}"));
        rows += a.state_count();
        sliced += a.sliced_row_count();
        assert_eq!(b.sliced_row_count(), 0);
    }
    // Not a vacuous pass: a good share of the rows computed went through slices.
    assert!(
        sliced * 5 >= rows,
        "only {sliced} of {rows} rows used slices"
    );
}

#[test]
fn sliced_rows_equal_whole_walks_for_random_patterns_r50k() {
    check_patterns(&r50k(), 1, 60);
}

#[test]
fn sliced_rows_equal_whole_walks_for_random_patterns_o200k() {
    check_patterns(&o200k(), 2, 15);
}

#[test]
fn sliced_rows_equal_whole_walks_for_random_schemas() {
    let vocab = r50k();
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let config = json_schema::Config::new().whitespace(Some("[ ]?"));
    let mut rng = Rng::new(3);
    let (mut rows, mut sliced, mut compiled) = (0, 0, 0);
    for case in 0..40 {
        let schema = random_schema(&mut rng);
        // Some draws are unsatisfiable (minLength over maxLength): both must refuse them.
        let Ok(a) = Index::from_json_schema_str(&schema, &vocab, &lazy(true), &config) else {
            assert!(Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).is_err());
            continue;
        };
        compiled += 1;
        let b = Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).unwrap();
        assert_same_rows_along_walks(&a, &b, &mut rng, 3, 25, &format!("case {case}: {schema}"));
        rows += a.state_count();
        sliced += a.sliced_row_count();
    }
    assert!(compiled >= 30, "only {compiled} of 40 schemas compiled");
    assert!(
        sliced * 5 >= rows,
        "only {sliced} of {rows} rows used slices"
    );
}

#[test]
fn strings_that_refuse_a_few_characters_take_the_json_slice_minus_those() {
    // An identifier (`_` and `-` beside letters and digits) and a string without a few
    // punctuation characters: rows through slices, equal to whole walks.
    let vocab = r50k();
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let config = json_schema::Config::new();
    for pattern in [r"^[0-9a-zA-Z_-]{1,255}$", r"^[^<>*#.%&:\\\\+?/]*$"] {
        let schema = format!(r#"{{"type":"string","pattern":"{pattern}"}}"#);
        let a = Index::from_json_schema_str(&schema, &vocab, &lazy(true), &config).unwrap();
        let b = Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).unwrap();
        let id = |t: &[u8]| id_of(&vocab, t);
        let quote = id(b"\"");
        let (sa, sb) = (
            a.next_state(a.initial_state(), quote).unwrap().unwrap(),
            b.next_state(b.initial_state(), quote).unwrap().unwrap(),
        );
        let before = a.sliced_row_count();
        let row = a.allowed_tokens(sa).unwrap();
        assert_eq!(
            a.sliced_row_count(),
            before + 1,
            "{pattern}: not through slices"
        );
        assert!(
            *row == *b.allowed_tokens(sb).unwrap(),
            "{pattern}: rows differ"
        );
        assert!(row.contains(id(b"abc")) && !row.contains(id(b".")));
        let mut rng = Rng::new(7);
        assert_same_rows_along_walks(&a, &b, &mut rng, 5, 20, pattern);
    }
}

#[test]
fn a_count_that_runs_out_is_covered_only_as_far_as_it_goes() {
    // Inside a string of at most 3 characters, tokens of 4 characters or more are
    // refused although every one of their characters is a string character.
    let vocab = Arc::new(
        Vocabulary::new(
            (0..=255u8).map(|b| Some(vec![b])).chain(
                ["ab", "abc", "abcd", "abcde", "a\"", "\"", "é"]
                    .map(|t| Some(t.as_bytes().to_vec())),
            ),
            &[],
        )
        .unwrap(),
    );
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let a = Index::with_config(r#""[^"\\\x00-\x1F]{0,3}""#, &vocab, &lazy(true)).unwrap();
    let b = Index::with_config(r#""[^"\\\x00-\x1F]{0,3}""#, &vocab, &lazy(false)).unwrap();
    let open = a
        .next_state(a.initial_state(), u32::from(b'"'))
        .unwrap()
        .unwrap();
    let row = a.allowed_tokens(open).unwrap();
    let id = |t: &str| {
        256 + ["ab", "abc", "abcd", "abcde", "a\"", "\"", "é"]
            .iter()
            .position(|x| *x == t)
            .unwrap() as u32
    };
    assert!(row.contains(id("abc")) && row.contains(id("a\"")) && row.contains(id("é")));
    assert!(!row.contains(id("abcd")) && !row.contains(id("abcde")));
    let open_b = b
        .next_state(b.initial_state(), u32::from(b'"'))
        .unwrap()
        .unwrap();
    assert!(*row == *b.allowed_tokens(open_b).unwrap());
}

/// Walks `index` along tokens drawn from its rows with a fixed seed (the same rows give
/// the same tokens), `steps` steps: per step, the state count before the row and whether
/// slices served it; `Err(step)` where a row is refused on a size limit.
fn seeded_walk(index: &Index, seed: u64, steps: usize) -> Result<Vec<(usize, bool)>, usize> {
    let mut rng = Rng::new(seed);
    let mut s = index.initial_state();
    let mut out = Vec::new();
    for step in 0..steps {
        let (states, sliced) = (index.dfa_state_count(), index.sliced_row_count());
        let row = index.allowed_tokens(s).map_err(|_| step)?;
        out.push((states, index.sliced_row_count() > sliced));
        let text: Vec<u32> = row
            .iter()
            .filter(|&id| !index.vocabulary().is_eos(id))
            .collect();
        if text.is_empty() {
            break;
        }
        s = index
            .next_state(s, text[rng.below(text.len())])
            .unwrap()
            .expect("allowed");
    }
    Ok(out)
}

#[test]
fn rows_past_half_the_size_limit_still_use_slices_and_stay_exact() {
    // A long counted string: every character position is a new automaton state, so a
    // walk fills the size limit. Past half of it, the checks may create only a few states
    // per row (`index/sliced.rs`); the rows must still equal whole walks, and slices must
    // still serve some of them (they did not at all once, and whole walks took 2 ms).
    let vocab = r50k();
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let schema = r#"{"type":"array","items":{"type":"string","maxLength":3000},"maxItems":40}"#;
    let config = json_schema::Config::new().whitespace(Some("[ ]?"));
    let with_limit = |bytes: usize| {
        let c = lazy(true).dfa_size_limit(Some(bytes));
        Index::from_json_schema_str(schema, &vocab, &c, &config).unwrap()
    };
    let (seed, steps) = (11, 400);
    // The smallest power-of-two limit the walk fits in: it then runs past half of it,
    // since it did not fit in half as much.
    let mut bytes = 1 << 26;
    assert!(seeded_walk(&with_limit(bytes), seed, steps).is_ok());
    let half_states = loop {
        let index = with_limit(bytes / 2);
        if seeded_walk(&index, seed, steps).is_err() {
            break index.dfa_state_count();
        }
        bytes /= 2;
        assert!(bytes > 1 << 12, "the walk never reached a size limit");
    };
    let index = with_limit(bytes);
    let walk = seeded_walk(&index, seed, steps).unwrap();
    let past_half = walk.iter().filter(|&&(states, _)| states >= half_states);
    let (rows, sliced) = past_half.fold((0, 0), |(r, s), &(_, x)| (r + 1, s + usize::from(x)));
    assert!(rows >= 10, "only {rows} rows past half the limit");
    assert!(
        sliced * 4 >= rows,
        "slices served {sliced} of {rows} rows past half the limit"
    );
    let oracle = Index::from_json_schema_str(schema, &vocab, &lazy(false), &config).unwrap();
    let mut rng = Rng::new(seed);
    let (mut a, mut b) = (index.initial_state(), oracle.initial_state());
    for step in 0..walk.len() {
        let (ra, rb) = (
            index.allowed_tokens(a).unwrap(),
            oracle.allowed_tokens(b).unwrap(),
        );
        assert!(*ra == *rb, "step {step}: rows differ");
        let Some(id) = random_text_token(&vocab, &ra, &mut rng) else {
            break;
        };
        a = index.next_state(a, id).unwrap().expect("allowed");
        b = oracle.next_state(b, id).unwrap().expect("allowed by both");
    }
}

/// Objects with many declared names that share prefixes with each other and with real
/// tokens (`name`, `names`, `na`...), where undeclared names are allowed (or, in some
/// draws, filtered or forbidden, where the shortcut must not apply).
fn random_object_schema(rng: &mut Rng) -> String {
    const WORDS: [&str; 24] = [
        "name",
        "names",
        "na",
        "n",
        "type",
        "types",
        "id",
        "ids",
        "identifier",
        "description",
        "desc",
        "value",
        "values",
        "url",
        "uri",
        "data",
        "date",
        "key",
        "keys",
        "title",
        "item",
        "items",
        "é",
        "a b",
    ];
    let count = 2 + rng.below(WORDS.len() - 2);
    let mut names: Vec<&str> = Vec::new();
    while names.len() < count {
        let w = WORDS[rng.below(WORDS.len())];
        if !names.contains(&w) {
            names.push(w);
        }
    }
    let props: Vec<String> = names
        .iter()
        .map(|n| {
            let value = [
                "{\"type\":\"integer\"}",
                "{\"type\":\"string\",\"maxLength\":8}",
                "{}",
                "{\"enum\":[true]}",
            ][rng.below(4)];
            format!(r#""{n}":{value}"#)
        })
        .collect();
    let extra = match rng.below(8) {
        0 => r#","additionalProperties":{"type":"integer"}"#,
        1 => r#","additionalProperties":false"#,
        2 => r#","propertyNames":{"maxLength":5}"#,
        3 => r#","maxProperties":2"#,
        4 => r#","patternProperties":{"^x":{"type":"null"}}"#,
        _ => "",
    };
    let required = if rng.below(2) == 0 {
        format!(r#","required":["{}"]"#, names[rng.below(names.len())])
    } else {
        String::new()
    };
    format!(
        r#"{{"type":"object","properties":{{{}}}{extra}{required}}}"#,
        props.join(",")
    )
}

#[test]
fn key_starts_that_allow_undeclared_names_take_every_string_token_exactly() {
    let vocab = r50k();
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let config = json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    let mut rng = Rng::new(7);
    let mut key_starts = 0;
    for case in 0..40 {
        let schema = random_object_schema(&mut rng);
        let a = Index::from_json_schema_str(&schema, &vocab, &lazy(true), &config).unwrap();
        let b = Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).unwrap();
        // Nested free-form values reach key starts below the top level too.
        assert_same_rows_along_walks(&a, &b, &mut rng, 8, 30, &format!("case {case}: {schema}"));
        key_starts += a.key_start_row_count();
        assert_eq!(b.key_start_row_count(), 0);
    }
    // Not a vacuous pass: key starts took the shortcut.
    assert!(
        key_starts >= 25,
        "only {key_starts} key starts took every string token"
    );
}

#[test]
fn tokens_past_the_slice_are_decided_by_their_suffixes_exactly() {
    // The rows of states inside strings take the tokens outside the JSON string slice
    // from their suffixes (`vocabulary/slices.rs`, `Suffixes`): after a string that
    // loops on every character, after each position of a counted one (one that runs
    // out, and one longer than any token), and at a key's start, where declared names
    // lead to states of their own until a character leaves them all. Tokens here have
    // suffixes of every kind: a quote and what follows it, an escape, a newline, half a
    // character at the end (`\xC3`), bytes no character starts with, and characters
    // alone past 32 of them, and keys that run on into a string value (whose state
    // loops like a key's, but after a quote: no cut there).
    let a40 = "a".repeat(40);
    let mut words: Vec<Vec<u8>> = [
        "ab",
        "abc",
        "\"",
        "ab\"",
        "abc\"",
        "abcd\",",
        "x\", \"",
        "\":",
        "na\":",
        "name\":",
        "nam",
        "names\": 1",
        "\\n",
        "ab\\\"cd",
        "ab\\u00e9",
        "x\n",
        "\n\n",
        "é",
        "aé\"",
        "\", \"name",
        " \"",
        "}\"",
        "names\": \"ab",
        "names\":\"ab",
        "zz\": \"ab",
        "na\": \"w",
        "x\": \"abc",
        "w1\": \"",
    ]
    .iter()
    .map(|w| w.as_bytes().to_vec())
    .collect();
    words.extend([
        b"a\xC3".to_vec(),
        b"abc\xC3".to_vec(),
        b"\xC3".to_vec(),
        b"ab\xE2\x82".to_vec(),
        b"\xA9\xA9".to_vec(),
        b"a\xFFb".to_vec(),
        a40.clone().into_bytes(),
        format!("{a40}\"").into_bytes(),
        [a40.as_bytes(), b"\xC3"].concat(),
    ]);
    // Mostly string characters, as real vocabularies are: the slice keeps its rest
    // trie (and suffixes) only then.
    words.extend((0..2000).map(|i| format!("w{i}").into_bytes()));
    let vocab = Arc::new(
        Vocabulary::new(
            (0..=255u8)
                .map(|b| Some(vec![b]))
                .chain(words.iter().map(|w| Some(w.clone()))),
            &[],
        )
        .unwrap(),
    );
    // Slices now, not once the first rows have walked their cost (WALKS_BEFORE_SLICES).
    vocab.prepare_slices();
    let config = json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    // Each schema with texts to reach byte by byte (every byte is a token here) before
    // the random walks: a key's start, inside a declared name, inside an undeclared one.
    let object = r#"{"type":"object","properties":{"name":{"type":"integer"},"names":{"type":"string"},"na":{}}}"#;
    let cases: [(&str, &[&str]); 6] = [
        (r#"{"type":"string"}"#, &[""]),
        (r#"{"type":"string","maxLength":3}"#, &[""]),
        (r#"{"type":"string","maxLength":60}"#, &["", "\"ab"]),
        (r#"{"type":"string","minLength":2,"maxLength":45}"#, &[""]),
        (
            object,
            &["{\"", "{\"n", "{\"nam", "{\"w", "{\"names\": \"x\", \""],
        ),
        (
            r#"{"type":"array","items":{"type":"string","maxLength":41}}"#,
            &["", "[\"abc\", \""],
        ),
    ];
    for (schema, prefixes) in cases {
        let a = Index::from_json_schema_str(schema, &vocab, &lazy(true), &config).unwrap();
        let b = Index::from_json_schema_str(schema, &vocab, &lazy(false), &config).unwrap();
        let mut rng = Rng::new(5);
        for prefix in prefixes {
            let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
            for (i, &byte) in prefix.as_bytes().iter().enumerate() {
                let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
                assert!(*ra == *rb, "{schema}: rows differ after {:?}", &prefix[..i]);
                sa = a.next_state(sa, u32::from(byte)).unwrap().expect("allowed");
                sb = b.next_state(sb, u32::from(byte)).unwrap().expect("allowed");
            }
            for _ in 0..8 {
                let (mut sa, mut sb) = (sa, sb);
                for step in 0..40 {
                    let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
                    assert!(
                        *ra == *rb,
                        "{schema}: after {prefix:?}, step {step}: {} ids through slices, {} by a whole walk",
                        ra.len(),
                        rb.len()
                    );
                    let Some(id) = random_text_token(&vocab, &ra, &mut rng) else {
                        break;
                    };
                    sa = a.next_state(sa, id).unwrap().expect("allowed");
                    sb = b.next_state(sb, id).unwrap().expect("allowed by both");
                }
            }
        }
        assert!(a.sliced_row_count() > 0, "{schema}: no row through slices");
    }
}

/// Walks `a` and `b` side by side, each step taking a random allowed token, preferring
/// (`space_first` of the time) one that starts with a space, so that strings under word
/// counts run their counts out; every row must be equal.
fn assert_same_rows_along_wordy_walks(
    a: &Index,
    b: &Index,
    rng: &mut Rng,
    walks: usize,
    what: &str,
) {
    let vocab = a.vocabulary();
    for _ in 0..walks {
        let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
        for step in 0..60 {
            let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
            assert!(
                *ra == *rb,
                "{what}: step {step}: {} ids through slices, {} by a whole walk",
                ra.len(),
                rb.len()
            );
            let text: Vec<u32> = ra.iter().filter(|&id| !vocab.is_eos(id)).collect();
            if text.is_empty() {
                break;
            }
            let spaced: Vec<u32> = text
                .iter()
                .copied()
                .filter(|&id| {
                    vocab
                        .token_bytes(id)
                        .is_some_and(|t| t.first() == Some(&b' '))
                })
                .collect();
            let pool = if !spaced.is_empty() && rng.chance(2, 3) {
                &spaced
            } else {
                &text
            };
            let id = pool[rng.below(pool.len())];
            sa = a.next_state(sa, id).unwrap().expect("allowed");
            sb = b.next_state(sb, id).unwrap().expect("allowed by both");
        }
    }
}

#[test]
fn strings_under_word_counts_take_their_rows_from_word_shapes_exactly() {
    // A word character and a space lead to different states inside these strings, and
    // each class to one same state (`vocabulary/shapes.rs`): rows from the shapes of the
    // ASCII tokens, the rest walked. Near misses too: `\w` (punctuation splits the word
    // class), a pattern that counts only ASCII spaces (a no-break space is a word
    // character there, a space to `\s`), ones that refuse some word characters (always,
    // or only at a word's start, where the check must stop), and words under `minLength`. Real vocabularies, with their non-ASCII tokens, tokens of
    // several spaces, and spaces inside tokens (`a b` in o200k).
    let config = json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    let patterns = [
        r"^(?:\\S+\\s+){0,{n}}\\S+$",
        r"^(?:\\S+\\s){0,{n}}\\S+$",
        r"^(?:\\S+ +){0,{n}}\\S*$",
        r"^(?:\\w+\\s+){0,{n}}\\w+$",
        r"^(?:[^.\\s]+\\s+){0,{n}}[^.\\s]+$",
        r"^\\S+(?:\\s+[^.\\s]\\S*){0,{n}}$",
        r"^\\S+$",
    ];
    let mut rng = Rng::new(11);
    for (v, vocab) in [r50k(), o200k()].iter().enumerate() {
        vocab.prepare_slices(); // not once the first rows have walked their cost
        let mut shaped = 0;
        for case in 0..12 {
            let pattern = patterns[rng.below(patterns.len())]
                .replace("{n}", &[0, 1, 3, 9, 49][rng.below(5)].to_string());
            let max = [8, 30, 33, 100, 500][rng.below(5)];
            let min = if rng.chance(1, 3) { 5 } else { 0 };
            let string = format!(
                r#"{{"type":"string","pattern":"{pattern}","maxLength":{max},"minLength":{min}}}"#
            );
            let schema = if rng.chance(1, 2) {
                format!(r#"{{"type":"array","items":{string},"maxItems":4}}"#)
            } else {
                format!(
                    r#"{{"type":"object","properties":{{"a":{string},"b":{string}}},"required":["a"]}}"#
                )
            };
            let a = Index::from_json_schema_str(&schema, vocab, &lazy(true), &config).unwrap();
            let b = Index::from_json_schema_str(&schema, vocab, &lazy(false), &config).unwrap();
            assert_same_rows_along_wordy_walks(
                &a,
                &b,
                &mut rng,
                4,
                &format!("vocab {v}, case {case}: {schema}"),
            );
            shaped += a.shaped_row_count();
            assert_eq!(b.shaped_row_count(), 0);
        }
        // Not a vacuous pass: word shapes made rows in every vocabulary.
        assert!(
            shaped >= 40,
            "vocab {v}: only {shaped} rows from word shapes"
        );
    }
}

/// A fresh vocabulary's first rows walk the trie (its slices are not built for them:
/// WALKS_BEFORE_SLICES), later rows go through slices once walks have cost about what
/// building them does, and every row equals a whole walk's either way.
#[test]
fn a_fresh_vocabularys_first_rows_walk_until_the_slices_are_worth_building() {
    let vocab = Arc::new(Vocabulary::new(read_tiktoken("r50k_base.tiktoken"), &[50256]).unwrap());
    let config = json_schema::Config::new().whitespace(None);
    let schema = r#"{"type":"array","items":{"type":"string","maxLength":30}}"#;
    let a = Index::from_json_schema_str(schema, &vocab, &lazy(true), &config).unwrap();
    let b = Index::from_json_schema_str(schema, &vocab, &lazy(false), &config).unwrap();
    let mut rng = Rng::new(11);
    let (mut rows, mut first_sliced) = (0, None);
    for walk in 0..40 {
        let (mut sa, mut sb) = (a.initial_state(), b.initial_state());
        for _ in 0..12 {
            let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
            assert!(*ra == *rb, "walk {walk}: rows differ");
            rows += 1;
            if first_sliced.is_none() && a.sliced_row_count() > 0 {
                first_sliced = Some(rows);
            }
            let Some(id) = random_text_token(&vocab, &ra, &mut rng) else {
                break;
            };
            sa = a.next_state(sa, id).unwrap().expect("allowed");
            sb = b.next_state(sb, id).unwrap().expect("allowed by both");
        }
    }
    // The first row inside a string (the array's `["`) was walked; later ones were not all.
    let first = first_sliced.expect("slices served rows once walks had cost them");
    assert!(
        first > 2,
        "the first rows inside strings walk the trie (slices from row {first})"
    );
    assert!(a.sliced_row_count() > 0);
}

#[test]
fn key_starts_inside_intersections_decide_looping_subtrees_exactly() {
    // GeoJSON's schema as found (`Github_trivial---o63308` of the schemabench corpus):
    // a `oneOf` of objects where one branch's `type` is any string (a typo, `emum`),
    // so every branch takes the others' complements and a key's start is a union of
    // intersections, which no free run sees through; the checks stop after a character.
    // After a character or two of a key every declared name is left behind and the
    // state loops on the string's characters: the row's walk of the whole trie takes
    // each such subtree at once (`sliced.rs`, `walk_uncovered`), and must agree with a
    // whole walk token for token.
    let vocab = crate::grammars::llama3();
    vocab.prepare_slices();
    let config = json_schema::Config::new()
        .whitespace(Some("[ ]?"))
        .allow_additional_properties(true);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/testdata/geojson-oneof.json"
    );
    let schema = std::fs::read_to_string(path).unwrap();
    let a = Index::from_json_schema_str(&schema, &vocab, &lazy(true), &config).unwrap();
    let b = Index::from_json_schema_str(&schema, &vocab, &lazy(false), &config).unwrap();
    let open = id_of(&vocab, b"{\"");
    let sa = a.next_state(a.initial_state(), open).unwrap().unwrap();
    let sb = b.next_state(b.initial_state(), open).unwrap().unwrap();
    let (ra, rb) = (a.allowed_tokens(sa).unwrap(), b.allowed_tokens(sb).unwrap());
    assert!(
        *ra == *rb,
        "{} ids with cuts, {} by a whole walk",
        ra.len(),
        rb.len()
    );
    // Not vacuous: the row was walked with cuts, and most string tokens are in it.
    assert_eq!(a.loop_cut_row_count(), 1);
    assert_eq!(a.key_start_row_count(), 0);
    assert!(ra.len() > 100_000, "{} ids", ra.len());
    // Further rows along random walks agree too.
    let mut rng = Rng::new(11);
    assert_same_rows_along_walks(&a, &b, &mut rng, 6, 40, "GeoJSON");
}
