//! Why a row misses, one line per row, from docs/MODEL.md ("How close is the model?", "How sure is
//! each number?" and the Calibration results): `validate` prints it under the table and the page
//! under the row, so a miss is never shown without what the model says about it. A row with no
//! documented reason says so (a gap to explain, never a constant to tune).

/// (row id, why it misses). Keep each line a reading of docs/MODEL.md, not a new claim.
pub const WHY: &[(&str, &str)] = &[
    (
        "000-share-a",
        "in the model the storm is a cold start (about 4.6% of cycles in the first 0.3 s from boot, under 1% at steady state): the saturated sysbench OLTP seldom leaves a CPU idle once settled; OLTP_FSYNC_NS, the redo-log flush latency every commit waits on, moves it most",
    ),
    (
        "000-share-b",
        "the patched side keeps sched_balance_domains small on every measured run; a miss here would be new: compare the run's warm-up with the table's",
    ),
    (
        "000-gain",
        "the gain follows the storm: about +3.3% at the cold start (0.3 s from boot), about +0.5% at steady state; STATS_MLP, how many of update_sg_lb_stats' remote loads overlap, moves it most and at one end of its range flips its sign",
    ),
    (
        "002-regression",
        "a pure cache-line ping-pong cost priced on hygon-2s transfer latencies that are placeholders from other Zen parts (no Hygon core-to-core measurement exists, MODEL.md §1c); XFER_PCT moves it most (band -38.8 .. -3.4)",
    ),
    (
        "002-milan-fixed-vs-unfixed",
        "the model's OLTP runs at the saturated peak, above the knee where 25/28's stores cost most, so the fixes recover about 11% over 25/28 alone; the published -0.72% may be against the unpatched kernel, which 002-fix-sysbench checks (and holds); OLTP_STMT_CPU_PCT moves it most",
    ),
    (
        "002-fix-sysbench",
        "holds in every measured table (-0.69% at the cold start, +0.15% at steady state): with both fixes 25/28 costs nothing against the kernel without it; a miss here would be new: compare the run's warm-up and seconds with the table's",
    ),
    (
        "002-fix-hackbench",
        "misses at the cold start (0.3 s, no warm-up) and holds at the steady state; TTWU_NS, the wakeup path's cost, moves the cold-start figure most",
    ),
];

/// What a row of an input (a latency the model is given) that misses means.
const INPUT: &str = "an input: the preset's latency table no longer carries the published figure (machine/presets.rs; MODEL.md §1, §19)";

/// What a row with no documented reason says.
const UNEXPLAINED: &str =
    "no reason recorded in docs/MODEL.md yet: a model gap to explain, never a constant to tune";

/// The line for a row that misses.
pub fn why(id: &str, input: bool) -> &'static str {
    WHY.iter()
        .find(|(r, _)| *r == id)
        .map(|(_, w)| *w)
        .unwrap_or(if input { INPUT } else { UNEXPLAINED })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reason is of a row that exists, once; every behaviour row that can miss has one.
    #[test]
    fn every_reason_names_a_row_and_every_behaviour_row_has_one() {
        for (i, (id, w)) in WHY.iter().enumerate() {
            assert!(super::super::row(id).is_some(), "{id}");
            assert!(WHY[..i].iter().all(|(o, _)| o != id), "{id} twice");
            assert!(!w.is_empty() && !w.contains('\n'), "{id}: one line");
        }
        for r in super::super::ROWS {
            if r.figure.kind() == super::super::Kind::Behaviour {
                assert_ne!(why(r.id, false), UNEXPLAINED, "{} has no reason", r.id);
            } else {
                assert_eq!(why(r.id, true), INPUT);
            }
        }
    }
}
