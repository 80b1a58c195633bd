//! `schbench`: each message thread wakes its workers, then sleeps; a woken worker records its
//! wakeup latency (wake to first run), serves one request of CPU work, and waits again.

use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, Workload, WorkloadInfo};
use crate::sim::rng::SimRng;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "schbench",
    description: "message threads waking worker threads that each serve a request (wakeup latency)",
    unit: "requests",
    knobs: &[
        KnobInfo {
            name: "message_threads",
            what: "message threads",
            unit: "threads",
            min: 1,
            max: 256,
            default: KnobDefault::Fixed(2),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "workers",
            what: "workers per message thread",
            unit: "threads",
            min: 1,
            max: 4096,
            default: KnobDefault::NrCpusPer("message_threads"),
            ..KnobInfo::INT
        },
        super::ws_knob(256),
        super::mem_knob(0),
    ],
    build: |k| {
        Box::new(Schbench::new(
            k.int("message_threads") as usize,
            k.int("workers") as usize,
        ))
    },
    // The message threads and their workers.
    tasks: |k| {
        k.int("message_threads")
            .saturating_mul(k.int("workers").saturating_add(1))
    },
};

/// Message-thread period between rounds of wakeups (schbench -s sleeptime), ns.
const SLEEP_NS: u64 = 1_000_000;
/// CPU per request (schbench -c cputime), ns.
const REQUEST_NS: u64 = 400_000;
/// Message-thread CPU per round (timestamps, building the messages), ns.
const ROUND_NS: u64 = 5_000;
/// A request message handed to the worker: 2 cache lines.
const MSG_LINES: u32 = 2;

#[derive(Clone, Copy)]
enum Role {
    /// next: the next worker to wake; u32::MAX = the round's own CPU work is still to run.
    Message {
        first_worker: TaskId,
        workers: u32,
        next: u32,
    },
    /// phase 0: waiting; 1: wakeup recorded, request to run; 2: request done.
    Worker { woken_at: Option<u64>, phase: u8 },
}

pub struct Schbench {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    roles: Vec<Role>,
}

impl Schbench {
    pub fn new(message_threads: usize, workers: usize) -> Self {
        let mut roles = Vec::new();
        for _ in 0..message_threads {
            let first = (roles.len() + 1) as TaskId;
            roles.push(Role::Message {
                first_worker: first,
                workers: workers as u32,
                next: u32::MAX,
            });
            roles.extend((0..workers).map(|_| Role::Worker {
                woken_at: None,
                phase: 0,
            }));
        }
        Schbench {
            tasks: vec![TaskSpec { process: 0 }; roles.len()],
            procs: vec!["schbench".into()],
            roles,
        }
    }
}

impl Workload for Schbench {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn knobs(&self) -> super::Knobs {
        let mut k = super::Knobs::new();
        for r in &self.roles {
            if let Role::Message { workers, .. } = r {
                k.insert("workers".into(), workers.to_string());
            }
        }
        let m = self.roles.len()
            - self
                .roles
                .iter()
                .filter(|r| matches!(r, Role::Worker { .. }))
                .count();
        k.insert("message_threads".into(), m.to_string());
        k
    }
    fn counts_units(&self, task: TaskId) -> bool {
        matches!(self.roles[task as usize], Role::Worker { .. })
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn next(&mut self, task: TaskId, now: u64, _rng: &mut SimRng) -> Step {
        match self.roles[task as usize] {
            Role::Message {
                first_worker,
                workers,
                next,
            } => {
                if next == u32::MAX {
                    self.roles[task as usize] = Role::Message {
                        first_worker,
                        workers,
                        next: 0,
                    };
                    return Step::Run {
                        ns: ROUND_NS,
                        shared_lines: 0,
                    };
                }
                if next < workers {
                    let w = first_worker + next;
                    self.roles[task as usize] = Role::Message {
                        first_worker,
                        workers,
                        next: next + 1,
                    };
                    if let Role::Worker { woken_at, .. } = &mut self.roles[w as usize] {
                        woken_at.get_or_insert(now);
                    }
                    return Step::Wake {
                        task: w,
                        lines: MSG_LINES,
                        sync: false,
                    };
                }
                self.roles[task as usize] = Role::Message {
                    first_worker,
                    workers,
                    next: u32::MAX,
                };
                Step::Sleep { ns: SLEEP_NS }
            }
            Role::Worker { woken_at, phase } => match (phase, woken_at) {
                (1, _) => {
                    self.roles[task as usize] = Role::Worker { woken_at, phase: 2 };
                    Step::Run {
                        ns: REQUEST_NS,
                        shared_lines: 0,
                    }
                }
                (0, Some(t)) => {
                    // A request is counted when its worker starts: its latency is the wakeup latency.
                    self.roles[task as usize] = Role::Worker {
                        woken_at: None,
                        phase: 1,
                    };
                    Step::Complete {
                        // the waker may have stamped it from a kernel cursor ahead of this CPU's
                        latency_ns: now.saturating_sub(t),
                    }
                }
                _ => {
                    self.roles[task as usize] = Role::Worker { woken_at, phase: 0 };
                    Step::Block
                }
            },
        }
    }
}
