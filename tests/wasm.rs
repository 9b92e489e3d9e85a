//! The JS surface's behaviour suite, run inside wasm32 by wasm-bindgen-test, in Node
//! (`wasm-pack test --node`) and in headless Chromium (`wasm-pack test --headless
//! --chrome`): the same calls a JS user makes, through the same bindings.
//!
//! Run: `scripts/test-wasm.sh` (both), after `scripts/setup.sh`. Without a
//! `run_in_browser` configuration the suite targets Node; wasm-pack's `--chrome` runs it
//! in the browser.

use js_sys::{Array, Float32Array, Reflect, Uint32Array, Uint8Array};
use logitmask::test_support::Rng;
use logitmask::wasm::{JsGuide, JsIndex, JsLogitsBuffer, JsMaskBuffer, JsVocabulary};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

/// The `code` property of a thrown error.
fn code(err: JsValue) -> String {
    Reflect::get(&err, &"code".into())
        .ok()
        .and_then(|c| c.as_string())
        .unwrap_or_else(|| format!("no code: {err:?}"))
}

fn message(err: &JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .unwrap_or_default()
}

/// ids: 0 "a", 1 "b", 2 "ab", 3 none, 4 "x", 5 EOS, 6 "b" again.
fn toy_vocab() -> JsVocabulary {
    let tokens = Array::new();
    for t in ["a", "b", "ab"] {
        tokens.push(&t.into());
    }
    tokens.push(&JsValue::NULL);
    tokens.push(&Uint8Array::from(&b"x"[..]).into());
    tokens.push(&JsValue::UNDEFINED);
    tokens.push(&"b".into());
    let eos = Array::of1(&5.into());
    JsVocabulary::new(tokens.into(), eos.into(), None).unwrap()
}

fn options(pairs: &[(&str, JsValue)]) -> Option<JsValue> {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &(*k).into(), v).unwrap();
    }
    Some(o.into())
}

#[wasm_bindgen_test]
fn vocabulary_reports_size_eos_and_bytes() {
    let v = toy_vocab();
    assert_eq!(v.size(), 7);
    assert_eq!(v.eos_token_ids(), vec![5]);
    assert_eq!(
        v.token_bytes(JsValue::from(2.0)).unwrap(),
        Some(b"ab".to_vec())
    );
    assert_eq!(v.token_bytes(JsValue::from(3.0)).unwrap(), None);
    assert_eq!(v.token_bytes(JsValue::from(99.0)).unwrap(), None);
}

#[wasm_bindgen_test]
fn eager_and_lazy_walk_to_finish() {
    let v = toy_vocab();
    for lazy in [false, true] {
        let index =
            JsIndex::from_regex("(ab)+".into(), &v, options(&[("lazy", lazy.into())])).unwrap();
        let s0 = index.initial_state();
        assert_eq!(index.allowed_tokens(s0.into()).unwrap(), vec![0, 2]);
        let s1 = index
            .next_state(s0.into(), JsValue::from(2.0))
            .unwrap()
            .expect("ab allowed");
        assert!(index.is_final(s1.into()).unwrap());
        assert_eq!(index.allowed_tokens(s1.into()).unwrap(), vec![0, 2, 5]);
        assert_eq!(
            index.next_state(s1.into(), JsValue::from(5.0)).unwrap(),
            Some(s1),
            "EOS keeps the state"
        );
        assert_eq!(
            index.next_state(s0.into(), JsValue::from(5.0)).unwrap(),
            None
        );

        let mut guide = JsGuide::new(&index, None).unwrap();
        guide.advance(JsValue::from(0.0)).unwrap();
        assert_eq!(
            guide.allowed_tokens().unwrap(),
            vec![1, 6],
            "both ids of \"b\""
        );
        guide.advance(JsValue::from(6.0)).unwrap();
        assert!(guide.can_finish());
        let state = guide.state();
        guide.advance(JsValue::from(5.0)).unwrap();
        assert!(guide.is_finished());
        assert_eq!(guide.state(), state);
        assert_eq!(guide.allowed_tokens().unwrap(), vec![5]);
    }
}

