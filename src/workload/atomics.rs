//! `atomics`: N threads hammering one cache line from user space, each access priced by the
//! cache-line model (`Step::Access`). Modes: `add` (`lock xadd`), `cmpxchg` (a lock-free counter:
//! load, then `lock cmpxchg` retried with the value it found), `read-mostly` (thread 0 stores,
//! the others load), `tas-lock` (test-and-set with spinning reads around a critical section) and
//! `pingpong` (core-to-core-latency's CAS ping-pong, generalised to a token ring). `pair` places
//! two threads on CPU 0 and the first CPU of a latency class from it. docs/MODEL.md §18.

use super::{
    KnobDefault, KnobInfo, LineOp, Step, TaskId, TaskSpec, UserLine, Workload, WorkloadInfo,
};
use crate::error::FieldError;
use crate::machine::hardware::LatencyClass;
use crate::machine::topology::Topology;
use crate::sim::rng::SimRng;

const MODES: &[&str] = &["add", "cmpxchg", "read-mostly", "tas-lock", "pingpong"];
const PAIRS: &[&str] = &[
    "none", "smt", "cluster", "llc", "node", "node-far", "socket",
];
/// Where the threads run (without `pair`): in CPU order, alternating sockets, or a fixed shuffle.
const PLACEMENTS: &[&str] = &["packed", "interleaved", "random"];
/// The shuffle of `placement=random`: one fixed permutation per machine, the same for every
/// seed, so that runs with different seeds differ only in what the seed drives.
const SHUFFLE_SEED: u64 = 0x5eed_a70c;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "atomics",
    description: "N threads hammering one cache line: lock xadd, a cmpxchg retry loop, one writer and N-1 readers, a test-and-set lock, or a cmpxchg ping-pong",
    unit: "ops",
    knobs: &[
        KnobInfo {
            name: "threads",
            what: "threads, one per CPU (2 when pair is set)",
            unit: "threads",
            min: 1,
            max: 16384,
            default: KnobDefault::NrCpus,
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "mode",
            what: "what each thread does to the line",
            values: MODES,
            default: KnobDefault::Choice("add"),
            ..KnobInfo::ENUM
        },
        KnobInfo {
            name: "critical_ns",
            what: "tas-lock: work inside the critical section",
            unit: "ns",
            min: 0,
            max: 1_000_000,
            default: KnobDefault::Fixed(100),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "placement",
            what: "without pair: threads on CPUs in order (packed), alternating sockets (interleaved), or a fixed shuffle (random)",
            values: PLACEMENTS,
            default: KnobDefault::Choice("packed"),
            ..KnobInfo::ENUM
        },
        KnobInfo {
            name: "pair",
            what: "two threads, on CPU 0 and the first CPU of this latency class from it",
            values: PAIRS,
            default: KnobDefault::Choice("none"),
            ..KnobInfo::ENUM
        },
        super::ws_knob(4),
        super::mem_knob(0),
    ],
    build: |k| {
        let mut a = Atomics::new(
            threads(k.int("threads"), k.choice("pair")) as usize,
            k.choice("mode"),
            k.int("critical_ns"),
            k.choice("pair"),
        );
        a.placement = PLACEMENTS
            .iter()
            .copied()
            .find(|&p| p == k.choice("placement"))
            .unwrap_or("packed");
        Box::new(a)
    },
    tasks: |k| threads(k.int("threads"), k.choice("pair")),
};

fn threads(knob: u64, pair: &str) -> u64 {
    if pair == "none" { knob } else { 2 }
}

/// One `pause` in a spin-wait loop, ns (stated assumption: about 140 cycles since Skylake, Intel
/// optimization manual; docs/MODEL.md §18). Spinning readers pause between loads, as spin-wait
/// loops are written (`cpu_relax()`, `_mm_pause()`).
pub const PAUSE_NS: u64 = 40;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Add,
    Cmpxchg,
    ReadMostly,
    TasLock,
    PingPong,
}

/// Where a thread is in its loop: what it issued last (its outcome is in `Thread::seen`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// About to start an op.
    #[default]
    Start,
    /// Issued the op's access (add, a read-mostly load or store).
    Issued,
    /// Paused after an op (read-mostly).
    Paused,
    /// cmpxchg: loaded the value.
    Loaded,
    /// cmpxchg, pingpong: issued `lock cmpxchg` expecting this value.
    Cas(u64),
    /// tas-lock: issued the test-and-set.
    Xchg,
    /// tas-lock: issued a spinning load; then paused after it.
    Spin,
    SpinPaused,
    /// tas-lock: ran the critical section; then issued the release store.
    Critical,
    Released,
}

