//! Every published figure the model is checked against (`ROWS`), as data with its source, and
//! the scenarios the seed rows run.

use super::*;
use crate::experiment::stories::OLTP_REMOTE_000;

/// A row's scenario: machine, workload, its knobs, A and B.
type Scenario = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    &'static [&'static str],
);

const SEED000: Scenario = (
    "gnr-2s-96c-snc3",
    "oltp",
    OLTP_REMOTE_000,
    &[],
    &["skip-not-due"],
);
const CAS_25: &[&str] = &["cache-aware", "cas-skip-many-threads"];
/// RFC v4 as posted (01–28): cache-aware, 25/28, and 26/28 + 27/28 (`cas-exceed-llc-capacity`).
const CAS_SERIES: &[&str] = &[
    "cache-aware",
    "cas-skip-many-threads",
    "cas-exceed-llc-capacity",
];
/// The series as posted without 25/28.
const CAS_SERIES_NO_25: &[&str] = &["cache-aware", "cas-exceed-llc-capacity"];
/// The series as posted with both of seed 002's fixes.
const CAS_SERIES_FIXED: &[&str] = &[
    "cache-aware",
    "cas-skip-many-threads",
    "cas-exceed-llc-capacity",
    "cas-nr-running-avg-own-line",
    "cas-write-if-changed",
];
/// Chen Yu's Milan run: sysbench + MariaDB with the driver below saturation, read as sysbench on
/// another host (`client=remote`) at one connection per CPU (256 on milan-2s: docs/MODEL.md §18,
/// the assumption and its range).
pub const OLTP_REMOTE_MILAN: &[(&str, &str)] = &[("client", "remote"), ("clients", "256")];

const fn run(
    id: &'static str,
    s: Scenario,
    figure: Figure,
    what: &'static str,
    published: &'static str,
    tolerance: [f64; 2],
    source: &'static str,
) -> Row {
    Row {
        id,
        machine: s.0,
        workload: s.1,
        knobs: s.2,
        a: s.3,
        b: s.4,
        figure,
        what,
        published,
        tolerance,
        source,
    }
}

const fn lat(
    id: &'static str,
    machine: &'static str,
    class: LatencyClass,
    what: &'static str,
    published: &'static str,
    tolerance: [f64; 2],
    source: &'static str,
) -> Row {
    Row {
        id,
        machine,
        workload: "-",
        knobs: &[],
        a: &[],
        b: &[],
        figure: Figure::Latency(class),
        what,
        published,
        tolerance,
        source,
    }
}

