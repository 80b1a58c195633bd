//! `hackbench`: per group, `fds` senders each write `loops` messages to each of the group's `fds`
//! receivers over pipes. A write wakes the reader; a full pipe (64 KiB of 100-byte messages) blocks
//! the writer until the reader drains it. When a group's receivers have read everything, the round
//! ends and its senders start the next one (hackbench run again, for as long as the run lasts).

use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, Workload, WorkloadInfo};
use crate::sim::rng::SimRng;
use std::collections::VecDeque;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "hackbench",
    description: "groups of senders and receivers passing messages over pipes",
    unit: "messages",
    knobs: &[
        KnobInfo {
            name: "groups",
            what: "groups",
            unit: "groups",
            min: 1,
            max: 1024,
            default: KnobDefault::Fixed(10),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "fds",
            what: "senders and receivers per group",
            unit: "senders (as many receivers)",
            min: 1,
            max: 256,
            default: KnobDefault::Fixed(20),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "loops",
            what: "messages each sender sends each receiver per round",
            unit: "messages",
            min: 1,
            max: 1_000_000,
            default: KnobDefault::Fixed(100),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "mode",
            what: "process: one mm per task; thread: all tasks are threads of one process",
            values: &["process", "thread"],
            default: KnobDefault::Choice("process"),
            ..KnobInfo::ENUM
        },
        super::ws_knob(16),
        super::mem_knob(0),
    ],
    build: |k| {
        Box::new(Hackbench::new(
            k.int("groups") as usize,
            k.int("fds") as usize,
            k.int("loops"),
            k.choice("mode") == "thread",
        ))
    },
    tasks: |k| {
        k.int("groups")
            .saturating_mul(k.int("fds"))
            .saturating_mul(2)
    },
};

/// CPU for one 100-byte pipe write or read (syscall + copy), ns.
const WRITE_NS: u64 = 2_000;
const READ_NS: u64 = 2_000;
/// A 100-byte message plus the pipe buffer bookkeeping: 2 cache lines handed to the reader.
const MSG_LINES: u32 = 2;
/// 64 KiB pipe / 100-byte messages.
const PIPE_MSGS: usize = 655;

struct Pipe {
    /// Messages in the pipe: when and by whom each was written.
    queue: VecDeque<(u64, TaskId)>,
    reader: TaskId,
    waiting_writers: Vec<TaskId>,
}

#[derive(Clone, Copy)]
enum Role {
    Sender {
        group: usize,
        next_rx: usize,
        sent: u64,
        pending_run: bool,
    },
    Receiver {
        pipe: usize,
        group: usize,
        pending_run: bool,
        wrote_back: bool,
        /// The next message's lines were fetched from its writer (`Step::Read`).
        fetched: bool,
    },
}

struct Group {
    senders: Vec<TaskId>,
    /// Messages still to be read this round.
    pending_reads: u64,
    /// Senders to wake for the next round.
    to_wake: Vec<TaskId>,
}

pub struct Hackbench {
    groups: Vec<Group>,
    /// Messages each sender writes per round: loops × fds.
    per_sender: u64,
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    roles: Vec<Role>,
    pipes: Vec<Pipe>,
    fds: usize,
    thread_mode: bool,
}

impl Hackbench {
    pub fn new(groups: usize, fds: usize, loops: u64, thread_mode: bool) -> Self {
        let mut tasks = Vec::new();
        let mut group_list = Vec::new();
        let mut roles = Vec::new();
        let mut pipes = Vec::new();
        let mut procs = Vec::new();
        for g in 0..groups {
            group_list.push(Group {
                senders: (0..fds).map(|k| (tasks.len() + k) as TaskId).collect(),
                pending_reads: (fds * fds) as u64 * loops,
                to_wake: Vec::new(),
            });
            for _ in 0..fds {
                let process = if thread_mode { 0 } else { procs.len() as u32 };
                if !thread_mode {
                    procs.push(format!("hackbench-g{g}-tx{}", tasks.len()));
                }
                tasks.push(TaskSpec { process });
                roles.push(Role::Sender {
                    group: g,
                    next_rx: 0,
                    sent: 0,
                    pending_run: false,
                });
            }
            for _ in 0..fds {
                let process = if thread_mode { 0 } else { procs.len() as u32 };
                if !thread_mode {
                    procs.push(format!("hackbench-g{g}-rx{}", tasks.len()));
                }
                pipes.push(Pipe {
                    queue: VecDeque::new(),
                    reader: tasks.len() as TaskId,
                    waiting_writers: Vec::new(),
                });
                tasks.push(TaskSpec { process });
                roles.push(Role::Receiver {
                    pipe: pipes.len() - 1,
                    group: g,
                    pending_run: false,
                    wrote_back: false,
                    fetched: false,
                });
            }
        }
        if thread_mode {
            procs.push("hackbench".into());
        }
        Hackbench {
            groups: group_list,
            per_sender: loops * fds as u64,
            tasks,
            procs,
            roles,
            pipes,
            fds,
            thread_mode,
        }
    }
}