#[wasm_bindgen_test]
fn masks_and_logits() {
    let v = toy_vocab();
    let index = JsIndex::from_regex("(ab)+".into(), &v, None).unwrap();
    let guide = JsGuide::new(&index, None).unwrap();
    let mask = Uint32Array::new_with_length(3);
    mask.fill(u32::MAX, 0, 3);
    guide.fill_mask(mask.clone().into()).unwrap();
    assert_eq!(mask.to_vec(), vec![0b101, 0, 0]);
    let e = guide
        .fill_mask(Uint32Array::new_with_length(0).into())
        .err()
        .expect("an error");
    assert_eq!(code(e), "BufferTooSmall");
    let e = guide
        .fill_mask(Array::new().into())
        .err()
        .expect("an error");
    assert_eq!(code(e), "InvalidArgument");

    let logits = Float32Array::new_with_length(9); // padded past the vocabulary
    logits.fill(1.0, 0, 9);
    guide.mask_logits(logits.clone().into()).unwrap();
    let logits = logits.to_vec();
    let kept: Vec<usize> = (0..9).filter(|&i| logits[i] == 1.0).collect();
    assert_eq!(kept, [0, 2]);
    let short = Float32Array::new_with_length(6);
    assert_eq!(
        code(guide.mask_logits(short.into()).err().expect("an error")),
        "BufferTooSmall"
    );
    assert_eq!(
        code(guide.mask_logits(JsValue::from(3)).err().expect("an error")),
        "InvalidArgument"
    );

    let mut buffer = JsLogitsBuffer::new(JsValue::from(8.0)).unwrap();
    let view: Float32Array = buffer.view();
    view.fill(2.0, 0, 8);
    guide.mask_logits_buffer(&mut buffer).unwrap();
    let out = buffer.view().to_vec();
    assert_eq!(out[0], 2.0);
    assert_eq!(out[1], f32::NEG_INFINITY);
    assert_eq!(out[7], f32::NEG_INFINITY);
}

#[wasm_bindgen_test]
fn rollback_reset_and_limits() {
    let v = toy_vocab();
    let index = JsIndex::from_regex("(ab)+".into(), &v, None).unwrap();
    let mut guide = JsGuide::new(&index, options(&[("maxRollback", 2.into())])).unwrap();
    let s0 = guide.state();
    for t in [2.0, 0.0, 1.0] {
        guide.advance(t.into()).unwrap();
    }
    assert_eq!(
        code(guide.rollback(JsValue::from(3.0)).err().expect("an error")),
        "RollbackTooFar"
    );
    guide.rollback(JsValue::from(2.0)).unwrap();
    assert_eq!(guide.allowed_tokens().unwrap(), vec![0, 2, 5]);
    guide.reset();
    assert_eq!(guide.state(), s0);
}

#[wasm_bindgen_test]
fn serialization_round_trip_and_corruption() {
    let v = toy_vocab();
    let index =
        JsIndex::from_regex("a(b|ab)*".into(), &v, options(&[("lazy", true.into())])).unwrap();
    let bytes = index.to_bytes().unwrap();
    let loaded = JsIndex::from_bytes(Uint8Array::from(&bytes[..]).into(), &v, None).unwrap();
    assert_eq!(loaded.state_count(), index.state_count());
    let s = loaded.initial_state();
    assert_eq!(
        loaded.allowed_tokens(s.into()).unwrap(),
        index.allowed_tokens(s.into()).unwrap()
    );
    assert_eq!(
        code(
            JsIndex::from_bytes(
                Uint8Array::from(&bytes[..bytes.len() / 2][..]).into(),
                &v,
                None
            )
            .err()
            .expect("an error")
        ),
        "CorruptIndex"
    );
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    assert_eq!(
        code(
            JsIndex::from_bytes(Uint8Array::from(&flipped[..]).into(), &v, None)
                .err()
                .expect("an error")
        ),
        "CorruptIndex"
    );
    let other = JsVocabulary::new(
        Array::of2(&"a".into(), &"b".into()).into(),
        Array::new().into(),
        None,
    )
    .unwrap();
    assert_eq!(
        code(
            JsIndex::from_bytes(Uint8Array::from(&bytes[..]).into(), &other, None)
                .err()
                .expect("an error")
        ),
        "VocabularyMismatch"
    );
}

