//! The benchmark regexes (`tests/testdata/bench-cases.json`) with real vocabularies
//! (GPT-2 r50k and o200k, read from the tiktoken-rs crate's assets):
//!
//! * no dead ends over every eager state, EOS exactly at final states, every state reaches
//!   a final one (over single-byte tokens, which every real vocabulary has), and sampled
//!   tokens agree between `allowed_tokens` and `next_state`;
//! * hand-written matching strings (Unicode digits and spaces included: `\d`, `\s`, `\w`
//!   are Unicode classes) fully match and are produced by a greedy longest-allowed-token
//!   tokenization through a Guide, then EOS; hand-written non-matching strings are not;
//! * seeded random guide walks never get stuck, offer EOS exactly where the meta regex
//!   fully matches, and lazy and eager indexes agree at every step;
//! * serialization round trips give identical states and rows.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::common::reference::RefDfa;
use crate::common::Rng;
use logitmask::{Guide, Index, IndexConfig, StateId, Vocabulary};
use regex_automata::meta::Regex;

/// Token lookup for one vocabulary.
struct Lookup {
    vocab: Arc<Vocabulary>,
    by_bytes: HashMap<Vec<u8>, Vec<u32>>,
    max_len: usize,
    byte_id: [u32; 256],
    eos: u32,
}

impl Lookup {
    fn new(vocab: Arc<Vocabulary>) -> Lookup {
        let mut by_bytes: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let mut byte_id = [u32::MAX; 256];
        let mut max_len = 0;
        for id in 0..vocab.size() as u32 {
            if vocab.is_eos(id) {
                continue;
            }
            let Some(b) = vocab.token_bytes(id).filter(|b| !b.is_empty()) else {
                continue;
            };
            if b.len() == 1 && byte_id[b[0] as usize] == u32::MAX {
                byte_id[b[0] as usize] = id;
            }
            max_len = max_len.max(b.len());
            by_bytes.entry(b.to_vec()).or_default().push(id);
        }
        assert!(
            byte_id.iter().all(|&i| i != u32::MAX),
            "a real vocabulary has every single byte"
        );
        let eos = vocab.eos_token_ids()[0];
        Lookup {
            vocab,
            by_bytes,
            max_len,
            byte_id,
            eos,
        }
    }

    /// Greedy longest-allowed-token tokenization of `s` through a guide, then EOS.
    /// Returns the token count, or where and why it failed.
    fn produce_greedy(&self, index: &Arc<Index>, s: &[u8]) -> Result<usize, String> {
        let mut guide = Guide::new(index.clone());
        let mut pos = 0;
        let mut count = 0;
        while pos < s.len() {
            let allowed = guide.allowed_tokens().map_err(|e| format!("{e:?}"))?;
            let mut pick = None;
            'len: for l in (1..=self.max_len.min(s.len() - pos)).rev() {
                if let Some(ids) = self.by_bytes.get(&s[pos..pos + l]) {
                    for &id in ids {
                        if allowed.contains(id) {
                            pick = Some((id, l));
                            break 'len;
                        }
                    }
                }
            }
            let Some((id, l)) = pick else {
                return Err(format!(
                    "no allowed token continues at byte {pos} ({:?})",
                    String::from_utf8_lossy(&s[pos..])
                ));
            };
            guide
                .advance(id)
                .map_err(|e| format!("advance({id}) refused an allowed token: {e:?}"))?;
            pos += l;
            count += 1;
        }
        if !guide.can_finish() {
            return Err("the whole string was consumed but EOS is not allowed".into());
        }
        guide
            .advance(self.eos)
            .map_err(|e| format!("EOS refused: {e:?}"))?;
        assert!(guide.is_finished());
        Ok(count)
    }

    /// Feeds `s` byte by byte; Ok(true) if every byte was allowed and EOS then is.
    fn produce_bytes(&self, index: &Arc<Index>, s: &[u8]) -> bool {
        let mut guide = Guide::new(index.clone());
        for &b in s {
            if guide.advance(self.byte_id[b as usize]).is_err() {
                return false;
            }
        }
        guide.can_finish() && guide.advance(self.eos).is_ok()
    }
}

fn oracle(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})$")).unwrap()
}

