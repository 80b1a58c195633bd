//! Cache-aware scheduling (RFC v4, CONFIG_SCHED_CACHE): per-mm per-CPU occupancy accounted in
//! account_mm_sched() from update_curr(), 10 ms epochs with halving decay, task_tick_cache()
//! queuing task_cache_work() once per epoch per mm, the LLC scan with 2x hysteresis writing
//! mm_sched_cpu and nr_running_avg, and the preferred LLC used by load balancing. The mm fields
//! live in cache lines of the coherence model, laid out as in the RFC's struct mm_struct, so every
//! load of a line another CPU modified is a HITM and every store an ownership transfer.

use super::*;
use crate::coherence::Coherence;

/// NICE_0_LOAD (SCHED_FIXEDPOINT scale) for occupancy fractions.
const NICE_0_LOAD: u64 = 1024;
/// sysctl_llc_old: an mm whose epoch is this many epochs old loses its preferred LLC.
const LLC_OLD: u64 = 5;
/// llc_aggr_cap: a preferred LLC takes tasks while its utilization is below 50% (halved with SMT2).
const LLC_AGGR_CAP: u64 = 50;
/// llc_aggr_imb: migrations out of the preferred LLC need 20% more utilization at the source.
const LLC_AGGR_IMB: u64 = 20;
/// Per CPU examined by task_cache_work (occupancy + rq->curr->mm reads are remote loads), lines.
const SCAN_LINES_PER_CPU: u64 = 2;

/// Fields of struct mm_struct's CONFIG_SCHED_CACHE block, in RFC v4 order (01/28 and 24/28):
/// pcpu_sched, mm_sched_lock, mm_sched_epoch, mm_sched_cpu, nr_running_avg; one 64-byte line
/// unless fix 1 moves nr_running_avg to the next line. The values index the line's fields.
const F_PCPU_SCHED: usize = 0;
const F_LOCK: usize = 1;
const F_EPOCH: usize = 2;
const F_CPU: usize = 3;
const F_NR_RUNNING_AVG: usize = 4;

#[derive(Clone, Copy, Default)]
struct PcpuSched {
    runtime: u64,
    epoch: u64,
    occ: u64,
}

#[derive(Clone, Copy, Default)]
struct RqEpoch {
    cpu_runtime: u64,
    cpu_epoch: u64,
    cpu_epoch_next: u64,
}

pub(crate) struct MmSched {
    pub line: LineId,
    /// Where nr_running_avg lives: `line` (RFC v4) or its own line (fix 1).
    pub avg_line: LineId,
    avg_field: usize,
    pub mm_sched_epoch: u64,
    pub mm_sched_cpu: i32,
    /// update_avg() (1/8, integer as in the kernel) of the number of CPUs running this mm in
    /// the scanned LLCs.
    pub nr_running_avg: u64,
    pub nr_threads: u32,
    /// The process's RSS in bytes (anon + shmem pages), as the workload states it: what 26/28's
    /// exceed_llc_capacity() reads through get_mm_counter().
    pub rss_bytes: u64,
    /// 7.2 (a2b4cf39d9d3): mm->sc_stat.next_scan, jiffies before which no thread scans.
    pub next_scan: u64,
    pcpu: Vec<PcpuSched>,
}

pub(crate) struct CacheAware {
    pub mms: Vec<MmSched>,
    rq: Vec<RqEpoch>,
    epoch_period: u64,
    /// Per task: p->cache_work is queued (work->next != work) and task_cache_work has not run.
    work_queued: Vec<bool>,
}

/// Resumable kernel work of the series.
pub(crate) enum CasJob {
    /// account_mm_sched(): the mm-line part (the per-CPU part is done when it is queued).
    Account {
        mm: u32,
        /// The task whose preferred_llc the result updates.
        task: TaskId,
        phase: AccountPhase,
        stale: bool,
        invalidate: bool,
    },
    /// task_tick_cache() of `task`: epoch check, lock, queue its work, publish the epoch.
    Tick {
        mm: u32,
        task: TaskId,
        phase: TickPhase,
    },
    /// task_cache_work() of `task` on its return to user.
    Work {
        mm: u32,
        task: TaskId,
        phase: WorkPhase,
    },
}

