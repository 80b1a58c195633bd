#!/usr/bin/env bash
# Installs everything needed to build, serve and test schedplay. Idempotent: a re-run skips what is there.
# Env: TOOLS_ROOT (cargo install --root; default ~/.cargo, whose bin/ is normally on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS_ROOT="${TOOLS_ROOT:-$HOME/.cargo}"
export PATH="$TOOLS_ROOT/bin:$PWD/node_modules/.bin:$PATH"
TRUNK_VERSION=0.21.14   # trunk 0.22.x requires rustc >= 1.96.1 (these machines have 1.95.0)
# time a step; keep its exit status (a bare `"$@"; echo` would turn a failure into success inside `a || b`)
t() { local s=$SECONDS rc=0; "$@" || rc=$?; echo "[setup] $((SECONDS - s))s rc=$rc: $*" >&2; return $rc; }

# 1. Debian Chromium + ChromeDriver (wasm tests in the browser, e2e). Never `npx playwright install`.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  t apt-get update -qq
  t env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver
fi

# 2. Rust target
rustup target list --installed | grep -qx wasm32-unknown-unknown || t rustup target add wasm32-unknown-unknown

# 3. wasm-bindgen CLI (+ wasm-bindgen-test-runner): exactly the version in Cargo.lock, else schema mismatch
WBG=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$WBG" ]; then echo "[setup] no wasm-bindgen in Cargo.lock" >&2; exit 1; fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WBG" ]; then
  # --locked can fail when the CLI's own lockfile names a crate version the registry does not serve yet
  t cargo install wasm-bindgen-cli --version "$WBG" --locked --root "$TOOLS_ROOT" \
    || t cargo install wasm-bindgen-cli --version "$WBG" --root "$TOOLS_ROOT"
fi

# 4. Trunk
if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  t cargo install trunk --version "$TRUNK_VERSION" --locked --root "$TOOLS_ROOT"
fi

# 5. npm: uplot (page), binaryen (wasm-opt 132 for Trunk), playwright-core (e2e driver); exact versions
#    from package-lock.json. Skipped when node_modules already matches.
if ! npm ls --depth=0 >/dev/null 2>&1 || [ ! -x node_modules/.bin/wasm-opt ]; then
  t npm ci --no-audit --no-fund
fi

# 6. all crates, so that Trunk's `cargo build --offline` works
t cargo fetch --locked
echo "[setup] done in ${SECONDS}s" >&2
