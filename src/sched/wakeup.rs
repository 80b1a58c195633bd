//! Wakeup placement: try_to_wake_up → select_task_rq_fair (record_wakee, wake_wide, wake_affine)
//! → select_idle_sibling → select_idle_cpu with the SIS_UTIL scan limit.

use super::llc_shared::{HAS_IDLE_CORES, NR_IDLE_SCAN};
use super::rq::RqLine;
use super::*;
use crate::coherence::Op;
use crate::machine::domains::SD_WAKE_AFFINE;

pub(crate) use super::wake_flags::*;

/// Who issues a wakeup on the waker's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waker {
    /// A task running there, handing over `lines` it wrote (a pipe message, a request).
    Task(TaskId, u32),
    /// A device interrupt's softirq there (NET_RX), in the context of whatever it interrupted,
    /// handing over the packet's `lines`.
    Irq(u32),
    /// A timer on the wakee's own CPU.
    Timer,
}

/// `current` on the waker's CPU: a task, or that CPU's idle task (swapper/N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Current {
    Task(TaskId),
    Swapper(usize),
}

/// A task's record_wakee() state (`p->wakee_flips`, `wakee_flip_decay_ts`, `last_wakee`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WakeeFlips {
    pub flips: u32,
    pub decay_ts: u64,
    pub last_wakee: u32,
}

impl WakeeFlips {
    pub(crate) const NEW: WakeeFlips = WakeeFlips {
        flips: 0,
        decay_ts: 0,
        last_wakee: u32::MAX,
    };
}

impl Engine {
    fn share_cache(&self, a: usize, b: usize) -> bool {
        self.topo.cpus[a].llc == self.topo.cpus[b].llc
    }