/// Strings that must fully match, and strings that must not, for each bench regex.
fn samples(name: &str) -> (Vec<&'static str>, Vec<&'static str>) {
    match name {
        "email" => (
            vec!["john.doe@example.com", "a@b.co", "user+tag@sub.domain.org", "first.last@mail.example.co.uk", "x_y-z!#$%&'*+/=?^`{|}~@a-b.c"],
            vec!["john.doe@", "@example.com", "John@example.com", "a@b-.c", "a@b.c-"],
        ),
        "complex_phone" => (
            vec![
                "+1 (555) 123-4567",
                "555-123-4567",
                "+44 20 7946 0958",
                "5551234567",
                "1(555)1234567",
                "555.123.4567",
                // Unicode \d and \s: Arabic-Indic digits, ideographic space.
                "+١ ٥٥٥ ١٢٣ ٤٥٦٧",
                "555\u{3000}123\u{3000}4567",
            ],
            vec!["", "+", "555--1234", "phone: 555", "555-123-4567 ext"],
        ),
        "simple_phone" => (vec!["+14155552671", "12345678", "123456789012345"], vec!["+12345", "01234567", "1234567890123456"]),
        "date" => (
            // The three strings leftmost-first semantics drops (docs/semantics.md, "Every
            // string of the language").
            vec!["12/05/2023", "1/5/1999", "2023/05/12", "31.12.99", "1-1-20", "99.1.31", "05-10-2010"],
            vec!["12/5", "32/01/2020", "2023/13/01", "1/1/123", "12/05/2023/"],
        ),
        "time" => (
            vec!["12:30 pm", "9:05am", "07:45", "1:00 am", "11:5٣", "10:15\u{2003}pm", "12:00\u{3000}am"],
            vec!["13:00", "12:60", "0:30", "12:30 p", "12:30pmx"],
        ),
        "ip" => (
            vec!["192.168.0.1", "255.255.255.255", "0.0.0.0", "10.01.1.001", "8.8.8.8"],
            vec!["256.1.1.1", "1.2.3", "1.2.3.4.5", "192.168.0.", "1.2.3.2555"],
        ),
        "url" => (
            vec![
                "https://example.com/path",
                "http://a.b.io/",
                "example.org",
                "https://my-site.co.uk/some path/ünïcödé_ß",
                "ftp.example.com/a.b-c",
                "https://x.yz/z/",
            ],
            vec!["https://", "https://example", "http//example.com", "example.com/a?b=c", "https://exa_mple.com"],
        ),
        "ssn" => (
            vec!["123-45-6789", "000-00-0000", "١٢٣-٤٥-٦٧٨٩", "१२३-४५-६७८९"],
            vec!["123-45-678", "123456789", "12-345-6789", "123-45-6789-", "abc-de-fghi"],
        ),
        "complex_span_constrained_relation_extraction" => (
            vec![
                "",
                "altruism | is the opposite of | selfishness\n",
                "the moral principle | of | human happiness | (Altruism | quality)\n",
                "'Altruism' | may become | a spiritual practice,\n",
                "altruism | is | virtue\nIt | is a | core aspect | (many | cultures) | (religions | vary)\n",
            ],
            vec![
                "altruism | is | virtue",              // no final newline
                "dog | is | animal\n",                  // words outside the list
                "altruism | is (not) | virtue\n",       // parentheses in the relation
                "altruism || virtue\n",                 // empty relation
                "altruism | is | virtue | (a | b\n",    // unclosed group
            ],
        ),
        other => panic!("no samples for bench regex {other:?}: add some"),
    }
}

