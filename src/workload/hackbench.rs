//! `hackbench` as hackbench (rt-tests) and `perf bench sched messaging` run it: per group, `fds`
//! senders each write `loops` 100-byte messages to each of the group's `fds` receivers, round
//! robin, over one channel per receiver that all the group's senders share: an AF_UNIX SOCK_STREAM
//! socketpair (the default) or a pipe (`-p`). The channel's kernel rules decide who blocks and who
//! is woken (`channel.rs`); every such wakeup is `WF_SYNC`. When a group's receivers have read
//! everything, the round ends and its senders start the next one (hackbench run again, for as long
//! as the run lasts). The tasks start as hackbench starts them: every one waits in `poll()` on one
//! pipe and the parent's single write wakes them one after another, in an order that differs from
//! run to run (`Start`). Constants and their sources: docs/MODEL.md §18.

mod channel;
mod msgpath;

use super::syscall::{KernelLineDecl, KernelStep};
use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, UserLine, Workload, WorkloadInfo};
use crate::sim::rng::SimRng;
use channel::{Channel, Transport};
use msgpath::MsgPath;
use std::collections::VecDeque;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "hackbench",
    description: "groups of senders and receivers passing 100-byte messages over unix sockets or pipes",
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
        KnobInfo {
            name: "transport",
            what: "socket: an AF_UNIX SOCK_STREAM socketpair per receiver; pipe: a pipe per receiver (hackbench -p)",
            values: &["socket", "pipe"],
            default: KnobDefault::Choice("socket"),
            ..KnobInfo::ENUM
        },
    ],
    build: |k| {
        let transport = if k.choice("transport") == "pipe" {
            Transport::Pipe
        } else {
            Transport::Socket
        };
        Box::new(Hackbench::new(
            k.int("groups") as usize,
            k.int("fds") as usize,
            k.int("loops"),
            k.choice("mode") == "thread",
            MsgPath::new(transport, &k.assume),
            k.assume.ttwu_ns,
        ))
    },
    tasks: |k| {
        k.int("groups")
            .saturating_mul(k.int("fds"))
            .saturating_mul(2)
    },
};

#[derive(Clone, Copy)]
enum Role {
    Sender {
        group: usize,
        next_rx: usize,
        sent: u64,
        /// The write's kernel script is running: its message is committed when it ends.
        writing: bool,
        /// Objects allocated from its CPU's slabs since the last refill (socket).
        allocs: crate::workload::slab::Freelist,
    },
    Receiver {
        chan: usize,
        group: usize,
        /// The read's kernel script is running: its message is consumed when it ends.
        reading: bool,
        /// It found the channel empty and took the wait queue's lock (`prepare_to_wait`): it
        /// sleeps unless a message came meanwhile.
        prepared: bool,
        /// It slept in read(): the next read starts with `finish_wait`, not a new syscall.
        woke: bool,
    },
}

/// The start, as `ready()` and the parent's "GO" in hackbench and `perf bench sched messaging` make
/// it: each child writes one byte to the ready pipe and waits in `poll()` on the wake pipe; once all
/// are ready the parent writes one byte to it, and that write wakes every poller one after another
/// (`__wake_up_common`; `poll` queues with `add_wait_queue`, at the head, so the last to arrive is
/// woken first). The order the children reached `poll()` depends on where and when each fork first
/// ran, which the model does not run: it is drawn from the seed, a uniform permutation, at the
/// first step of the first task (the one run-to-run variation of this otherwise seed-free
/// workload). Consecutive wakeups are `gap_ns` apart (one `try_to_wake_up`, `TTWU_NS`).
struct Start {
    gap_ns: u64,
    /// Per task: when the parent's write wakes it (empty until drawn).
    wake_at: Vec<u64>,
    started: Vec<bool>,
}

impl Start {
    fn new(tasks: usize, gap_ns: u64) -> Self {
        Start {
            gap_ns,
            wake_at: Vec::new(),
            // no gap: every task starts at once (the workload's own unit tests)
            started: vec![gap_ns == 0; tasks],
        }
    }