/// The steps of account_mm_sched()'s mm-line part, in order (a step may skip ahead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccountPhase {
    /// `if (!mm || !mm->pcpu_sched) return;`: the first load of the line.
    LoadPcpuSched,
    /// The per-CPU bookkeeping (rq->cpu_epoch_lock, pcpu_sched), pure compute.
    ChargeLocal,
    /// Load mm->mm_sched_epoch (is the mm's preference stale?).
    LoadEpoch,
    /// Decide whether to invalidate the preference: stale, single-threaded, or (cas-skip-many-threads)
    /// exceed_llc_nr(), which loads nr_running_avg.
    ExceedLlcNr,
    /// cas-write-if-changed: load mm_sched_cpu and store only if it is not already -1.
    TestCpu,
    /// Store mm->mm_sched_cpu = -1.
    ClearCpu,
    /// Load mm_sched_cpu into the task's preferred LLC.
    LoadPreferredLlc,
}

/// The steps of task_tick_cache().
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TickPhase {
    /// `if (!mm || !mm->pcpu_sched) return;`
    LoadPcpuSched,
    /// Load mm->mm_sched_epoch; stop if it equals the rq's epoch.
    LoadEpoch,
    /// Take mm->mm_sched_lock.
    Lock,
    /// Under the lock: if this task's work is not queued, queue it and publish the epoch.
    PublishEpoch,
    /// Unlock and queue task_cache_work().
    UnlockQueueWork,
    /// Unlock (the work was already queued).
    Unlock,
}

/// The steps of task_cache_work().
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkPhase {
    /// 7.2: `work->next = work`, then (a2b4cf39d9d3) load sc_stat.next_scan: return before it.
    Start,
    /// 7.2: try_cmpxchg(&sc_stat.next_scan, &next_scan, now + epoch_period); a failed one returns.
    ClaimScan { seen: u64 },
    /// 7.2: invalid_llc_nr(mm, p, curr_cpu) (nr_running_avg loaded unless the tolerance skips it).
    Gate,
    /// 7.2, the gate held: `if (READ_ONCE(sc_stat.cpu) != -1)`.
    GateTestCpu,
    /// 7.2: `WRITE_ONCE(sc_stat.cpu, -1); return;`.
    GateClearCpu,
    /// Scan the LLCs' occupancy and choose the preferred LLC.
    Scan,
    /// 25/28, single-threaded mm: `mm->mm_sched_cpu = -1; return;` instead of the scan.
    ClearCpuSingle,
    /// Store the new mm->mm_sched_cpu.
    StoreCpu,
    /// Store mm->nr_running_avg.
    StoreAvg,
}