    /// try_to_wake_up() issued on `waker_cpu` by `waker` (a task, a device interrupt's softirq or
    /// a timer), with the kernel's `wake_flags` (`WF_SYNC`).
    pub(super) fn try_to_wake_up(
        &mut self,
        t: TaskId,
        waker_cpu: usize,
        waker: Waker,
        wake_flags: u32,
    ) {
        match self.tasks[t as usize].state {
            TaskState::Sleeping => {}
            TaskState::Exited => return,
            TaskState::Running | TaskState::Runnable => {
                // Already awake: the wakeup is remembered (the task will not block on it).
                self.tasks[t as usize].pending_wakeups += 1;
                return;
            }
        }
        if self.tasks[t as usize].waking {
            // TASK_WAKING (on a wake list): this wakeup finds it awake
            self.tasks[t as usize].pending_wakeups += 1;
            return;
        }
        self.metrics.count(Counter::Wakeups);
        if self.tasks[t as usize].se.sched_delayed {
            // ttwu_runnable(p, wake_flags): WF_TTWU and WF_SYNC, no select_task_rq
            self.ttwu_runnable(t, waker_cpu, waker, WF_TTWU | (wake_flags & WF_SYNC));
            return;
        }
        let current = self.waker_current(waker, waker_cpu);
        self.wakee_handoff(t, waker_cpu, waker, current);
        self.tasks[t as usize].woken_at = Some(self.now);
        let prev = self.tasks[t as usize].cpu as usize;
        // sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING): a waking task is alive
        let sync = wake_flags & WF_SYNC != 0;
        // select_task_rq(): the task's class picks the CPU (an ext op's time goes with the ttwu)
        let (target, sis_ns, class_ns) = if self.scx_on() {
            let wf = WF_TTWU | (wake_flags & WF_SYNC);
            let (cpu, ns) = self.select_task_rq_scx(t, prev, waker_cpu, wf);
            (cpu, 0, ns)
        } else {
            let (cpu, ns) = self.select_task_rq_fair(t, prev, waker_cpu, current, sync);
            (cpu, ns, 0)
        };
        self.ttwu_stat(waker_cpu, target);
        self.metrics.stall(waker_cpu, sis_ns);
        if target != prev {
            self.metrics.count(Counter::WakeMigrations);
        }
        // ttwu's wake_flags: WF_TTWU, WF_SYNC, WF_RQ_SELECTED (no task is pinned), WF_MIGRATED
        let mut wf = WF_TTWU | (wake_flags & WF_SYNC);
        if self.cpus.len() > 1 {
            wf |= WF_RQ_SELECTED;
        }
        if target != prev {
            wf |= WF_MIGRATED;
        }
        // p->sched_remote_wakeup: what a wake-list activation passes on
        self.tasks[t as usize].sched_remote_wakeup = wf & WF_MIGRATED != 0;
        if current.is_some() {
            self.locality_wakeup(waker_cpu, target);
        }
        self.trace_flow(waker_cpu, t, "wakeup");
        self.trace_waking(waker_cpu, t, prev, target);
        if self.patches.features.ttwu_queue
            && self.scx_allow_ttwu_queue()
            && self.ttwu_queue_cond(waker_cpu, target)
        {
            self.ttwu_queue_wakelist(t, waker_cpu, target, sis_ns, class_ns);
            return;
        }
        // Remote enqueue: the waker takes the target rq's lock, in its first line.
        let ttwu_ns = self.assume.ttwu_ns
            + class_ns
            + if target != waker_cpu {
                self.rq_lock_remote(waker_cpu, target)
            } else {
                0
            };
        // The waker is in the kernel for the wakeup; the enqueue happens inside that work.
        let was_kernel = self.cpus[waker_cpu].exec.mode == Mode::Kernel;
        if was_kernel {
            // behind the kernel work the waker is already doing
            let jobs = &mut self.cpus[waker_cpu].exec.jobs;
            if sis_ns > 0 {
                jobs.push_back(Job::Compute(Sym::SelectIdleSibling, sis_ns));
            }
            jobs.push_back(Job::Compute(Sym::TryToWakeUp, ttwu_ns));
            self.enqueue(target, t, waker_cpu, wf);
            return;
        }
        self.enter_kernel(waker_cpu);
        // The enqueue is done at the waker's entry time (update_curr accounting may touch a shared
        // line from here); the wakeup's cost then comes first in the waker's kernel work, as jobs
        // queued before anything the enqueue queues would. The wakee's CPU, run from here, is not
        // the outermost: it must not move the clock past the waker's unscheduled work.
        self.run_depth += 1;
        self.enqueue(target, t, waker_cpu, wf);
        self.run_depth -= 1;
        if sis_ns > 0 {
            self.kcharge(waker_cpu, Sym::SelectIdleSibling, sis_ns);
        }
        self.kcharge(waker_cpu, Sym::TryToWakeUp, ttwu_ns);
        self.run_cpu(waker_cpu);
    }

    /// ttwu_queue_cond() (TTWU_QUEUE): a target in another LLC, or an idle one other than this
    /// CPU, gets the task on its wake list instead of the waker taking its rq lock.
    fn ttwu_queue_cond(&self, this: usize, target: usize) -> bool {
        if !self.share_cache(this, target) {
            return true;
        }
        target != this && self.cpus[target].nr_running() == 0
    }

