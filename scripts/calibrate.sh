#!/usr/bin/env bash
# The calibration figures of docs/MODEL.md: both seed stories and their variants, from the model,
# printed as markdown table rows. Usage: bash scripts/calibrate.sh [simulated seconds, default 0.3] [warm-up]
# The steady state (MODEL.md, Calibration): bash scripts/calibrate.sh 1 auto
# Env: BIN (a schedplay binary; default: builds target/release/schedplay); SEEDS (default "000 002").
set -euo pipefail
cd "$(dirname "$0")/.."
S=${1:-0.3}
WARM=()
if [ -n "${2:-}" ]; then WARM=(--warmup "$2"); fi
if [ -z "${BIN:-}" ]; then cargo build --locked --release -q; BIN=./target/release/schedplay; fi
bin=$BIN
row000() { # machine-args B clients: OLTP from another host (client=remote), 3 connections per CPU
  $bin compare $1 --workload oltp --set client=remote --set clients="$3" --seconds "$S" "${WARM[@]}" --a '' --b "$2" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); a, b = d["a"], d["b"]
p = lambda r, s: next((x["percent"] for x in r["profile"] if x["symbol"] == s), 0.0)
print("| `%s` (%d) | `%s` | %.2f%% → %.2f%% | %.2f%% → %.2f%% | %+.2f%% |" % (sys.argv[1], a["machine"]["cpus"], sys.argv[2],
      p(a, "sched_balance_domains"), p(b, "sched_balance_domains"), a["contention_pct"], b["contention_pct"], d["delta"]["throughput_pct"]))
' "$1" "$2"
}
row002() { # machine-args A B
  $bin compare $1 --workload oltp --seconds "$S" "${WARM[@]}" --a "$2" --b "$3" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); a, b = d["a"], d["b"]
p = lambda r, s: next((x["percent"] for x in r["profile"] if x["symbol"] == s), 0.0)
h = lambda r: sum(l["hitm_local"] + l["hitm_remote"] for l in r["cachelines"] if l["name"].startswith("mm_struct"))
print("| %s | `%s` | `%s` | %+.2f%% | %.2f%% + %.2f%% → %.2f%% + %.2f%% | %d → %d | %.2f%% → %.2f%% |" % (sys.argv[1], sys.argv[2], sys.argv[3], d["delta"]["throughput_pct"],
      p(a, "account_mm_sched"), p(a, "exceed_llc_nr"), p(b, "account_mm_sched"), p(b, "exceed_llc_nr"), h(a), h(b), a["contention_pct"], b["contention_pct"]))
' "$1" "$2" "$3"
}
case " ${SEEDS:-000 002} " in *" 000 "*)
echo "seed 000: | machine | B | sched_balance_domains A → B | contention A → B | throughput B vs A |"
for b in skip-not-due serialize-after-swb skew-tick snc3-distance-fix; do row000 "--machine gnr-2s-96c-snc3" $b 1152; done
for b in skip-not-due skew-tick; do row000 "--machine gnr-2s-snc3" $b 1536; done
for b in skip-not-due skew-tick; do row000 "--machine custom --cores-per-socket 16" $b 192; done
esac
case " ${SEEDS:-000 002} " in *" 002 "*)
echo "seed 002: | machine, workload | A | B | throughput B vs A | account_mm_sched + exceed_llc_nr (A → B) | mm_struct HITM (A → B) | contention A → B |"
CA=cache-aware; S25=$CA,cas-skip-many-threads; SER=$S25,cas-exceed-llc-capacity; FIX=cas-nr-running-avg-own-line,cas-write-if-changed
# the reported bisection (24/28 vs 25/28, sysbench on the box) on the reporter's class and on Milan
row002 "--machine hygon-2s" $CA $S25
row002 "--machine hygon-2s" $CA $S25,$FIX
row002 "--machine milan-2s" $CA $S25
row002 "--machine milan-2s" $CA $S25,$FIX
# Chen Yu's Milan run: the series as posted, sysbench off the box at one connection per CPU
R="--machine milan-2s --set client=remote --set clients=256"
row002 "$R" $SER $SER,cas-write-if-changed
row002 "$R" $SER $SER,$FIX
row002 "$R" $CA,cas-exceed-llc-capacity $SER,$FIX
;; esac