impl CacheAware {
    /// `merged`: the 7.2 layout (mm->sc_stat) instead of RFC v4's; `epoch_period` in jiffies.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topo: &Topology,
        lines: &mut Coherence,
        processes: &[String],
        threads: &[u32],
        rss: &[u64],
        nr_tasks: usize,
        own_line: bool,
        merged: bool,
        epoch_period: u64,
    ) -> Self {
        let n = topo.nr_cpus();
        let mms = processes
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let base = format!("mm_struct({name})");
                let fields: &[(u32, &'static str)] = if merged && own_line {
                    merged::SC_STAT_FIELDS_OWN_AVG
                } else if merged {
                    merged::SC_STAT_FIELDS
                } else if own_line {
                    &[
                        (0, "pcpu_sched"),
                        (8, "mm_sched_lock"),
                        (16, "mm_sched_epoch"),
                        (24, "mm_sched_cpu"),
                        (32, "(pad)"),
                    ]
                } else {
                    &[
                        (0, "pcpu_sched"),
                        (8, "mm_sched_lock"),
                        (16, "mm_sched_epoch"),
                        (24, "mm_sched_cpu"),
                        (32, "nr_running_avg"),
                    ]
                };
                let line = lines.add_line(base.clone(), fields);
                let (avg_line, avg_field) = if own_line {
                    let f = if merged {
                        "sc_stat.nr_running_avg"
                    } else {
                        "nr_running_avg"
                    };
                    (lines.add_line(format!("{base}+0x40"), &[(64, f)]), 0)
                } else {
                    (line, F_NR_RUNNING_AVG)
                };
                MmSched {
                    line,
                    avg_line,
                    avg_field,
                    mm_sched_epoch: 0,
                    mm_sched_cpu: -1,
                    nr_running_avg: 0,
                    nr_threads: threads.get(i).copied().unwrap_or(1),
                    rss_bytes: rss.get(i).copied().unwrap_or(0),
                    next_scan: 0,
                    pcpu: vec![PcpuSched::default(); n],
                }
            })
            .collect();
        CacheAware {
            mms,
            rq: vec![
                RqEpoch {
                    cpu_epoch_next: epoch_period,
                    ..Default::default()
                };
                n
            ],
            epoch_period,
            work_queued: vec![false; nr_tasks],
        }
    }

    /// __update_mm_sched(): advance the rq epoch and decay both runtimes by halving per epoch.
    fn update_mm_sched(&mut self, mm: usize, cpu: usize, jiffies: u64) {
        let r = &mut self.rq[cpu];
        if jiffies > r.cpu_epoch_next {
            let n = (jiffies - r.cpu_epoch_next).div_ceil(self.epoch_period);
            r.cpu_epoch += n;
            r.cpu_epoch_next += n * self.epoch_period;
            r.cpu_runtime = if n >= 64 { 0 } else { r.cpu_runtime >> n };
        }
        let epoch = r.cpu_epoch;
        let p = &mut self.mms[mm].pcpu[cpu];
        let n = epoch - p.epoch.min(epoch);
        if n > 0 {
            p.epoch = epoch;
            p.runtime = if n >= 64 { 0 } else { p.runtime >> n };
        }
    }

    /// The per-CPU half of account_mm_sched(): occupancy runtime; returns the rq epoch.
    pub fn account_local(&mut self, mm: usize, cpu: usize, delta: u64, jiffies: u64) -> u64 {
        self.update_mm_sched(mm, cpu, jiffies);
        self.rq[cpu].cpu_runtime += delta;
        self.mms[mm].pcpu[cpu].runtime += delta;
        self.rq[cpu].cpu_epoch
    }

    /// fraction_mm_sched(): this mm's share of the CPU's recent runtime, in NICE_0_LOAD units.
    pub fn fraction(&mut self, mm: usize, cpu: usize, jiffies: u64) -> u64 {
        self.update_mm_sched(mm, cpu, jiffies);
        NICE_0_LOAD * self.mms[mm].pcpu[cpu].runtime / (self.rq[cpu].cpu_runtime + 1)
    }

    pub fn rq_epoch(&self, cpu: usize) -> u64 {
        self.rq[cpu].cpu_epoch
    }

    /// The hysteresis rule of task_cache_work(): switch only to an LLC with more than twice the
    /// occupancy of the current one.
    pub fn should_switch(best_occ: u64, current_occ: u64) -> bool {
        best_occ > 2 * current_occ
    }
}

/// update_avg() of kernel/sched/sched.h: `s64 diff = sample - *avg; *avg += diff / 8;` in
/// integers, so a rising average stops up to 7 below the sample and a falling one up to 7 above.
pub fn update_avg(avg: u64, sample: u64) -> u64 {
    (avg as i64 + (sample as i64 - avg as i64) / 8) as u64
}

/// get_sched_cache_rss_scale() (27/28) at `llc_ignore_rss`'s default 1: `1 + (1 - 1) * 256`.
/// The debugfs knob itself is not modelled (0 would turn cache-aware scheduling off, 100 the check).
const RSS_SCALE: u64 = 1;

/// exceed_llc_capacity() (26/28, with 27/28's scale): `llc * scale <= rss * PAGE_SIZE`, `llc`
/// the size of the CPU's L3 cacheinfo leaf (`info_list + 3`); a CPU without an L3 leaf
/// (`num_leaves < 3`, here an L3 of size 0) exceeds.
pub fn exceed_llc_capacity(rss_bytes: u64, l3_bytes: u64) -> bool {
    l3_bytes == 0 || l3_bytes.saturating_mul(RSS_SCALE) <= rss_bytes
}