    /// __ttwu_queue_wakelist(): `WRITE_ONCE(rq->ttwu_pending, 1)` (a store to the target's rq
    /// line), llist_add on its `call_single_queue` line (a cmpxchg), and the IPI unless the target
    /// polls (an idle CPU in mwait has TIF_POLLING_NRFLAG set: the store to its flags wakes it)
    /// [A]. The target enqueues the task itself (`sched_ttwu_pending`), when the IPI arrives or
    /// right after the waker's work for a polling one.
    fn ttwu_queue_wakelist(
        &mut self,
        t: TaskId,
        waker_cpu: usize,
        target: usize,
        sis_ns: u64,
        class_ns: u64,
    ) {
        let rq_line = self.rq_lines[target].rq();
        let pending = self
            .lines
            .access(&self.topo, rq_line, waker_cpu, Op::Store, 1, self.now);
        // llist_add's cmpxchg is a locked instruction: it leaves once the store buffer has
        // drained, the ttwu_pending store included (its read for ownership of the target's rq
        // line); the buffer is empty after it, so that store never waits in it past this wakeup
        let csq = self.nohz.csq_lines[target];
        let issue = self.locked_issue_at(waker_cpu, pending.visible);
        let a = self
            .lines
            .access(&self.topo, csq, waker_cpu, Op::Atomic, 0, issue);
        let stall = a.done - self.now;
        self.metrics.stall(waker_cpu, stall);
        let polling = self.cpus[target].exec.mode == Mode::Idle;
        let ipi = if polling { 0 } else { self.assume.ipi_send_ns };
        let ttwu_ns = self.assume.ttwu_ns + class_ns + stall + ipi;
        self.tasks[t as usize].waking = true;
        let was_kernel = self.cpus[waker_cpu].exec.mode == Mode::Kernel;
        let at = if was_kernel {
            let jobs = &mut self.cpus[waker_cpu].exec.jobs;
            if sis_ns > 0 {
                jobs.push_back(Job::Compute(Sym::SelectIdleSibling, sis_ns));
            }
            jobs.push_back(Job::Compute(Sym::TryToWakeUp, ttwu_ns));
            self.cpus[waker_cpu].exec.cursor.max(self.now) + sis_ns + ttwu_ns
        } else {
            self.enter_kernel(waker_cpu);
            if sis_ns > 0 {
                self.kcharge(waker_cpu, Sym::SelectIdleSibling, sis_ns);
            }
            self.kcharge(waker_cpu, Sym::TryToWakeUp, ttwu_ns);
            self.cpus[waker_cpu].exec.cursor
        };
        let at = at
            + if polling {
                0
            } else {
                self.assume.ipi_delivery_ns
            };
        self.push_job_at(target, Job::TtwuPending(t, !polling), at);
        if !was_kernel {
            self.run_cpu(waker_cpu);
        }
    }

    /// sched_ttwu_pending() on `c`: llist_del_all of its queue (an atomic on the line), the IPI's
    /// receipt if one was sent, then ttwu_do_activate under its own rq lock.
    pub(super) fn sched_ttwu_pending(&mut self, c: usize, t: TaskId, ipi: bool) -> Option<Job> {
        self.drain_store_buffer(c, Sym::TryToWakeUp);
        if self.must_wait(c) {
            return Some(Job::TtwuPending(t, ipi));
        }
        let csq = self.nohz.csq_lines[c];
        self.kaccess(c, csq, Op::Atomic, 0, Sym::TryToWakeUp);
        if ipi {
            self.kcharge(c, Sym::TryToWakeUp, self.assume.ipi_recv_ns);
        }
        Some(Job::TtwuActivate(t))
    }

    /// ttwu_runnable(): the task is still queued (DELAY_DEQUEUE), so it wakes where it is: no
    /// select_task_rq, the delayed entity is requeued under the rq lock of its CPU.
    fn ttwu_runnable(&mut self, t: TaskId, waker_cpu: usize, waker: Waker, wf: u32) {
        let current = self.waker_current(waker, waker_cpu);
        self.wakee_handoff(t, waker_cpu, waker, current);
        self.tasks[t as usize].woken_at = Some(self.now);
        let target = self.tasks[t as usize].cpu as usize;
        if current.is_some() {
            self.locality_wakeup(waker_cpu, target);
        }
        self.trace_waking(waker_cpu, t, target, target);
        self.ttwu_stat(waker_cpu, target);
        let ttwu_ns = self.assume.ttwu_ns
            + if target != waker_cpu {
                self.rq_lock_remote(waker_cpu, target)
            } else {
                0
            };
        if self.cpus[waker_cpu].exec.mode == Mode::Kernel {
            let jobs = &mut self.cpus[waker_cpu].exec.jobs;
            jobs.push_back(Job::Compute(Sym::TryToWakeUp, ttwu_ns));
            self.requeue_delayed(t, waker_cpu, wf);
            return;
        }
        self.enter_kernel(waker_cpu);
        self.run_depth += 1;
        self.requeue_delayed(t, waker_cpu, wf);
        self.run_depth -= 1;
        self.kcharge(waker_cpu, Sym::TryToWakeUp, ttwu_ns);
        self.run_cpu(waker_cpu);
    }

