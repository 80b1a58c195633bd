//! The run queue as EEVDF runs it (kernel/sched/fair.c, v6.18): avg_vruntime and eligibility,
//! update_curr / update_deadline, pick_eevdf with RUN_TO_PARITY, place_entity with PLACE_LAG,
//! check_preempt_wakeup_fair, DELAY_DEQUEUE, enqueue / dequeue / set_next / put_prev, and the
//! overload count.
//!
//! The queue is a `Vec` in enqueue order (index 0 is the tail of `rq->cfs_tasks`, the task that
//! detach_tasks looks at first); the kernel's deadline-ordered tree is replaced by linear scans
//! (queues are short) that return what the tree would: the earliest deadline among eligible
//! entities, ties to the entity queued first.
//!
//! Kept whole at ~900 lines: every function here reads or moves `avg_vruntime`/`avg_load` and the
//! eligibility they define, so a split would spread one invariant over files (its tests are in
//! rq/tests.rs); 6.19's wakeup preemption and v7.1's wakeup pick (7.2 here) are the same pick path
//! behind release flags.

use super::eevdf::{Entity, before};
use super::pelt::{Removed, SchedAvg};
use super::wake_flags::{WF_FORK, WF_RQ_SELECTED, WF_SYNC};
use super::*;
use crate::coherence::Reader;

/// The run queue's cache lines other CPUs read (docs/MODEL.md §9, §10): the first line of
/// `struct rq` (`__lock`, `nr_running`, `curr`, ...) and the cfs_rq's PELT averages. Each is written
/// by the CPU that changes it; the writes are folded in when another CPU next reads the line, so
/// each keeps who wrote it since another CPU last read it.
///
/// One per CPU in a dense array of its own (`Engine::rq_lines`), not in `RunQueue`: a balance pass
/// reads it for every CPU of a domain, and 16 bytes put four CPUs in a cache line, where a
/// `RunQueue` line each cost a miss per CPU per pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RqLines {
    rq: u32,
    avg: u32,
    /// The CPU that last wrote each line (`NOBODY`: none since another CPU read it).
    rq_written_by: u32,
    avg_written_by: u32,
}

/// No pending write (a CPU number can never be u32::MAX: at most `MAX_CPUS`).
const NOBODY: u32 = u32::MAX;

impl RqLines {
    pub(crate) fn new(lines: &mut Coherence, c: usize) -> Self {
        // runqueues are per-CPU data: on the CPU's node
        let rq = lines.add_line(format!("rq(cpu{c})"), &[(0, "__lock"), (4, "nr_running")]);
        let avg = lines.add_line(
            format!("rq(cpu{c}).cfs.avg"),
            &[(0, "load/runnable/util_avg")],
        );
        lines.set_home_near(rq, c);
        lines.set_home_near(avg, c);
        let id = |l: LineId| u32::try_from(l).expect("line ids fit in u32");
        RqLines {
            rq: id(rq),
            avg: id(avg),
            rq_written_by: NOBODY,
            avg_written_by: NOBODY,
        }
    }
    /// The first line of `struct rq`.
    pub(crate) fn rq(&self) -> LineId {
        self.rq as LineId
    }
    /// `cpu` wrote the averages.
    pub(super) fn avg_written(&mut self, cpu: usize) {
        self.avg_written_by = cpu as u32;
    }
    /// The line `which` and its pending writer, which is then forgotten (a reader folds it in).
    #[inline(always)]
    fn take(&mut self, which: RqLine) -> (LineId, Option<u32>) {
        let (id, w) = match which {
            RqLine::Rq => (self.rq, &mut self.rq_written_by),
            RqLine::Avg => (self.avg, &mut self.avg_written_by),
        };
        let writer = std::mem::replace(w, NOBODY);
        (id as LineId, (writer != NOBODY).then_some(writer))
    }
}

/// Which run-queue line a reader loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RqLine {
    /// nr_running, curr (idle_cpu(), the group's task counts).
    Rq,
    /// cfs.avg (cpu_load, cpu_util_cfs, cpu_runnable).
    Avg,
}

