#!/usr/bin/env bash
# Benchmarks (not tests): native and wasm (Node.js) speed and memory of the reference scenarios and
# of the BPF interpreter (instructions per second),
# the scaling sweep's cost per simulated CPU-second, the size of the page's wasm, and in headless
# Chromium the page's time from Run to its first chart point and to the run's end (scripts/bench-page.mjs).
# Usage: bash scripts/bench.sh [simulated seconds per scenario, default 0.5]
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS_ROOT="${TOOLS_ROOT:-$HOME/.cargo}"
export PATH="$TOOLS_ROOT/bin:$PWD/node_modules/.bin:$PATH"
SECONDS_PER=${1:-0.5}
bash scripts/setup.sh >/dev/null
cargo build --locked --release
echo "== native (each scenario in its own process; peak RSS = VmHWM)"
./target/release/schedplay bench --seconds "$SECONDS_PER"
echo "== native BPF interpreter (the same workloads as the wasm lines below)"
cargo test --locked --release --test bpf_bench -- --ignored --nocapture 2>/dev/null | grep 'instructions/s'
echo "== wasm in Node.js"
cargo build --locked --release --target wasm32-unknown-unknown --bin worker
wasm-bindgen --target nodejs --out-dir target/bench-node target/wasm32-unknown-unknown/release/worker.wasm
echo '{"type": "commonjs"}' > target/bench-node/package.json  # the repo package.json says "module"
node scripts/bench-wasm.mjs target/bench-node "$SECONDS_PER"
echo "== scaling: cost per simulated CPU-second (spin, 1 thread per CPU, 0.2 s)"
printf '%6s %12s %16s\n' CPUs "wall s" "µs per CPU-s"
for n in 64 128 256 512 1024 2048 4096; do
  s=$(date +%s.%N)
  ./target/release/schedplay run --machine custom --sockets 2 --smt 2 --cores-per-socket $((n / 4)) --workload spin --seconds 0.2 >/dev/null
  e=$(date +%s.%N)
  python3 -c "w=$e-$s; print('%6d %12.3f %16.1f' % ($n, w, w*1e6/($n*0.2)))"
done
echo "== scaling: oltp, cost per simulated CPU-second (0.2 s)"
for n in 64 128 256 512 1024 2048; do
  s=$(date +%s.%N)
  ./target/release/schedplay run --machine custom --sockets 2 --smt 2 --cores-per-socket $((n / 4)) --workload oltp --seconds 0.2 >/dev/null
  e=$(date +%s.%N)
  python3 -c "w=$e-$s; print('%6d %12.3f %16.1f' % ($n, w, w*1e6/($n*0.2)))"
done
# (re)build the page if dist/ is missing or older than any of its inputs
if [ ! -f dist/index.html ] || [ -n "$(find src www index.html Trunk.toml Cargo.toml Cargo.lock package-lock.json -newer dist/index.html -print -quit)" ]; then
  trunk build --release
fi
echo "== page wasm: $(stat -c %s dist/worker_bg.wasm) bytes, $(gzip -9 -c dist/worker_bg.wasm | wc -c) gzipped"
echo "== page: Run -> first chart point and -> done, headless Chromium"
bash scripts/with-dist-server.sh node scripts/bench-page.mjs