#[wasm_bindgen_test]
fn every_error_has_its_code_and_the_module_keeps_working() {
    let v = toy_vocab();
    let e = JsIndex::from_regex("(ab".into(), &v, None)
        .err()
        .expect("an error");
    assert!(message(&e).contains("(ab"), "{}", message(&e));
    assert_eq!(code(e), "InvalidRegex");
    // Over the vocabulary's bytes (a, b, x: the automaton reads no other), eager so that
    // the limit bites at build time.
    let e = JsIndex::from_regex(
        "[ab]{300}".into(),
        &v,
        options(&[("dfaSizeLimit", 1000.into()), ("lazy", false.into())]),
    )
    .err()
    .expect("an error");
    assert_eq!(code(e), "DfaTooLarge");
    let e = JsIndex::from_regex(
        "(ab){5}".into(),
        &v,
        options(&[("maxStates", 2.into()), ("lazy", false.into())]),
    )
    .err()
    .expect("an error");
    assert_eq!(code(e), "TooManyStates");
    let e = JsIndex::from_regex("a".into(), &v, options(&[("lazzy", true.into())]))
        .err()
        .expect("an error");
    assert_eq!(code(e), "InvalidArgument");
    let e = JsIndex::from_regex("a".into(), &v, Some(3.into()))
        .err()
        .expect("an error");
    assert_eq!(code(e), "InvalidArgument");

    let index = JsIndex::from_regex("(ab)+".into(), &v, None).unwrap();
    assert_eq!(
        code(
            index
                .allowed_tokens(JsValue::from(0.0))
                .err()
                .expect("an error")
        ),
        "InvalidState"
    );
    assert_eq!(
        code(
            index
                .allowed_tokens(JsValue::from(123456.0))
                .err()
                .expect("an error")
        ),
        "InvalidState"
    );
    assert_eq!(
        code(index.is_final(JsValue::from(-1.0)).err().expect("an error")),
        "InvalidState"
    );
    let mut guide = JsGuide::new(&index, None).unwrap();
    assert_eq!(
        code(guide.advance(JsValue::from(7.0)).err().expect("an error")),
        "UnknownTokenId"
    );
    assert_eq!(
        code(guide.advance(JsValue::from(-1.0)).err().expect("an error")),
        "UnknownTokenId"
    );
    assert_eq!(
        code(guide.advance(JsValue::from(1.5)).err().expect("an error")),
        "InvalidArgument"
    );
    let before = guide.state();
    assert_eq!(
        code(guide.advance(JsValue::from(4.0)).err().expect("an error")),
        "TokenNotAllowed"
    );
    assert_eq!(
        code(guide.advance(JsValue::from(3.0)).err().expect("an error")),
        "TokenNotAllowed"
    ); // no text
    assert_eq!(guide.state(), before);

    let bad = Array::of1(&JsValue::from(42));
    assert_eq!(
        code(
            JsVocabulary::new(bad.into(), Array::new().into(), None)
                .err()
                .unwrap()
        ),
        "InvalidTokenizer"
    );
    assert_eq!(
        code(
            JsVocabulary::new(JsValue::from(1), Array::new().into(), None)
                .err()
                .unwrap()
        ),
        "InvalidTokenizer"
    );
    assert_eq!(
        code(JsLogitsBuffer::new(JsValue::from(-1.0)).err().unwrap()),
        "InvalidArgument"
    );
    assert_eq!(
        code(
            JsIndex::from_regex(JsValue::from(123), &v, None)
                .err()
                .unwrap()
        ),
        "InvalidArgument"
    );

    // Still usable after all of the above.
    let again = JsIndex::from_regex("b+".into(), &v, None).unwrap();
    let mut g = JsGuide::new(&again, None).unwrap();
    g.advance(JsValue::from(1.0)).unwrap();
    assert!(g.can_finish());
}