/// A CPU's run queue (the fair class only): the running task and the queued ones.
///
/// In C layout, cache-line aligned, with what a balance pass reads of every CPU of a domain first:
/// update_sg_lb_stats's counts and averages in the first 64 bytes (`curr`, `nr_delayed`, the
/// queue's length, `avg`'s three averages); its line ids and pending writers are in
/// `Engine::rq_lines`. Rust's own field order spread them over three or four lines of `Cpu`.
#[repr(C, align(64))]
pub(crate) struct RunQueue {
    /// rq->curr (None: the idle task). Not in `queued` and not in the avg sums, as in the kernel.
    pub(super) curr: Option<TaskId>,
    /// Delayed entities in `queued` (h_nr_queued − h_nr_runnable).
    pub(super) nr_delayed: usize,
    /// The queued entities (runnable, or blocked and delayed), not running.
    pub(super) queued: Vec<TaskId>,
    /// The cfs_rq's PELT averages (`rq->cfs.avg`).
    pub(super) avg: SchedAvg,
    /// TIF_NEED_RESCHED of the running task.
    pub(super) need_resched: bool,
    pub(super) min_vruntime: u64,
    /// Σ (vruntime − min_vruntime)·w over `queued` (cfs_rq->avg_vruntime).
    pub(super) avg_vruntime: i64,
    /// Σ w over `queued` (cfs_rq->avg_load).
    pub(super) avg_load: i64,
    pub(super) removed: Removed,
    /// rq->has_blocked_load (set at NOHZ idle entry, cleared once fully decayed).
    pub(super) has_blocked_load: bool,
    pub(super) last_blocked_load_update_tick: u64,
    /// rq->active_balance: a stopper push is queued.
    pub(super) active_balance: bool,
    /// cfs_rq->next: the NEXT_BUDDY nominee (set only with the `next-buddy` toggle), a queued
    /// entity; clear_buddies() drops it when it is set running or dequeued.
    pub(super) next: Option<TaskId>,
}

// What the comment above promises: update_sg_lb_stats's fields in the first line.
const _: () = assert!(
    std::mem::offset_of!(RunQueue, avg) + std::mem::offset_of!(SchedAvg, util_avg) + 8 <= 64
        && std::mem::offset_of!(RunQueue, queued) + 24 <= 64
);

impl RunQueue {
    pub(super) fn new() -> Self {
        RunQueue {
            curr: None,
            queued: Vec::new(),
            need_resched: false,
            min_vruntime: 0,
            avg_vruntime: 0,
            avg_load: 0,
            nr_delayed: 0,
            avg: SchedAvg::default(),
            removed: Removed::default(),
            has_blocked_load: false,
            last_blocked_load_update_tick: 0,
            active_balance: false,
            next: None,
        }
    }
}

/// What schedule()'s pick did with a running prev.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Picked {
    /// prev again: nothing put, nothing set, no switch.
    Prev,
    /// another task was set running.
    Next,
    /// prev was put and nothing is runnable.
    Idle,
}

/// Enqueue flags that change placement.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enq {
    /// ENQUEUE_INITIAL: a new task (PLACE_DEADLINE_INITIAL: half a slice).
    Initial,
    /// ENQUEUE_WAKEUP.
    Wakeup,
    /// A load-balance migration (ENQUEUE_MIGRATED, keeps the relative deadline).
    Migrated,
}

/// The load of run-queue line `which` of `rq` by the reader `r` at `now` (see
/// `Engine::rq_line_load`). Always in line: the balance pass's loop calls it twice per CPU.
#[inline(always)]
fn load_rq_line(
    lines: &mut Coherence,
    topo: &Topology,
    rq: &mut RqLines,
    r: &Reader,
    which: RqLine,
    now: u64,
) -> u64 {
    let (id, writer) = rq.take(which);
    let f = usize::from(which == RqLine::Rq); // nr_running / the averages
    if let Some(w) = writer {
        lines.owner_wrote(id, w as usize, f, now);
    }
    lines.load_in_pass(topo, r, id, f, now)
}

impl Engine {
    /// The load of run-queue line `which` of CPU `i` by `exec`, issued at now: the owner's
    /// pending write is folded in first, then the line model serves it. Returns its stall.
    pub(super) fn rq_line_load(&mut self, exec: usize, i: usize, which: RqLine) -> u64 {
        let r = self.lines.reader(exec);
        let rq = &mut self.rq_lines[i];
        load_rq_line(&mut self.lines, &self.topo, rq, &r, which, self.now)
    }

    /// update_sd_lb_stats()'s reads by `exec`: both run-queue lines (rq, then cfs.avg) of every CPU
    /// of domain `dom_id` not in `excluded`, in the domain's order, each as `rq_line_load` reads it.
    /// Returns the sum of the stalls and the longest.
    pub(super) fn rq_lines_load_domain(
        &mut self,
        exec: usize,
        dom_id: usize,
        excluded: &[usize],
    ) -> (u64, u64) {
        let (mut sum, mut max) = (0u64, 0u64);
        let (r, now) = (self.lines.reader(exec), self.now);
        for &cpu in &self.sd.domains[dom_id].cpus {
            let i = cpu as usize;
            if !excluded.is_empty() && excluded.contains(&i) {
                continue;
            }
            let rq = &mut self.rq_lines[i];
            // (written out: a loop over the two would look at `which` in the body)
            let a = load_rq_line(&mut self.lines, &self.topo, rq, &r, RqLine::Rq, now);
            let b = load_rq_line(&mut self.lines, &self.topo, rq, &r, RqLine::Avg, now);
            sum += a + b;
            max = max.max(a).max(b);
        }
        (sum, max)
    }

