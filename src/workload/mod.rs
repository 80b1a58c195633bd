//! Workloads: each task runs a script of steps (CPU bursts, sleeps, blocking waits, wakeups of other
//! tasks, completed units of work). The scheduler asks for the next step whenever a burst ends.

mod hackbench;
mod oltp;
mod schbench;
mod spin;

use crate::error::{FieldError, Invalid};
use crate::sim::SimRng;
use serde::Serialize;
use std::collections::BTreeMap;

pub type TaskId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run on the CPU for `ns`; the burst touches `shared_lines` cache lines last written by
    /// another thread of the same process (priced by where that thread ran).
    Run { ns: u64, shared_lines: u32 },
    /// Block; a timer or device interrupt wakes the task after `ns`.
    Sleep { ns: u64 },
    /// Block until another task wakes it (a wakeup that came earlier is not lost).
    Block,
    /// Wake `task`, handing it `lines` freshly written cache lines (pipe data, a request).
    Wake { task: TaskId, lines: u32 },
    /// One unit of the workload's throughput completed, with its latency.
    Complete { latency_ns: u64 },
    /// The task exits.
    Exit,
}

#[derive(Clone, Debug, Serialize)]
pub struct TaskSpec {
    pub process: u32,
}

pub trait Workload {
    fn tasks(&self) -> &[TaskSpec];
    fn processes(&self) -> &[String];
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step;
    /// Hot working set of one task in cache lines (refilled after a migration).
    fn ws_lines(&self) -> u32;
    /// The knob values this instance runs with, defaults resolved (the report shows them).
    fn knobs(&self) -> Knobs;
    /// Whether `task` completes the units the throughput counts (hackbench receivers, schbench
    /// workers); sysbench-style "events (avg/stddev)" is taken over these tasks only.
    fn counts_units(&self, _task: TaskId) -> bool {
        true
    }
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct KnobInfo {
    pub name: &'static str,
    pub kind: &'static str,
    pub min: u64,
    pub max: u64,
    pub values: &'static [&'static str],
    pub description: &'static str,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub unit: &'static str,
    pub knobs: &'static [KnobInfo],
}

const fn int(name: &'static str, min: u64, max: u64, description: &'static str) -> KnobInfo {
    KnobInfo {
        name,
        kind: "int",
        min,
        max,
        values: &[],
        description,
    }
}

/// Workload names and knobs, append-only. Defaults depend on the machine (see `defaults`).
pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "oltp",
        description: "sysbench oltp_read_write against one mysqld: a thread per client, each transaction 20 statements of short CPU bursts and client round trips",
        unit: "transactions",
        knobs: &[int(
            "clients",
            1,
            16384,
            "client connections = mysqld threads (default: number of CPUs)",
        )],
    },
    WorkloadInfo {
        name: "hackbench",
        description: "groups of senders and receivers passing messages over pipes",
        unit: "messages",
        knobs: &[
            int("groups", 1, 1024, "groups (default 10)"),
            int(
                "fds",
                1,
                256,
                "senders and receivers per group (default 20)",
            ),
            int(
                "loops",
                1,
                1_000_000,
                "messages each sender sends each receiver per round (default 100)",
            ),
            KnobInfo {
                name: "mode",
                kind: "enum",
                min: 0,
                max: 0,
                values: &["process", "thread"],
                description: "process: one mm per task; thread: all tasks are threads of one process",
            },
        ],
    },
    WorkloadInfo {
        name: "schbench",
        description: "message threads waking worker threads that each serve a request (wakeup latency)",
        unit: "requests",
        knobs: &[
            int("message_threads", 1, 256, "message threads (default 2)"),
            int(
                "workers",
                1,
                4096,
                "workers per message thread (default: CPUs / message threads)",
            ),
        ],
    },
    WorkloadInfo {
        name: "spin",
        description: "N CPU hogs that never sleep",
        unit: "10 ms CPU slices",
        knobs: &[int(
            "threads",
            1,
            16384,
            "spinning threads (default: number of CPUs)",
        )],
    },
];

pub fn info(name: &str) -> Option<&'static WorkloadInfo> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// Knob values as strings, checked against the knob table.
pub type Knobs = BTreeMap<String, String>;

pub fn validate_knobs(name: &str, knobs: &Knobs) -> Vec<FieldError> {
    let Some(w) = info(name) else {
        let allowed: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        return vec![FieldError::new(
            "workload",
            format!("unknown workload {name:?}: allowed {}", allowed.join(", ")),
        )];
    };
    let mut errs = Vec::new();
    for (k, v) in knobs {
        match w.knobs.iter().find(|x| x.name == k) {
            None => {
                let allowed: Vec<&str> = w.knobs.iter().map(|x| x.name).collect();
                errs.push(FieldError::new(
                    k,
                    format!(
                        "{k} is not a knob of {name}: allowed {}",
                        allowed.join(", ")
                    ),
                ));
            }
            Some(kn) if kn.kind == "enum" => {
                if !kn.values.contains(&v.as_str()) {
                    errs.push(FieldError::new(
                        k,
                        format!("{v:?} is not allowed: {}", kn.values.join(" or ")),
                    ));
                }
            }
            Some(kn) => match v.parse::<u64>() {
                Ok(x) if (kn.min..=kn.max).contains(&x) => {}
                _ => errs.push(FieldError::new(
                    k,
                    format!(
                        "{v:?} is out of range: an integer in {}..={}",
                        kn.min, kn.max
                    ),
                )),
            },
        }
    }
    errs
}

fn knob(knobs: &Knobs, k: &str, default: u64) -> u64 {
    knobs.get(k).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Builds a workload for a machine with `nr_cpus` CPUs. Knobs must have been validated.
pub fn build(name: &str, knobs: &Knobs, nr_cpus: usize) -> Result<Box<dyn Workload>, Invalid> {
    let errs = validate_knobs(name, knobs);
    if !errs.is_empty() {
        return Err(Invalid(errs));
    }
    let n = nr_cpus as u64;
    Ok(match name {
        "oltp" => Box::new(oltp::Oltp::new(knob(knobs, "clients", n) as usize)),
        "hackbench" => Box::new(hackbench::Hackbench::new(
            knob(knobs, "groups", 10) as usize,
            knob(knobs, "fds", 20) as usize,
            knob(knobs, "loops", 100),
            knobs.get("mode").is_some_and(|m| m == "thread"),
        )),
        "schbench" => {
            let m = knob(knobs, "message_threads", 2);
            Box::new(schbench::Schbench::new(
                m as usize,
                knob(knobs, "workers", (n / m).max(1)) as usize,
            ))
        }
        "spin" => Box::new(spin::Spin::new(knob(knobs, "threads", n) as usize)),
        _ => unreachable!("validated above"),
    })
}

/// Number of tasks a workload would create (checked against limits before anything is allocated).
pub fn task_count(name: &str, knobs: &Knobs, nr_cpus: usize) -> u64 {
    let n = nr_cpus as u64;
    match name {
        "oltp" => knob(knobs, "clients", n),
        "hackbench" => knob(knobs, "groups", 10)
            .saturating_mul(knob(knobs, "fds", 20))
            .saturating_mul(2),
        "schbench" => {
            let m = knob(knobs, "message_threads", 2);
            m.saturating_mul(knob(knobs, "workers", (n / m.max(1)).max(1)).saturating_add(1))
        }
        "spin" => knob(knobs, "threads", n),
        _ => 0,
    }
}