#[wasm_bindgen_test]
fn date_regex_generates_long_years() {
    // outlines-core 0.2.14's benchmark regex; its leftmost-first DFA cannot finish this.
    let tokens = Array::new();
    for b in 0u8..128 {
        tokens.push(&Uint8Array::from(&[b][..]).into());
    }
    let eos = Array::of1(&128.into());
    let v = JsVocabulary::new(tokens.into(), eos.into(), None).unwrap();
    let date = r"([1-9]|0[1-9]|1[0-9]|2[0-9]|3[0-1])(\.|-|/)([1-9]|0[1-9]|1[0-2])(\.|-|/)([0-9][0-9]|19[0-9][0-9]|20[0-9][0-9])|([0-9][0-9]|19[0-9][0-9]|20[0-9][0-9])(\.|-|/)([1-9]|0[1-9]|1[0-2])(\.|-|/)([1-9]|0[1-9]|1[0-9]|2[0-9]|3[0-1])";
    let index = JsIndex::from_regex(date.into(), &v, None).unwrap();
    let mut guide = JsGuide::new(&index, None).unwrap();
    for b in "12/05/2023".bytes() {
        guide.advance(JsValue::from(b)).unwrap();
    }
    guide.advance(JsValue::from(128.0)).unwrap();
    assert!(guide.is_finished());
}

/// fillMask, maskLogits and maskLogitsBuffer against a scalar oracle, over random sets
/// stored in both forms (bitset and ids) and vocabulary sizes around word (32) and
/// vector (128) boundaries: wasm has its own kernels (simd128 for dense rows and the
/// -inf fill, a reused scratch for sparse fillMask), which the native tests never run.
#[wasm_bindgen_test]
fn masks_match_a_scalar_oracle_over_random_sets() {
    let mut rng = Rng::new(0x0f01);
    let mut forms = (0, 0); // (dense, sparse) rows seen
    let sizes = [
        1usize, 2, 31, 32, 33, 100, 127, 128, 129, 1000, 4099, 70_001, 262_145,
    ];
    for size in sizes {
        // 262,145 ids: past the fixed-size scratch that sparse rows are expanded into
        // (two densities only: its vocabulary takes a while to build).
        let densities: &[(u64, u64)] = if size > 100_000 {
            &[(1, 2000), (1, 2)]
        } else {
            &[(1, 2000), (1, 200), (1, 31), (1, 2), (31, 32), (1, 1)]
        };
        for &(num, den) in densities {
            let mut allowed = vec![false; size];
            for a in allowed.iter_mut().take(size - 1) {
                *a = rng.below_u64(den) < num;
            }
            allowed[size - 1] = true;
            let guide = guide_allowing(&allowed);
            let ids: Vec<u32> = (0..size as u32).filter(|&i| allowed[i as usize]).collect();
            assert_eq!(guide.allowed_tokens().unwrap(), ids, "size {size}");
            let words = size.div_ceil(32);
            if ids.len() >= words {
                forms.0 += 1;
            } else {
                forms.1 += 1;
            }

            for extra in [0, 3] {
                let mask = Uint32Array::new_with_length((words + extra) as u32);
                mask.fill(0xdead_beef, 0, (words + extra) as u32);
                guide.fill_mask(mask.clone().into()).unwrap();
                let mask = mask.to_vec();
                for id in 0..32 * (words + extra) {
                    let want = id < size && allowed[id];
                    assert_eq!(
                        mask[id >> 5] >> (id & 31) & 1 == 1,
                        want,
                        "fillMask: id {id}, size {size}"
                    );
                }
            }

            for padding in [0, 5, 32] {
                let specials = [
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    -0.0,
                    0.0,
                    f32::MIN_POSITIVE,
                    -1.5,
                ];
                let values: Vec<f32> = (0..size + padding)
                    .map(|_| match rng.below_u64(6) {
                        0 => specials[rng.below_u64(specials.len() as u64) as usize],
                        _ => (rng.below_u64(2_000_001) as f32 - 1e6) / 64.0,
                    })
                    .collect();
                let check = |out: &[f32], what: &str| {
                    for (i, (&before, &after)) in values.iter().zip(out).enumerate() {
                        let want = if i < size && allowed[i] {
                            before
                        } else {
                            f32::NEG_INFINITY
                        };
                        assert_eq!(
                            after.to_bits(),
                            want.to_bits(),
                            "{what}: logit {i}, size {size}, padding {padding}"
                        );
                    }
                };
                let logits = Float32Array::from(&values[..]);
                guide.mask_logits(logits.clone().into()).unwrap();
                check(&logits.to_vec(), "maskLogits");
                let mut buffer =
                    JsLogitsBuffer::new(JsValue::from((size + padding) as f64)).unwrap();
                buffer.view().copy_from(&values);
                guide.mask_logits_buffer(&mut buffer).unwrap();
                check(&buffer.view().to_vec(), "maskLogitsBuffer");
            }
        }
    }
    assert!(
        forms.0 >= 20 && forms.1 >= 15,
        "dense and sparse rows both covered: {forms:?}"
    );
}

