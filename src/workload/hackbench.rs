//! `hackbench`: per group, `fds` senders each write `loops` messages to each of the group's `fds`
//! receivers over pipes, round after round. A write wakes the reader; a full pipe (64 KiB of
//! 100-byte messages) blocks the writer until the reader drains it.

use super::{Step, TaskId, TaskSpec, Workload};
use crate::sim::SimRng;
use std::collections::VecDeque;

/// CPU for one 100-byte pipe write or read (syscall + copy), ns.
const WRITE_NS: u64 = 2_000;
const READ_NS: u64 = 2_000;
/// A 100-byte message plus the pipe buffer bookkeeping: 2 cache lines handed to the reader.
const MSG_LINES: u32 = 2;
/// 64 KiB pipe / 100-byte messages.
const PIPE_MSGS: usize = 655;

struct Pipe {
    queue: VecDeque<u64>,
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
        pending_run: bool,
        wrote_back: bool,
    },
}

pub struct Hackbench {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    roles: Vec<Role>,
    pipes: Vec<Pipe>,
    fds: usize,
}

impl Hackbench {
    pub fn new(groups: usize, fds: usize, loops: u64, thread_mode: bool) -> Self {
        let _ = loops; // rounds repeat for as long as the run lasts; `loops` sets the round size
        let mut tasks = Vec::new();
        let mut roles = Vec::new();
        let mut pipes = Vec::new();
        let mut procs = Vec::new();
        for g in 0..groups {
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
                    pending_run: false,
                    wrote_back: false,
                });
            }
        }
        if thread_mode {
            procs.push("hackbench".into());
        }
        Hackbench {
            tasks,
            procs,
            roles,
            pipes,
            fds,
        }
    }
}

impl Workload for Hackbench {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
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
                    pipe.queue.push_back(now);
                    *sent += 1;
                    *next_rx = (*next_rx + 1) % fds;
                    return Step::Wake {
                        task: pipe.reader,
                        lines: MSG_LINES,
                    };
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
                pending_run,
                wrote_back,
            } => {
                let p = &mut self.pipes[*pipe];
                if *pending_run {
                    *pending_run = false;
                    let written = p.queue.pop_front().unwrap_or(now);
                    *wrote_back = false;
                    return Step::Complete {
                        latency_ns: now - written,
                    };
                }
                if !*wrote_back {
                    // A read frees pipe space: wake a writer blocked on this pipe.
                    *wrote_back = true;
                    if let Some(w) = p.waiting_writers.pop() {
                        return Step::Wake { task: w, lines: 0 };
                    }
                }
                if p.queue.is_empty() {
                    return Step::Block;
                }
                *pending_run = true;
                Step::Run {
                    ns: READ_NS,
                    shared_lines: 0,
                }
            }
        }
    }
    fn ws_lines(&self) -> u32 {
        256
    }
}