/// exceed_llc_nr() (25/28): `mm->nr_running_avg * smt_nr > per_cpu(sd_llc_size, cpu)`.
pub fn exceed_llc_nr(nr_running_avg: u64, smt_nr: u64, llc_size: u64) -> bool {
    nr_running_avg * smt_nr > llc_size
}

impl Engine {
    pub(super) fn init_cache_aware(&mut self) {
        let merged = self.patches.merged.sched_cache;
        let l = self.patches.llc;
        // 7.2: sched_cache_active = CONFIG_SCHED_CACHE && sysctl_sched_cache_user &&
        // sched_cache_present (more than one LLC)
        let on = if merged {
            l.config && l.enabled && self.topo.nr_llcs > 1
        } else {
            self.patches.cache_aware
        };
        if !on {
            return;
        }
        // EPOCH_PERIOD = HZ/100 jiffies (10 ms); 7.2: llc_balancing/epoch_period
        let epoch_period = if merged {
            l.epoch_period_jiffies(self.hz)
        } else {
            (self.hz as u64 / 100).max(1)
        };
        let procs = self.workload.processes().to_vec();
        let rss: Vec<u64> = (0..procs.len() as u32)
            .map(|p| self.workload.rss_bytes(p))
            .collect();
        let mut threads = vec![0u32; procs.len()];
        for t in &self.tasks {
            if let Some(x) = threads.get_mut(t.process as usize) {
                *x += 1;
            }
        }
        self.cas = Some(CacheAware::new(
            &self.topo,
            &mut self.lines,
            &procs,
            &threads,
            &rss,
            self.tasks.len(),
            self.patches.cas_nr_running_avg_own_line,
            merged,
            epoch_period,
        ));
    }

    /// account_mm_sched(), from update_curr() of the running task: the per-CPU accounting now, the
    /// mm-line accesses as kernel work on this CPU.
    /// `c` is the run queue's CPU, `exec` the CPU executing the call (another CPU's enqueue on `c`
    /// runs update_curr for `c`'s task).
    pub(super) fn account_mm_sched(
        &mut self,
        c: usize,
        exec: usize,
        task: TaskId,
        mm: u32,
        delta: u64,
    ) {
        let jiffies = self.jiffies();
        let Some(cas) = &mut self.cas else { return };
        let epoch = cas.account_local(mm as usize, c, delta, jiffies);
        let m = &cas.mms[mm as usize];
        // epoch - READ_ONCE(mm->mm_sched_epoch) > sysctl_llc_old, in unsigned long: an mm epoch
        // ahead of this rq's wraps and invalidates too (RFC v4; fixed in the non-RFC v3: 7.2 takes
        // it in signed long against llc_epoch_affinity_timeout)
        let stale = if self.patches.merged.sched_cache {
            merged::stale(
                epoch,
                m.mm_sched_epoch,
                self.patches.llc.epoch_affinity_timeout,
            )
        } else {
            epoch.wrapping_sub(m.mm_sched_epoch) > LLC_OLD
        };
        let single = m.nr_threads <= 1;
        self.cpus[exec]
            .exec
            .jobs
            .push_back(Job::CacheAware(CasJob::Account {
                mm,
                task,
                phase: AccountPhase::LoadPcpuSched,
                stale,
                invalidate: single,
            }));
    }

    /// task_tick_cache(), from the tick of a CPU running `task` of `mm`.
    pub(super) fn task_tick_cache(&mut self, c: usize, task: TaskId, mm: u32) {
        if self.cas.is_some() {
            self.cpus[c]
                .exec
                .jobs
                .push_back(Job::CacheAware(CasJob::Tick {
                    mm,
                    task,
                    phase: TickPhase::LoadPcpuSched,
                }));
        }
    }

