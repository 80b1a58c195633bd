//! `oltp`: sysbench oltp_read_write against one mysqld (InnoDB) on the same box. Each client
//! connection is one mysqld thread (one-thread-per-connection) and, with `client=local` (the
//! default), one sysbench thread in a process of its own: it runs its Lua and client-library CPU,
//! sends the statement over loopback TCP (a sync wakeup of the mysqld thread) and blocks on the
//! reply (a sync wakeup back). A transaction is oltp_read_write's 20 statements by type
//! (`statements.rs`), each with its own mysqld CPU; COMMIT waits on a futex for InnoDB's log
//! threads (log writer, flusher, flush notifier: group commit), and InnoDB's background threads
//! run their duty cycles (`innodb.rs`). `client=remote` keeps sysbench on another host (how
//! benchmark teams drive OLTP): each statement arrives as a packet on the network card's queue for
//! its connection and is woken by that queue's NET_RX softirq (`sched/net_rx.rs`). Constants and their sources: docs/MODEL.md §18.

pub(super) mod hammerdb;
mod innodb;
mod statements;

use super::syscall::{KernelLineDecl, KernelStep};
use super::tcp::{self, Segment, SkbFrom, Sock};
use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, UserLine, Workload, WorkloadInfo};
use crate::assumptions::Assumptions;
use crate::sim::rng::SimRng;
use crate::workload::slab::Freelist;
use innodb::Innodb;
use statements::{Stmt, TXN};
use std::collections::VecDeque;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "oltp",
    description: "sysbench oltp_read_write against one mysqld: a thread per client, 20 statements per transaction by type, COMMIT waiting on InnoDB's log threads, InnoDB background threads",
    unit: "transactions",
    knobs: &[
        KnobInfo {
            name: "clients",
            what: "client connections = mysqld threads",
            unit: "connections",
            min: 1,
            max: 16384,
            // sysbench is reported at its throughput peak: 2 connections per CPU (docs/MODEL.md §18)
            default: KnobDefault::NrCpusTimes(2),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "client",
            what: "local: sysbench on this box, a thread per connection in its own process, loopback TCP; remote: sysbench on another machine (a round-trip timer)",
            values: &["remote", "local"],
            default: KnobDefault::Choice("local"),
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
            &k.assume,
        ))
    },
    tasks: |k| {
        k.int("clients")
            .saturating_mul(if k.choice("client") == "local" { 2 } else { 1 })
            .saturating_add(innodb::THREADS as u64)
    },
};

// The cache lines of shared server state each statement touches that another mysqld thread wrote
// last, sysbench's CPU per statement (`client=local`) and the scale of the statements' CPU are
// screened assumptions: `Assumptions::oltp_*` (src/assumptions, with their ranges).
/// A query sent to mysqld and a reply sent back (a few hundred bytes each over the loopback
/// socket), cache lines [A].
pub const REQUEST_LINES: u32 = 4;
pub const REPLY_LINES: u32 = 4;

#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Server {
    /// Wait for the next statement (local) or start it (remote).
    #[default]
    Wait,
    /// The statement's CPU burst is running.
    Running,
    /// COMMIT: asleep on the log flush.
    Committing,
    /// The statement is done: reply.
    Reply,
}

#[derive(Clone, Copy, Default)]
struct Conn {
    stmt: usize,
    txn_start: u64,
    server: Server,
    /// The transaction's completion was counted (its COMMIT reply is next).
    counted: bool,
    /// `client=local`, the sysbench thread: 0 run (Lua), 1 send the request, 2 wait for the reply.
    client_phase: u8,
    /// The mysqld thread (local) or the sysbench thread sleeps in recv() on its socket.
    server_sleeps: bool,
    client_sleeps: bool,
    /// A request (a reply) is queued on the mysqld (sysbench) socket, not yet read.
    request_queued: bool,
    reply_queued: bool,
    /// mysqld has replied on this connection: the next request's ACK frees that reply.
    replied: bool,
}

pub struct Oltp {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    conns: Vec<Conn>,
    /// sysbench runs here: tasks `clients..2*clients` are its threads, connection i's is `clients + i`.
    local: bool,
    /// InnoDB's log and background threads: tasks from `bg_base` on.
    innodb: Innodb,
    bg_base: usize,
    /// The run's assumed figures: statement CPU scale (%), shared lines, sysbench's CPU (ns).
    stmt_cpu_pct: u64,
    shared_lines: u32,
    client_cpu_ns: u64,
    /// `client=remote`: the link's round trip outside the server (`NET_LINK_RTT_NS`).
    link_rtt_ns: u64,
    /// Per task: the rest of the kernel steps of the socket call it is in (`workload/tcp.rs`),
    /// then the step that ends the call (the peer's wakeup, the wait for the next request).
    script: Vec<VecDeque<KernelStep>>,
    after_script: Vec<Option<Step>>,
    /// Per task: its CPU's skb freelists.
    freelist: Vec<Freelist>,
}