/// No dead ends over every eager state: rows non-empty, EOS exactly at finals, sampled
/// allowed tokens lead to states with rows and sampled others are refused by
/// `next_state`, and every state reaches a final state over single-byte tokens.
fn check_eager_states(name: &str, index: &Index, lk: &Lookup, rng: &mut Rng) {
    let states = index.states();
    let set: HashSet<StateId> = states.iter().copied().collect();
    assert_eq!(index.state_count(), states.len());
    assert!(set.contains(&index.initial_state()));
    let size = lk.vocab.size() as u32;
    let mut preds: HashMap<StateId, Vec<StateId>> = HashMap::new();
    for &s in &states {
        let row = index.allowed_tokens(s).unwrap();
        assert!(!row.is_empty(), "{name}: state {s:?} allows nothing");
        assert_eq!(
            row.contains(lk.eos),
            index.is_final(s).unwrap(),
            "{name}: EOS vs final at {s:?}"
        );
        // Sampled ids: membership agrees with next_state.
        for _ in 0..64 {
            let t = rng.below(size as usize) as u32;
            let n = index.next_state(s, t).unwrap();
            assert_eq!(
                row.contains(t),
                n.is_some(),
                "{name}: state {s:?} token {t}"
            );
            if let Some(n) = n {
                assert!(
                    set.contains(&n),
                    "{name}: token {t} from {s:?} leads to {n:?} without a row"
                );
            }
        }
        // Sampled allowed tokens.
        let ids = row.to_vec();
        for _ in 0..16 {
            let t = ids[rng.below(ids.len())];
            let n = index
                .next_state(s, t)
                .unwrap()
                .expect("allowed token has a next state");
            assert!(
                set.contains(&n),
                "{name}: allowed token {t} from {s:?} leads to {n:?} without a row"
            );
        }
        // Single-byte edges for co-reachability.
        for b in 0..=255u8 {
            let t = lk.byte_id[b as usize];
            if let Some(n) = index.next_state(s, t).unwrap() {
                assert!(row.contains(t));
                assert!(
                    set.contains(&n),
                    "{name}: byte {b} from {s:?} leads to {n:?} without a row"
                );
                preds.entry(n).or_default().push(s);
            }
        }
    }
    let mut ok: HashSet<StateId> = states
        .iter()
        .copied()
        .filter(|&s| index.is_final(s).unwrap())
        .collect();
    assert!(!ok.is_empty(), "{name}: no final state");
    let mut stack: Vec<StateId> = ok.iter().copied().collect();
    while let Some(t) = stack.pop() {
        for &p in preds.get(&t).map(Vec::as_slice).unwrap_or(&[]) {
            if ok.insert(p) {
                stack.push(p);
            }
        }
    }
    for &s in &states {
        assert!(
            ok.contains(&s),
            "{name}: no final state is reachable from {s:?}"
        );
    }
}

/// Breadth-first over paired (index state, reference state), at most `max_pairs` pairs:
/// each row is exactly the text tokens whose bytes keep the text completable per the
/// reference (plus EOS where final), and finality agrees. Returns the pairs visited.
fn check_exact_rows(name: &str, index: &Index, r: &RefDfa, lk: &Lookup, max_pairs: usize) -> usize {
    let texts: Vec<(u32, &[u8])> = lk
        .by_bytes
        .iter()
        .flat_map(|(b, ids)| ids.iter().map(move |&id| (id, &b[..])))
        .collect();
    let start = (index.initial_state(), 1u32);
    let mut seen = HashSet::from([start]);
    let mut queue = std::collections::VecDeque::from([start]);
    let mut visited = 0;
    while let Some((s, rs)) = queue.pop_front() {
        visited += 1;
        let row = index.allowed_tokens(s).unwrap();
        assert_eq!(
            index.is_final(s).unwrap(),
            r.fin[rs as usize],
            "{name}: finality of {s:?}"
        );
        let mut expected = 0;
        for &(t, b) in &texts {
            let end = r.viable(rs, b);
            assert_eq!(
                row.contains(t),
                end != 0,
                "{name}: state {s:?}, token {t} {:?}",
                String::from_utf8_lossy(b)
            );
            if end != 0 {
                expected += 1;
                let n = index.next_state(s, t).unwrap().unwrap();
                if seen.len() < max_pairs && seen.insert((n, end)) {
                    queue.push_back((n, end));
                }
            }
        }
        let eos = lk.vocab.eos_token_ids().len() * usize::from(r.fin[rs as usize]);
        assert_eq!(
            row.len(),
            expected + eos,
            "{name}: row of {s:?} has ids beyond the reference's"
        );
    }
    visited
}

