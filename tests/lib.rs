//! logitmask's integration tests: one test binary (one link step, one process that
//! shares the loaded vocabularies), one module per area.
//!
//! * native (`cargo test`): every module but `wasm`; they read real vocabularies and
//!   test data through `common`, and use the crate's one seeded RNG
//!   (`logitmask::test_support::Rng`), as the unit tests do.
//! * wasm32 (`scripts/test-wasm.sh`: `wasm-pack test ... --test lib` in Node and headless
//!   Chromium): only `wasm`, the JS surface's behaviour suite.
//!
//! Run one area with a filter: `cargo test --test lib corpus::`.

#[cfg(not(target_arch = "wasm32"))]
mod common;

#[cfg(not(target_arch = "wasm32"))]
mod bounds;
#[cfg(not(target_arch = "wasm32"))]
mod corpus;
#[cfg(not(target_arch = "wasm32"))]
mod docs;
#[cfg(not(target_arch = "wasm32"))]
mod forced;
#[cfg(not(target_arch = "wasm32"))]
mod fuzz_schemas;
#[cfg(not(target_arch = "wasm32"))]
mod grammars;
#[cfg(not(target_arch = "wasm32"))]
mod json_schema;
#[cfg(not(target_arch = "wasm32"))]
mod json_schema_e2e;
#[cfg(not(target_arch = "wasm32"))]
mod json_schema_suite;
#[cfg(not(target_arch = "wasm32"))]
mod layers;
#[cfg(not(target_arch = "wasm32"))]
mod no_panic;
#[cfg(not(target_arch = "wasm32"))]
mod properties;
#[cfg(not(target_arch = "wasm32"))]
mod real_vocab;
#[cfg(not(target_arch = "wasm32"))]
mod robustness;
#[cfg(not(target_arch = "wasm32"))]
mod schema_automata;
#[cfg(not(target_arch = "wasm32"))]
mod semantics;
#[cfg(not(target_arch = "wasm32"))]
mod slices;
#[cfg(not(target_arch = "wasm32"))]
mod tags;
#[cfg(not(target_arch = "wasm32"))]
mod tokenizers;
#[cfg(not(target_arch = "wasm32"))]
mod vocab_matrix;

#[cfg(all(target_arch = "wasm32", feature = "wasm"))]
mod wasm;
