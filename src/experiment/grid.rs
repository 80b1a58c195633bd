//! Sweeps at scale: a grid of experiments (machines × patch sets × workloads × HZ × CPU counts,
//! each point repeated) from a JSON file, cut into deterministic shards that any batch system can
//! run (`sweep --grid FILE --shard I/N`, one JSON line per point), and joined again (`merge`),
//! refusing overlapping or missing shards.

use crate::error::{FieldError, Invalid};
use crate::experiment::link::encode_link;
use crate::experiment::repeat;
use crate::experiment::repeat::Table;
use crate::experiment::scenario::{Experiment, MachineChoice, Side, WorkloadChoice};
use crate::report::fnv1a;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A grid file (JSON). Every list is one axis; points are their product, in the order
/// machines, patch sets, workloads, hz, cpus (the last varies fastest).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Machines: a preset with optional layout overrides, as the scenario's `machine` object.
    pub machines: Vec<MachineChoice>,
    /// Patch sets: `{ "a": [...], "b": [...] }`.
    pub patch_sets: Vec<PatchSet>,
    /// Workloads with their knobs, as the scenario's `workload` object.
    pub workloads: Vec<WorkloadChoice>,
    /// Tick rates (default [1000]).
    #[serde(default = "default_hz")]
    pub hz: Vec<u32>,
    /// CPU counts: each point is resized to 2 sockets × cores × SMT2 as `sweep --cpus` does
    /// (default: the machines as they are).
    #[serde(default)]
    pub cpus: Vec<u32>,
    #[serde(default = "default_seconds")]
    pub seconds: f64,
    #[serde(default)]
    pub warmup: f64,
    /// Runs per side of every point.
    #[serde(default = "default_repeats")]
    pub repeats: u32,
    #[serde(default = "default_seed")]
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchSet {
    #[serde(default)]
    pub a: Vec<String>,
    #[serde(default)]
    pub b: Vec<String>,
}

fn default_hz() -> Vec<u32> {
    vec![1000]
}
fn default_seconds() -> f64 {
    1.0
}
fn default_repeats() -> u32 {
    1
}
fn default_seed() -> u64 {
    1
}

/// At most this many points in one grid.
pub const MAX_POINTS: usize = 100_000;

/// One JSON line of a sweep over a grid: a point and its table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointLine {
    /// FNV-1a of the grid's canonical JSON: lines of different grids never merge.
    pub grid: String,
    /// Index of the point in the grid (0-based) and the number of points.
    pub index: usize,
    pub points: usize,
    /// The point's CPU count when the grid resizes (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// The point's share link (query string): `schedplay compare --link` reruns it.
    pub link: String,
    pub table: Table,
}