/// mysqld's resident set: the InnoDB buffer pool sized to the data set, 40 GiB [D: sysbench's
/// 16 tables of 10 M rows in [PG], about 2.5 GB each with the k index; plausible from MySQL 8.0's
/// default `innodb_buffer_pool_size` of 128 MiB to hundreds of GiB]. Every value of that range
/// is above a 32 MiB L3, so exceed_llc_capacity() fires for mysqld at any of them (docs/MODEL.md §18).
pub const MYSQLD_RSS_BYTES: u64 = 40 << 30;
/// sysbench's resident set per connection thread [A: 256 KiB, its LuaJIT state, the
/// client library's buffers and the touched stack; not found].
pub const SYSBENCH_RSS_PER_THREAD_BYTES: u64 = 256 << 10;

impl Oltp {
    pub fn new(clients: usize, local: bool, assume: &Assumptions) -> Self {
        let mut tasks = vec![TaskSpec { process: 0 }; clients];
        let mut procs = vec!["mysqld".to_string()];
        if local {
            tasks.extend(vec![TaskSpec { process: 1 }; clients]);
            procs.push("sysbench".into());
        }
        let bg_base = tasks.len();
        tasks.extend(vec![TaskSpec { process: 0 }; innodb::THREADS]);
        let n = tasks.len();
        Oltp {
            tasks,
            procs,
            conns: vec![Conn::default(); clients],
            local,
            innodb: Innodb::new(
                bg_base as TaskId,
                assume.oltp_log_write_ns,
                assume.oltp_fsync_ns,
            ),
            bg_base,
            stmt_cpu_pct: assume.oltp_stmt_cpu_pct,
            shared_lines: assume.oltp_shared_lines as u32,
            client_cpu_ns: assume.oltp_client_cpu_ns,
            link_rtt_ns: assume.net_link_rtt_ns,
            script: vec![VecDeque::new(); n],
            after_script: vec![None; n],
            freelist: vec![Freelist::default(); n],
        }
    }

    /// Connection `conn`'s socket in mysqld, and (local) in sysbench.
    fn server_sock(conn: usize) -> Sock {
        Sock(conn as u32 * tcp::SOCK_LINES)
    }
    fn client_sock(&self, conn: usize) -> Sock {
        Sock((self.conns.len() + conn) as u32 * tcp::SOCK_LINES)
    }

    /// `me` sends a message on `from`: `tcp_sendmsg`, on loopback with the receive of `seg`
    /// inside it; then `then` ends the call. Returns the call's first step.
    fn send(&mut self, me: TaskId, from: Sock, seg: Option<Segment>, then: Step) -> Step {
        let refill = self.freelist[me as usize].alloc();
        let mut s = Vec::with_capacity(24);
        tcp::send(&mut s, from, me, refill);
        if let Some(seg) = seg {
            tcp::loopback(&mut s, from, me, seg);
        }
        tcp::send_done(&mut s, from);
        self.script[me as usize].extend(s);
        self.after_script[me as usize] = Some(then);
        self.next_script(me).unwrap_or(then)
    }

    /// `me` reads the message queued on `sock` (`tcp_recvmsg`). Returns the call's first step.
    fn recv(&mut self, me: TaskId, sock: Sock, skb: SkbFrom, woke: bool) -> Option<Step> {
        let mut s = Vec::with_capacity(10);
        tcp::recv(&mut s, sock, skb, woke);
        self.script[me as usize].extend(s);
        self.next_script(me)
    }

    fn next_script(&mut self, task: TaskId) -> Option<Step> {
        let t = task as usize;
        match self.script[t].pop_front() {
            Some(k) => Some(Step::Kernel(k)),
            None => self.after_script[t].take(),
        }
    }

    fn client_of(&self, conn: usize) -> TaskId {
        (self.conns.len() + conn) as TaskId
    }