    pub(super) fn step_cache_aware(&mut self, c: usize, job: CasJob) -> Option<CasJob> {
        if let CasJob::Tick {
            phase: TickPhase::Lock,
            ..
        } = job
        {
            self.drain_store_buffer(c, Sym::TaskTickCache);
        }
        if self.must_wait(c) {
            return Some(job);
        }
        // The cache-aware state is borrowed once for the whole step: it is taken out (kaccess and
        // kcharge need `&mut self`, and nothing they reach reads it) and put back after.
        let mut cas = self.cas.take()?;
        let next = match job {
            CasJob::Account {
                mm,
                task,
                phase,
                stale,
                invalidate,
            } => self.account_mm_sched_step(c, &mut cas, mm, task, phase, stale, invalidate),
            CasJob::Tick { mm, task, phase } => {
                self.task_tick_cache_step(c, &mut cas, mm, task, phase)
            }
            CasJob::Work { mm, task, phase } => self.task_cache_work(c, &mut cas, mm, task, phase),
        };
        self.cas = Some(cas);
        next
    }

    /// The mm-line part of account_mm_sched(), one shared-line access per step.
    #[allow(clippy::too_many_arguments)]
    fn account_mm_sched_step(
        &mut self,
        c: usize,
        cas: &mut CacheAware,
        mm: u32,
        task: TaskId,
        phase: AccountPhase,
        stale: bool,
        mut invalidate: bool,
    ) -> Option<CasJob> {
        let m = &mut cas.mms[mm as usize];
        let phase = match phase {
            AccountPhase::LoadPcpuSched => {
                // if (!mm || !mm->pcpu_sched) return;
                self.kaccess(c, m.line, Op::Load, F_PCPU_SCHED, Sym::AccountMmSched);
                AccountPhase::ChargeLocal
            }
            AccountPhase::ChargeLocal => {
                // scoped_guard (raw_spinlock, &rq->cpu_epoch_lock) { __update_mm_sched() ... }
                self.kcharge(c, Sym::AccountMmSched, self.assume.account_local_ns);
                AccountPhase::LoadEpoch
            }
            AccountPhase::LoadEpoch => {
                // (step_cache_aware waited for the cursor before this access)
                self.kaccess(c, m.line, Op::Load, F_EPOCH, Sym::AccountMmSched);
                AccountPhase::ExceedLlcNr
            }
            AccountPhase::ExceedLlcNr => {
                invalidate = invalidate || stale;
                if !invalidate && self.patches.merged.sched_cache {
                    // 7.2 invalid_llc_nr() (deee5e27d5b6), after get_nr_threads(p) <= 1
                    let l = self.patches.llc;
                    if merged::invalid_llc_nr_loads(&l) {
                        self.kaccess(c, m.avg_line, Op::Load, m.avg_field, Sym::InvalidLlcNr);
                        let smt = self.topo.spec.smt as u64;
                        let llc_size = self.sd.llc_size[c] as u64;
                        invalidate = merged::invalid_llc_nr(&l, m.nr_running_avg, smt, llc_size);
                    }
                } else if !invalidate && self.patches.cas_skip_many_threads {
                    // exceed_llc_nr(): nr_running_avg * smt_nr > sd_llc_size
                    self.kaccess(c, m.avg_line, Op::Load, m.avg_field, Sym::ExceedLlcNr);
                    let smt = self.topo.spec.smt as u64;
                    let llc_size = self.sd.llc_size[c] as u64;
                    invalidate = exceed_llc_nr(m.nr_running_avg, smt, llc_size);
                }
                if !invalidate && !self.patches.merged.sched_cache && self.rss_check_on() {
                    // 26/28: || exceed_llc_capacity(mm, cpu_of(rq)), after exceed_llc_nr();
                    // its reads (the cacheinfo leaf, mm->rss_stat's counts) are read-mostly
                    // hits, not priced, as get_nr_threads()'s
                    invalidate = exceed_llc_capacity(m.rss_bytes, self.l3_bytes());
                }
                if invalidate {
                    AccountPhase::TestCpu
                } else {
                    AccountPhase::LoadPreferredLlc
                }
            }
            AccountPhase::TestCpu => {
                if self.patches.cas_write_if_changed {
                    // fix 2: if (mm->mm_sched_cpu != -1) mm->mm_sched_cpu = -1;
                    self.kaccess(c, m.line, Op::Load, F_CPU, Sym::AccountMmSched);
                    if m.mm_sched_cpu != -1 {
                        AccountPhase::ClearCpu
                    } else {
                        AccountPhase::LoadPreferredLlc
                    }
                } else {
                    AccountPhase::ClearCpu
                }
            }
            AccountPhase::ClearCpu => {
                // mm->mm_sched_cpu = -1
                self.kaccess(c, m.line, Op::Store, F_CPU, Sym::AccountMmSched);
                self.metrics.count(Counter::MmSchedCpuStores);
                if m.mm_sched_cpu == -1 {
                    self.metrics.count(Counter::MmSchedCpuRedundantStores);
                }
                m.mm_sched_cpu = -1;
                m.pcpu[c].occ = 0;
                AccountPhase::LoadPreferredLlc
            }
            AccountPhase::LoadPreferredLlc => {
                // mm_sched_llc = mm->mm_sched_cpu != -1 ? llc_id(mm->mm_sched_cpu) : -1
                self.kaccess(c, m.line, Op::Load, F_CPU, Sym::AccountMmSched);
                let pref = m.mm_sched_cpu;
                let llc = if pref >= 0 {
                    self.topo.cpus[pref as usize].llc as i32
                } else {
                    -1
                };
                self.tasks[task as usize].preferred_llc = llc;
                return None;
            }
        };
        Some(CasJob::Account {
            mm,
            task,
            phase,
            stale,
            invalidate,
        })
    }

