#!/usr/bin/env bash
# The wasm-bindgen-test behaviour suite (tests/wasm.rs, the one module of the integration
# test binary tests/lib.rs that compiles for wasm32) in Node and in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$(cat .cache/wasm-toolchain 2>/dev/null || echo stable)
export RUSTUP_TOOLCHAIN=$toolchain
wasm-pack test --node --mode no-install -- --features wasm --test lib
# webdriver.json (crate root) gives Chromium its headless, no-sandbox flags. The suite has no
# run_in_browser configuration (so the Node run is not skipped): the variable picks the browser.
WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --chrome --chromedriver "$(command -v chromedriver)" --mode no-install -- --features wasm --test lib
