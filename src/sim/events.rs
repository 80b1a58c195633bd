//! The event queue: events come out in time order, ties in insertion order (what a heap keyed by
//! (time, sequence number) gives), at O(1) per event for the times this simulator schedules.
//!
//! A two-level timing wheel covers the next ~4 ms, where almost every event lands (wakeups, burst
//! ends, ticks, kernel-job continuations): level 0 has 256 slots of 64 ns for the current 16 µs
//! window, level 1 has 256 slots of one window each. Later events wait in a radix heap. An event
//! moves at most three times (heap → level 1 → level 0); the binary heap this replaces sifted each
//! one through ~11 levels on mispredicted branches, and a plain radix heap moved it ~8 times.
//!
//! Tie order is kept without sequence numbers: every slot lists its events in insertion order
//! among equal times (cascades and pulls from the heap only fill slots no push has reached yet),
//! and a slot is stable-sorted by time when it becomes the one being popped.

const SLOT_BITS: u32 = 6; // level-0 slot: 64 ns
const L0_BITS: u32 = 8; // 256 level-0 slots
const WINDOW_BITS: u32 = SLOT_BITS + L0_BITS; // one window: 16.4 µs
const L1_BITS: u32 = 8; // 256 windows: 4.2 ms
/// Slots up to this many events are sorted by comparison (an insertion sort at this size).
const SMALL_SLOT: usize = 16;
const N0: usize = 1 << L0_BITS;
const N1: usize = 1 << L1_BITS;

fn window(t: u64) -> u64 {
    t >> WINDOW_BITS
}
fn slot0(t: u64) -> usize {
    (t >> SLOT_BITS) as usize & (N0 - 1)
}
fn slot1(w: u64) -> usize {
    w as usize & (N1 - 1)
}

/// An emptied slot keeps its buffer for the next events unless it is larger than `max`: every slot
/// keeping the buffer of a burst of simultaneous ticks (4096 at 4096 CPUs without skew_tick) would
/// hold ~50 MB. Level-1 slots keep up to 256 (a window holds ~130 events at 512 CPUs), level-0
/// slots and the radix heap's buckets up to 64.
fn recycle<T>(v: Vec<T>, max: usize) -> Vec<T> {
    debug_assert!(v.is_empty());
    if v.capacity() > max { Vec::new() } else { v }
}

/// Bitmap of non-empty slots, searched for the first set bit at or after a position.
#[derive(Clone)]
struct Bits<const W: usize>([u64; W]);

impl<const W: usize> Bits<W> {
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    fn any(&self) -> bool {
        self.0.iter().any(|&w| w != 0)
    }
    /// The first set bit at index ≥ from (no wrap-around).
    fn first_from(&self, from: usize) -> Option<usize> {
        let mut k = from / 64;
        if k >= W {
            return None;
        }
        let mut word = self.0[k] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(k * 64 + word.trailing_zeros() as usize);
            }
            k += 1;
            if k == W {
                return None;
            }
            word = self.0[k];
        }
    }
}

pub struct EventQueue<E> {
    /// The slot being popped, sorted so that the next event is last.
    ready: Vec<(u64, E)>,
    /// Level 0: the rest of the current window, one slot per 64 ns (insertion order).
    l0: Vec<Vec<(u64, E)>>,
    l0_min: [u64; N0],
    l0_bits: Bits<{ N0 / 64 }>,
    /// Level 1: windows cur_window+1 .. cur_window+255, indexed by window mod 256.
    l1: Vec<Vec<(u64, E)>>,
    l1_min: [u64; N1],
    l1_bits: Bits<{ N1 / 64 }>,
    /// Everything later.
    far: RadixHeap<E>,
    cur_window: u64,
    /// Level-0 slot that `ready` holds.
    cur_slot: usize,
    len: usize,
    /// Time of the last pop: nothing may be pushed earlier.
    last: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            ready: Vec::new(),
            l0: (0..N0).map(|_| Vec::new()).collect(),
            l0_min: [u64::MAX; N0],
            l0_bits: Bits([0; N0 / 64]),
            l1: (0..N1).map(|_| Vec::new()).collect(),
            l1_min: [u64::MAX; N1],
            l1_bits: Bits([0; N1 / 64]),
            far: RadixHeap::default(),
            cur_window: 0,
            cur_slot: 0,
            len: 0,
            last: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn push(&mut self, time: u64, ev: E) {
        debug_assert!(
            time >= self.last,
            "event at {time} before the clock {}",
            self.last
        );
        self.len += 1;
        self.place(time.max(self.last), ev);
    }

