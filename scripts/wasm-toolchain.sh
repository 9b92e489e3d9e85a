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
  if [[ $apt_ready == 0 ]]; then apt-get update -qq >/dev/null; apt_ready=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
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
if ! command -v wasm-pack >/dev/null; then
  log "installing wasm-pack (a few minutes)"
  cargo +stable install -q --locked wasm-pack
fi
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $wb_version"; then
  log "installing wasm-bindgen-cli $wb_version (a few minutes)"
  cargo +stable install -q --locked --force wasm-bindgen-cli --version "$wb_version"
fi

# 3. A headless browser and its driver.
if ! { command -v chromium && command -v chromedriver; } >/dev/null; then
  log "installing chromium and chromium-driver"
  apt_install chromium chromium-driver
fi

echo "$toolchain"