    /// The sleep that ends at `task`'s wakeup, the first time `task` asks for a step.
    fn first_step(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Option<Step> {
        let started = self.started.get_mut(task as usize)?;
        if *started {
            return None;
        }
        *started = true;
        if self.wake_at.is_empty() {
            let n = self.started.len();
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            self.wake_at = vec![0; n];
            for (k, &t) in order.iter().enumerate() {
                self.wake_at[t] = (k as u64 + 1).saturating_mul(self.gap_ns);
            }
        }
        let at = self.wake_at[task as usize];
        // lazily: `at - now` only when it is positive
        (at > now).then(|| Step::Sleep { ns: at - now })
    }
}

struct Group {
    senders: Vec<TaskId>,
    /// Messages still to be read this round.
    pending_reads: u64,
}

pub struct Hackbench {
    groups: Vec<Group>,
    /// Messages each sender writes per round: loops × fds.
    per_sender: u64,
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    roles: Vec<Role>,
    chans: Vec<Channel>,
    /// Per task: the rest of the kernel script of the system call it is in.
    script: Vec<VecDeque<KernelStep>>,
    path: MsgPath,
    /// Per task: wakeups it issues before its next step (the kernel's wake-ups inside one syscall).
    outbox: Vec<VecDeque<(TaskId, bool)>>,
    fds: usize,
    thread_mode: bool,
    transport: Transport,
    start: Start,
}

impl Hackbench {
    pub fn new(
        groups: usize,
        fds: usize,
        loops: u64,
        thread_mode: bool,
        path: MsgPath,
        start_gap_ns: u64,
    ) -> Self {
        let transport = path.transport;
        let mut tasks = Vec::new();
        let mut group_list = Vec::new();
        let mut roles = Vec::new();
        let mut chans = Vec::new();
        let mut procs = Vec::new();
        for g in 0..groups {
            group_list.push(Group {
                senders: (0..fds).map(|k| (tasks.len() + k) as TaskId).collect(),
                pending_reads: (fds * fds) as u64 * loops,
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
                    writing: false,
                    allocs: Default::default(),
                });
            }
            for _ in 0..fds {
                let process = if thread_mode { 0 } else { procs.len() as u32 };
                if !thread_mode {
                    procs.push(format!("hackbench-g{g}-rx{}", tasks.len()));
                }
                chans.push(Channel::new(transport, tasks.len() as TaskId));
                tasks.push(TaskSpec { process });
                roles.push(Role::Receiver {
                    chan: chans.len() - 1,
                    group: g,
                    reading: false,
                    prepared: false,
                    woke: false,
                });
            }
        }
        if thread_mode {
            procs.push("hackbench".into());
        }
        Hackbench {
            groups: group_list,
            per_sender: loops * fds as u64,
            outbox: vec![VecDeque::new(); tasks.len()],
            script: vec![VecDeque::new(); tasks.len()],
            path,
            tasks,
            procs,
            roles,
            chans,
            fds,
            thread_mode,
            transport,
            start: Start::new(groups * fds * 2, start_gap_ns),
        }
    }

    fn next_sender(&mut self, task: TaskId, now: u64) -> Step {
        let fds = self.fds;
        let Role::Sender {
            group,
            next_rx,
            sent,
            writing,
            allocs,
        } = &mut self.roles[task as usize]
        else {
            unreachable!()
        };
        let ci = *group * fds + *next_rx;
        let chan = &mut self.chans[ci];
        if *writing {
            // write() queued the message: the reader can read it; wake it if it sleeps.
            *writing = false;
            *sent += 1;
            *next_rx = (*next_rx + 1) % fds;
            let out = &mut self.outbox[task as usize];
            chan.commit(now, task, out);
            if !out.is_empty() {
                // the first wakeup is the reader's, under its wait queue's lock
                return Step::Kernel(self.path.wake_reader(ci));
            }
            return self.next_sender(task, now);
        }
        if *sent >= self.per_sender {
            return Step::Block; // this round's messages are out: wait for the next round
        }
        if !chan.reserve(task) {
            return Step::Block; // full: queued on the channel's write wait queue
        }
        *writing = true;
        let refill = self.transport == Transport::Socket && allocs.alloc();
        let new_page = chan.last_write_took_page();
        self.script[task as usize].extend(self.path.write(ci, task, refill, new_page));
        // hackbench's loop in user space, then the system call
        Step::Run {
            ns: msgpath::USER_NS,
            shared_lines: 0,
        }
    }