    /// Independent loads overlap (up to STATS_MLP in flight): their sum over the MLP, at least
    /// the longest. Charged to `sym` on `exec` as a stall.
    pub(super) fn charge_loads(&mut self, exec: usize, sym: Sym, sum: u64, max: u64) {
        let ns = (sum / self.assume.stats_mlp).max(max);
        self.metrics.stall(exec, ns);
        self.kcharge(exec, sym, ns);
    }

    /// The rq lock of a remote CPU `i` taken by `exec` (ttwu's remote enqueue): a locked
    /// read-for-ownership of its first line, after `exec`'s store buffer has drained. Returns the
    /// stall (the drain included).
    pub(super) fn rq_lock_remote(&mut self, exec: usize, i: usize) -> u64 {
        let (id, writer) = self.rq_lines[i].take(RqLine::Rq);
        if let Some(w) = writer {
            self.lines.owner_wrote(id, w as usize, 1, self.now);
        }
        // a locked instruction: it leaves once the store buffer has drained
        let issue = self.locked_issue_at(exec, self.now);
        let a = self
            .lines
            .access(&self.topo, id, exec, Op::Atomic, 0, issue);
        let stall = a.done - self.now;
        self.metrics.stall(exec, stall);
        stall
    }

    /// `c`'s nr_running or curr changed: its rq line is written (by `c`).
    fn rq_written(&mut self, c: usize) {
        self.rq_lines[c].rq_written_by = c as u32;
    }

    /// `c`'s rq line was last written by `writer` (a remote CPU holding its lock).
    pub(super) fn rq_written_by(&mut self, c: usize, writer: usize) {
        let rq = &mut self.rq_lines[c];
        if rq.rq_written_by != NOBODY {
            rq.rq_written_by = writer as u32;
        }
    }

    pub(super) fn update_overload(&mut self, c: usize, before: usize) {
        let after = self.cpus[c].nr_running();
        match (before >= 2, after >= 2) {
            (false, true) => {
                self.nr_overloaded += 1;
                self.rd_overloaded = true; // add_nr_running(): set_rd_overloaded(rd, 1)
            }
            (true, false) => self.nr_overloaded -= 1,
            _ => {}
        }
    }

    #[inline]
    fn se(&self, t: TaskId) -> &Entity {
        &self.tasks[t as usize].se
    }

    fn entity_key(&self, c: usize, t: TaskId) -> i64 {
        self.se(t)
            .vruntime
            .wrapping_sub(self.cpus[c].rq.min_vruntime) as i64
    }

    /// __enqueue_entity: into the queue and the avg sums (avg_vruntime_add).
    fn __enqueue_entity(&mut self, c: usize, t: TaskId) {
        let (k, w) = (self.entity_key(c, t), self.se(t).weight as i64);
        let rq = &mut self.cpus[c].rq;
        rq.avg_vruntime += k * w;
        rq.avg_load += w;
        rq.queued.push(t);
        self.rq_written(c);
        self.trace_nr_running(c);
    }

    /// __dequeue_entity: out of the queue (keeping the order of the rest) and the sums.
    fn __dequeue_entity(&mut self, c: usize, t: TaskId) {
        let (k, w) = (self.entity_key(c, t), self.se(t).weight as i64);
        let rq = &mut self.cpus[c].rq;
        rq.avg_vruntime -= k * w;
        rq.avg_load -= w;
        let i = rq.queued.iter().position(|&q| q == t).expect("queued");
        rq.queued.remove(i);
        self.rq_written(c);
        self.trace_nr_running(c);
    }

    /// The avg sums with curr included (what avg_vruntime and vruntime_eligible read).
    fn avg_sums(&self, c: usize) -> (i64, i64) {
        let rq = &self.cpus[c].rq;
        let (mut avg, mut load) = (rq.avg_vruntime, rq.avg_load);
        if let Some(curr) = rq.curr {
            let w = self.se(curr).weight as i64;
            avg += self.entity_key(c, curr) * w;
            load += w;
        }
        (avg, load)
    }

    /// avg_vruntime(): V, the load-weighted average vruntime (floor division).
    pub(super) fn avg_vruntime(&self, c: usize) -> u64 {
        let (mut avg, load) = self.avg_sums(c);
        if load != 0 {
            if avg < 0 {
                avg -= load - 1;
            }
            avg /= load;
        }
        self.cpus[c].rq.min_vruntime.wrapping_add(avg as u64)
    }

    /// vruntime_eligible(): Σ(v_i − v0)·w_i ≥ (v − v0)·Σw_i, without a division.
    fn vruntime_eligible(&self, c: usize, sums: (i64, i64), v: u64) -> bool {
        let key = v.wrapping_sub(self.cpus[c].rq.min_vruntime) as i64;
        sums.0 >= key * sums.1
    }

    pub(super) fn entity_eligible(&self, c: usize, t: TaskId) -> bool {
        self.vruntime_eligible(c, self.avg_sums(c), self.se(t).vruntime)
    }

