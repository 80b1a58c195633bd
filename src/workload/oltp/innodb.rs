//! InnoDB's own threads in mysqld (MySQL 8.0 log0write.cc, srv0srv.cc; docs/MODEL.md §18):
//! - the redo log pipeline with `innodb_flush_log_at_trx_commit = 1`: a committing connection
//!   thread puts its records in the log buffer, wakes `log_writer` if it sleeps and waits on an
//!   event (a futex) until its LSN is flushed. `log_writer` writes everything in the buffer to the
//!   OS (one write for the whole group) and wakes `log_flusher`, which fsyncs it and wakes
//!   `log_flush_notifier`, which wakes every thread of the group (os_event_set: a condvar
//!   broadcast, futex wakes, not sync). Commits that arrive during an fsync form the next group.
//! - background threads on timers: purge (coordinator and workers), page cleaners, the master
//!   thread and the log checkpointer, each a periodic burst.
//!
//! Simplifications: the event waits' 10 µs timeouts and the spin phases (off when the box is
//! over 50% busy, `innodb_log_spin_cpu_pct_hwm`) are not modelled; `log_write_notifier` (for
//! waits on a write, not a flush) has no waiters with `flush_log_at_trx_commit = 1` and is left out.

use crate::sim::rng::SimRng;
use crate::workload::{Step, TaskId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    LogWriter,
    LogFlusher,
    LogFlushNotifier,
    /// A thread that wakes every `period_ns` on a timer and runs `burst_ns` (exp mean).
    Periodic {
        period_ns: u64,
        burst_ns: u64,
    },
}

/// innodb_purge_threads = 4 (one coordinator, three workers): each every 10 ms for 0.5 ms [A].
const PURGE: Role = Role::Periodic {
    period_ns: 10_000_000,
    burst_ns: 500_000,
};
/// innodb_page_cleaners = 4: once per second, 20 ms of flushing each [A for the burst].
const PAGE_CLEANER: Role = Role::Periodic {
    period_ns: 1_000_000_000,
    burst_ns: 20_000_000,
};
/// srv_master_thread: its once-per-second loop, 1 ms [A].
const MASTER: Role = Role::Periodic {
    period_ns: 1_000_000_000,
    burst_ns: 1_000_000,
};
/// log_checkpointer: every 1,000 ms (innodb_log_checkpoint_every), 0.1 ms [A for the burst].
const CHECKPOINTER: Role = Role::Periodic {
    period_ns: 1_000_000_000,
    burst_ns: 100_000,
};

/// mysqld's InnoDB threads, in task order after the connection (and sysbench) threads.
pub const ROLES: [Role; 13] = [
    Role::LogWriter,
    Role::LogFlusher,
    Role::LogFlushNotifier,
    PURGE,
    PURGE,
    PURGE,
    PURGE,
    PAGE_CLEANER,
    PAGE_CLEANER,
    PAGE_CLEANER,
    PAGE_CLEANER,
    MASTER,
    CHECKPOINTER,
];
pub const THREADS: usize = ROLES.len();

/// A background thread's first burst (its start), ns [A].
const START_NS: u64 = 10_000;
// log_writer's CPU per write of a group (copy the log buffer out, the write() syscall) and the
// device's fsync of a redo write (the flusher sleeps in I/O) are screened assumptions:
// `Assumptions::oltp_log_write_ns`, `oltp_fsync_ns` (src/assumptions, with their ranges).
/// log_flusher's CPU per fsync (the syscall, not the device), ns [A].
pub const FSYNC_CPU_NS: u64 = 3_000;
/// log_flush_notifier's CPU per group before its wakeups, ns [A].
pub const NOTIFY_NS: u64 = 1_000;

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Idle,
    /// The thread's burst is running.
    Busy,
    /// log_flusher: the fsync is in flight; a periodic thread: asleep on its timer.
    Io,
    /// A periodic thread ran its start.
    Started,
}

pub struct Innodb {
    base: TaskId,
    /// Committers whose records are in the log buffer, not yet written.
    pending: Vec<TaskId>,
    /// Written, not yet flushed (the flusher's next group).
    written: Vec<TaskId>,
    /// Being written / fsynced / notified.
    writing: Vec<TaskId>,
    flushing: Vec<TaskId>,
    notifying: Vec<TaskId>,
    /// Flushed, waiting for the notifier.
    flushed_q: Vec<TaskId>,
    /// Per connection thread: its commit is flushed.
    done: Vec<bool>,
    /// Per InnoDB thread: asleep on its event (a producer wakes it), and its phase.
    asleep: [bool; THREADS],
    phase: [Phase; THREADS],
    /// log_writer's CPU per write, the device's fsync time, ns (the run's assumptions).
    log_write_ns: u64,
    fsync_ns: u64,
}