    fn next_receiver(&mut self, task: TaskId, now: u64) -> Step {
        let fds = self.fds;
        let Role::Receiver {
            chan,
            group,
            reading,
            prepared,
            woke,
        } = &mut self.roles[task as usize]
        else {
            unreachable!()
        };
        let (ci, gi) = (*chan, *group);
        if *reading {
            *reading = false;
            let out = &mut self.outbox[task as usize];
            let written = self.chans[ci].consume(out).unwrap_or(now);
            let g = &mut self.groups[gi];
            g.pending_reads = g.pending_reads.saturating_sub(1);
            if g.pending_reads == 0 {
                // Round over: every sender of the group starts again (not a kernel wakeup).
                g.pending_reads = (fds * fds) as u64 * (self.per_sender / fds as u64);
                for &t in &g.senders {
                    out.push_back((t, false));
                    if let Role::Sender { sent, .. } = &mut self.roles[t as usize] {
                        *sent = 0;
                    }
                }
            }
            // (a writer's kernel work is costed ahead of the clock on its CPU, so the message's
            // commit time can be later than the reader's now: no negative latency)
            return Step::Complete {
                latency_ns: now.saturating_sub(written),
            };
        }
        let c = &mut self.chans[ci];
        let Some(writer) = c.front_writer() else {
            if std::mem::take(prepared) {
                // still empty after prepare_to_wait: sleep until a writer wakes it
                c.wait_reader();
                *woke = true;
                return Step::Block;
            }
            *prepared = true;
            self.script[task as usize].extend(self.path.read_empty(ci));
            return self.next_script(task).unwrap_or(Step::Block);
        };
        *prepared = false;
        *reading = true;
        let woke = std::mem::take(woke);
        let drains = c.next_read_drains();
        self.script[task as usize].extend(self.path.read(ci, writer, woke, drains));
        if woke {
            // back from the sleep inside read(): the kernel script goes on
            return self.next_script(task).unwrap_or(Step::Block);
        }
        Step::Run {
            ns: msgpath::USER_NS,
            shared_lines: 0,
        }
    }

    fn next_script(&mut self, task: TaskId) -> Option<Step> {
        self.script[task as usize].pop_front().map(Step::Kernel)
    }
}

/// A wakeup from the outbox as a step.
fn wake((task, sync): (TaskId, bool)) -> Step {
    Step::Wake {
        task,
        lines: 0, // the message's lines are read by the reader's kernel script, not the wakeup
        sync,
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
            ("transport", self.transport.name().to_string()),
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
    fn kernel_lines(&self) -> Vec<KernelLineDecl> {
        self.chans
            .iter()
            .enumerate()
            .flat_map(|(i, c)| msgpath::channel_lines(self.transport, i, c.reader()))
            .collect()
    }
    fn per_cpu_kernel_lines(&self) -> &[UserLine] {
        match self.transport {
            Transport::Socket => msgpath::PER_CPU_LINES,
            Transport::Pipe => &[],
        }
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        if let Some(s) = self.start.first_step(task, now, rng) {
            return s;
        }
        if let Some(s) = self.next_script(task) {
            return s;
        }
        if let Some(w) = self.outbox[task as usize].pop_front() {
            return wake(w);
        }
        match self.roles[task as usize] {
            Role::Sender { .. } => self.next_sender(task, now),
            Role::Receiver { .. } => self.next_receiver(task, now),
        }
    }
}

#[cfg(test)]
mod tests;