    /// update_min_vruntime(): monotonic; curr's vruntime and the queue's minimum are candidates.
    fn update_min_vruntime(&mut self, c: usize) {
        let rq = &self.cpus[c].rq;
        let mut v = rq.min_vruntime;
        let curr = rq.curr;
        if let Some(cu) = curr {
            v = self.se(cu).vruntime;
        }
        let mut root: Option<u64> = None;
        for &q in &rq.queued {
            let qv = self.se(q).vruntime;
            if root.is_none_or(|m| before(qv, m)) {
                root = Some(qv);
            }
        }
        if let Some(m) = root {
            v = if curr.is_none() || before(m, v) { m } else { v };
        }
        // __update_min_vruntime(): only forward, and avg_vruntime follows the new origin
        let rq = &mut self.cpus[c].rq;
        let delta = v.wrapping_sub(rq.min_vruntime) as i64;
        if delta > 0 {
            rq.avg_vruntime -= rq.avg_load * delta;
            rq.min_vruntime = v;
        }
    }

    /// update_entity_lag(): vlag = V − v, clamped to the virtual time of max(2 slices, a tick).
    fn update_entity_lag(&mut self, c: usize, t: TaskId) {
        let v = self.avg_vruntime(c);
        let tick = self.tick_ns;
        let se = &mut self.tasks[t as usize].se;
        let vlag = v.wrapping_sub(se.vruntime) as i64;
        let limit = se.calc_delta_fair((2 * se.slice).max(tick)) as i64;
        se.vlag = vlag.clamp(-limit, limit);
    }

    /// place_entity(): v = V − lag, the lag inflated so that it survives the insertion (PLACE_LAG);
    /// a fresh deadline one slice ahead (half for a new task), or the kept relative deadline.
    fn place_entity(&mut self, c: usize, t: TaskId, initial: bool) {
        let v = self.avg_vruntime(c);
        let rq = &self.cpus[c].rq;
        let nr_queued = rq.queued.len() + usize::from(rq.curr.is_some());
        let mut load = rq.avg_load;
        if let Some(cu) = rq.curr {
            load += self.se(cu).weight as i64;
        }
        let base = self.base_slice;
        let f = self.patches.features;
        let se = &mut self.tasks[t as usize].se;
        se.slice = base;
        let mut vslice = se.calc_delta_fair(se.slice);
        let mut lag = 0i64;
        if f.place_lag && nr_queued > 0 && se.vlag != 0 {
            lag = se.vlag * (load + se.weight as i64);
            lag /= load.max(1); // div_s64 truncates
        }
        se.vruntime = v.wrapping_sub(lag as u64);
        if se.rel_deadline {
            se.deadline = se.deadline.wrapping_add(se.vruntime);
            se.rel_deadline = false;
            return;
        }
        if f.place_deadline_initial && initial {
            vslice /= 2;
        }
        se.deadline = se.vruntime.wrapping_add(vslice);
    }

    /// enqueue_entity(): update_curr, place, queue. Returns update_curr's resched verdict.
    pub(super) fn enqueue_entity(&mut self, c: usize, t: TaskId, exec: usize, how: Enq) -> bool {
        let resched = self.update_curr_by(c, exec, UpdateCurrCaller::EnqueueEntity);
        let before = self.cpus[c].nr_running();
        let src = self.tasks[t as usize].cpu as usize;
        let migrated = src != c;
        match how {
            Enq::Initial => self.init_entity_avg(c, t),
            // migrate_task_rq_fair(): a wakeup migration leaves its load in the source's `removed`
            Enq::Wakeup if migrated => self.remove_entity_load_avg(src, t),
            _ => {}
        }
        self.update_load_avg(c, t, false, true, false);
        self.place_entity(c, t, how == Enq::Initial);
        let task = &mut self.tasks[t as usize];
        if task.se.sched_delayed {
            // a delayed task moved by load balancing: still asleep, still delayed, here now
            self.cpus[c].rq.nr_delayed += 1;
        } else {
            task.state = TaskState::Runnable;
        }
        task.cpu = c as u32;
        if migrated || how == Enq::Migrated {
            task.exec_start = 0; // ENQUEUE_MIGRATED: never cache hot
        }
        self.__enqueue_entity(c, t);
        self.update_overload(c, before);
        resched
    }

    /// dequeue_entity() of a queued (not running) entity for a migration (detach_task, no
    /// DEQUEUE_SLEEP): its PELT load is detached (DO_DETACH, the task is migrating), it keeps
    /// its lag and its deadline relative to its vruntime (PLACE_REL_DEADLINE). A delayed entity
    /// stays delayed (no DEQUEUE_DELAYED: finish_delayed_dequeue_entity is not called); it
    /// leaves this queue's delayed count and `enqueue_entity` brings it to the destination's.
    pub(super) fn dequeue_entity(&mut self, c: usize, t: TaskId, exec: usize) {
        // (a reschedule it would ask of a busy source is left to that CPU's next tick)
        self.update_curr_by(c, exec, UpdateCurrCaller::DequeueEntity);
        self.clear_buddies(c, t);
        let before = self.cpus[c].nr_running();
        self.update_load_avg(c, t, true, false, true);
        self.update_entity_lag(c, t);
        let se = &mut self.tasks[t as usize].se;
        se.deadline = se.deadline.wrapping_sub(se.vruntime);
        se.rel_deadline = true;
        if se.sched_delayed {
            self.cpus[c].rq.nr_delayed -= 1;
        }
        self.__dequeue_entity(c, t);
        self.update_min_vruntime(c);
        self.update_overload(c, before);
    }

