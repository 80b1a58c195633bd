//! The assumed figures the model runs with, as one runtime value (`Assumptions`) the engine and
//! the workloads read instead of constants, and the table of them (`table::ROWS`): each with its
//! plausible range and the reasoning for both ends. A scenario carries overrides by name
//! (`assume`, CLI `--assume NAME=VALUE`); none = the table's values, so every report is as before.
//! `experiment::sensitivity` screens the ranges.

mod table;

use crate::error::FieldError;
use crate::machine::hardware::LatencyTable;
use std::collections::BTreeMap;
use std::fmt::Write as _;
pub use table::{ROWS, XFER_PCT};

/// The values of the screened assumptions for one run (fields: `table::ROWS`, same order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assumptions {
    pub tick_ns: u64,
    pub switch_ns: u64,
    pub ttwu_ns: u64,
    pub sbd_level_ns: u64,
    pub sbr_fixed_ns: u64,
    pub ipi_send_ns: u64,
    pub ipi_delivery_ns: u64,
    pub ipi_recv_ns: u64,
    pub stats_mlp: u64,
    pub refill_mlp: u64,
    pub update_blocked_ns: u64,
    pub locked_hit_ns: u64,
    pub account_local_ns: u64,
    pub detach_task_ns: u64,
    pub oltp_stmt_cpu_pct: u64,
    pub oltp_client_cpu_ns: u64,
    pub oltp_shared_lines: u64,
    pub oltp_log_write_ns: u64,
    pub oltp_fsync_ns: u64,
    pub nic_rx_usecs_ns: u64,
    pub net_hardirq_ns: u64,
    pub net_rx_pkt_ns: u64,
    pub net_link_rtt_ns: u64,
    /// Scale of the machine's cache-line transfer table, % (applied when the topology is built).
    pub xfer_pct: u64,
    /// A workload's read() or write(): entry, exit and VFS (`SYSCALL_NS`).
    pub syscall_ns: u64,
    /// One side of an AF_UNIX stream message's own code (`UNIX_PATH_NS`).
    pub unix_path_ns: u64,
    /// One side of a pipe message's own code (`PIPE_PATH_NS`).
    pub pipe_path_ns: u64,
}

impl Default for Assumptions {
    /// The table's values.
    fn default() -> Self {
        let mut a = table::ZERO;
        for r in ROWS {
            (r.set)(&mut a, r.value);
        }
        a
    }
}

/// One screened assumption.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The name in the code's style (`--assume NAME=VALUE`, links, the screen's tables).
    pub name: &'static str,
    /// What the model runs with.
    pub value: u64,
    /// The plausible range (for `XFER_PCT`: per machine, `LatencyTable::spread_pct`).
    pub low: u64,
    pub high: u64,
    pub unit: &'static str,
    /// Where the engine or workload reads it.
    pub used: &'static str,
    /// What the figure stands for and why this value.
    pub why: &'static str,
    pub why_low: &'static str,
    pub why_high: &'static str,
    pub get: fn(&Assumptions) -> u64,
    pub set: fn(&mut Assumptions, u64),
}

impl Row {
    /// The plausible range on a machine whose transfer table is `lat`.
    pub fn range(&self, lat: &LatencyTable) -> (u64, u64) {
        if self.name == XFER_PCT {
            (lat.spread_pct[0] as u64, lat.spread_pct[1] as u64)
        } else {
            (self.low, self.high)
        }
    }

    /// The range without a machine ("per machine" for `XFER_PCT`).
    fn static_range_text(&self) -> String {
        if self.name == XFER_PCT {
            format!("the machine's spread ({})", self.unit)
        } else {
            format!("{}..={} {}", self.low, self.high, self.unit)
        }
    }

    fn range_text(&self, lat: &LatencyTable) -> String {
        let (lo, hi) = self.range(lat);
        format!("{lo}..={hi} {}", self.unit)
    }
}

/// The row named `name`.
pub fn row(name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.name == name)
}

fn names() -> String {
    ROWS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
}

/// The error for an unknown assumption name.
pub fn unknown(name: &str) -> FieldError {
    FieldError::new(
        "assume",
        format!("unknown assumption {name:?}: allowed {}", names()),
    )
}

/// One `NAME=VALUE` (CLI, links): the name checked, the value an integer. The range is checked
/// with the machine (`resolve`).
pub fn parse_one(text: &str) -> Result<(String, u64), FieldError> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(FieldError::new(
            "assume",
            format!("{text:?} is not NAME=VALUE (names: {})", names()),
        ));
    };
    let name = name.trim();
    let Some(r) = row(name) else {
        return Err(unknown(name));
    };
    match value.trim().parse::<u64>() {
        Ok(v) => Ok((r.name.to_string(), v)),
        Err(_) => Err(FieldError::new(
            "assume",
            format!(
                "{name} = {value:?} is not a number: an integer in {}",
                r.static_range_text()
            ),
        )),
    }
}

