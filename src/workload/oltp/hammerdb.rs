//! `hammerdb`: HammerDB TPROC-C against one mysqld (InnoDB), driven from another host over TCP,
//! as benchmark teams run it. Each virtual user is one connection and one mysqld thread; a
//! transaction is one stored-procedure CALL (one round trip): the request arrives over the
//! network card (`sched/net_rx.rs`), the procedure runs its CPU, a writing transaction's COMMIT
//! waits for InnoDB's log threads (group commit, `innodb.rs`), and the reply goes back over the
//! link; the virtual user sends its next transaction at once (no keying or thinking time,
//! HammerDB's default). Shape and sources: docs/MODEL.md §18 (`hammerdb`).

use super::innodb::{self, Innodb};
use crate::assumptions::Assumptions;
use crate::sim::rng::SimRng;
use crate::workload::{
    KnobDefault, KnobInfo, Knobs, Step, TaskId, TaskSpec, Workload, WorkloadInfo, mem_knob, ws_knob,
};

pub(in crate::workload) const INFO: WorkloadInfo = WorkloadInfo {
    name: "hammerdb",
    description: "HammerDB TPROC-C against one mysqld, driven from another host: a thread per virtual user, one stored-procedure call per transaction over the network card, writing transactions waiting on InnoDB's group commit",
    unit: "transactions",
    knobs: &[
        KnobInfo {
            name: "virtual_users",
            what: "virtual users = connections = mysqld threads",
            unit: "users",
            min: 1,
            // 8 per CPU on the largest machine (MAX_CPUS 4096)
            max: 32768,
            // the published run this workload is shaped from: 8 virtual users per vCPU
            default: KnobDefault::NrCpusTimes(8),
            ..KnobInfo::INT
        },
        // as oltp: the thread's own memory (stack, THD, buffers) follows it, the buffer pool does not
        ws_knob(128),
        mem_knob(10),
    ],
    build: |k| Box::new(Hammerdb::new(k.int("virtual_users") as usize, &k.assume)),
    tasks: |k| {
        k.int("virtual_users")
            .saturating_add(innodb::THREADS as u64)
    },
};

/// A TPROC-C transaction type: its share of the mix and its mean server CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnType {
    pub name: &'static str,
    /// Share of the mix, per mille (TPC-C's minimum mix, which HammerDB's driver follows).
    pub per_mille: u32,
    /// Mean mysqld CPU of the stored procedure, ns [D/A: docs/MODEL.md §18].
    pub cpu_ns: u64,
    /// It writes, so its COMMIT waits for the redo log flush.
    pub writes: bool,
}

/// The mix, in HammerDB's order. CPU: a mean of 230 µs a transaction [D: the published run's
/// 84% busy at 9.45k schedule() calls per CPU per second, about 3 a transaction], split by the
/// types' relative work [A: New-Order 1, Payment 0.45, Order-Status 0.35, Delivery 2.5 (ten
/// districts), Stock-Level 1.5 (a 200-order scan)].
pub const MIX: [TxnType; 5] = [
    TxnType {
        name: "new_order",
        per_mille: 450,
        cpu_ns: 281_000,
        writes: true,
    },
    TxnType {
        name: "payment",
        per_mille: 430,
        cpu_ns: 127_000,
        writes: true,
    },
    TxnType {
        name: "delivery",
        per_mille: 40,
        cpu_ns: 703_000,
        writes: true,
    },
    TxnType {
        name: "order_status",
        per_mille: 40,
        cpu_ns: 98_000,
        writes: false,
    },
    TxnType {
        name: "stock_level",
        per_mille: 40,
        cpu_ns: 422_000,
        writes: false,
    },
];

#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Phase {
    /// Waiting for (or, at the start, beginning) the next CALL.
    #[default]
    Wait,
    /// The procedure's CPU burst is running.
    Running,
    /// COMMIT: asleep on the log flush.
    Committing,
    /// Done: count it and reply.
    Reply,
}

#[derive(Clone, Copy, Default)]
struct User {
    phase: Phase,
    txn: usize,
    start: u64,
}

pub struct Hammerdb {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    users: Vec<User>,
    innodb: Innodb,
    shared_lines: u32,
    stmt_cpu_pct: u64,
    driver_cpu_ns: u64,
    link_rtt_ns: u64,
}

