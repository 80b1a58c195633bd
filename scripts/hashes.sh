#!/usr/bin/env bash
# Report hashes of a matrix of scenarios (every workload, every patch, several machines), one line
# each. A pure refactoring leaves every line unchanged: run it before and after and diff.
# Usage: bash scripts/hashes.sh [simulated seconds, default 0.05] > hashes.txt
# Env: BIN (a schedplay binary; default: builds target/release/schedplay).
set -euo pipefail
cd "$(dirname "$0")/.."
S=${1:-0.05}
if [ -z "${BIN:-}" ]; then cargo build --locked --release -q; BIN=./target/release/schedplay; fi
row() { printf '%-90s %s\n' "$*" "$("$BIN" run --seconds "$S" --json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["report_hash"])')"; }
for p in '' skip-not-due serialize-after-swb serialize-newidle snc3-distance-fix skew-tick; do
  row --machine gnr-2s-96c-snc3 --workload oltp --patch "$p"
done
row --machine gnr-2s-snc3 --workload oltp
for p in cache-aware cache-aware,cas-skip-many-threads cache-aware,cas-skip-many-threads,cas-nr-running-avg-own-line,cas-write-if-changed cas-write-if-changed; do
  row --machine milan-2s --workload oltp --patch "$p"
done
for w in hackbench schbench spin; do
  row --machine milan-2s --workload "$w"
  row --machine custom --sockets 2 --cores-per-socket 8 --workload "$w" --patch cache-aware
done
row --machine custom --sockets 2 --cores-per-socket 8 --workload hackbench --set mode=thread --patch cache-aware,cas-skip-many-threads --set hz=250
row --machine custom --sockets 4 --cores-per-socket 16 --smt 1 --workload oltp --set clients=200 --set hz=100