    /// `current` on the waker's CPU as select_task_rq_fair sees it: the waking task, or what a
    /// device interrupt interrupted (a task, else the CPU's idle task); a timer on the wakee's own
    /// CPU has none here (its `cpu == prev` skips wake_affine, and its wakee flips are not kept).
    fn waker_current(&self, waker: Waker, waker_cpu: usize) -> Option<Current> {
        match waker {
            Waker::Task(w, _) => Some(Current::Task(w)),
            Waker::Irq(_) => Some(match self.cpus[waker_cpu].rq.curr {
                Some(w) => Current::Task(w),
                None => Current::Swapper(waker_cpu),
            }),
            Waker::Timer => None,
        }
    }

    /// record_wakee() on `current`, and the data the wakee reads first (from the waker's CPU).
    fn wakee_handoff(
        &mut self,
        t: TaskId,
        waker_cpu: usize,
        waker: Waker,
        current: Option<Current>,
    ) {
        if let Some(cur) = current {
            self.record_wakee(cur, t);
        }
        let lines = match waker {
            Waker::Task(_, lines) | Waker::Irq(lines) => lines,
            Waker::Timer => 0,
        };
        if lines > 0 {
            self.tasks[t as usize].handoff = Some((waker_cpu as u32, lines));
        }
    }

    /// record_wakee(): flips decay by half once a second.
    fn record_wakee(&mut self, waker: Current, wakee: TaskId) {
        let now = self.now;
        let w = match waker {
            Current::Task(w) => &mut self.tasks[w as usize].flips,
            Current::Swapper(c) => &mut self.swapper_flips[c],
        };
        if now > w.decay_ts + 1_000_000_000 {
            w.flips >>= 1;
            w.decay_ts = now;
        }
        if w.last_wakee != wakee {
            w.last_wakee = wakee;
            w.flips += 1;
        }
    }

    fn wakee_flips(&self, cur: Current) -> u32 {
        match cur {
            Current::Task(w) => self.tasks[w as usize].flips.flips,
            Current::Swapper(c) => self.swapper_flips[c].flips,
        }
    }

    /// wake_wide(): many-to-many wakeup patterns spread instead of pulling to the waker.
    fn wake_wide(&self, waker: Current, wakee: TaskId, waker_cpu: usize) -> bool {
        let (a, b) = (
            self.wakee_flips(waker),
            self.tasks[wakee as usize].flips.flips,
        );
        let (master, slave) = (a.max(b), a.min(b));
        let factor = self.sd.llc_size[waker_cpu];
        slave >= factor && master >= slave * factor
    }

    /// Returns the chosen CPU and the time the idle-CPU search cost the waker.
    fn select_task_rq_fair(
        &mut self,
        t: TaskId,
        prev: usize,
        cpu: usize,
        waker: Option<Current>,
        sync: bool,
    ) -> (usize, u64) {
        let mut target = prev;
        if let Some(w) = waker {
            let want_affine = !self.wake_wide(w, t, cpu);
            if want_affine {
                let affine = self
                    .sd
                    .of(cpu)
                    .position(|d| d.has(SD_WAKE_AFFINE) && d.span.contains(prev));
                if let Some(level) = affine
                    && cpu != prev
                {
                    let pct = self.sd.domains[self.sd.per_cpu[cpu][level] as usize].imbalance_pct;
                    target = self.wake_affine(t, w, cpu, prev, pct, sync);
                    if target == cpu {
                        self.sd_stat(cpu, level).ttwu_move_affine += 1;
                    }
                }
            }
        }
        self.select_idle_sibling(t, cpu, prev, target)
    }