/// Every published figure (append rows as engine issues land; ids are stable).
pub const ROWS: &[Row] = &[
    run(
        "000-share-a",
        SEED000,
        Figure::Share(Side::A, "sched_balance_domains"),
        "sched_balance_domains, unpatched (% cycles)",
        "7.8%",
        [5.0, 11.0],
        "seed 000 v2 patch mail, REFERENCE.md §1; band: the seed-000 issue's target range",
    ),
    run(
        "000-share-b",
        SEED000,
        Figure::Share(Side::B, "sched_balance_domains"),
        "sched_balance_domains, patched (% cycles)",
        "gone from the profile",
        [0.0, 1.0],
        "seed 000 v2 patch mail, REFERENCE.md §1; band: the seed-000 issue (B < 1%)",
    ),
    run(
        "000-gain",
        SEED000,
        Figure::ThroughputPct,
        "throughput, patched vs unpatched (%)",
        "+8%",
        [4.0, 12.0],
        "seed 000 v2 patch mail, REFERENCE.md §1; band: the seed-000 issue's target range",
    ),
    run(
        "002-regression",
        ("hygon-2s", "oltp", &[], &["cache-aware"], CAS_25),
        Figure::ThroughputPct,
        "throughput, RFC v4 25/28 vs without (%)",
        "~-10% (\"256 cores\", mysql + sysbench)",
        [-14.0, -6.0],
        "seed 002 RFC v4 25/28 report, REFERENCE.md §1 (sent from a host named \"hygon\": the reporter's class, MODEL.md §1c); band: the seed-002 issue's target range",
    ),
    run(
        "002-milan-fixed-vs-unfixed",
        (
            "milan-2s",
            "oltp",
            OLTP_REMOTE_MILAN,
            CAS_SERIES,
            CAS_SERIES_FIXED,
        ),
        Figure::ThroughputPct,
        "throughput, RFC v4 as posted + both fixes vs as posted (%)",
        "-0.72% (sysbench + MariaDB on Milan)",
        [-3.0, 3.0],
        "seed 002 fix mail, REFERENCE.md §1, read as fixed vs unfixed on the series as posted (the fix's diff context has exceed_llc_capacity(), 26/28; the mail does not name its baseline, 002-fix-sysbench reads it against the series without 25/28); sysbench off the box at one connection per CPU (MODEL.md §18); band: within ±3%",
    ),
    run(
        "002-fix-sysbench",
        (
            "milan-2s",
            "oltp",
            OLTP_REMOTE_MILAN,
            CAS_SERIES_NO_25,
            CAS_SERIES_FIXED,
        ),
        Figure::ThroughputPct,
        "throughput, RFC v4 as posted + both fixes vs as posted without 25/28 (%)",
        "-0.72% (sysbench + MariaDB on Milan)",
        [-3.0, 3.0],
        "seed 002 fix mail, REFERENCE.md §1; band: the seed-002 issue (within ±3%)",
    ),
    run(
        "002-fix-hackbench",
        (
            "milan-2s",
            "hackbench",
            &[],
            CAS_SERIES_NO_25,
            CAS_SERIES_FIXED,
        ),
        Figure::ThroughputPct,
        "hackbench messages/s, RFC v4 as posted + both fixes vs as posted without 25/28 (%)",
        "regression gone (several hackbench instances on Milan)",
        [-3.0, 3.0],
        "seed 002 fix mail, REFERENCE.md §1; band: the seed-002 issue (within ±3%)",
    ),
    lat(
        "lat-gnr-snc3-smt",
        "gnr-2s-snc3",
        LatencyClass::Smt,
        "SMT sibling (ns)",
        "~8",
        [7.2, 8.8],
        "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-gnr-snc3-llc",
        "gnr-2s-snc3",
        LatencyClass::Llc,
        "same LLC / SNC node (ns)",
        "81",
        [72.9, 89.1],
        "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-gnr-snc3-near",
        "gnr-2s-snc3",
        LatencyClass::NodeNear,
        "same socket, adjacent die (ns)",
        "99-110",
        [99.0, 110.0],
        "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201), REFERENCE.md §3",
    ),
    lat(
        "lat-gnr-snc3-far",
        "gnr-2s-snc3",
        LatencyClass::NodeFar,
        "same socket, far die (ns)",
        "125-140",
        [125.0, 140.0],
        "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201), REFERENCE.md §3",
    ),
    lat(
        "lat-gnr-snc3-socket",
        "gnr-2s-snc3",
        LatencyClass::Socket,
        "other socket (ns)",
        "372-452",
        [372.0, 452.0],
        "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201), REFERENCE.md §3",
    ),
    lat(
        "lat-gnr-llc",
        "gnr-2s",
        LatencyClass::Llc,
        "same socket, SNC off (ns)",
        "180",
        [162.0, 198.0],
        "Intel MLC HITM on 2S Xeon 6980P SNC off (ik_llama.cpp #201), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-gnr-socket",
        "gnr-2s",
        LatencyClass::Socket,
        "other socket, SNC off (ns)",
        "413-433",
        [413.0, 433.0],
        "Intel MLC HITM on 2S Xeon 6980P SNC off (ik_llama.cpp #201), REFERENCE.md §3",
    ),
    lat(
        "lat-milan-smt",
        "milan-2s",
        LatencyClass::Smt,
        "SMT sibling (ns)",
        "9.8",
        [8.82, 10.78],
        "CAS ping-pong on 2S Milan 7R13 (nviennot/core-to-core-latency), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-milan-llc",
        "milan-2s",
        LatencyClass::Llc,
        "same CCX (ns)",
        "22.7",
        [20.43, 24.97],
        "CAS ping-pong on 2S Milan 7R13 (nviennot/core-to-core-latency), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-milan-ccd",
        "milan-2s",
        LatencyClass::NodeNear,
        "same socket, other CCD (ns)",
        "107.6",
        [96.84, 118.36],
        "CAS ping-pong on 2S Milan 7R13 (nviennot/core-to-core-latency), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-milan-socket",
        "milan-2s",
        LatencyClass::Socket,
        "other socket (ns)",
        "197",
        [177.3, 216.7],
        "CAS ping-pong on 2S Milan 7R13 (nviennot/core-to-core-latency), REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-genoa-llc",
        "genoa-2s",
        LatencyClass::Llc,
        "same CCX (ns)",
        "~24",
        [21.6, 26.4],
        "core-to-core-latency on 2S Genoa 9274F, REFERENCE.md §3; band: ±10% of a single published value",
    ),
    lat(
        "lat-genoa-ccd",
        "genoa-2s",
        LatencyClass::NodeNear,
        "same socket, other CCD (ns)",
        "87-102",
        [87.0, 102.0],
        "core-to-core-latency on 2S Genoa 9274F, REFERENCE.md §3",
    ),
    lat(
        "lat-genoa-socket",
        "genoa-2s",
        LatencyClass::Socket,
        "other socket (ns)",
        "187-199",
        [187.0, 199.0],
        "core-to-core-latency on 2S Genoa 9274F, REFERENCE.md §3",
    ),
];
