//! A workload's own cache lines (`Workload::lines`) and its tasks' user-space accesses to them
//! (`Step::Access`). An access is priced by the cache-line model at the task's CPU and runs as a
//! user burst of that length (counted as user transfer time). Its outcome is decided when the
//! line serves it, as the `sched_balance_running` cmpxchg is (`SbrFlag`): each access takes effect
//! at its `Access::visible` time, and accesses take effect in that order. An access issued at t is
//! served after t, so when simulated time is T every access served by T has been issued: applying
//! them up to T, in service order, gives each load and atomic the value the line held then.
//!
//! A load or atomic that misses first travels to the line's serialization point
//! (`coherence/home.rs`): the task spins in user space for its request leg (a burst), and the line
//! serves it when that burst ends, in arrival order (burst ends at one nanosecond are taken in CPU
//! order, `Engine::dispatch`).

use super::*;
use crate::workload::{LineOp, UserLine};
use std::collections::BTreeMap;

#[derive(Default)]
pub(crate) struct UserLines {
    /// The coherence-model line of each workload line.
    ids: Vec<LineId>,
    values: Vec<u64>,
    /// Accesses not yet applied, by (service time, issue order): (line, op, task to tell).
    pending: BTreeMap<(u64, u64), (u32, LineOp, Option<TaskId>)>,
    seq: u64,
    /// Per task: the value its last load or atomic found, not yet handed to the workload.
    found: Vec<Option<u64>>,
    /// Per task: its load or atomic on its way to the line's serialization point.
    inflight: Vec<Option<InFlight>>,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    line: u32,
    op: LineOp,
    issue: u64,
}

impl UserLines {
    /// Creates the workload's lines (after the kernel's, so their ids do not move).
    pub(super) fn new(lines: &mut Coherence, decl: &[UserLine], nr_tasks: usize) -> Self {
        if decl.is_empty() {
            return UserLines::default();
        }
        UserLines {
            ids: decl
                .iter()
                .map(|l| lines.add_line(l.name, &[(0, l.field)]))
                .collect(),
            values: vec![0; decl.len()],
            pending: BTreeMap::new(),
            seq: 0,
            found: vec![None; nr_tasks],
            inflight: vec![None; nr_tasks],
        }
    }

    /// Applies every access served by `t`, in service order.
    fn apply_until(&mut self, t: u64) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > t {
                break;
            }
            let (line, op, task) = entry.remove();
            let v = &mut self.values[line as usize];
            if let Some(task) = task {
                self.found[task as usize] = Some(*v);
            }
            *v = op.apply(*v);
        }
    }
}

impl Engine {
    /// Hands task `t` the outcome of its last load or atomic, if it has one (before its next step).
    pub(super) fn user_served(&mut self, t: TaskId) {
        if self.user.ids.is_empty() {
            return;
        }
        self.user.apply_until(self.now);
        if let Some(v) = self.user.found[t as usize].take() {
            self.workload.served(t, v);
        }
    }

    /// Task `t` on CPU `c` issues `op` on its workload's line `line` at `now`; returns the user
    /// time it takes (the task waits for a store to commit too: see `LineOp::Store`), or, for a
    /// load or atomic that misses, its request leg (it is served when that ends: `user_arrived`).
    pub(super) fn user_access(
        &mut self,
        c: usize,
        t: TaskId,
        line: u32,
        op: LineOp,
        now: u64,
    ) -> u64 {
        let kind = op_kind(op);
        let id = self.user.ids[line as usize];
        if kind != Op::Store {
            let leg = self.lines.request_leg(&self.topo, id, c, kind, now);
            if leg > 0 {
                self.user.inflight[t as usize] = Some(InFlight {
                    line,
                    op,
                    issue: now,
                });
                self.metrics.charge_stat(c, leg);
                return leg;
            }
        }
        self.user_serve(c, t, line, op, now, 0)
    }

    /// Task `t`'s request in flight has reached its line's serialization point (now): served
    /// there; returns the rest of the access's user time. None: nothing was in flight.
    pub(super) fn user_arrived(&mut self, c: usize, t: TaskId) -> Option<u64> {
        let r = self.user.inflight.get_mut(t as usize)?.take()?;
        let leg = self.now - r.issue;
        let ns = self.user_serve(c, t, r.line, r.op, r.issue, leg);
        Some(ns - leg)
    }

    /// Serves `op` of task `t` issued at `issue` whose request leg was `leg`; returns the user time
    /// from issue to completion.
    fn user_serve(
        &mut self,
        c: usize,
        t: TaskId,
        line: u32,
        op: LineOp,
        issue: u64,
        leg: u64,
    ) -> u64 {
        let now = issue;
        let kind = op_kind(op);
        let id = self.user.ids[line as usize];
        let a = self.lines.serve(&self.topo, id, c, kind, 0, now, leg);
        let tell = (kind != Op::Store).then_some(t);
        self.user.seq += 1;
        self.user
            .pending
            .insert((a.visible, self.user.seq), (line, op, tell));
        let ns = a.done.max(a.visible) - now;
        self.metrics.charge_stat(c, ns - leg);
        ns
    }
}

fn op_kind(op: LineOp) -> Op {
    match op {
        LineOp::Load => Op::Load,
        LineOp::Store(_) => Op::Store,
        _ => Op::Atomic,
    }
}
