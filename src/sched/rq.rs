//! The run queue (kernel/sched/fair.c, core.c): enqueue, dequeue, pick_next, put_prev, set_curr,
//! update_curr (vruntime, min_vruntime) and the overload count.

use super::*;

/// A CPU's run queue (the fair class only): the running task and the queued ones.
pub(crate) struct RunQueue {
    /// rq->curr (None: the idle task).
    pub(super) curr: Option<TaskId>,
    /// The queued (runnable, not running) tasks.
    pub(super) queued: Vec<TaskId>,
    /// TIF_NEED_RESCHED of the running task.
    pub(super) need_resched: bool,
    /// When the running task was picked (its slice started).
    pub(super) picked_at: u64,
    pub(super) min_vruntime: u64,
}

impl RunQueue {
    pub(super) fn new() -> Self {
        RunQueue {
            curr: None,
            queued: Vec::new(),
            need_resched: false,
            picked_at: 0,
            min_vruntime: 0,
        }
    }
}

impl Engine {
    pub(super) fn update_overload(&mut self, c: usize, before: usize) {
        let after = self.cpus[c].nr_running();
        match (before >= 2, after >= 2) {
            (false, true) => self.nr_overloaded += 1,
            (true, false) => self.nr_overloaded -= 1,
            _ => {}
        }
    }

    pub(super) fn pick_next(&mut self, c: usize) -> Option<TaskId> {
        let cpu = &mut self.cpus[c];
        let (i, _) = cpu
            .rq
            .queued
            .iter()
            .enumerate()
            .min_by_key(|&(_, &t)| (self.tasks[t as usize].vruntime, t))?;
        Some(cpu.rq.queued.swap_remove(i))
    }

    /// The task starts running on `c`: working-set refill and handed-over data cost user time.
    pub(super) fn set_curr(&mut self, c: usize, t: TaskId) {
        let now = self.cpus[c].exec.cursor.max(self.now);
        let ws = self.ws_lines;
        let from = self.tasks[t as usize].last_ran_cpu as usize;
        let mut extra = 0;
        if from != c && self.topo.cpus[from].core != self.topo.cpus[c].core {
            extra += ws * self.topo.xfer_ns(from, c) as u64 / REFILL_MLP;
        }
        if let Some((w, lines)) = self.tasks[t as usize].handoff.take() {
            extra += lines as u64 * self.topo.xfer_ns(w as usize, c) as u64;
        }
        self.idle_exit(c, now);
        let cpu = &mut self.cpus[c];
        cpu.rq.curr = Some(t);
        cpu.rq.picked_at = now;
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

    pub(super) fn put_prev(&mut self, c: usize, t: TaskId) {
        self.update_curr(c);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        let cpu = &mut self.cpus[c];
        cpu.rq.curr = None;
        cpu.rq.queued.push(t);
    }

    pub(super) fn update_curr(&mut self, c: usize) {
        self.update_curr_by(c, c);
    }

    /// update_curr() of `c`'s running task, executed by CPU `exec`: runtime since the task was
    /// last accounted advances its vruntime (and, with cache-aware scheduling, its mm occupancy).
    fn update_curr_by(&mut self, c: usize, exec: usize) {
        let now = self.now;
        let Some(t) = self.cpus[c].rq.curr else {
            return;
        };
        let task = &mut self.tasks[t as usize];
        let delta = now.saturating_sub(task.exec_start);
        task.vruntime += delta;
        task.exec_start = now;
        let cpu = &mut self.cpus[c];
        let min_v = cpu
            .rq
            .queued
            .iter()
            .map(|&q| self.tasks[q as usize].vruntime)
            .min()
            .unwrap_or(u64::MAX)
            .min(self.tasks[t as usize].vruntime);
        cpu.rq.min_vruntime = cpu.rq.min_vruntime.max(min_v);
        if delta > 0 && self.cas.is_some() {
            let mm = self.tasks[t as usize].process;
            self.account_mm_sched(c, exec, t, mm, delta);
        }
    }

    /// Enqueue a woken task on `c`, by CPU `exec` (in the kernel), and decide on preemption.
    pub(super) fn enqueue(&mut self, c: usize, t: TaskId, exec: usize) {
        // enqueue_entity(): update_curr() of the queue's running task first
        self.update_curr_by(c, exec);
        let before = self.cpus[c].nr_running();
        let min_v = self.cpus[c].rq.min_vruntime;
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.cpu = c as u32;
        // Sleeper placement: no more than half a slice of credit.
        task.vruntime = task.vruntime.max(min_v.saturating_sub(SLICE_NS / 2));
        let v = task.vruntime;
        self.cpus[c].rq.queued.push(t);
        self.update_overload(c, before);
        let cpu = &self.cpus[c];
        if cpu.exec.mode == Mode::Idle {
            self.resched_cpu(c);
        } else if let Some(curr) = cpu.rq.curr
            && v + WAKEUP_GRAN_NS < self.tasks[curr as usize].vruntime
            && !self.cpus[c].rq.need_resched
        {
            self.cpus[c].rq.need_resched = true;
            self.resched_cpu(c);
        }
    }

    pub(super) fn dequeue_curr(&mut self, c: usize) {
        let before = self.cpus[c].nr_running();
        self.cpus[c].rq.curr = None;
        self.update_overload(c, before);
    }
}