    /// task_tick_cache(), one shared-line access per step.
    fn task_tick_cache_step(
        &mut self,
        c: usize,
        cas: &mut CacheAware,
        mm: u32,
        task: TaskId,
        phase: TickPhase,
    ) -> Option<CasJob> {
        let epoch = cas.rq_epoch(c);
        let m = &mut cas.mms[mm as usize];
        let phase = match phase {
            TickPhase::LoadPcpuSched => {
                // if (!mm || !mm->pcpu_sched) return;
                self.kaccess(c, m.line, Op::Load, F_PCPU_SCHED, Sym::TaskTickCache);
                TickPhase::LoadEpoch
            }
            TickPhase::LoadEpoch => {
                // if (mm->mm_sched_epoch == rq->cpu_epoch) return;
                // 7.2: if (time_after_eq(mm->sc_stat.epoch, epoch)) return; (never backwards)
                self.kaccess(c, m.line, Op::Load, F_EPOCH, Sym::TaskTickCache);
                let done = if self.patches.merged.sched_cache {
                    merged::time_after_eq(m.mm_sched_epoch, epoch)
                } else {
                    m.mm_sched_epoch == epoch
                };
                if done {
                    return None;
                }
                TickPhase::Lock
            }
            TickPhase::Lock => {
                // guard(raw_spinlock)(&mm->mm_sched_lock)
                self.kaccess(c, m.line, Op::Atomic, F_LOCK, Sym::TaskTickCache);
                TickPhase::PublishEpoch
            }
            TickPhase::PublishEpoch => {
                // if (work->next == work) { task_work_add(); WRITE_ONCE(mm->mm_sched_epoch, ..); }
                // (02/28 dropped 01/28's recheck of the epoch under the lock: CPUs that passed
                // the first check together each queue their own task's work)
                let queued = &mut cas.work_queued[task as usize];
                if !*queued {
                    self.kaccess(c, m.line, Op::Store, F_EPOCH, Sym::TaskTickCache);
                    m.mm_sched_epoch = epoch;
                    *queued = true;
                    TickPhase::UnlockQueueWork
                } else {
                    TickPhase::Unlock
                }
            }
            TickPhase::UnlockQueueWork => {
                // unlock, then the task_work runs on the way back to user space
                self.kaccess(c, m.line, Op::Store, F_LOCK, Sym::TaskTickCache);
                let phase = if self.patches.merged.sched_cache {
                    WorkPhase::Start
                } else {
                    WorkPhase::Scan
                };
                self.cpus[c]
                    .exec
                    .jobs
                    .push_back(Job::CacheAware(CasJob::Work { mm, task, phase }));
                return None;
            }
            TickPhase::Unlock => {
                self.kaccess(c, m.line, Op::Store, F_LOCK, Sym::TaskTickCache);
                return None;
            }
        };
        Some(CasJob::Tick { mm, task, phase })
    }