/// Seeded random walks through an eager and a lazy guide in lockstep.
fn check_random_walks(
    name: &str,
    eager: &Arc<Index>,
    lazy: &Arc<Index>,
    meta: &Regex,
    lk: &Lookup,
    rng: &mut Rng,
) -> usize {
    let mut finished = 0;
    for walk in 0..12 {
        let mut ge = Guide::new(eager.clone());
        let mut gl = Guide::new(lazy.clone());
        let mut text: Vec<u8> = Vec::new();
        for step in 0..60 {
            let re = ge.allowed_tokens().unwrap();
            let rl = gl.allowed_tokens().unwrap();
            assert!(
                !re.is_empty(),
                "{name}: walk {walk} stuck after {:?}",
                String::from_utf8_lossy(&text)
            );
            assert_eq!(
                *re,
                *rl,
                "{name}: eager and lazy rows differ after {:?}",
                String::from_utf8_lossy(&text)
            );
            let full = meta.is_match(&text[..]);
            assert_eq!(
                ge.can_finish(),
                full,
                "{name}: can_finish after {:?}",
                String::from_utf8_lossy(&text)
            );
            assert_eq!(gl.can_finish(), full);
            assert_eq!(re.contains(lk.eos), full);
            // Finish a third of the time when possible (EOS is 1 id among thousands).
            let t = if full && (rng.below(3) == 0 || step == 59) {
                lk.eos
            } else {
                // Uniform among the allowed ids; half the time among short ones only, so
                // that walks also explore character by character.
                let k = rng.below(re.len());
                let t = re.iter().nth(k).unwrap();
                if rng.below(2) == 0 {
                    let short: Vec<u32> = (0..=255u8)
                        .map(|b| lk.byte_id[b as usize])
                        .filter(|&t| re.contains(t))
                        .collect();
                    if short.is_empty() {
                        t
                    } else {
                        short[rng.below(short.len())]
                    }
                } else {
                    t
                }
            };
            ge.advance(t)
                .unwrap_or_else(|e| panic!("{name}: eager refused allowed token {t}: {e:?}"));
            gl.advance(t).unwrap_or_else(|e| {
                panic!("{name}: lazy refused token {t} that eager allows: {e:?}")
            });
            if t == lk.eos {
                assert!(
                    meta.is_match(&text[..]),
                    "{name}: finished with {:?}, not a full match",
                    String::from_utf8_lossy(&text)
                );
                assert!(ge.is_finished() && gl.is_finished());
                finished += 1;
                break;
            }
            text.extend_from_slice(lk.vocab.token_bytes(t).unwrap());
            assert_eq!(
                eager.is_final(ge.state()).unwrap(),
                lazy.is_final(gl.state()).unwrap()
            );
        }
    }
    finished
}

fn check_round_trip(name: &str, index: &Index, vocab: &Arc<Vocabulary>) {
    let bytes = index.to_bytes().unwrap();
    let loaded =
        Index::from_bytes(&bytes, vocab).unwrap_or_else(|e| panic!("{name}: from_bytes: {e:?}"));
    assert_eq!(
        loaded.states(),
        index.states(),
        "{name}: states after round trip"
    );
    assert_eq!(loaded.initial_state(), index.initial_state());
    for s in index.states() {
        assert_eq!(
            *loaded.allowed_tokens(s).unwrap(),
            *index.allowed_tokens(s).unwrap(),
            "{name}: row of {s:?}"
        );
        assert_eq!(loaded.is_final(s).unwrap(), index.is_final(s).unwrap());
    }
    assert_eq!(
        loaded.to_bytes().unwrap(),
        bytes,
        "{name}: re-serialization differs"
    );
    assert_eq!(loaded.distinct_row_count(), index.distinct_row_count());
}