impl Innodb {
    pub fn new(base: TaskId, log_write_ns: u64, fsync_ns: u64) -> Innodb {
        Innodb {
            log_write_ns,
            fsync_ns,
            base,
            pending: Vec::new(),
            written: Vec::new(),
            writing: Vec::new(),
            flushing: Vec::new(),
            notifying: Vec::new(),
            flushed_q: Vec::new(),
            done: Vec::new(),
            asleep: [false; THREADS],
            phase: [Phase::Idle; THREADS],
        }
    }

    fn wake(&mut self, i: usize) -> Option<Step> {
        std::mem::take(&mut self.asleep[i]).then(|| Step::Wake {
            task: self.base + i as TaskId,
            lines: 1,
            sync: false, // os_event_set: pthread_cond_broadcast → FUTEX_WAKE, not sync
        })
    }

    /// Connection thread `t` commits: its records are in the log buffer; the wakeup of
    /// `log_writer` to issue, if it sleeps.
    pub fn commit(&mut self, t: TaskId) -> Option<Step> {
        let i = t as usize;
        if self.done.len() <= i {
            self.done.resize(i + 1, false);
        }
        self.done[i] = false;
        self.pending.push(t);
        self.wake(0)
    }

    /// Whether `t`'s commit is flushed (its wait is over).
    pub fn flushed(&self, t: TaskId) -> bool {
        self.done.get(t as usize).copied().unwrap_or(true)
    }

    /// The next step of InnoDB thread `task`.
    pub fn next(&mut self, task: TaskId, role: Role, rng: &mut SimRng) -> Step {
        let i = (task - self.base) as usize;
        match role {
            Role::LogWriter => self.log_writer(i),
            Role::LogFlusher => self.log_flusher(i),
            Role::LogFlushNotifier => self.notifier(i),
            Role::Periodic {
                period_ns,
                burst_ns,
            } => {
                match self.phase[i] {
                    Phase::Idle => {
                        // the thread starts (srv_start creates it) ...
                        self.phase[i] = Phase::Started;
                        return Step::Run {
                            ns: START_NS,
                            shared_lines: 0,
                        };
                    }
                    Phase::Started => {
                        // ... and sleeps to a random point of its period
                        self.phase[i] = Phase::Io;
                        return Step::Sleep {
                            ns: 1 + rng.below(period_ns),
                        };
                    }
                    _ => {}
                }
                if self.phase[i] == Phase::Busy {
                    self.phase[i] = Phase::Io;
                    return Step::Sleep { ns: period_ns };
                }
                self.phase[i] = Phase::Busy;
                Step::Run {
                    ns: rng.exp_ns(burst_ns),
                    shared_lines: 0,
                }
            }
        }
    }

    fn log_writer(&mut self, i: usize) -> Step {
        if self.phase[i] == Phase::Busy {
            self.phase[i] = Phase::Idle;
            self.written.append(&mut self.writing);
            if let Some(w) = self.wake(1) {
                return w;
            }
        }
        if self.pending.is_empty() {
            self.asleep[i] = true;
            return Step::Block;
        }
        std::mem::swap(&mut self.writing, &mut self.pending);
        self.phase[i] = Phase::Busy;
        Step::Run {
            ns: self.log_write_ns,
            shared_lines: 0,
        }
    }

    fn log_flusher(&mut self, i: usize) -> Step {
        match self.phase[i] {
            Phase::Busy => {
                self.phase[i] = Phase::Io;
                return Step::Sleep { ns: self.fsync_ns };
            }
            Phase::Io => {
                self.phase[i] = Phase::Idle;
                self.flushed_q.append(&mut self.flushing);
                if let Some(w) = self.wake(2) {
                    return w;
                }
            }
            Phase::Idle | Phase::Started => {}
        }
        if self.written.is_empty() {
            self.asleep[i] = true;
            return Step::Block;
        }
        std::mem::swap(&mut self.flushing, &mut self.written);
        self.phase[i] = Phase::Busy;
        Step::Run {
            ns: FSYNC_CPU_NS,
            shared_lines: 0,
        }
    }

    fn notifier(&mut self, i: usize) -> Step {
        if self.phase[i] == Phase::Busy {
            if let Some(t) = self.notifying.pop() {
                self.done[t as usize] = true;
                return Step::Wake {
                    task: t,
                    lines: 1,
                    sync: false, // futex wake of the waiting connection thread
                };
            }
            self.phase[i] = Phase::Idle;
        }
        if self.flushed_q.is_empty() {
            self.asleep[i] = true;
            return Step::Block;
        }
        std::mem::swap(&mut self.notifying, &mut self.flushed_q);
        self.phase[i] = Phase::Busy;
        Step::Run {
            ns: NOTIFY_NS,
            shared_lines: 0,
        }
    }
}
