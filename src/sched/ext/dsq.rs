//! Dispatch queues (`struct scx_dispatch_q`, kernel/sched/ext.c): FIFO, or ordered by
//! `dsq_vtime` (the kernel's rbtree "priq", ties after the equal ones, `scx_dsq_priq_less`). A DSQ
//! is one or the other while it holds tasks; built-in DSQs (local, global) are FIFO only.

use std::collections::VecDeque;

/// `include/linux/sched/ext.h:42`.
pub const SCX_DSQ_FLAG_BUILTIN: u64 = 1 << 63;
pub const SCX_DSQ_FLAG_LOCAL_ON: u64 = 1 << 62;
pub const SCX_DSQ_INVALID: u64 = SCX_DSQ_FLAG_BUILTIN;
pub const SCX_DSQ_GLOBAL: u64 = SCX_DSQ_FLAG_BUILTIN | 1;
pub const SCX_DSQ_LOCAL: u64 = SCX_DSQ_FLAG_BUILTIN | 2;
pub const SCX_DSQ_LOCAL_ON: u64 = SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON;
pub const SCX_DSQ_LOCAL_CPU_MASK: u64 = 0xffff_ffff;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Fifo,
    Vtime,
}

/// One queued task: its index in the core's task table and, in a vtime DSQ, its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub task: usize,
    pub vtime: u64,
}

#[derive(Clone, Debug)]
pub struct Dsq {
    pub id: u64,
    /// What the tasks in it are ordered by (None while empty: either may come next).
    pub order: Option<Order>,
    tasks: VecDeque<Entry>,
}

/// `time_before(a, b)`: wrap-safe a < b.
pub fn time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

impl Dsq {
    pub fn new(id: u64) -> Self {
        Dsq {
            id,
            order: None,
            tasks: VecDeque::new(),
        }
    }

    pub fn nr(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_builtin(&self) -> bool {
        self.id & SCX_DSQ_FLAG_BUILTIN != 0
    }

    /// `dispatch_enqueue`: FIFO at the tail (or the head with `SCX_ENQ_HEAD`), or by vtime. An
    /// error is the kernel's `scx_error` text.
    pub fn insert(&mut self, e: Entry, order: Order, head: bool) -> Result<(), String> {
        if order == Order::Vtime && self.is_builtin() {
            return Err(format!(
                "cannot use vtime ordering for built-in DSQs (DSQ {:#x})",
                self.id
            ));
        }
        match self.order {
            Some(o) if o != order => {
                return Err(format!(
                    "DSQ {:#x} already had {} tasks queued",
                    self.id,
                    if o == Order::Vtime { "vtime" } else { "FIFO" }
                ));
            }
            _ => self.order = Some(order),
        }
        match order {
            Order::Fifo if head => self.tasks.push_front(e),
            Order::Fifo => self.tasks.push_back(e),
            Order::Vtime => {
                let at = self
                    .tasks
                    .partition_point(|q| !time_before(e.vtime, q.vtime));
                self.tasks.insert(at, e);
            }
        }
        Ok(())
    }

    /// The first task (lowest vtime, or the FIFO head).
    pub fn pop(&mut self) -> Option<Entry> {
        let e = self.tasks.pop_front();
        if self.tasks.is_empty() {
            self.order = None;
        }
        e
    }

    /// Removes `task` wherever it is (a dequeue); true if it was here.
    pub fn remove(&mut self, task: usize) -> bool {
        match self.tasks.iter().position(|e| e.task == task) {
            Some(i) => {
                self.tasks.remove(i);
                if self.tasks.is_empty() {
                    self.order = None;
                }
                true
            }
            None => false,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.tasks.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(task: usize, vtime: u64) -> Entry {
        Entry { task, vtime }
    }

    #[test]
    fn fifo_keeps_arrival_order_and_head_inserts_first() {
        let mut d = Dsq::new(0);
        d.insert(e(1, 0), Order::Fifo, false).unwrap();
        d.insert(e(2, 0), Order::Fifo, false).unwrap();
        d.insert(e(3, 0), Order::Fifo, true).unwrap();
        let got: Vec<_> = std::iter::from_fn(|| d.pop()).map(|e| e.task).collect();
        assert_eq!(got, [3, 1, 2]);
    }

    #[test]
    fn vtime_orders_by_key_ties_after_and_across_wrap() {
        let mut d = Dsq::new(7);
        for (t, v) in [(1, 50), (2, 10), (3, 50), (4, u64::MAX - 5), (5, 20)] {
            d.insert(e(t, v), Order::Vtime, false).unwrap();
        }
        let got: Vec<_> = std::iter::from_fn(|| d.pop()).map(|e| e.task).collect();
        // u64::MAX - 5 is "before" 10 under time_before's wrap.
        assert_eq!(got, [4, 2, 5, 1, 3]);
    }

    #[test]
    fn mixing_orders_and_vtime_on_builtins_are_errors() {
        let mut d = Dsq::new(0);
        d.insert(e(1, 0), Order::Fifo, false).unwrap();
        assert!(
            d.insert(e(2, 5), Order::Vtime, false)
                .unwrap_err()
                .contains("FIFO tasks")
        );
        d.pop();
        d.insert(e(2, 5), Order::Vtime, false).unwrap();
        let mut g = Dsq::new(SCX_DSQ_GLOBAL);
        assert!(
            g.insert(e(1, 0), Order::Vtime, false)
                .unwrap_err()
                .contains("built-in")
        );
        assert!(d.remove(2) && !d.remove(2) && d.order.is_none());
    }
}