    /// Files an event by its time relative to the current window and slot.
    fn place(&mut self, t: u64, ev: E) {
        let w = window(t);
        if w == self.cur_window {
            let s = slot0(t);
            if s == self.cur_slot {
                // After every event due no later than t (they pop first), before later ones.
                let i = self.ready.partition_point(|e| e.0 > t);
                self.ready.insert(i, (t, ev));
            } else {
                self.l0[s].push((t, ev));
                self.l0_min[s] = self.l0_min[s].min(t);
                self.l0_bits.set(s);
            }
        } else if w < self.cur_window + N1 as u64 {
            let s = slot1(w);
            self.l1[s].push((t, ev));
            self.l1_min[s] = self.l1_min[s].min(t);
            self.l1_bits.set(s);
        } else {
            self.far.push(t, ev);
        }
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        while self.ready.is_empty() {
            if !self.next_slot() {
                return None;
            }
        }
        let e = self.ready.pop();
        if let Some((t, _)) = e {
            self.len -= 1;
            self.last = t;
        }
        e
    }

    /// The next event if it is due at `t` (the time of the last pop) and `pred` accepts it: ties
    /// of one kind can then be taken together and ordered by their own key.
    pub fn pop_tie(&mut self, t: u64, pred: impl Fn(&E) -> bool) -> Option<E> {
        match self.ready.last() {
            Some((tt, e)) if *tt == t && pred(e) => {
                self.len -= 1;
                self.ready.pop().map(|(_, e)| e)
            }
            _ => None,
        }
    }

    /// Makes the next non-empty slot the ready one; false when the queue is empty.
    fn next_slot(&mut self) -> bool {
        if let Some(s) = self.l0_bits.first_from(self.cur_slot + 1) {
            self.make_ready(s);
            return true;
        }
        // The window is exhausted: move to the next window that has events.
        let next = match self.next_l1_window() {
            Some(w) => w,
            None => match self.far.peek_time() {
                Some(t) => window(t),
                None => return false,
            },
        };
        self.advance_to(next);
        true
    }

    /// The first non-empty level-1 window after the current one.
    fn next_l1_window(&self) -> Option<u64> {
        if !self.l1_bits.any() {
            return None;
        }
        let from = slot1(self.cur_window + 1);
        let s = self
            .l1_bits
            .first_from(from)
            .or_else(|| self.l1_bits.first_from(0))?;
        // slot s holds window cur_window + 1 + ((s − from) mod 256)
        Some(self.cur_window + 1 + ((s + N1 - from) % N1) as u64)
    }

    /// Starts window `w`: its level-1 slot cascades to level 0, and events from the radix heap
    /// that the horizon now covers come in (in their (time, insertion) order).
    fn advance_to(&mut self, w: u64) {
        debug_assert!(w > self.cur_window && !self.l0_bits.any() && self.ready.is_empty());
        self.cur_window = w;
        self.cur_slot = 0;
        let s = slot1(w);
        if self.l1_bits.get(s) {
            self.l1_bits.clear(s);
            self.l1_min[s] = u64::MAX;
            let mut moved = std::mem::take(&mut self.l1[s]);
            for (t, ev) in moved.drain(..) {
                self.put_l0(t, ev);
            }
            self.l1[s] = recycle(moved, 256);
        }
        let horizon = (w + N1 as u64) << WINDOW_BITS;
        while self.far.peek_time().is_some_and(|t| t < horizon) {
            let (t, ev) = self.far.pop().expect("peeked");
            if window(t) == w {
                self.put_l0(t, ev);
            } else {
                self.place(t, ev);
            }
        }
        // The first slot of the window may already have events: make it ready like any other.
        if self.l0_bits.get(0) {
            self.make_ready(0);
        }
    }