    /// dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED) of a delayed entity the pick found: it
    /// finishes its sleep on this CPU (no detach: it is not migrating), its lag saved and a
    /// positive one dropped (finish_delayed_dequeue_entity, DELAY_ZERO).
    fn dequeue_delayed(&mut self, c: usize, t: TaskId) {
        self.update_curr(c, UpdateCurrCaller::DequeueEntityDelayed);
        self.clear_buddies(c, t);
        let before = self.cpus[c].nr_running();
        self.update_load_avg(c, t, true, false, false);
        self.update_entity_lag(c, t);
        self.__dequeue_entity(c, t);
        self.update_min_vruntime(c);
        let se = &mut self.tasks[t as usize].se;
        se.sched_delayed = false;
        se.vlag = se.vlag.min(0);
        self.cpus[c].rq.nr_delayed -= 1;
        self.update_overload(c, before);
    }

    /// The running task blocks (dequeue_task with DEQUEUE_SLEEP). DELAY_DEQUEUE: an ineligible
    /// task stays queued (and counted) until it is picked or woken; an eligible one leaves with
    /// its lag saved.
    pub(super) fn dequeue_curr_sleep(&mut self, c: usize, t: TaskId) {
        self.update_curr(c, UpdateCurrCaller::DequeueEntitySleep);
        self.update_load_avg(c, t, true, false, false);
        self.tasks[t as usize].state = TaskState::Sleeping;
        if self.cpus[c].rq.queued.is_empty() {
            // alone on the queue: V is its own vruntime, so it is eligible with no lag
            self.tasks[t as usize].se.vlag = 0;
            self.dequeue_curr(c);
            return;
        }
        if !self.entity_eligible(c, t) {
            self.tasks[t as usize].se.sched_delayed = true;
            self.cpus[c].rq.nr_delayed += 1;
            // stays on the queue: put_prev will find it there
            self.cpus[c].rq.curr = None;
            self.__enqueue_entity(c, t);
            return;
        }
        self.update_entity_lag(c, t);
        self.dequeue_curr(c);
    }

    /// The running task leaves the queue for good (sleep without delay, exit).
    pub(super) fn dequeue_curr(&mut self, c: usize) {
        let before = self.cpus[c].nr_running();
        self.cpus[c].rq.curr = None;
        self.rq_written(c);
        self.trace_nr_running(c);
        self.update_min_vruntime(c);
        self.update_overload(c, before);
    }

    /// __pick_eevdf(): the eligible entity with the earliest virtual deadline; curr stays while
    /// it is protected (RUN_TO_PARITY) when `protect`.
    pub(super) fn pick_eevdf(&self, c: usize, protect: bool) -> Option<TaskId> {
        let rq = &self.cpus[c].rq;
        if rq.queued.is_empty() {
            return rq.curr;
        }
        if rq.curr.is_none() && rq.queued.len() == 1 {
            return Some(rq.queued[0]);
        }
        let sums = self.avg_sums(c);
        // e837456fdca8 (v6.19): PICK_BUDDY here, ahead of curr's protection ("picking the ->next
        // buddy will affect latency but not fairness")
        if let Some(n) = rq.next
            && self.patches.merged.next_buddy_eevdf
            && self.patches.features.pick_buddy
            && self.vruntime_eligible(c, sums, self.se(n).vruntime)
        {
            return Some(n);
        }
        let mut curr = rq.curr;
        if let Some(cu) = curr
            && !self.vruntime_eligible(c, sums, self.se(cu).vruntime)
        {
            curr = None;
        }
        if let Some(cu) = curr
            && protect
            && self.se(cu).protect_slice()
        {
            return Some(cu);
        }
        let mut best: Option<TaskId> = None;
        for &q in &rq.queued {
            let se = self.se(q);
            if best.is_some_and(|b| !before(se.deadline, self.se(b).deadline)) {
                continue;
            }
            if self.vruntime_eligible(c, sums, se.vruntime) {
                best = Some(q);
            }
        }
        match (best, curr) {
            (None, cu) => cu,
            (Some(b), Some(cu)) if before(self.se(cu).deadline, self.se(b).deadline) => Some(cu),
            (b, _) => b,
        }
    }

    /// pick_task_fair(): pick_eevdf, finishing the dequeue of any delayed entity it picks.
    /// May return curr (then no switch is needed).
    pub(super) fn pick_task_fair(&mut self, c: usize) -> Option<TaskId> {
        loop {
            let t = self.pick_eevdf(c, true)?;
            if !self.se(t).sched_delayed {
                return Some(t);
            }
            self.dequeue_delayed(c, t);
        }
    }

