//! `oltp`: sysbench oltp_read_write against one mysqld. Each client connection is one mysqld thread
//! (one-thread-per-connection); a transaction is 20 statements (BEGIN, 10 point selects, 4 range
//! selects, 2 updates, 1 delete, 1 insert, COMMIT), each a CPU burst followed by a round trip to the
//! sysbench client that blocks the thread. The client is on another machine (a timer: the round
//! trip) or, with `client=local`, sysbench runs on the database box: a process of its own with one
//! thread per connection, which runs, wakes its mysqld thread with the request and blocks on the
//! reply. Constants and their rationale: docs/MODEL.md.

use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, Workload, WorkloadInfo};
use crate::sim::rng::SimRng;

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
        KnobInfo {
            name: "client",
            what: "remote: sysbench on another machine (a round-trip timer); local: sysbench on this box, a thread per connection in its own process",
            values: &["remote", "local"],
            default: KnobDefault::Choice("remote"),
            ..KnobInfo::ENUM
        },
        // hot per-thread set: stack, THD, per-connection buffers (128 KiB [A]); the buffer pool is
        // spread over the nodes whatever the placement, so only the thread's own memory follows it
        super::ws_knob(128),
        super::mem_knob(10),
    ],
    build: |k| {
        Box::new(Oltp::new(
            k.int("clients") as usize,
            k.choice("client") == "local",
        ))
    },
    tasks: |k| {
        k.int("clients")
            .saturating_mul(if k.choice("client") == "local" { 2 } else { 1 })
    },
};

pub const STATEMENTS: u32 = 20;
/// Mean server CPU per statement, ns.
pub const STATEMENT_CPU_NS: u64 = 100_000;
/// Mean client round trip (loopback TCP + sysbench Lua) per statement, ns.
pub const ROUND_TRIP_NS: u64 = 40_000;
/// Cache lines of shared server state (buffer-pool pages, locks, log) each statement touches that
/// another connection thread wrote last.
pub const SHARED_LINES: u32 = 24;
/// `client=local`: sysbench's CPU per statement (Lua, building the query, the socket send and
/// receive), ns: the half of the round trip spent in the client [A].
pub const CLIENT_CPU_NS: u64 = ROUND_TRIP_NS / 2;
/// A query sent to mysqld and a reply sent back (a few hundred bytes each over the loopback
/// socket), cache lines [A].
pub const REQUEST_LINES: u32 = 4;
pub const REPLY_LINES: u32 = 4;

#[derive(Clone, Copy, Default)]
struct Conn {
    stmt: u32,
    in_burst: bool,
    reply_pending: bool,
    txn_start: u64,
    /// `client=local`, the mysqld thread: 0 wait for a request, 1 run it, 2 its statement is
    /// done, 3 the transaction completed: reply.
    server_phase: u8,
    /// `client=local`, the sysbench thread: 0 run (Lua), 1 send the request, 2 wait for the reply.
    client_phase: u8,
}

pub struct Oltp {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    conns: Vec<Conn>,
    /// sysbench runs here: tasks `clients..2*clients` are its threads, connection i's is `clients + i`.
    local: bool,
}

impl Oltp {
    pub fn new(clients: usize, local: bool) -> Self {
        let mut tasks = vec![TaskSpec { process: 0 }; clients];
        let mut procs = vec!["mysqld".to_string()];
        if local {
            tasks.extend(vec![TaskSpec { process: 1 }; clients]);
            procs.push("sysbench".into());
        }
        Oltp {
            tasks,
            procs,
            conns: vec![Conn::default(); clients],
            local,
        }
    }

    /// The end of a statement: the transaction completes after the last one.
    fn statement_done(c: &mut Conn, now: u64) -> Option<Step> {
        c.in_burst = false;
        c.stmt += 1;
        if c.stmt == STATEMENTS {
            c.stmt = 0;
            let latency_ns = now - c.txn_start;
            c.txn_start = now;
            c.reply_pending = true;
            return Some(Step::Complete { latency_ns });
        }
        None
    }

    fn statement(c: &mut Conn, now: u64, rng: &mut SimRng) -> Step {
        if c.stmt == 0 && c.txn_start == 0 {
            c.txn_start = now.max(1);
        }
        c.in_burst = true;
        Step::Run {
            ns: rng.exp_ns(STATEMENT_CPU_NS),
            shared_lines: SHARED_LINES,
        }
    }

    /// `client=local`: mysqld thread `task` serves requests from its sysbench thread: wait for a
    /// request, run the statement, (complete the transaction,) wake the client with the reply.
    fn next_local_server(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        let client = (self.conns.len() + task as usize) as TaskId;
        let c = &mut self.conns[task as usize];
        let reply = Step::Wake {
            task: client,
            lines: REPLY_LINES,
            sync: false,
        };
        match c.server_phase {
            0 => {
                c.server_phase = 1;
                Step::Block
            }
            1 => {
                c.server_phase = 2;
                Self::statement(c, now, rng)
            }
            2 => {
                if let Some(done) = Self::statement_done(c, now) {
                    c.reply_pending = false;
                    c.server_phase = 3;
                    return done;
                }
                c.server_phase = 0;
                reply
            }
            _ => {
                c.server_phase = 0;
                reply
            }
        }
    }

    /// `client=local`: sysbench thread `task` sends its connection's next request.
    fn next_local_client(&mut self, task: TaskId, rng: &mut SimRng) -> Step {
        let conn = task as usize - self.conns.len();
        let c = &mut self.conns[conn];
        match c.client_phase {
            0 => {
                c.client_phase = 1;
                Step::Run {
                    ns: rng.exp_ns(CLIENT_CPU_NS),
                    shared_lines: 0,
                }
            }
            1 => {
                c.client_phase = 2;
                Step::Wake {
                    task: conn as TaskId,
                    lines: REQUEST_LINES,
                    sync: false,
                }
            }
            _ => {
                c.client_phase = 0;
                Step::Block
            }
        }
    }
}

impl Workload for Oltp {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn knobs(&self) -> super::Knobs {
        let client = if self.local { "local" } else { "remote" };
        [
            ("clients".to_string(), self.conns.len().to_string()),
            ("client".to_string(), client.to_string()),
        ]
        .into()
    }
    fn counts_units(&self, task: TaskId) -> bool {
        (task as usize) < self.conns.len()
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        if self.local {
            return if (task as usize) < self.conns.len() {
                self.next_local_server(task, now, rng)
            } else {
                self.next_local_client(task, rng)
            };
        }
        let c = &mut self.conns[task as usize];
        if c.reply_pending {
            c.reply_pending = false;
            return Step::Sleep {
                ns: rng.exp_ns(ROUND_TRIP_NS),
            };
        }
        if c.in_burst {
            // Statement done: reply to the client and wait for the next statement.
            if let Some(done) = Self::statement_done(c, now) {
                return done;
            }
            return Step::Sleep {
                ns: rng.exp_ns(ROUND_TRIP_NS),
            };
        }
        Self::statement(c, now, rng)
    }
}