fn run_vocab(vocab_name: &str, vocab: Arc<Vocabulary>, seed: u64, max_pairs: usize) {
    let t0 = std::time::Instant::now();
    let lk = Lookup::new(vocab.clone());
    let mut rng = Rng::new(seed);
    let regexes = crate::common::bench_regexes();
    assert_eq!(
        regexes.len(),
        9,
        "bench-cases.json has the nine outlines-core regexes"
    );
    for (name, pattern) in &regexes {
        let name = &format!("{vocab_name}/{name}");
        let t = std::time::Instant::now();
        let meta = oracle(pattern);
        let eager =
            Arc::new(Index::with_config(pattern, &vocab, &IndexConfig::new().lazy(false)).unwrap());
        let lazy =
            Arc::new(Index::with_config(pattern, &vocab, &IndexConfig::new().lazy(true)).unwrap());
        assert!(!eager.is_lazy() && lazy.is_lazy());
        let build = t.elapsed();

        check_eager_states(name, &eager, &lk, &mut rng);
        let r = RefDfa::new(pattern);
        let pairs = check_exact_rows(name, &eager, &r, &lk, max_pairs);

        let (yes, no) = samples(name.split('/').nth(1).unwrap());
        for s in yes {
            assert!(
                meta.is_match(s.as_bytes()),
                "{name}: sample {s:?} does not match per the meta regex"
            );
            assert!(
                eager.dfa().unwrap().is_match(s.as_bytes()),
                "{name}: Dfa::is_match({s:?}) is false"
            );
            for index in [&eager, &lazy] {
                index.allowed_tokens(index.initial_state()).unwrap();
                lk.produce_greedy(index, s.as_bytes()).unwrap_or_else(|e| {
                    panic!(
                        "{name} (lazy {}): {s:?} cannot be produced: {e}",
                        index.is_lazy()
                    )
                });
                assert!(
                    lk.produce_bytes(index, s.as_bytes()),
                    "{name}: {s:?} byte by byte"
                );
            }
        }
        for s in no {
            assert!(
                !meta.is_match(s.as_bytes()),
                "{name}: negative sample {s:?} matches per the meta regex"
            );
            assert!(
                !eager.dfa().unwrap().is_match(s.as_bytes()),
                "{name}: Dfa::is_match({s:?}) is true"
            );
            for index in [&eager, &lazy] {
                assert!(
                    !lk.produce_bytes(index, s.as_bytes()),
                    "{name}: non-matching {s:?} was produced byte by byte"
                );
                assert!(
                    lk.produce_greedy(index, s.as_bytes()).is_err(),
                    "{name}: non-matching {s:?} was produced"
                );
            }
        }

        let finished = check_random_walks(name, &eager, &lazy, &meta, &lk, &mut rng);
        assert!(finished > 0, "{name}: no random walk reached EOS");

        check_round_trip(name, &eager, &vocab);
        // A lazy index completes its rows when serialized. Its DFA, determinized on
        // demand, is not minimized: at least as many states as the eager index.
        let lazy_bytes = lazy.to_bytes().unwrap();
        assert!(
            lazy.state_count() >= eager.state_count(),
            "{name}: completed lazy vs eager state count"
        );
        let loaded = Index::from_bytes(&lazy_bytes, &vocab).unwrap();
        assert_eq!(loaded.state_count(), lazy.state_count());
        eprintln!(
            "{name}: {} states ({} in the reference), {pairs} pairs checked exactly, {} distinct rows, build {:?}, checks {:?}",
            eager.state_count(),
            r.trans.len() - 1,
            eager.distinct_row_count(),
            build,
            t.elapsed()
        );
    }
    eprintln!("{vocab_name}: total {:?}", t0.elapsed());
}

#[test]
fn bench_regexes_with_r50k() {
    run_vocab("r50k", crate::common::r50k(), 0x5eed_0050, 100_000);
}

#[test]
fn bench_regexes_with_o200k() {
    // complex_phone has 4,600 reference states; 1,500 pairs keep this under ~5 s.
    run_vocab("o200k", crate::common::o200k(), 0x5eed_0200, 1_500);
}

/// The helpers can fail: a string outside the language is refused, and one whose token
/// is missing from a guide is reported.
#[test]
fn helpers_detect_failures() {
    let vocab = Arc::new(
        Vocabulary::new(
            (0..=255u8)
                .map(|b| Some(vec![b]))
                .chain([Some(b"12".to_vec()), None]),
            &[257],
        )
        .unwrap(),
    );
    let lk = Lookup::new(vocab.clone());
    let index = Arc::new(crate::common::eager_index(r"[0-9]{2}/[0-9]{2}", &vocab).unwrap());
    assert_eq!(lk.produce_greedy(&index, b"12/05"), Ok(4)); // "12" "/" "0" "5"
    assert!(lk.produce_greedy(&index, b"12/5").is_err());
    assert!(lk.produce_greedy(&index, b"1x/05").is_err());
    assert!(!lk.produce_bytes(&index, b"12/0"));
}