    /// pick_next_task_fair() with `prev` still running (update_curr done), then
    /// put_prev_set_next_task(): when the pick is prev again there is no put and no set (its
    /// protection is not renewed, no switch: __schedule() skips context_switch).
    pub(super) fn pick_next_task_fair(&mut self, c: usize, prev: TaskId) -> Picked {
        let next = self.pick_task_fair(c);
        if next == Some(prev) {
            return Picked::Prev;
        }
        self.put_prev(c, prev);
        match next {
            Some(n) => {
                self.set_next_entity(c, n);
                Picked::Next
            }
            None => Picked::Idle,
        }
    }

    /// cfs_rq_min_slice(): the smallest slice of the queued entities and `curr` (the running one,
    /// not in the queue).
    fn cfs_rq_min_slice(&self, c: usize, curr: TaskId) -> u64 {
        let queued = self.cpus[c].rq.queued.iter().map(|&q| self.se(q).slice);
        queued.min().unwrap_or(u64::MAX).min(self.se(curr).slice)
    }

    /// set_next_entity(): `t` leaves the queue and runs; its protection point is set
    /// (set_protect_slice); working-set refill and handed-over data cost user time.
    pub(super) fn set_next_entity(&mut self, c: usize, t: TaskId) {
        self.clear_buddies(c, t);
        self.update_load_avg(c, t, true, false, false);
        self.__dequeue_entity(c, t);
        // set_protect_slice(): RUN_TO_PARITY protects up to the smallest slice
        let slice = self.cfs_rq_min_slice(c, t);
        let se = &mut self.tasks[t as usize].se;
        se.vprot = se.deadline;
        if slice != se.slice {
            let p = se.vruntime.wrapping_add(se.calc_delta_fair(slice));
            if before(p, se.vprot) {
                se.vprot = p;
            }
        }
        let now = self.cpus[c].exec.cursor.max(self.now);
        let extra = self.locality_start(c, t);
        self.idle_exit(c, now);
        let cpu = &mut self.cpus[c];
        cpu.rq.curr = Some(t);
        self.trace_nr_running(c);
        self.sched_switch_to(c, Some(t), now);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Running;
        task.cpu = c as u32;
        task.last_ran_cpu = c as u32;
        task.exec_start = now;
        if task.remaining > 0 {
            task.remaining += extra;
        } else {
            task.pending_extra += extra;
        }

        self.metrics.charge_stat(c, extra);
    }

    /// put_prev_entity(): the preempted task goes back into the queue.
    pub(super) fn put_prev(&mut self, c: usize, t: TaskId) {
        self.update_curr(c, UpdateCurrCaller::PutPrevEntity);
        self.update_load_avg(c, t, true, false, false);
        self.tasks[t as usize].state = TaskState::Runnable;
        self.cpus[c].rq.curr = None;
        self.__enqueue_entity(c, t);
    }

    /// update_curr() of `c`'s running task by CPU `c`; true when it asks for a reschedule.
    pub(super) fn update_curr(&mut self, c: usize, from: UpdateCurrCaller) -> bool {
        self.update_curr_by(c, c, from)
    }

    /// update_curr() of `c`'s running task, executed by CPU `exec`: runtime since the task was
    /// last accounted advances its vruntime by calc_delta_fair (and, with cache-aware scheduling,
    /// its mm occupancy); a consumed request (update_deadline) or an expired protection asks
    /// for a reschedule when others are queued.
    fn update_curr_by(&mut self, c: usize, exec: usize, from: UpdateCurrCaller) -> bool {
        let now = self.now;
        let Some(t) = self.cpus[c].rq.curr else {
            return false;
        };
        let base = self.base_slice;
        let task = &mut self.tasks[t as usize];
        let delta = now.saturating_sub(task.exec_start);
        if delta == 0 {
            return false;
        }
        task.exec_start = now;
        let se = &mut task.se;
        se.vruntime = se.vruntime.wrapping_add(se.calc_delta_fair(delta));
        let resched = se.update_deadline(base);
        let protected = se.protect_slice();
        self.update_min_vruntime(c);
        if self.cas.is_some() {
            let mm = self.tasks[t as usize].process;
            self.metrics.mm_sched_callers[from as usize] += 1;
            self.account_mm_sched(c, exec, t, mm, delta);
        }
        if self.cpus[c].rq.queued.is_empty() {
            return false;
        }
        resched || !protected
    }

    /// clear_buddies(): `t` stops being cfs_rq->next (it is set running or dequeued).
    fn clear_buddies(&mut self, c: usize, t: TaskId) {
        if self.cpus[c].rq.next == Some(t) {
            self.cpus[c].rq.next = None;
        }
    }