    /// wake_affine(): WA_IDLE, then WA_WEIGHT (each a sched feature); `this` when either picks
    /// it, else `prev`.
    fn wake_affine(
        &self,
        p: TaskId,
        current: Current,
        this: usize,
        prev: usize,
        imbalance_pct: u32,
        sync: bool,
    ) -> usize {
        let f = self.patches.features;
        let mut target = None;
        if f.wa_idle {
            target = self.wake_affine_idle(this, prev, sync);
        }
        if f.wa_weight && target.is_none() {
            target = self.wake_affine_weight(p, current, this, prev, imbalance_pct, sync);
        }
        if target == Some(this) { this } else { prev }
    }

    /// wake_affine_idle(): an idle waker CPU sharing the cache (an interrupt), a sync waker
    /// alone on its CPU, or an idle prev.
    fn wake_affine_idle(&self, this: usize, prev: usize, sync: bool) -> Option<usize> {
        if self.cpus[this].is_idle() && self.share_cache(this, prev) {
            return Some(if self.cpus[prev].is_idle() {
                prev
            } else {
                this
            });
        }
        // rq->nr_running - cfs_h_nr_delayed(rq) == 1: the waker about to sleep is all there is
        if sync && self.cpus[this].nr_running() - self.cpus[this].rq.nr_delayed == 1 {
            return Some(this);
        }
        self.cpus[prev].is_idle().then_some(prev)
    }