/// The values of a scenario: the table's, with `overrides` (by name) applied, each checked
/// against its plausible range on the machine (`lat`). All errors at once.
pub fn resolve(
    overrides: &BTreeMap<String, u64>,
    lat: &LatencyTable,
) -> Result<Assumptions, Vec<FieldError>> {
    let mut a = Assumptions::default();
    let mut errs = Vec::new();
    for (name, &v) in overrides {
        let Some(r) = row(name) else {
            errs.push(unknown(name));
            continue;
        };
        let (lo, hi) = r.range(lat);
        if (lo..=hi).contains(&v) {
            (r.set)(&mut a, v);
        } else {
            errs.push(FieldError::new(
                "assume",
                format!(
                    "{name} = {v} is out of range: allowed {} (its plausible range: {} … {})",
                    r.range_text(lat),
                    r.why_low,
                    r.why_high
                ),
            ));
        }
    }
    if errs.is_empty() { Ok(a) } else { Err(errs) }
}

/// docs/MODEL.md §19a: the table as markdown (a test keeps the document equal to it).
pub fn markdown() -> String {
    let mut s = String::from(
        "| name | value | low | high | unit | used in | what it stands for | low end | high end |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in ROWS {
        let (lo, hi) = if r.name == XFER_PCT {
            ("per machine".to_string(), "per machine".to_string())
        } else {
            (r.low.to_string(), r.high.to_string())
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {lo} | {hi} | {} | {} | {} | {} | {} |",
            r.name, r.value, r.unit, r.used, r.why, r.why_low, r.why_high
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets;

    #[test]
    fn every_row_is_one_field_and_its_value_lies_in_its_range() {
        let a = Assumptions::default();
        for (i, r) in ROWS.iter().enumerate() {
            assert_eq!((r.get)(&a), r.value, "{}", r.name);
            // each row writes its own field only
            let mut b = a;
            (r.set)(&mut b, r.value + 1);
            for (j, o) in ROWS.iter().enumerate() {
                assert_eq!((o.get)(&b) != o.value, i == j, "{} vs {}", r.name, o.name);
            }
            if r.name != XFER_PCT {
                assert!(r.low <= r.value && r.value <= r.high, "{}", r.name);
                assert!(r.low < r.high, "{}: a screened row has a range", r.name);
            }
        }
        let mut names: Vec<&str> = ROWS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ROWS.len());
    }

    #[test]
    fn every_machine_table_spread_holds_its_value() {
        for p in presets::PRESETS {
            let spec = presets::preset(p).unwrap();
            let (lo, hi) = row(XFER_PCT).unwrap().range(&spec.latency);
            assert!(lo <= 100 && 100 <= hi && lo > 0, "{p}: {lo}..{hi}");
        }
    }

    #[test]
    fn overrides_are_checked_by_name_and_range() {
        let lat = presets::preset("gnr-2s-snc3").unwrap().latency;
        let ok: BTreeMap<String, u64> = [("TICK_NS".to_string(), 2_000)].into();
        assert_eq!(resolve(&ok, &lat).unwrap().tick_ns, 2_000);
        let bad: BTreeMap<String, u64> =
            [("TICK_NS".to_string(), 5_000), ("NOPE".to_string(), 1)].into();
        let e = resolve(&bad, &lat).unwrap_err();
        assert_eq!(e.len(), 2);
        assert!(
            e[0].message.starts_with("unknown assumption \"NOPE\""),
            "{}",
            e[0].message
        );
        assert!(
            e[1].message
                .contains("TICK_NS = 5000 is out of range: allowed 500..=2000 ns"),
            "{}",
            e[1].message
        );
        assert_eq!(parse_one("STATS_MLP=2").unwrap(), ("STATS_MLP".into(), 2));
        assert!(
            parse_one("STATS_MLP")
                .unwrap_err()
                .message
                .contains("NAME=VALUE")
        );
        assert!(
            parse_one("STATS_MLP=x")
                .unwrap_err()
                .message
                .contains("not a number")
        );
        assert_eq!(parse_one("X=1").unwrap_err().field, "assume");
    }

    /// docs/MODEL.md §19a is this table, byte for byte between its markers.
    #[test]
    fn model_md_holds_the_table() {
        let doc = include_str!("../../docs/MODEL.md");
        let begin = "<!-- assumptions table: generated by assumptions::markdown -->\n";
        let end = "<!-- end of assumptions table -->";
        let start = doc.find(begin).expect("§19a's begin marker") + begin.len();
        let stop = start + doc[start..].find(end).expect("§19a's end marker");
        assert_eq!(doc[start..stop], markdown());
    }
}
