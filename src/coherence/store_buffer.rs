//! A core's store buffer as x86-TSO has it (docs/MODEL.md §5c). A retired store waits in the
//! buffer until it commits to the core's L1 (its value becomes visible to the other cores):
//! - stores commit in program order (FIFO), and a store's line is requested (read for ownership
//!   through the line service) only once the store before it has committed, so a store never
//!   becomes visible before an earlier one: a release store (`atomic_set_release`, a spin unlock)
//!   is ordered after every earlier store with no fence;
//! - the buffer has a fixed number of entries per core (the machine's `store_buffer_entries`); a
//!   store that finds it full stalls the core until the oldest entry commits;
//! - a locked instruction, and the serializing instructions (IRET, not SYSRET), wait until it is
//!   empty (`drained_at`).
//!
//! It holds only times: when each buffered store commits. The line service (`Coherence::access`)
//! decides those; this module decides when a store may enter and when its request may leave.

use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct StoreBuffer {
    entries: usize,
    /// When each store still in the buffer commits, oldest first (non-decreasing: FIFO).
    commits: VecDeque<u64>,
    /// When the youngest store commits (the buffer is empty from then on).
    last: u64,
}

impl StoreBuffer {
    /// A buffer of `entries` stores (at least one).
    pub fn new(entries: u32) -> Self {
        StoreBuffer {
            entries: entries.max(1) as usize,
            commits: VecDeque::new(),
            last: 0,
        }
    }

    /// A store retiring at `t`: when it gets an entry. That is `t` unless the buffer is full then,
    /// else when the oldest store that must leave to make room commits (the core stalls until then).
    pub fn entry_at(&mut self, t: u64) -> u64 {
        while self.commits.front().is_some_and(|&c| c <= t) {
            self.commits.pop_front();
        }
        let held = self.commits.len();
        if held < self.entries {
            return t;
        }
        // the (held - entries + 1)-th oldest must commit first
        let at = self.commits[held - self.entries];
        self.commits.drain(..=held - self.entries);
        at
    }

    /// When a store that entered at `t` sends its request for its line: not before the store
    /// ahead of it has committed (in-order commit, one line obtained after the other).
    pub fn request_at(&self, t: u64) -> u64 {
        t.max(self.last)
    }

    /// The store that just got its entry commits at `commit` (from the line service, after
    /// `request_at`).
    pub fn push(&mut self, commit: u64) {
        debug_assert!(commit >= self.last, "store buffer: out of order commit");
        let commit = commit.max(self.last);
        self.commits.push_back(commit);
        self.last = commit;
    }

    /// When every buffered store has committed (a locked or serializing instruction waits for it).
    pub fn drained_at(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_waits_for_the_store_ahead_of_it_to_commit() {
        let mut sb = StoreBuffer::new(4);
        assert_eq!(sb.entry_at(100), 100);
        assert_eq!(sb.request_at(100), 100);
        sb.push(600); // a miss: commits at 600
        assert_eq!(sb.entry_at(110), 110);
        assert_eq!(
            sb.request_at(110),
            600,
            "not before the earlier store committed"
        );
        sb.push(601);
        assert_eq!(sb.drained_at(), 601);
        // once drained, a store's request leaves at once
        assert_eq!(sb.entry_at(700), 700);
        assert_eq!(sb.request_at(700), 700);
    }

    #[test]
    fn a_full_buffer_makes_the_store_wait_for_the_oldest_commit() {
        let mut sb = StoreBuffer::new(2);
        sb.entry_at(0);
        sb.push(500);
        sb.entry_at(1);
        sb.push(900);
        // two in the buffer at 2: the third waits until the first commits
        assert_eq!(sb.entry_at(2), 500);
        sb.push(1300);
        // at 600 the buffer holds the commits at 900 and 1300: full again, wait for 900
        assert_eq!(sb.entry_at(600), 900);
        sb.push(1301);
        // the same stores with room for all: no wait
        let mut big = StoreBuffer::new(64);
        for (t, c) in [(0, 500), (1, 900), (2, 1300), (600, 1301)] {
            assert_eq!(big.entry_at(t), t);
            big.push(c);
        }
    }
}