/// A guide at the start of `a*` over a vocabulary whose id `i` is "a" where `allowed[i]`
/// and "b" elsewhere, but for the last id, EOS (allowed at the start: the empty text
/// matches, so `allowed` must end with `true`).
fn guide_allowing(allowed: &[bool]) -> JsGuide {
    let size = allowed.len();
    let tokens = Array::new();
    for &a in &allowed[..size - 1] {
        tokens.push(&(if a { "a" } else { "b" }).into());
    }
    tokens.push(&JsValue::NULL);
    let v = JsVocabulary::new(
        tokens.into(),
        Array::of1(&((size - 1) as u32).into()).into(),
        None,
    )
    .unwrap();
    let index = JsIndex::from_regex("a*".into(), &v, None).unwrap();
    JsGuide::new(&index, None).unwrap()
}

/// `fillMaskBuffer` of a dense row into buffers at every distance from the row modulo
/// 4 KiB: where the buffer starts a few words past the row, the copy runs backward (a
/// forward `memcpy` stalls there on 4K aliasing); every buffer must hold the same mask.
#[wasm_bindgen_test]
fn mask_buffers_at_every_address_get_the_same_mask() {
    let size = 40_000usize;
    let mut rng = Rng::new(0x4a11);
    let allowed: Vec<bool> = (0..size)
        .map(|i| i == size - 1 || rng.below_u64(2) == 0)
        .collect();
    let guide = guide_allowing(&allowed);
    let words = size.div_ceil(32);
    let want = Uint32Array::new_with_length(words as u32);
    guide.fill_mask(want.clone().into()).unwrap();
    let want = want.to_vec();
    // A buffer holds a fixed-size block at this size, so buffers allocated in a row would
    // share one residue; the logits buffers between them, one float longer each time,
    // step the next buffer's address through every residue modulo 4 KiB.
    let mut kept = Vec::new();
    let mut residues = std::collections::BTreeSet::new();
    for k in 1..=1100 {
        let spacer = JsLogitsBuffer::new(JsValue::from(k as f64)).unwrap();
        let mut buffer = JsMaskBuffer::new(JsValue::from(size as f64)).unwrap();
        let view = buffer.view();
        residues.insert(view.byte_offset() % 4096);
        guide.fill_mask_buffer(&mut buffer).unwrap();
        // Allocated before the view is taken: an allocation may grow (and detach) memory.
        let mut got = vec![0u32; words];
        buffer.view().copy_to(&mut got);
        assert_eq!(got, want, "buffer {k}");
        kept.push((spacer, buffer));
    }
    assert!(residues.len() >= 250, "{} residues", residues.len());
}