#[derive(Clone, Copy, Debug, Default)]
struct Thread {
    phase: Phase,
    /// The value the line held when this thread's last load or atomic was served.
    seen: u64,
    /// When the current op started (pingpong: this thread's previous success).
    op_start: u64,
}

pub struct Atomics {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    mode: Mode,
    mode_name: &'static str,
    critical_ns: u64,
    pair: &'static str,
    placement: &'static str,
    lines: [UserLine; 1],
    threads: Vec<Thread>,
    /// read-mostly: the writer's next value.
    written: u64,
}

impl Atomics {
    pub fn new(threads: usize, mode: &str, critical_ns: u64, pair: &str) -> Self {
        let (m, line) = match mode {
            "cmpxchg" => (Mode::Cmpxchg, "atomics.counter"),
            "read-mostly" => (Mode::ReadMostly, "atomics.counter"),
            "tas-lock" => (Mode::TasLock, "atomics.lock"),
            "pingpong" => (Mode::PingPong, "atomics.flag"),
            _ => (Mode::Add, "atomics.counter"),
        };
        let name = |all: &[&'static str], v: &str| all.iter().copied().find(|&x| x == v);
        Atomics {
            tasks: vec![TaskSpec { process: 0 }; threads],
            procs: vec!["atomics".into()],
            mode: m,
            mode_name: name(MODES, mode).unwrap_or("add"),
            critical_ns,
            pair: name(PAIRS, pair).unwrap_or("none"),
            placement: "packed",
            lines: [UserLine {
                name: line,
                field: "value",
            }],
            threads: vec![Thread::default(); threads],
            written: 0,
        }
    }

    fn class(&self) -> Option<LatencyClass> {
        Some(match self.pair {
            "smt" => LatencyClass::Smt,
            "cluster" => LatencyClass::Cluster,
            "llc" => LatencyClass::Llc,
            "node" => LatencyClass::NodeNear,
            "node-far" => LatencyClass::NodeFar,
            "socket" => LatencyClass::Socket,
            _ => return None,
        })
    }

    /// The CPU of thread `task` under `placement` (None: packed, the engine's CPU order).
    fn placed_cpu(&self, task: TaskId, topo: &Topology) -> Option<u32> {
        let n = topo.nr_cpus();
        match self.placement {
            "interleaved" => {
                // thread k on socket k mod S, the (k div S)-th CPU of that socket
                let sockets = topo.cpus.iter().map(|c| c.socket).max().unwrap_or(0) as usize + 1;
                let (s, k) = (task as usize % sockets, task as usize / sockets);
                let mine: Vec<usize> = (0..n)
                    .filter(|&c| topo.cpus[c].socket as usize == s)
                    .collect();
                Some(mine[k % mine.len()] as u32)
            }
            "random" => {
                let mut perm: Vec<u32> = (0..n as u32).collect();
                let mut rng = SimRng::new(SHUFFLE_SEED);
                for i in (1..n).rev() {
                    perm.swap(i, rng.below(i as u64 + 1) as usize);
                }
                Some(perm[task as usize % n])
            }
            _ => None,
        }
    }

    /// The first CPU of the pair's class from CPU 0.
    fn pair_cpu(&self, topo: &Topology) -> Option<u32> {
        let class = self.class()?;
        (1..topo.nr_cpus())
            .find(|&c| topo.class(0, c) == class)
            .map(|c| c as u32)
    }
}

fn access(op: LineOp) -> Step {
    Step::Access { line: 0, op }
}

fn pause() -> Step {
    Step::Run {
        ns: PAUSE_NS,
        shared_lines: 0,
    }
}

impl Workload for Atomics {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn knobs(&self) -> super::Knobs {
        [
            ("threads", self.tasks.len().to_string()),
            ("mode", self.mode_name.to_string()),
            ("critical_ns", self.critical_ns.to_string()),
            ("pair", self.pair.to_string()),
            ("placement", self.placement.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
    fn lines(&self) -> &[UserLine] {
        &self.lines
    }
    fn served(&mut self, task: TaskId, value: u64) {
        self.threads[task as usize].seen = value;
    }
    fn initial_cpu(&self, task: TaskId, topo: &Topology) -> Option<u32> {
        if self.class().is_none() {
            return self.placed_cpu(task, topo);
        }
        match task {
            0 => Some(0),
            1 => self.pair_cpu(topo),
            _ => None,
        }
    }
    fn machine_errors(&self, topo: &Topology) -> Vec<FieldError> {
        if self.class().is_none() || self.pair_cpu(topo).is_some() {
            return Vec::new();
        }
        let allowed: Vec<&str> = PAIRS
            .iter()
            .copied()
            .filter(|&p| p == "none" || Atomics::new(2, "add", 0, p).pair_cpu(topo).is_some())
            .collect();
        vec![FieldError::new(
            "pair",
            format!(
                "no CPU of class {} from CPU 0 on this machine: allowed {}",
                self.pair,
                allowed.join(", ")
            ),
        )]
    }

    fn next(&mut self, task: TaskId, now: u64, _rng: &mut SimRng) -> Step {
        let n = self.threads.len() as u64;
        let (mode, critical_ns) = (self.mode, self.critical_ns);
        let th = &mut self.threads[task as usize];
        let done = |th: &mut Thread| {
            th.phase = Phase::Start;
            Step::Complete {
                latency_ns: now - th.op_start,
            }
        };
        if th.phase == Phase::Start && mode != Mode::PingPong {
            th.op_start = now;
        }
        match (mode, th.phase) {
            (Mode::Add, Phase::Start) => {
                th.phase = Phase::Issued;
                access(LineOp::FetchAdd(1))
            }
            (Mode::Cmpxchg, Phase::Start) => {
                th.phase = Phase::Loaded;
                access(LineOp::Load)
            }
            // x86 cmpxchg hands back the value it found: the retry uses it without a new load
            (Mode::Cmpxchg, _) => match th.phase {
                Phase::Cas(old) if th.seen == old => done(th),
                _ => {
                    let old = th.seen;
                    th.phase = Phase::Cas(old);
                    access(LineOp::CompareExchange {
                        old,
                        new: old.wrapping_add(1),
                    })
                }
            },
            (Mode::ReadMostly, Phase::Start) => {
                th.phase = Phase::Issued;
                if task == 0 {
                    self.written += 1;
                    access(LineOp::Store(self.written))
                } else {
                    access(LineOp::Load)
                }
            }
            (Mode::ReadMostly, Phase::Issued) => {
                th.phase = Phase::Paused;
                Step::Complete {
                    latency_ns: now - th.op_start,
                }
            }
            (Mode::ReadMostly, _) => {
                th.phase = Phase::Start;
                pause()
            }
            (Mode::TasLock, Phase::Start) | (Mode::TasLock, Phase::Spin) if th.seen == 0 => {
                // the lock looked free (or this is the first try): test-and-set
                th.phase = Phase::Xchg;
                access(LineOp::Swap(1))
            }
            (Mode::TasLock, Phase::Xchg) if th.seen == 0 => {
                th.phase = Phase::Critical;
                Step::Run {
                    ns: critical_ns.max(1),
                    shared_lines: 0,
                }
            }
            (Mode::TasLock, Phase::Xchg) | (Mode::TasLock, Phase::SpinPaused) => {
                th.phase = Phase::Spin;
                access(LineOp::Load)
            }
            (Mode::TasLock, Phase::Critical) => {
                th.phase = Phase::Released;
                th.seen = 0;
                access(LineOp::Store(0))
            }
            (Mode::TasLock, Phase::Released) => done(th),
            (Mode::TasLock, _) => {
                // the lock is held: pause, then load it again
                th.phase = Phase::SpinPaused;
                pause()
            }
            (Mode::PingPong, Phase::Cas(old)) if th.seen == old => {
                let latency_ns = now - th.op_start;
                th.op_start = now;
                th.phase = Phase::Start;
                Step::Complete { latency_ns }
            }
            (Mode::PingPong, _) => {
                // thread i waits for the token i and passes i + 1 (mod N)
                let old = task as u64;
                th.phase = Phase::Cas(old);
                access(LineOp::CompareExchange {
                    old,
                    new: (old + 1) % n,
                })
            }
            (Mode::Add, _) => done(th),
        }
    }
}