    /// check_preempt_wakeup_fair(): the wakee preempts when it is what pick_eevdf would take
    /// now (PREEMPT_SHORT: a shorter slice ignores curr's protection). From v6.19 the
    /// reimplemented form (`check_preempt_wakeup_eevdf`).
    fn check_preempt_wakeup_fair(&mut self, c: usize, t: TaskId, exec: usize, wf: u32) -> bool {
        let Some(curr) = self.cpus[c].rq.curr else {
            return false;
        };
        if curr == t || self.cpus[c].rq.need_resched {
            return false;
        }
        if !self.patches.features.wakeup_preemption {
            return false;
        }
        let resched = self.update_curr_by(c, exec, UpdateCurrCaller::CheckPreemptWakeupFair);
        if self.patches.merged.next_buddy_eevdf {
            return self.check_preempt_wakeup_eevdf(c, t, curr, wf, resched);
        }
        if resched {
            return true;
        }
        let short = self.se(t).slice < self.se(curr).slice;
        if self.pick_eevdf(c, !short) == Some(t) {
            if short {
                self.cancel_protect_slice(curr);
            }
            return true;
        }
        if short {
            self.update_protect_slice(c, curr);
        }
        false
    }

    /// The rest of check_preempt_wakeup_fair() as e837456fdca8 reimplemented it, with
    /// 15257cc2f905 (no forced preemption of an ineligible waker), after update_curr (whose
    /// reschedule request is `resched`): a shorter slice goes to the pick unprotected
    /// (PREEMPT_WAKEUP_SHORT); a forked or delayed wakee returns; with NEXT_BUDDY the wakee
    /// becomes the buddy and a WF_SYNC wakeup asks preempt_sync(); then the pick decides, and
    /// a wakeup that does not preempt shrinks curr's protection (RUN_TO_PARITY).
    fn check_preempt_wakeup_eevdf(
        &mut self,
        c: usize,
        t: TaskId,
        curr: TaskId,
        wf: u32,
        resched: bool,
    ) -> bool {
        let short = self.se(t).slice < self.se(curr).slice;
        if !short {
            if wf & WF_FORK != 0 || self.se(t).sched_delayed {
                return resched;
            }
            if self.patches.features.next_buddy && self.set_preempt_buddy(c, t) && wf & WF_SYNC != 0
            {
                // PREEMPT_WAKEUP_NONE or PREEMPT_WAKEUP_RESCHED: no pick either way
                return resched || self.preempt_sync(wf, t, curr);
            }
        }
        if self.wakeup_pick(c, !short) == Some(t) {
            if short {
                self.cancel_protect_slice(curr);
            }
            return true;
        }
        self.update_protect_slice(c, curr);
        resched
    }

    /// The pick of the `pick:` label of wakeup preemption. Up to 7.0 it is __pick_eevdf(), whose
    /// answer may be a delayed entity (not the wakee: no preemption). From v7.1 (ac8e69e69363,
    /// "Fix wakeup_preempt_fair() vs delayed dequeue") it is pick_next_entity(), which finishes
    /// the dequeue of a delayed entity it picks (as the schedule pick does) and returns NULL, and
    /// the pick runs again; 9f6d929ee2c6 ("Fix wakeup_preempt_fair() for not waking up task")
    /// retries only while `cfs_rq->nr_queued` (curr, on the queue, counts), else there is no pick.
    fn wakeup_pick(&mut self, c: usize, protect: bool) -> Option<TaskId> {
        if !self.patches.merged.wakeup_pick_next_entity {
            return self.pick_eevdf(c, protect);
        }
        loop {
            let n = self.pick_eevdf(c, protect)?;
            if !self.se(n).sched_delayed {
                return Some(n);
            }
            self.dequeue_delayed(c, n);
            let rq = &self.cpus[c].rq;
            if rq.queued.is_empty() && rq.curr.is_none() {
                return None;
            }
        }
    }

    /// set_preempt_buddy(): the wakee becomes cfs_rq->next unless the buddy there has the
    /// earlier deadline (entity_before).
    fn set_preempt_buddy(&mut self, c: usize, t: TaskId) -> bool {
        if let Some(n) = self.cpus[c].rq.next
            && before(self.se(n).deadline, self.se(t).deadline)
        {
            return false;
        }
        self.cpus[c].rq.next = Some(t);
        true
    }

    /// preempt_sync(): a WF_SYNC wakee with the earlier deadline preempts once curr has run
    /// sysctl_sched_migration_cost since its exec_start (a quarter of it with WF_RQ_SELECTED).
    /// update_curr() has just set exec_start to the clock this reads, so the delta is 0 here as
    /// in the kernel's code (docs/MODEL.md, kernel releases).
    fn preempt_sync(&self, wf: u32, t: TaskId, curr: TaskId) -> bool {
        let mut threshold = MIGRATION_COST_NS;
        let delta = self
            .now
            .saturating_sub(self.tasks[curr as usize].exec_start);
        if wf & WF_RQ_SELECTED != 0 {
            threshold >>= 2;
        }
        before(self.se(t).deadline, self.se(curr).deadline) && delta >= threshold
    }