    /// Level-0 slot `s` becomes the one being popped.
    fn make_ready(&mut self, s: usize) {
        self.cur_slot = s;
        self.l0_bits.clear(s);
        self.l0_min[s] = u64::MAX;
        if self.l0[s].len() > 1 {
            self.make_ready_sorted(s);
        } else if let Some(e) = self.l0[s].pop() {
            self.ready.push(e); // most slots hold one event: nothing to sort
        }
    }

    #[inline(never)]
    fn make_ready_sorted(&mut self, s: usize) {
        // Next event last; equal times keep insertion order (the reversed list, stably sorted by
        // time, latest first).
        debug_assert!(self.ready.is_empty());
        let slot = &mut self.l0[s];
        if slot.len() <= SMALL_SLOT {
            self.ready.extend(slot.drain(..).rev());
            self.ready.sort_by_key(|e| std::cmp::Reverse(e.0));
        } else {
            // Every event of a level-0 slot has the same t >> SLOT_BITS, so the order is a
            // stable counting sort on the low bits: O(n) where a comparison sort of the ~50
            // events a slot holds when hundreds of CPUs run kernel steps mispredicts its way
            // through n log n.
            const KEYS: usize = 1 << SLOT_BITS;
            let key = |t: u64| KEYS - 1 - (t as usize & (KEYS - 1)); // latest first
            let mut at = [0u32; KEYS];
            for e in slot.iter() {
                at[key(e.0)] += 1;
            }
            let mut sum = 0;
            for a in at.iter_mut() {
                (*a, sum) = (sum, sum + *a);
            }
            self.ready.resize(slot.len(), slot[0]);
            for e in slot.drain(..).rev() {
                let k = key(e.0);
                self.ready[at[k] as usize] = e;
                at[k] += 1;
            }
        }
        self.l0[s] = recycle(std::mem::take(&mut self.l0[s]), 64);
    }

    fn put_l0(&mut self, t: u64, ev: E) {
        let s = slot0(t);
        self.l0[s].push((t, ev));
        self.l0_min[s] = self.l0_min[s].min(t);
        self.l0_bits.set(s);
    }