/// Which slice of the points a process runs: points i with i mod n == index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// "I/N" with 0 <= I < N.
    pub fn parse(s: &str) -> Result<Shard, FieldError> {
        let bad = || {
            FieldError::new(
                "shard",
                format!("{s:?} is not I/N with 0 <= I < N <= {MAX_POINTS} (e.g. 0/4)"),
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (i, n) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if n == 0 || i >= n || n > MAX_POINTS {
            return Err(bad());
        }
        Ok(Shard { index: i, count: n })
    }

    pub fn has(&self, point: usize) -> bool {
        point % self.count == self.index
    }
}

impl Grid {
    pub fn from_json(text: &str) -> Result<Grid, Invalid> {
        serde_json::from_str(text).map_err(|e| FieldError::new("grid", e.to_string()).into())
    }

    /// The grid's fingerprint (its canonical JSON, so formatting of the file does not matter).
    pub fn hash(&self) -> String {
        fnv1a(&serde_json::to_string(self).unwrap_or_default())
    }

    /// Every point, in grid order: (CPU count if resized, experiment). Every bad point is
    /// reported (field errors prefixed with the point's index).
    pub fn points(&self) -> Result<Vec<(Option<u32>, Experiment)>, Invalid> {
        let cpus: Vec<Option<u32>> = if self.cpus.is_empty() {
            vec![None]
        } else {
            self.cpus.iter().map(|&c| Some(c)).collect()
        };
        let n = self.machines.len()
            * self.patch_sets.len()
            * self.workloads.len()
            * self.hz.len()
            * cpus.len();
        if n == 0 || n > MAX_POINTS {
            return Err(FieldError::new(
                "grid",
                format!(
                    "{n} points: every axis needs at least one entry, and at most {MAX_POINTS} points in all"
                ),
            )
            .into());
        }
        let mut out = Vec::with_capacity(n);
        let mut errs = Vec::new();
        let mut i = 0;
        for m in &self.machines {
            for p in &self.patch_sets {
                for w in &self.workloads {
                    for &hz in &self.hz {
                        for &c in &cpus {
                            let base = Experiment {
                                machine: m.clone(),
                                hz,
                                workload: w.clone(),
                                seconds: self.seconds,
                                seed: self.seed,
                                a: p.a.clone(),
                                b: p.b.clone(),
                                repeats: self.repeats,
                                warmup: self.warmup,
                                ..Default::default()
                            };
                            let e = match c {
                                Some(c) => crate::experiment::sweep::resized(&base, c),
                                None => Ok(base),
                            }
                            .and_then(|e| e.validate().map(|_| e));
                            match e {
                                Ok(e) => out.push((c, e)),
                                Err(inv) => errs.extend(inv.0.into_iter().map(|f| {
                                    FieldError::new(&f.field, format!("point {i}: {}", f.message))
                                })),
                            }
                            i += 1;
                        }
                    }
                }
            }
        }
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(Invalid(errs))
        }
    }

    /// The lines of `shard`'s points: all their runs in one pool of `threads`, lines in point
    /// order.
    pub fn run(&self, shard: Shard, threads: usize) -> Result<Vec<PointLine>, Invalid> {
        let points = self.points()?;
        let total = points.len();
        let mine: Vec<(usize, Option<u32>, Experiment)> = points
            .into_iter()
            .enumerate()
            .filter(|(i, _)| shard.has(*i))
            .map(|(i, (c, e))| (i, c, e))
            .collect();
        let sides = [Side::A, Side::B];
        let jobs: Vec<repeat::Job> = mine
            .iter()
            .flat_map(|(_, _, e)| repeat::jobs(e, &sides))
            .collect();
        let reports = repeat::run_jobs(&jobs, threads)?;
        let per = 2 * self.repeats.max(1) as usize;
        let grid = self.hash();
        Ok(mine
            .iter()
            .zip(reports.chunks(per))
            .map(|((i, c, e), rs)| {
                let a: Vec<_> = rs.iter().step_by(2).cloned().collect();
                let b: Vec<_> = rs.iter().skip(1).step_by(2).cloned().collect();
                PointLine {
                    grid: grid.clone(),
                    index: *i,
                    points: total,
                    cpus: *c,
                    link: encode_link(e),
                    table: Table::new(&a, Some(&b)),
                }
            })
            .collect())
    }
}

/// One JSON line per point (what `sweep --grid` prints).
pub fn to_lines(lines: &[PointLine]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", serde_json::to_string(l).unwrap_or_default());
    }
    s
}

/// The merged lines as read (`merge` prints these: the bytes of the unsharded sweep).
pub fn merged_lines(lines: &[ReadLine]) -> String {
    lines.iter().map(|l| format!("{}\n", l.text)).collect()
}

