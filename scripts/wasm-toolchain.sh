#!/usr/bin/env bash
# Provisions what the wasm build and its tests need, idempotently (seconds on a second run):
#   * a Rust toolchain that targets wasm32-unknown-unknown,
#   * wasm-pack and wasm-bindgen-cli (the CLI version pinned by Cargo.lock's wasm-bindgen),
#   * Debian's chromium + chromium-driver (wasm-pack's --chrome tests, page tests).
# Prints, as its last line, the rustup toolchain to build wasm with.
#
# `rustup target add` is tried first. Where rustup cannot download the component, the
# wasm32 standard library is built from Debian's rustc-web sources, and that compiler is
# linked into rustup as the toolchain `wasm-sys`.
set -euo pipefail
log() { echo "[wasm-toolchain] $*" >&2; }
cd "$(dirname "$0")/.."

wb_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
[[ -n "$wb_version" ]] || { log "no wasm-bindgen in Cargo.lock"; exit 1; }

apt_ready=0
apt_install() {
  if [[ $apt_ready == 0 ]]; then
    apt-get update -qq >/dev/null || log "apt-get update failed; trying the package lists already on this machine"
    apt_ready=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null || {
    log "FAILED: could not install Debian's $* (needs root and Debian's package registry)." \
        "Next: run 'apt-get update && apt-get install $*' as root, then rerun this script."
    return 1
  }
}

# 1. A toolchain that targets wasm32-unknown-unknown.
toolchain=stable
if [[ ! -d "$(rustc +stable --print sysroot)/lib/rustlib/wasm32-unknown-unknown/lib" ]] \
   && ! timeout 300 rustup target add --toolchain stable wasm32-unknown-unknown >/dev/null 2>&1; then
  toolchain=wasm-sys
  log "rustup cannot download the wasm32 std; using Debian's rustc-web with a locally built std"
  dpkg -s rustc-web cargo-web rust-web-src >/dev/null 2>&1 || apt_install rustc-web cargo-web rust-web-src
  if ! /usr/bin/rust-lld -flavor wasm --version >/dev/null 2>&1; then
    llvm_major=$(/usr/bin/rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
    apt_install "lld-$llvm_major"
  fi
  sysroot_lib=/usr/lib/rustlib/wasm32-unknown-unknown/lib
  stamp="$sysroot_lib/.built-by-logitmask"
  want=$(/usr/bin/rustc -vV | sed -n 's/^release: //p')
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    log "building the wasm32 standard library for rustc $want (about a minute)"
    work=$(mktemp -d)
    mkdir -p "$work/src"
    printf '[package]\nname = "sysroot-seed"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "src/lib.rs"\n' > "$work/Cargo.toml"
    echo '#![no_std]' > "$work/src/lib.rs"
    (cd "$work" && RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
       CARGO_TARGET_DIR="$work/target" RUSTUP_TOOLCHAIN=stable \
       cargo build -q --release -Zbuild-std=std,panic_abort,test --target wasm32-unknown-unknown)
    rm -rf "$sysroot_lib"; mkdir -p "$sysroot_lib"
    cp "$work"/target/wasm32-unknown-unknown/release/deps/lib*.rlib "$sysroot_lib/"
    rm -f "$sysroot_lib"/libsysroot_seed-*.rlib
    echo "$want" > "$stamp"
    rm -rf "$work"
  fi
  rustup toolchain list | grep -q '^wasm-sys' || rustup toolchain link wasm-sys /usr
fi

# 2. wasm-pack and the wasm-bindgen CLI that matches the crate exactly.
# `cargo install --locked` is reproducible but uses the lockfile inside the tool's crate, and a
# transitive version pinned there may no longer be served (wasm-bindgen-cli 0.2.130's pins
# webpki-roots 1.0.11, gone from the registry). So: --locked first, then the same tool version
# resolved afresh; if both fail, one line that says what to try next.
cargo_install_tool() { # crate version binary
  local crate=$1 version=$2 binary=$3 err t0=$SECONDS
  err=$(mktemp)
  log "installing $crate $version (compiled from the crates registry: a few minutes)"
  if cargo +stable install -q --locked --force "$crate" --version "=$version" 2>"$err"; then
    rm -f "$err"; log "$crate $version installed in $((SECONDS - t0)) s"; return 0
  fi
  log "$crate $version: 'cargo install --locked' failed ($(grep -m1 -i 'error' "$err" || tail -n1 "$err")); retrying without --locked"
  if cargo +stable install -q --force "$crate" --version "=$version" 2>"$err"; then
    rm -f "$err"; log "$crate $version installed without --locked in $((SECONDS - t0)) s"; return 0
  fi
  tail -n 20 "$err" >&2; rm -f "$err"
  log "FAILED: could not install $crate $version (the $binary command) with or without --locked." \
      "Next: check that cargo can reach the crates registry ('cargo search $crate'), then run" \
      "'cargo install $crate --version =$version' by hand and rerun this script."
  return 1
}
wasm_pack_version=0.15.1
if ! wasm-pack --version 2>/dev/null | grep -q "^wasm-pack "; then
  cargo_install_tool wasm-pack "$wasm_pack_version" wasm-pack
fi
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $wb_version"; then
  cargo_install_tool wasm-bindgen-cli "$wb_version" wasm-bindgen
fi

# 3. A headless browser and its driver.
if ! { command -v chromium && command -v chromedriver; } >/dev/null; then
  log "installing chromium and chromium-driver"
  apt_install chromium chromium-driver
fi

echo "$toolchain"
