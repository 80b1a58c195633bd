#!/usr/bin/env bash
# Everything from a fresh clone: setup, lints (rustfmt, clippy), native tests, wasm tests (Node.js, headless Chromium),
# Trunk release build, Playwright e2e against dist/ served on a free loopback port.
# Runs every step even after a failure and ends with `N passed, N failed` (one count per step).
set -uo pipefail
cd "$(dirname "$0")/.."
TOOLS_ROOT="${TOOLS_ROOT:-$HOME/.cargo}"
export PATH="$TOOLS_ROOT/bin:$PWD/node_modules/.bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
PASSED=0; FAILED=0; FAILED_STEPS=()
# run a step, time it, count it; never abort the script
step() {
  local name=$1; shift
  local s=$SECONDS rc=0
  echo "[test] >>> $name: $*" >&2
  "$@" || rc=$?
  if [ $rc -eq 0 ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); FAILED_STEPS+=("$name"); fi
  echo "[test] <<< $name: rc=$rc in $((SECONDS - s))s" >&2
  return $rc
}
finish() {
  [ ${#FAILED_STEPS[@]} -gt 0 ] && echo "[test] failed: ${FAILED_STEPS[*]}" >&2
  echo "[test] total ${SECONDS}s" >&2
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}

if ! step setup bash scripts/setup.sh; then finish; fi

# lints: formatting and clippy (native and wasm32 code) with no warnings
step fmt cargo fmt --check
step clippy cargo clippy --locked --all-targets -- -D warnings
step clippy-wasm cargo clippy --locked --target wasm32-unknown-unknown --all-targets -- -D warnings
step native-tests cargo test --locked --release --no-fail-fast
# the Perfetto trace against Perfetto's own schema (perfetto_trace_pb2), when the package is there
perfetto_check() {
  local py=python3 f=target/check.pftrace
  if ! $py -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' 2>/dev/null; then
    $py -m venv target/pfenv >/dev/null 2>&1 && target/pfenv/bin/pip install -q perfetto protobuf >/dev/null 2>&1 \
      && py=target/pfenv/bin/python || { echo "[test] perfetto package not installable: check skipped" >&2; return 0; }
  fi
  # the remote (timer) client: 64 connection threads (2 per CPU) and InnoDB's 13, one sched_wakeup_new each
  ./target/release/schedplay run --machine custom --sockets 2 --cores-per-socket 8 --workload oltp \
    --set client=remote --seconds 0.05 --trace "$f" 2>/dev/null >/dev/null && $py scripts/perfetto-check.py "$f" sched_wakeup_new=77
}
step perfetto-schema perfetto_check
# the README's Slurm job array on a real single-node Slurm, started and stopped by the script
step slurm-array bash scripts/slurm-check.sh
# long-run invariants over 10^8 simulated events (release only)
step long-run cargo test --locked --release --test long_run -- --ignored --nocapture
# wasm in Node.js: test binaries without a configure macro (browser-only binaries are skipped)
step wasm-node env WASM_BINDGEN_TEST_ONLY_NODE=1 cargo test --locked --target wasm32-unknown-unknown
# wasm in headless Chromium: binaries with run_in_browser / run_in_dedicated_worker (node-only ones skipped)
step wasm-chromium env WASM_BINDGEN_TEST_ONLY_WEB=1 cargo test --locked --target wasm32-unknown-unknown

if step trunk-build trunk build --release; then
  step e2e bash scripts/with-dist-server.sh node e2e/e2e.mjs
else
  echo "[test] e2e skipped: no dist/" >&2
  FAILED=$((FAILED + 1)); FAILED_STEPS+=("e2e")
fi
finish