impl Workload for Hackbench {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn knobs(&self) -> super::Knobs {
        let mode = if self.thread_mode {
            "thread"
        } else {
            "process"
        };
        [
            ("groups", self.groups.len().to_string()),
            ("fds", self.fds.to_string()),
            ("loops", (self.per_sender / self.fds as u64).to_string()),
            ("mode", mode.to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into()
    }
    fn counts_units(&self, task: TaskId) -> bool {
        matches!(self.roles[task as usize], Role::Receiver { .. })
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn next(&mut self, task: TaskId, now: u64, _rng: &mut SimRng) -> Step {
        let fds = self.fds;
        match &mut self.roles[task as usize] {
            Role::Sender {
                group,
                next_rx,
                sent,
                pending_run,
            } => {
                let pipe = &mut self.pipes[*group * fds + *next_rx];
                if *pending_run {
                    // The write's CPU time is done: the message is in the pipe; wake the reader.
                    *pending_run = false;
                    pipe.queue.push_back((now, task));
                    *sent += 1;
                    *next_rx = (*next_rx + 1) % fds;
                    // the message's lines travel with the read (Step::Read), not the wakeup
                    return Step::Wake {
                        task: pipe.reader,
                        lines: 0,
                        sync: false,
                    };
                }
                if *sent >= self.per_sender {
                    return Step::Block; // this round's messages are out: wait for the next round
                }
                if pipe.queue.len() >= PIPE_MSGS {
                    pipe.waiting_writers.push(task);
                    return Step::Block;
                }
                *pending_run = true;
                Step::Run {
                    ns: WRITE_NS,
                    shared_lines: 0,
                }
            }
            Role::Receiver {
                pipe,
                group,
                pending_run,
                wrote_back,
                fetched,
            } => {
                let (pipe, group) = (*pipe, *group);
                if *pending_run {
                    *pending_run = false;
                    *wrote_back = false;
                    let written = self.pipes[pipe].queue.pop_front().map_or(now, |m| m.0);
                    let g = &mut self.groups[group];
                    g.pending_reads = g.pending_reads.saturating_sub(1);
                    if g.pending_reads == 0 {
                        // Round over: every sender of the group starts again.
                        g.pending_reads = (fds * fds) as u64 * (self.per_sender / fds as u64);
                        g.to_wake = g.senders.clone();
                        for &t in &g.senders {
                            if let Role::Sender { sent, .. } = &mut self.roles[t as usize] {
                                *sent = 0;
                            }
                        }
                    }
                    return Step::Complete {
                        latency_ns: now - written,
                    };
                }
                if let Some(t) = self.groups[group].to_wake.pop() {
                    return Step::Wake {
                        task: t,
                        lines: 0,
                        sync: false,
                    };
                }
                let p = &mut self.pipes[pipe];
                if !*wrote_back {
                    // A read frees pipe space: wake a writer blocked on this pipe.
                    *wrote_back = true;
                    if let Some(w) = p.waiting_writers.pop() {
                        return Step::Wake {
                            task: w,
                            lines: 0,
                            sync: false,
                        };
                    }
                }
                let Some(&(_, writer)) = p.queue.front() else {
                    return Step::Block;
                };
                if !*fetched {
                    *fetched = true;
                    return Step::Read {
                        from: writer,
                        lines: MSG_LINES,
                    };
                }
                *fetched = false;
                *pending_run = true;
                Step::Run {
                    ns: READ_NS,
                    shared_lines: 0,
                }
            }
        }
    }
}