    /// cancel_protect_slice(): curr's protection ends now.
    fn cancel_protect_slice(&mut self, curr: TaskId) {
        let se = &mut self.tasks[curr as usize].se;
        if se.protect_slice() {
            se.vprot = se.vruntime;
        }
    }

    /// update_protect_slice(): shrink curr's protection to the smallest slice on the queue.
    fn update_protect_slice(&mut self, c: usize, curr: TaskId) {
        let min_slice = self.cfs_rq_min_slice(c, curr);
        let se = &mut self.tasks[curr as usize].se;
        let p = se.vruntime.wrapping_add(se.calc_delta_fair(min_slice));
        if before(p, se.vprot) {
            se.vprot = p;
        }
    }

    /// wakeup_preempt() after an enqueue on `c` by CPU `exec`: an idle CPU is kicked; a busy one
    /// gets need_resched (and the IPI) when update_curr or check_preempt_wakeup_fair ask for it.
    pub(super) fn wakeup_preempt(
        &mut self,
        c: usize,
        t: TaskId,
        exec: usize,
        resched: bool,
        wf: u32,
    ) {
        if self.cpus[c].exec.mode == Mode::Idle {
            self.resched_cpu(c);
            return;
        }
        let was = self.cpus[c].rq.need_resched;
        if resched || self.check_preempt_wakeup_fair(c, t, exec, wf) {
            self.cpus[c].rq.need_resched = true;
        }
        if self.cpus[c].rq.need_resched && !was {
            self.resched_cpu(c);
        }
    }

    /// Enqueue a woken task on `c`, by CPU `exec` (in the kernel), and decide on preemption
    /// (`wf`: the wake_flags ttwu_do_activate passes on).
    pub(super) fn enqueue(&mut self, c: usize, t: TaskId, exec: usize, wf: u32) {
        if self.scx_on() {
            return self.enqueue_scx(c, t, exec);
        }
        let resched = self.enqueue_entity(c, t, exec, Enq::Wakeup);
        self.sched_info_enqueue(t, self.now);
        self.wakeup_preempt(c, t, exec, resched, wf);
    }

    /// ttwu_runnable() of a delayed task: requeue_delayed_entity (DELAY_ZERO: a positive lag is
    /// dropped and the task re-placed at V) on its own CPU, then wakeup preemption. v6.18's
    /// requeue_delayed_entity() does not call update_curr(): V is taken with curr as last
    /// accounted, and curr is accounted by check_preempt_wakeup_fair() after.
    pub(super) fn requeue_delayed(&mut self, t: TaskId, exec: usize, wf: u32) {
        let c = self.tasks[t as usize].cpu as usize;
        self.update_entity_lag(c, t);
        if self.se(t).vlag > 0 {
            self.__dequeue_entity(c, t);
            self.tasks[t as usize].se.vlag = 0;
            self.place_entity(c, t, false);
            self.__enqueue_entity(c, t);
        }
        self.update_load_avg(c, t, true, false, false);
        self.cpus[c].rq.nr_delayed -= 1;
        let task = &mut self.tasks[t as usize];
        task.se.sched_delayed = false;
        task.state = TaskState::Runnable;
        self.wakeup_preempt(c, t, exec, false, wf);
    }

    /// reweight_entity() for a nice change: lag and relative deadline scale by old/new weight.
    pub fn set_nice(&mut self, t: TaskId, nice: i32) {
        let c = self.tasks[t as usize].cpu as usize;
        let queued = self.cpus[c].rq.queued.contains(&t);
        let is_curr = self.cpus[c].rq.curr == Some(t);
        if is_curr {
            self.update_curr(c, UpdateCurrCaller::ReweightEntity);
        }
        if queued || is_curr {
            self.update_entity_lag(c, t);
            let se = &mut self.tasks[t as usize].se;
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
            if queued {
                self.__dequeue_entity(c, t);
            }
        }
        let new = Entity::new(nice, self.base_slice);
        let se = &mut self.tasks[t as usize].se;
        let (old_w, new_w) = (se.weight as i64, new.weight as i64);
        se.vlag = se.vlag * old_w / new_w;
        if se.rel_deadline {
            se.deadline = ((se.deadline as i64) * old_w / new_w) as u64;
        }
        se.weight = new.weight;
        se.inv_weight = new.inv_weight;
        let divider = super::pelt::get_pelt_divider(&se.avg);
        se.avg.load_avg = se.weight as u64 * se.avg.load_sum / divider;
        if queued || is_curr {
            if is_curr {
                // place_entity must not count curr twice: it is placed as if just re-queued
                self.cpus[c].rq.curr = None;
            }
            self.place_entity(c, t, false);
            if queued {
                self.__enqueue_entity(c, t);
            } else {
                self.cpus[c].rq.curr = Some(t);
            }
            self.update_min_vruntime(c);
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
