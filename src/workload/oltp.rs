//! `oltp`: sysbench oltp_read_write against one mysqld. Each client connection is one mysqld thread
//! (one-thread-per-connection); a transaction is 20 statements (BEGIN, 10 point selects, 4 range
//! selects, 2 updates, 1 delete, 1 insert, COMMIT), each a CPU burst followed by a round trip to the
//! sysbench client that blocks the thread. Constants and their rationale: docs/MODEL.md.

use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, Workload, WorkloadInfo};
use crate::sim::SimRng;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "oltp",
    description: "sysbench oltp_read_write against one mysqld: a thread per client, each transaction 20 statements of short CPU bursts and client round trips",
    unit: "transactions",
    knobs: &[
        KnobInfo {
            name: "clients",
            what: "client connections = mysqld threads",
            unit: "connections",
            min: 1,
            max: 16384,
            default: KnobDefault::NrCpus,
            ..KnobInfo::INT
        },
        // hot per-thread set: stack, THD, per-connection buffers (128 KiB [A]); the buffer pool is
        // spread over the nodes whatever the placement, so only the thread's own memory follows it
        super::ws_knob(128),
        super::mem_knob(10),
    ],
    build: |k| Box::new(Oltp::new(k.int("clients") as usize)),
    tasks: |k| k.int("clients"),
};

pub const STATEMENTS: u32 = 20;
/// Mean server CPU per statement, ns.
pub const STATEMENT_CPU_NS: u64 = 100_000;
/// Mean client round trip (loopback TCP + sysbench Lua) per statement, ns.
pub const ROUND_TRIP_NS: u64 = 40_000;
/// Cache lines of shared server state (buffer-pool pages, locks, log) each statement touches that
/// another connection thread wrote last.
pub const SHARED_LINES: u32 = 24;

#[derive(Clone, Copy, Default)]
struct Conn {
    stmt: u32,
    in_burst: bool,
    reply_pending: bool,
    txn_start: u64,
}

pub struct Oltp {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    conns: Vec<Conn>,
}

impl Oltp {
    pub fn new(clients: usize) -> Self {
        Oltp {
            tasks: vec![TaskSpec { process: 0 }; clients],
            procs: vec!["mysqld".into()],
            conns: vec![Conn::default(); clients],
        }
    }
}

impl Workload for Oltp {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn knobs(&self) -> super::Knobs {
        [("clients".to_string(), self.tasks.len().to_string())].into()
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        let c = &mut self.conns[task as usize];
        if c.reply_pending {
            c.reply_pending = false;
            return Step::Sleep {
                ns: rng.exp_ns(ROUND_TRIP_NS),
            };
        }
        if c.in_burst {
            // Statement done: reply to the client and wait for the next statement.
            c.in_burst = false;
            c.stmt += 1;
            if c.stmt == STATEMENTS {
                c.stmt = 0;
                let latency_ns = now - c.txn_start;
                c.txn_start = now;
                c.reply_pending = true;
                return Step::Complete { latency_ns };
            }
            return Step::Sleep {
                ns: rng.exp_ns(ROUND_TRIP_NS),
            };
        }
        if c.stmt == 0 && c.txn_start == 0 {
            c.txn_start = now.max(1);
        }
        c.in_burst = true;
        Step::Run {
            ns: rng.exp_ns(STATEMENT_CPU_NS),
            shared_lines: SHARED_LINES,
        }
    }
}