impl Hammerdb {
    pub fn new(users: usize, assume: &Assumptions) -> Hammerdb {
        let mut tasks = vec![TaskSpec { process: 0 }; users];
        tasks.extend(vec![TaskSpec { process: 0 }; innodb::THREADS]);
        Hammerdb {
            tasks,
            procs: vec!["mysqld".into()],
            users: vec![User::default(); users],
            innodb: Innodb::new(
                users as TaskId,
                assume.oltp_log_write_ns,
                assume.oltp_fsync_ns,
            ),
            shared_lines: assume.oltp_shared_lines as u32,
            stmt_cpu_pct: assume.oltp_stmt_cpu_pct,
            driver_cpu_ns: assume.oltp_client_cpu_ns,
            link_rtt_ns: assume.net_link_rtt_ns,
        }
    }

    fn pick(rng: &mut SimRng) -> usize {
        let mut x = rng.below(1000) as u32;
        for (i, t) in MIX.iter().enumerate() {
            if x < t.per_mille {
                return i;
            }
            x -= t.per_mille;
        }
        0
    }
}

impl Workload for Hammerdb {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn knobs(&self) -> Knobs {
        [("virtual_users".to_string(), self.users.len().to_string())].into()
    }
    fn counts_units(&self, task: TaskId) -> bool {
        (task as usize) < self.users.len()
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        let t = task as usize;
        if t >= self.users.len() {
            let role = innodb::ROLES[t - self.users.len()];
            return self.innodb.next(task, role, rng);
        }
        let u = &mut self.users[t];
        match u.phase {
            Phase::Wait => {
                u.txn = Self::pick(rng);
                u.start = now.max(1);
                u.phase = Phase::Running;
                Step::Run {
                    ns: rng.exp_ns(MIX[u.txn].cpu_ns * self.stmt_cpu_pct / 100),
                    shared_lines: self.shared_lines,
                }
            }
            Phase::Running => {
                if MIX[u.txn].writes {
                    u.phase = Phase::Committing;
                    if let Some(w) = self.innodb.commit(task) {
                        return w;
                    }
                } else {
                    u.phase = Phase::Reply;
                }
                self.next(task, now, rng)
            }
            Phase::Committing => {
                if !self.innodb.flushed(task) {
                    return Step::Block; // os_event_wait on the flush
                }
                u.phase = Phase::Reply;
                self.next(task, now, rng)
            }
            Phase::Reply => {
                if u.start > 0 {
                    let latency_ns = now - u.start;
                    u.start = 0;
                    return Step::Complete { latency_ns };
                }
                u.phase = Phase::Wait;
                // the reply crosses the link, HammerDB's virtual user runs its Tcl and client
                // library, and its next CALL crosses back to the card (no think time)
                Step::AwaitRequest {
                    ns: self.link_rtt_ns + rng.exp_ns(self.driver_cpu_ns),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_tpcc_and_its_mean_cpu_is_the_derived_230_us() {
        assert_eq!(MIX.iter().map(|t| t.per_mille).sum::<u32>(), 1000);
        let mean: u64 = MIX
            .iter()
            .map(|t| t.cpu_ns * t.per_mille as u64)
            .sum::<u64>()
            / 1000;
        assert!((225_000..=235_000).contains(&mean), "{mean}");
    }

    #[test]
    fn a_user_calls_commits_when_it_writes_and_then_awaits_its_next_call_over_the_network() {
        let a = Assumptions::default();
        let mut h = Hammerdb::new(2, &a);
        let mut rng = SimRng::new(3);
        let mut saw_commit_wait = false;
        let mut completes = 0;
        let mut now = 1;
        for _ in 0..400 {
            now += 1000;
            match h.next(0, now, &mut rng) {
                Step::Block => {
                    saw_commit_wait = true;
                    // the flush happens: let the log threads run until user 0 is done
                    for _ in 0..50 {
                        for r in 0..innodb::THREADS {
                            let _ = h.next((2 + r) as TaskId, now, &mut rng);
                        }
                        if h.innodb.flushed(0) {
                            break;
                        }
                    }
                }
                Step::Complete { .. } => completes += 1,
                Step::AwaitRequest { ns } => assert!(ns >= a.net_link_rtt_ns),
                _ => {}
            }
        }
        assert!(saw_commit_wait && completes > 10, "{completes}");
    }
}