    pub fn peek_time(&self) -> Option<u64> {
        if let Some(e) = self.ready.last() {
            return Some(e.0);
        }
        if let Some(s) = self.l0_bits.first_from(self.cur_slot + 1) {
            return Some(self.l0_min[s]);
        }
        if let Some(w) = self.next_l1_window() {
            return Some(self.l1_min[slot1(w)]);
        }
        self.far.peek_time()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A monotone priority queue for the far events (a radix heap): the same (time, insertion) order.
/// Bucket 0 holds the events at `last` (the time of the last pop) in insertion order; bucket i
/// holds those whose time differs from `last` first in bit i − 1. A pop that finds bucket 0 empty
/// moves `last` to the minimum of the first non-empty bucket and redistributes that bucket into
/// lower ones, keeping each bucket's order (a bucket is only refilled while all lower ones are
/// empty), so ties stay first in, first out.
struct RadixHeap<E> {
    at_last: std::collections::VecDeque<(u64, E)>,
    buckets: Vec<Vec<(u64, E)>>,
    mins: [u64; 64],
    nonempty: u64,
    last: u64,
}

impl<E> Default for RadixHeap<E> {
    fn default() -> Self {
        RadixHeap {
            at_last: Default::default(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            mins: [u64::MAX; 64],
            nonempty: 0,
            last: 0,
        }
    }
}

impl<E> RadixHeap<E> {
    fn push(&mut self, time: u64, ev: E) {
        let x = time ^ self.last;
        if x == 0 {
            self.at_last.push_back((time, ev));
        } else {
            let b = 63 - x.leading_zeros() as usize;
            self.buckets[b].push((time, ev));
            self.mins[b] = self.mins[b].min(time);
            self.nonempty |= 1 << b;
        }
    }

    fn pop(&mut self) -> Option<(u64, E)> {
        if self.at_last.is_empty() {
            if self.nonempty == 0 {
                return None;
            }
            let b = self.nonempty.trailing_zeros() as usize;
            self.last = self.mins[b];
            self.mins[b] = u64::MAX;
            self.nonempty &= !(1 << b);
            let mut moved = std::mem::take(&mut self.buckets[b]);
            for (time, ev) in moved.drain(..) {
                self.push(time, ev);
            }
            self.buckets[b] = recycle(moved, 64);
        }
        self.at_last.pop_front()
    }

    fn peek_time(&self) -> Option<u64> {
        if !self.at_last.is_empty() {
            Some(self.last)
        } else if self.nonempty != 0 {
            Some(self.mins[self.nonempty.trailing_zeros() as usize])
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::SimRng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn ties_are_broken_by_insertion_sequence() {
        let mut q = EventQueue::default();
        q.push(5, 'c');
        q.push(1, 'a');
        q.push(5, 'd');
        q.push(1, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    /// Bursts of 4096 simultaneous events (ticks without skew_tick at 4096 CPUs) every 1 ms must not
    /// leave a large buffer in every slot they pass through.
    #[test]
    fn emptied_slots_do_not_keep_large_buffers() {
        let mut q = EventQueue::default();
        for ms in 1..=300u64 {
            for cpu in 0..4096u32 {
                q.push(ms * 1_000_000, cpu);
            }
            while q.peek_time().is_some_and(|t| t <= ms * 1_000_000) {
                q.pop();
            }
        }
        let slots = q.l0.iter().chain(q.l1.iter()).chain(q.far.buckets.iter());
        let retained: usize = slots.map(Vec::capacity).sum::<usize>() + q.ready.capacity();
        assert!(
            retained <= 4096 + 64 * (N0 + N1 + 64),
            "{retained} events' worth retained"
        );
    }

    /// Hundreds of events per 64 ns slot (hundreds of CPUs in kernel steps): slots past
    /// SMALL_SLOT are ordered by the counting sort, with the same order as the heap's.
    #[test]
    fn crowded_slots_pop_in_time_then_insertion_order() {
        let mut rng = SimRng::new(7);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        let mut crowded = 0;
        for _ in 0..2_000 {
            for _ in 0..rng.below(200) {
                let dt = if rng.below(4) == 0 {
                    rng.below(8)
                } else {
                    rng.below(600)
                };
                seq += 1;
                q.push(now + dt, seq);
                reference.push(Reverse((now + dt, seq)));
            }
            if let Some(s) = q.l0_bits.first_from(q.cur_slot + 1) {
                crowded += usize::from(q.l0[s].len() > SMALL_SLOT);
            }
            for _ in 0..rng.below(200) {
                let got = q.pop();
                assert_eq!(got, reference.pop().map(|r| r.0));
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(Reverse(e)) = reference.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(
            crowded > 100,
            "only {crowded} crowded slots: the test misses the counting sort"
        );
    }

    /// Random pushes at the clock, within a slot, a window, the wheel and far beyond, interleaved
    /// with pops: the same order as a heap keyed by (time, sequence number).
    #[test]
    fn pops_in_time_then_insertion_order_like_a_sequence_keyed_heap() {
        for seed in 0..4 {
            let mut rng = SimRng::new(seed);
            let mut q = EventQueue::default();
            let mut reference = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for round in 0..30_000 {
                for _ in 0..rng.below(4) {
                    let dt = match rng.below(6) {
                        0 => 0,
                        1 => rng.below(64),
                        2 => rng.below(20_000),
                        3 => rng.below(5_000_000),
                        4 => 1_000_000, // ticks: many events at the same far time
                        _ => rng.below(1 << 40),
                    };
                    seq += 1;
                    q.push(now + dt, seq);
                    reference.push(Reverse((now + dt, seq)));
                }
                assert_eq!(
                    q.peek_time(),
                    reference.peek().map(|r| r.0.0),
                    "round {round}"
                );
                if rng.below(3) > 0 {
                    let got = q.pop();
                    assert_eq!(got, reference.pop().map(|r| r.0), "round {round}");
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse(e)) = reference.pop() {
                assert_eq!(q.peek_time(), Some(e.0));
                assert_eq!(q.pop(), Some(e));
            }
            assert!(q.is_empty() && q.pop().is_none() && q.peek_time().is_none());
        }
    }
}
