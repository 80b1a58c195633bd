#!/usr/bin/env bash
# The calibration figures of docs/MODEL.md: both seed stories and their variants, from the model,
# printed as markdown table rows. Usage: bash scripts/calibrate.sh [simulated seconds, default 0.3] [warm-up]
# The steady state (MODEL.md, Calibration): bash scripts/calibrate.sh 1 auto
# Env: BIN (a schedplay binary; default: builds target/release/schedplay).
set -euo pipefail
cd "$(dirname "$0")/.."
S=${1:-0.3}
WARM=()
if [ -n "${2:-}" ]; then WARM=(--warmup "$2"); fi
if [ -z "${BIN:-}" ]; then cargo build --locked --release -q; BIN=./target/release/schedplay; fi
bin=$BIN
row000() { # machine-args B [clients]: OLTP from another host (client=remote), 3 connections per CPU
  $bin compare $1 --workload oltp --set client=remote --set clients="$3" --seconds "$S" "${WARM[@]}" --a '' --b "$2" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); a, b = d["a"], d["b"]
p = lambda r, s: next((x["percent"] for x in r["profile"] if x["symbol"] == s), 0.0)
print("| `%s` (%d) | `%s` | %.2f%% → %.2f%% | %.2f%% → %.2f%% | %+.2f%% |" % (sys.argv[1], a["machine"]["cpus"], sys.argv[2],
      p(a, "sched_balance_domains"), p(b, "sched_balance_domains"), a["contention_pct"], b["contention_pct"], d["delta"]["throughput_pct"]))
' "$1" "$2"
}
echo "seed 000: | machine | B | sched_balance_domains A → B | contention A → B | throughput B vs A |"
for b in skip-not-due serialize-after-swb skew-tick snc3-distance-fix; do row000 "--machine gnr-2s-96c-snc3" $b 1152; done
for b in skip-not-due skew-tick; do row000 "--machine gnr-2s-snc3" $b 1536; done
for b in skip-not-due skew-tick; do row000 "--machine custom --cores-per-socket 16" $b 192; done
echo "seed 002: | machine | B | throughput B vs A | account_mm_sched + exceed_llc_nr (A → B) | mm_struct HITM (A → B) | contention A → B |"
# milan-2s (Chen Yu's check: a small effect) and hygon-2s (the reporter's class: about -10%)
for mb in milan-2s:cas-skip-many-threads milan-2s:cas-skip-many-threads,cas-nr-running-avg-own-line milan-2s:cas-skip-many-threads,cas-write-if-changed milan-2s:cas-skip-many-threads,cas-nr-running-avg-own-line,cas-write-if-changed hygon-2s:cas-skip-many-threads hygon-2s:cas-skip-many-threads,cas-nr-running-avg-own-line,cas-write-if-changed; do
  m=${mb%%:*} b=${mb#*:}
  $bin compare --machine "$m" --workload oltp --seconds "$S" "${WARM[@]}" --a cache-aware --b "cache-aware,$b" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); a, b = d["a"], d["b"]
p = lambda r, s: next((x["percent"] for x in r["profile"] if x["symbol"] == s), 0.0)
h = lambda r: sum(l["hitm_local"] + l["hitm_remote"] for l in r["cachelines"] if l["name"].startswith("mm_struct"))
print("| %s | %s | %+.2f%% | %.2f%% → %.2f%% + %.2f%% | %d → %d | %.2f%% → %.2f%% |" % (a["machine"]["name"], sys.argv[1], d["delta"]["throughput_pct"],
      p(a, "account_mm_sched"), p(b, "account_mm_sched"), p(b, "exceed_llc_nr"), h(a), h(b), a["contention_pct"], b["contention_pct"]))
' "$b"
done