/// The merged lines as one JSON array (chart data), the lines' text unchanged.
pub fn merged_array(lines: &[ReadLine]) -> String {
    let items: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

/// A point line as read from a shard: parsed, and its text kept byte for byte (a float read back
/// and printed again may differ in its last digit).
#[derive(Clone, Debug)]
pub struct ReadLine {
    pub line: PointLine,
    pub text: String,
}

/// Joins the lines of shards (each `(file name, its text)`): one grid, every point exactly once,
/// in point order. Overlapping, missing or foreign lines are refused, each named.
pub fn merge(files: &[(String, String)]) -> Result<Vec<ReadLine>, Invalid> {
    let mut errs = Vec::new();
    let mut out = Vec::new();
    for (at, text) in merge_texts(files)? {
        match serde_json::from_str(&text) {
            Ok(line) => out.push(ReadLine { line, text }),
            Err(e) => errs.push(FieldError::new("merge", format!("{at}: {e}"))),
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(Invalid(errs))
    }
}

/// What every sharded line starts with (a grid's point, a sensitivity screen's point): whose it
/// is, which point, of how many.
#[derive(Deserialize)]
struct LineHead {
    grid: String,
    index: usize,
    points: usize,
}

/// The merge of `merge`, on the lines' heads only (so the sensitivity screen's lines merge by the
/// same rules): each point's `file:line` and text, in point order.
pub fn merge_texts(files: &[(String, String)]) -> Result<Vec<(String, String)>, Invalid> {
    let mut errs = Vec::new();
    let mut seen: Vec<Option<(String, (String, String))>> = Vec::new();
    let mut grid: Option<(String, usize)> = None;
    for (name, text) in files {
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let p: LineHead = match serde_json::from_str(line) {
                Ok(p) => p,
                Err(e) => {
                    errs.push(FieldError::new("merge", format!("{name}:{}: {e}", n + 1)));
                    continue;
                }
            };
            match &grid {
                None => {
                    grid = Some((p.grid.clone(), p.points));
                    seen = vec![None; p.points.min(MAX_POINTS)];
                }
                Some((g, total)) if *g != p.grid || *total != p.points => {
                    errs.push(FieldError::new(
                        "merge",
                        format!(
                            "{name}:{}: point of grid {} ({} points), not of grid {g} ({total} points)",
                            n + 1,
                            p.grid,
                            p.points
                        ),
                    ));
                    continue;
                }
                Some(_) => {}
            }
            match seen.get_mut(p.index) {
                None => errs.push(FieldError::new(
                    "merge",
                    format!("{name}:{}: point {} is not in the grid", n + 1, p.index),
                )),
                Some(Some((other, _))) => errs.push(FieldError::new(
                    "merge",
                    format!(
                        "overlapping shards: point {} is in {other} and in {name}",
                        p.index
                    ),
                )),
                Some(slot) => {
                    *slot = Some((
                        name.clone(),
                        (format!("{name}:{}", n + 1), line.to_string()),
                    ))
                }
            }
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if grid.is_none() {
        errs.push(FieldError::new("merge", "no points in the given files"));
    } else if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).cloned().collect();
        errs.push(FieldError::new(
            "merge",
            format!(
                "missing points: {} of {}: {}{}",
                missing.len(),
                seen.len(),
                shown.join(", "),
                if missing.len() > 20 { ", …" } else { "" }
            ),
        ));
    }
    if !errs.is_empty() {
        return Err(Invalid(errs));
    }
    Ok(seen.into_iter().flatten().map(|(_, p)| p).collect())
}

/// The merged table as CSV: one row per point, its axes and the throughput and contention figures
/// (means, change, 95% interval, Welch's p).
pub fn to_csv(lines: &[ReadLine]) -> String {
    let mut s = String::from(
        "index,link,cpus,machine,workload,a,b,repeats,a_throughput,b_throughput,throughput_pct,throughput_pct_ci_lo,throughput_pct_ci_hi,throughput_p,a_contention_pct,b_contention_pct,contention_points\n",
    );
    let q = |x: &str| format!("\"{}\"", x.replace('"', "\"\""));
    for l in lines.iter().map(|r| &r.line) {
        let t = &l.table;
        let f = |k: &str| t.figure(k);
        let (tp, ct) = (f("throughput"), f("contention_pct"));
        let d = tp.and_then(|f| f.delta.as_ref());
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            l.index,
            q(&l.link),
            l.cpus.map_or(String::new(), |c| c.to_string()),
            q(&t.machine),
            q(&t.workload),
            q(&t.a_patches.join(",")),
            q(&t.b_patches.as_deref().unwrap_or(&[]).join(",")),
            t.repeats,
            tp.map_or(0.0, |f| f.a.mean),
            tp.and_then(|f| f.b.as_ref()).map_or(0.0, |b| b.mean),
            d.map_or(0.0, |d| d.change),
            d.map_or(0.0, |d| d.ci95[0]),
            d.map_or(0.0, |d| d.ci95[1]),
            d.map_or(1.0, |d| d.p),
            ct.map_or(0.0, |f| f.a.mean),
            ct.and_then(|f| f.b.as_ref()).map_or(0.0, |b| b.mean),
            ct.and_then(|f| f.delta.as_ref()).map_or(0.0, |d| d.change),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: &str = r#"{
        "machines": [{"preset": "milan-2s"}, {"preset": "custom", "sockets": 2, "cores_per_socket": 4}],
        "patch_sets": [{"b": ["skew-tick"]}],
        "workloads": [{"name": "oltp"}, {"name": "spin", "threads": 4}],
        "cpus": [16, 32],
        "seconds": 0.005,
        "repeats": 2
    }"#;

    #[test]
    fn shards_merge_to_the_unsharded_bytes_and_refuse_overlaps_and_gaps() {
        let g = Grid::from_json(GRID).unwrap();
        assert_eq!(g.points().unwrap().len(), 8);
        let all = to_lines(&g.run(Shard::ALL, 2).unwrap());
        let shards: Vec<(String, String)> = (0..3)
            .map(|i| {
                let s = Shard { index: i, count: 3 };
                (format!("s{i}"), to_lines(&g.run(s, 1).unwrap()))
            })
            .collect();
        // in any order of files
        let rev: Vec<_> = shards.iter().rev().cloned().collect();
        assert_eq!(merged_lines(&merge(&rev).unwrap()), all);
        let arr: Vec<PointLine> =
            serde_json::from_str(&merged_array(&merge(&shards).unwrap())).unwrap();
        assert_eq!(arr.len(), 8);
        let e = merge(&shards[..2]).unwrap_err();
        assert!(
            e.0[0].message.starts_with("missing points: 2 of 8: 2, 5"),
            "{e}"
        );
        let mut dup = shards.clone();
        dup.push(("again".into(), shards[1].1.clone()));
        let e = merge(&dup).unwrap_err();
        assert!(
            e.0[0]
                .message
                .contains("overlapping shards: point 1 is in s1 and in again"),
            "{e}"
        );
        let mut other = g.clone();
        other.seed = 2;
        let foreign = to_lines(&other.run(Shard { index: 0, count: 8 }, 1).unwrap());
        let mut mixed = shards.clone();
        mixed.push(("foreign".into(), foreign));
        assert!(
            merge(&mixed)
                .unwrap_err()
                .to_string()
                .contains("not of grid")
        );
        let csv = to_csv(&merge(&shards).unwrap());
        assert_eq!(csv.lines().count(), 9);
    }

    #[test]
    fn shard_specs_and_bad_grids() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["4/4", "1", "a/2", "0/0", "-1/3"] {
            assert_eq!(Shard::parse(bad).unwrap_err().field, "shard", "{bad}");
        }
        assert!(Grid::from_json(r#"{"machines": []}"#).is_err());
        let g = Grid::from_json(
            r#"{"machines":[{"preset":"milan-2s"}],"patch_sets":[{}],"workloads":[{"name":"oltp"}],"cpus":[18, 16]}"#,
        )
        .unwrap();
        let e = g.points().unwrap_err();
        assert_eq!(e.0[0].field, "cpus");
        assert!(
            e.0[0].message.starts_with("point 0: 18 is not allowed"),
            "{e}"
        );
    }
}