    /// wake_affine_weight() on PELT load (cpu_load, task_h_load = se load_avg: no groups), with
    /// WA_BIAS; under sync the waker's own load leaves this CPU, and a tie goes to this CPU.
    fn wake_affine_weight(
        &self,
        p: TaskId,
        current: Current,
        this: usize,
        prev: usize,
        imbalance_pct: u32,
        sync: bool,
    ) -> Option<usize> {
        const CAP: i64 = 1024; // capacity_of(): every CPU at full capacity
        let mut this_eff = self.cpus[this].rq.avg.load_avg as i64;
        if sync {
            // task_h_load(current): the idle task is no fair entity
            let current_load = match current {
                Current::Task(w) => self.tasks[w as usize].se.avg.load_avg as i64,
                Current::Swapper(_) => 0,
            };
            if current_load > this_eff {
                return Some(this);
            }
            this_eff -= current_load;
        }
        let task_load = self.tasks[p as usize].se.avg.load_avg as i64;
        let wa_bias = self.patches.features.wa_bias;
        this_eff += task_load;
        if wa_bias {
            this_eff *= 100;
        }
        this_eff *= CAP;
        let mut prev_eff = self.cpus[prev].rq.avg.load_avg as i64 - task_load;
        if wa_bias {
            prev_eff *= 100 + (imbalance_pct as i64 - 100) / 2;
        }
        prev_eff *= CAP;
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this)
    }

    /// select_idle_sibling() run by `waker` for task `p`: the rq lines it scans are loads
    /// through the line model (overlapping, see `charge_loads`); returns the CPU and the scan's
    /// cost.
    fn select_idle_sibling(
        &mut self,
        p: TaskId,
        waker: usize,
        prev: usize,
        target: usize,
    ) -> (usize, u64) {
        if self.cpus[target].is_idle() {
            return (target, 0);
        }
        if prev != target && self.share_cache(prev, target) && self.cpus[prev].is_idle() {
            return (prev, 0);
        }
        // a recently used CPU, idle and in target's LLC (p->recent_used_cpu becomes prev)
        let recent = self.tasks[p as usize].recent_used_cpu as usize;
        self.tasks[p as usize].recent_used_cpu = prev as u32;
        if recent != prev
            && recent != target
            && self.share_cache(recent, target)
            && self.cpus[recent].is_idle()
        {
            return (recent, 0);
        }
        let llc = self.topo.cpus[target].llc as usize;
        let smt = self.topo.spec.smt > 1;
        // test_idle_cores() (SMT), then select_idle_cpu's READ_ONCE(nr_idle_scan): both on the
        // LLC's sd_llc_shared line, before the scan (its length depends on them)
        let mut pre = 0u64;
        if smt {
            pre += self.llc_shared_load(waker, llc, HAS_IDLE_CORES);
        }
        let has_idle_core = smt && self.llc_has_idle_cores[llc];
        // the scan's loads overlap: its cost is worked out where it returns (`ScanLoads::cost`),
        // not after every load (a division each)
        let mut loads = ScanLoads::default();
        let mlp = self.assume.stats_mlp;
        if smt && !has_idle_core && self.share_cache(prev, target) {
            // select_idle_smt(prev): prev's siblings, not prev itself
            let sibs: Vec<usize> = self
                .topo
                .smt_siblings(prev)
                .filter(|&s| s != prev)
                .collect();
            for s in sibs {
                loads.add(self.rq_line_load(waker, s, RqLine::Rq));
                if self.cpus[s].is_idle() {
                    return (s, pre + loads.cost(mlp));
                }
            }
        }
        // select_idle_cpu(): scan the LLC from target+1; SIS_UTIL bounds the number of CPUs
        // tried; an overloaded LLC (nr_idle_scan 0) is not scanned at all. Without SIS_UTIL
        // nr = INT_MAX: the whole LLC.
        let mut nr = i64::from(i32::MAX);
        if self.patches.features.sis_util {
            pre += self.llc_shared_load(waker, llc, NR_IDLE_SCAN);
            nr = self.llc_nr_idle_scan[llc] as i64 + 1;
            if nr == 1 {
                return (target, pre + loads.cost(mlp));
            }
        }
        let (len, start) = (self.llc_list[llc].len(), self.llc_pos[target] as usize);
        let mut idle_cpu: Option<usize> = None;
        // select_idle_core() takes a busy core's siblings out of the scan mask
        let mut scanned = vec![false; if has_idle_core { len } else { 0 }];
        for k in 1..=len {
            // (start + k) % len, without a division: start < len and k <= len
            let pos = if start + k >= len {
                start + k - len
            } else {
                start + k
            };
            let c = self.llc_list[llc][pos] as usize;
            if has_idle_core {
                if scanned[pos] {
                    continue;
                }
                // select_idle_core(c): every sibling's line; the first idle CPU passed is
                // remembered in case no core turns out idle (a stale hint)
                let mut idle = true;
                let sibs: Vec<usize> = self.topo.smt_siblings(c).collect();
                for &s in &sibs {
                    loads.add(self.rq_line_load(waker, s, RqLine::Rq));
                    if !self.cpus[s].is_idle() {
                        idle = false;
                        if idle_cpu.is_none() {
                            continue;
                        }
                        break;
                    }
                    idle_cpu.get_or_insert(s);
                }
                if idle {
                    return (c, pre + loads.cost(mlp));
                }
                for s in sibs {
                    if self.topo.cpus[s].llc as usize == llc {
                        scanned[self.llc_pos[s] as usize] = true;
                    }
                }
            } else {
                // the budget is checked before the CPU is looked at
                nr -= 1;
                if nr <= 0 {
                    return (target, pre + loads.cost(mlp));
                }
                loads.add(self.rq_line_load(waker, c, RqLine::Rq));
                if self.cpus[c].is_idle() {
                    idle_cpu = Some(c);
                    break;
                }
            }
        }
        let mut cost = loads.cost(mlp);
        if has_idle_core {
            cost += self.clear_idle_cores(waker, llc);
        }
        (idle_cpu.unwrap_or(target), pre + cost)
    }
}

/// The rq-line loads of one select_idle_sibling scan: their stalls' sum and the longest.
#[derive(Default)]
struct ScanLoads {
    sum: u64,
    max: u64,
}

impl ScanLoads {
    fn add(&mut self, ns: u64) {
        self.sum += ns;
        self.max = self.max.max(ns);
    }

    /// Overlapping loads (up to `mlp` in flight, as `charge_loads`): the sum over the MLP, at
    /// least the longest; 0 before the first load.
    fn cost(&self, mlp: u64) -> u64 {
        (self.sum / mlp).max(self.max)
    }
}

#[cfg(test)]
mod tests;