    /// The mysqld thread of connection `task`.
    fn next_server(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        let local = self.local;
        let client = self.client_of(task as usize);
        let client_sock = self.client_sock(task as usize);
        let c = &mut self.conns[task as usize];
        match c.server {
            Server::Wait => {
                if local && c.client_phase != 2 {
                    c.server_sleeps = true;
                    return Step::Block; // no request yet: asleep in recv()
                }
                if std::mem::take(&mut c.request_queued) {
                    // recv() takes the request: from sysbench's CPU (loopback) or the card's
                    let (skb, woke) = if local {
                        (
                            SkbFrom::Loopback(client),
                            std::mem::take(&mut c.server_sleeps),
                        )
                    } else {
                        (SkbFrom::Nic { conn: task }, true)
                    };
                    if let Some(s) = self.recv(task, Self::server_sock(task as usize), skb, woke) {
                        return s;
                    }
                    return self.next_server(task, now, rng);
                }
                if c.stmt == 0 {
                    c.txn_start = now.max(1);
                }
                c.server = Server::Running;
                let st = TXN[c.stmt];
                Step::Run {
                    ns: rng.exp_ns(st.cpu_ns() * self.stmt_cpu_pct / 100),
                    shared_lines: self.shared_lines,
                }
            }
            Server::Running => {
                if TXN[c.stmt] == Stmt::Commit {
                    c.server = Server::Committing;
                    if let Some(w) = self.innodb.commit(task) {
                        return w;
                    }
                    return self.next_server(task, now, rng);
                }
                c.server = Server::Reply;
                self.next_server(task, now, rng)
            }
            Server::Committing => {
                if !self.innodb.flushed(task) {
                    return Step::Block; // os_event_wait on the flush
                }
                c.server = Server::Reply;
                self.next_server(task, now, rng)
            }
            Server::Reply => {
                if c.stmt == TXN.len() - 1 && !c.counted {
                    // COMMIT is done: the transaction counts before its reply goes out
                    c.counted = true;
                    return Step::Complete {
                        latency_ns: now - c.txn_start,
                    };
                }
                c.counted = false;
                c.stmt = (c.stmt + 1) % TXN.len();
                c.server = Server::Wait;
                c.replied = true;
                let sock = Self::server_sock(task as usize);
                if local {
                    c.client_phase = 0;
                    c.reply_queued = true;
                    // send(): loopback to sysbench's socket, whose ACK frees the request
                    let seg = Segment {
                        to: client_sock,
                        acks: Some(client),
                        reader_sleeps: c.client_sleeps,
                    };
                    let wake = Step::Wake {
                        task: client,
                        lines: REPLY_LINES,
                        sync: true, // loopback TCP: tcp_data_ready → sock_def_readable, sync
                    };
                    self.send(task, sock, Some(seg), wake)
                } else {
                    // the reply crosses the link, the driver's thread runs (sysbench's Lua and
                    // client library), its next statement crosses back to the card
                    let wait = Step::AwaitRequest {
                        ns: self.link_rtt_ns + rng.exp_ns(self.client_cpu_ns),
                    };
                    self.send(task, sock, None, wait)
                }
            }
        }
    }

    /// `client=local`: sysbench thread `task` sends its connection's next request.
    fn next_client(&mut self, task: TaskId, rng: &mut SimRng) -> Step {
        let conn = task as usize - self.conns.len();
        let c = &mut self.conns[conn];
        match c.client_phase {
            0 if c.reply_queued => {
                // recv() takes mysqld's reply
                c.reply_queued = false;
                let woke = std::mem::take(&mut c.client_sleeps);
                let sock = self.client_sock(conn);
                self.recv(task, sock, SkbFrom::Loopback(conn as TaskId), woke)
                    .unwrap_or_else(|| self.next_client(task, rng))
            }
            0 => {
                c.client_phase = 1;
                Step::Run {
                    ns: rng.exp_ns(self.client_cpu_ns),
                    shared_lines: 0,
                }
            }
            1 => {
                c.client_phase = 2;
                c.request_queued = true;
                // send(): loopback to mysqld's socket, whose ACK frees the last reply
                let seg = Segment {
                    to: Self::server_sock(conn),
                    acks: c.replied.then_some(conn as TaskId),
                    reader_sleeps: c.server_sleeps,
                };
                let wake = Step::Wake {
                    task: conn as TaskId,
                    lines: REQUEST_LINES,
                    sync: true, // loopback TCP: the server's socket is woken sync
                };
                let sock = self.client_sock(conn);
                self.send(task, sock, Some(seg), wake)
            }
            _ => {
                c.client_sleeps = true;
                Step::Block // asleep in recv() until the reply
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
    fn rss_bytes(&self, process: u32) -> u64 {
        match process {
            // mysqld: the InnoDB buffer pool holding the data set (docs/MODEL.md §18)
            0 => MYSQLD_RSS_BYTES,
            // sysbench: its threads' Lua states and client buffers
            _ => SYSBENCH_RSS_PER_THREAD_BYTES * self.conns.len() as u64,
        }
    }
    fn kernel_lines(&self) -> Vec<KernelLineDecl> {
        let n = self.conns.len();
        let mut v: Vec<_> = (0..n)
            .flat_map(|i| tcp::socket_lines(&format!("mysqld conn{i}"), i as TaskId))
            .collect();
        if self.local {
            v.extend(
                (0..n).flat_map(|i| {
                    tcp::socket_lines(&format!("sysbench conn{i}"), self.client_of(i))
                }),
            );
        }
        v
    }
    fn per_cpu_kernel_lines(&self) -> &[UserLine] {
        tcp::PER_CPU_LINES
    }
    fn delivered(&mut self, task: TaskId, _conn: u32, _now: u64) {
        self.conns[task as usize].request_queued = true;
    }
    fn rx_script(&mut self, task: TaskId, conn: u32) -> Vec<KernelStep> {
        let c = &self.conns[task as usize];
        let seg = Segment {
            to: Self::server_sock(task as usize),
            acks: c.replied.then_some(task),
            reader_sleeps: true, // a request comes only after the thread's reply: it waits
        };
        tcp::nic_receive(conn, seg)
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        let t = task as usize;
        if let Some(s) = self.next_script(task) {
            return s;
        }
        if t >= self.bg_base {
            let role = innodb::ROLES[t - self.bg_base];
            return self.innodb.next(task, role, rng);
        }
        if t < self.conns.len() {
            self.next_server(task, now, rng)
        } else {
            self.next_client(task, rng)
        }
    }
}

#[cfg(test)]
mod tests;