    /// Whether 26/28's exceed_llc_capacity() is in the kernel (RFC v4 form only).
    pub(super) fn rss_check_on(&self) -> bool {
        self.patches.cas_exceed_llc_capacity && !self.patches.merged.sched_cache
    }

    /// The size of a CPU's L3 cacheinfo leaf in bytes: the machine's per-LLC L3 (`llc_mib`;
    /// every CPU of a modelled machine has the same).
    pub(super) fn l3_bytes(&self) -> u64 {
        self.topo.spec.llc_mib as u64 * 1024 * 1024
    }

    /// The LLC utilization test of the RFC's migration hint: util*100 < cap*llc_aggr_cap/smt;
    /// 7.2's fits_llc_capacity(): util*100 < cap*llc_overaggr_pct (x3/2 without SMT).
    fn llc_fits(&self, llc: usize, extra_util: u64) -> bool {
        let cpus = &self.llc_list[llc];
        let util: u64 = cpus
            .iter()
            .map(|&c| self.cpus[c as usize].rq.avg.util_avg)
            .sum::<u64>()
            + extra_util;
        let cap = cpus.len() as u64 * 1024;
        let smt = self.topo.spec.smt as u64;
        if self.patches.merged.sched_cache {
            return merged::fits_llc_capacity(&self.patches.llc, util, cap, smt);
        }
        util * 100 < cap * LLC_AGGR_CAP / smt
    }

    /// util_greater()'s margin: RFC v4's llc_aggr_imb, 7.2's llc_balancing/imb_pct.
    fn llc_imb_pct(&self) -> u64 {
        if self.patches.merged.sched_cache {
            self.patches.llc.imb_pct as u64
        } else {
            LLC_AGGR_IMB
        }
    }

    /// can_migrate_llc_task(): forbid moving a task out of its preferred LLC while that LLC is not
    /// overloaded, and into a full LLC that it does not prefer... reduced to the RFC's two rules.
    pub(super) fn llc_forbids_migration(&self, t: TaskId, src: usize, dst: usize) -> bool {
        let Some(cas) = &self.cas else { return false };
        let task = &self.tasks[t as usize];
        let m = &cas.mms[task.process as usize];
        if m.mm_sched_cpu < 0 || m.nr_threads <= 1 {
            return false;
        }
        // 7.2 can_migrate_llc_task(): invalid_llc_nr(dst) leaves the migration unrestricted (its
        // store of sc_stat.cpu = -1 is not made here: account_mm_sched makes it on the mm's next
        // update_curr, the same test on an LLC of the same size)
        if self.patches.merged.sched_cache {
            let l = self.patches.llc;
            let smt = self.topo.spec.smt as u64;
            if merged::invalid_llc_nr(&l, m.nr_running_avg, smt, self.sd.llc_size[dst] as u64) {
                return false;
            }
        } else if (self.patches.cas_skip_many_threads
            && exceed_llc_nr(
                m.nr_running_avg,
                self.topo.spec.smt as u64,
                self.sd.llc_size[dst] as u64,
            ))
            || (self.rss_check_on() && exceed_llc_capacity(m.rss_bytes, self.l3_bytes()))
        {
            // get_migrate_hint(): mig_allow for too many threads (25/28) or a large RSS (26/28)
            return false;
        }
        let (sl, dl) = (
            self.topo.cpus[src].llc as usize,
            self.topo.cpus[dst].llc as usize,
        );
        if sl == dl {
            return false;
        }
        let pref = task.preferred_llc;
        let util = |l: usize| -> u64 {
            self.llc_list[l]
                .iter()
                .map(|&c| self.cpus[c as usize].rq.avg.util_avg)
                .sum()
        };
        if pref == sl as i32 {
            // out of the preferred LLC: only when it is over the cap and busier by llc_aggr_imb
            return self.llc_fits(sl, 0) || util(sl) * 100 <= util(dl) * (100 + self.llc_imb_pct());
        }
        false
    }
}

mod llc_lb;
pub(crate) mod merged;
mod work;

#[cfg(test)]
mod tests;
