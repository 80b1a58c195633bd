//! Cache-line model. A line has an owner (Modified) or a set of sharers. A load of a line modified
//! elsewhere is a HITM (local or remote socket); a store or atomic takes ownership. Ownership
//! requests (and the HITM that turns a modified line into a shared one) are served one at a time in
//! arrival order (FIFO): each costs the transfer latency from the holder to the requester, so the
//! k-th of k simultaneous requesters waits about k transfers. Loads of a shared line are served
//! concurrently from the nearest copy ("loads are always scalable", 1024cores.net;
//! docs/MODEL.md §5): they wait for
//! the ownership transfers queued before them, not for each other, and the next ownership request
//! waits until they have their copies.
//!
//! After a locked read-modify-write the core keeps the line `rmw_hold_ns` before the next queued
//! request is served. A store goes through the store buffer: the CPU does not wait for it; it
//! commits in place, without a transfer, if the line is still in this CPU's cache (nobody's
//! request has been served since), else it needs the line back (a read-for-ownership at the back
//! of the queue) and takes effect when that is served (`Access::visible`). Whether a release
//! store lands inside the window comes from the timing of what the CPU does in between.
//!
//! Counters per named line and per field offset feed the c2c report.

use crate::assumptions::Assumptions;
use crate::machine::hardware::{DEFAULT_RMW_HOLD_NS, LatencyClass};
use crate::machine::topology::Topology;
use std::collections::VecDeque;

mod home;
mod load;
pub use home::HANDOFF_DISTANCES;
pub use load::Reader;
mod store_buffer;
use home::{HomeLegs, handoff_distance, served_at};
pub use store_buffer::StoreBuffer;

pub type LineId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Load,
    Store,
    /// A locked read-modify-write (cmpxchg, xchg): a load plus ownership.
    Atomic,
}

/// Cost of an access that hits the requester's own cache, ns (stated assumption: L1 hit ~1 ns).
/// A locked instruction on an owned line (~20 cycles) is `Assumptions::locked_hit_ns`, screened.
pub const HIT_NS: u64 = 1;
/// A field's counters (`Coherence::fields`).
#[derive(Clone, Debug, Default)]
pub struct FieldStats {
    pub offset: u32,
    pub field: &'static str,
    pub loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub hitm: u64,
}

/// A field's stores and locked RMWs (`Coherence::field_writes`).
#[derive(Clone, Copy, Debug, Default)]
struct FieldWrites {
    stores: u64,
    atomics: u64,
}

/// A line's counters (`Coherence::stats`).
#[derive(Clone, Debug, Default)]
pub struct LineStats {
    pub loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub hitm_local: u64,
    pub hitm_remote: u64,
    pub stall_ns: u64,
    /// Ownership hand-offs (a HITM or a read-for-ownership served by another CPU's copy) by the
    /// distance from the previous holder to the requester (`HANDOFF_DISTANCES`).
    pub handoffs: [u64; 4],
}

/// What an access reads and writes of a line's state but the hand-offs and the counters: one host
/// cache line (`repr(C, align(64))`, 64 bytes), in `Coherence::hot`, a dense array, so that the
/// lines a balance pass reads one after another (the run-queue lines of consecutive CPUs) are
/// consecutive 64-byte records, not 64 bytes of every 256 (`Line` has the rest).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Hot {
    owner: Option<u32>,
    /// Last CPU that received the line (source of the next transfer when nobody holds it).
    last: u32,
    nr_sharers: u32,
    /// The node of the line's home agent (`coherence/home.rs`).
    home: u32,
    /// `Line::handoffs.len()`, here so that a miss that finds none does not read the line's rest.
    nr_handoffs: u32,
    /// Which words of `Held` may have a bit set for this line (bit w: CPUs 64w..64w+63): what an
    /// invalidation clears, instead of every word.
    held_words: u64,
    /// When the last queued ownership transfer (or HITM) completes.
    free_at: u64,
    /// When the last concurrent shared-copy load completes (the next ownership request waits for it).
    reads_until: u64,
    /// `LineStats::stall_ns`.
    stall_ns: u64,
    /// When the owner (the last CPU that requested ownership) has the line.
    owner_ready_at: u64,
}

/// The rest of a line's state (`Hot` has what an access reads): the pending hand-offs, the name
/// and the counters.
#[derive(Clone, Debug)]
pub struct Line {
    /// Ownership hand-offs still ahead in time, in the order they were pushed: when the next
    /// request's service starts. Until then the line is still in the cache of the CPU giving it
    /// up, and a store that CPU issues commits there without a transfer.
    handoffs: VecDeque<u64>,
    /// How many hand-offs were pushed (since the last renumbering): the k-th has sequence number
    /// k, so the pending ones are the last `handoffs.len()` numbers. 16 bits, like the per-CPU
    /// numbers, and renumbered from 1 when it would wrap (`rebase_handoffs`): fewer than 2^16
    /// hand-offs are ever pending, since each is a request in flight and a CPU has at most a load
    /// or locked access and its oldest buffered store in flight (`store_buffer.rs`).
    handoffs_pushed: u16,
    /// Per CPU, the sequence number of its last hand-off of this line (0: none; allocated at the
    /// first hand-off). The CPU is giving the line up while that one is pending (an earlier one
    /// pending implies the last is). A sequence number, not a count of pending hand-offs, so that
    /// dropping one that is over touches only the queue, not this CPU-indexed array (a cache miss
    /// per hand-off on the host).
    last_handoff: Vec<u16>,
    pub name: String,
    /// Its counters but the loads, stores, atomics and the stall (they stay 0 here: they are in
    /// `Coherence::field_loads`, `Coherence::field_writes` and `Hot::stall_ns`).
    stats: LineStats,
    /// Its fields' names and HITM counts (the other counters likewise stay 0 here).
    fields: Vec<FieldStats>,
}

/// Which CPUs hold each line: the sharers, or the owner when the line is Modified (then the only
/// one). Stored transposed, `bits[w * stride + id]` the bits of CPUs 64w..64w+63 for line `id`,
/// so that a load's hit check reads one u64 of one dense array (8 consecutive lines per cache
/// line: a balance pass reads the lines of consecutive CPUs) instead of the line's struct and
/// then a heap block of its own. One array, not one per word: a pass then reloads one vector's
/// pointer after its stores, not two. An invalidation writes one word per 64 CPUs that hold the
/// line (`Line::held_words` says which).
///
/// A CPU's bit is its slot (`Groups::slot`), not its number: CPUs cluster by cluster, so that the
/// SMT siblings (numbered half the machine apart) share a word, and a miss that asks whether the
/// reader's sibling has a copy reads the word its own hit check has just read.
///
/// The sharers are also counted per CPU group (CPUs of one LLC and node): a line every tick reads
/// has hundreds of sharers, and the nearest or farthest one is found group by group instead of
/// one by one. The counts are one flat array too, `groups[id * nr_groups + g]`, a line's groups
/// side by side (an invalidation zeroes one run), not a heap block per line reached through the
/// line (one dependent load less per miss).
#[derive(Clone, Debug)]
struct Held {
    bits: Vec<u64>,
    /// Lines per word (at least the number of lines; grows by doubling in `add_line`).
    stride: usize,
    words: usize,
    /// Per CPU, its slot (`Groups::slot`).
    slot: Vec<u32>,
    /// Sharers per line and group (at most 4,096 CPUs: a u16 holds any count).
    groups: Vec<u16>,
    nr_groups: usize,
}

impl Held {
    fn has(&self, id: LineId, cpu: u32) -> bool {
        self.has_slot(id, self.slot[cpu as usize])
    }
    /// Whether the CPU in slot `slot` holds `id`.
    #[inline(always)]
    fn has_slot(&self, id: LineId, slot: u32) -> bool {
        self.bits[slot as usize / 64 * self.stride + id] & (1 << (slot % 64)) != 0
    }
    fn set(&mut self, line: &mut Hot, id: LineId, cpu: u32) {
        let slot = self.slot[cpu as usize];
        self.bits[slot as usize / 64 * self.stride + id] |= 1 << (slot % 64);
        line.held_words |= 1 << (slot / 64);
    }
    /// Clears every holder's bit of `id`.
    fn clear(&mut self, line: &mut Hot, id: LineId) {
        let mut m = line.held_words;
        while m != 0 {
            self.bits[m.trailing_zeros() as usize * self.stride + id] = 0;
            m &= m - 1;
        }
        line.held_words = 0;
    }
    /// The sharers of `id` in group `g`.
    #[inline(always)]
    fn in_group(&self, id: LineId, g: usize) -> u32 {
        u32::from(self.groups[id * self.nr_groups + g])
    }
    /// The sharer counts of `id`, group by group.
    #[inline(always)]
    fn groups_of(&self, id: LineId) -> &[u16] {
        &self.groups[id * self.nr_groups..][..self.nr_groups]
    }
    /// Room for line `id` (the next one).
    fn add(&mut self, id: LineId) {
        self.groups.resize((id + 1) * self.nr_groups, 0);
        if id == self.stride {
            let stride = (2 * self.stride).max(64);
            let mut bits = vec![0; self.words * stride];
            for w in 0..self.words {
                bits[w * stride..][..id].copy_from_slice(&self.bits[w * self.stride..][..id]);
            }
            (self.bits, self.stride) = (bits, stride);
        }
    }
}

impl Hot {
    /// Adds `cpu` (of `group`) to the sharers of the line (not Modified).
    #[inline(always)]
    fn add_sharer(&mut self, held: &mut Held, id: LineId, cpu: u32, group: u32) {
        if !held.has(id, cpu) {
            held.set(self, id, cpu);
            self.nr_sharers += 1;
            held.groups[id * held.nr_groups + group as usize] += 1;
        }
    }
    /// Drops every copy, the owner's too (`owner` is the caller's to change).
    fn clear_holders(&mut self, held: &mut Held, id: LineId) {
        held.clear(self, id);
        if self.nr_sharers > 0 {
            held.groups[id * held.nr_groups..][..held.nr_groups].fill(0);
            self.nr_sharers = 0;
        }
    }
    /// Makes `cpu` the owner: every other copy is gone.
    fn set_owner(&mut self, held: &mut Held, id: LineId, cpu: u32) {
        self.clear_holders(held, id);
        self.owner = Some(cpu);
        held.set(self, id, cpu);
    }
}

impl Line {
    fn push_handoff(&mut self, hot: &mut Hot, from: u32, at: u64, nr_cpus: usize) {
        if self.last_handoff.is_empty() {
            self.last_handoff = vec![0; nr_cpus];
        }
        if self.handoffs_pushed == u16::MAX {
            self.rebase_handoffs();
        }
        self.handoffs.push_back(at);
        hot.nr_handoffs += 1;
        self.handoffs_pushed += 1;
        self.last_handoff[from as usize] = self.handoffs_pushed;
    }
    /// Whether `cpu` is giving the line up in a hand-off still pending.
    #[inline(always)]
    fn is_handing_off(&self, cpu: usize) -> bool {
        let pending = self.handoffs.len();
        (self.last_handoff.get(cpu))
            .is_some_and(|&k| usize::from(self.handoffs_pushed - k) < pending)
    }
    /// Renumbers the pending hand-offs from 1 (the others' numbers to 0), once in 2^16 pushes.
    fn rebase_handoffs(&mut self) {
        let pending = u16::try_from(self.handoffs.len()).expect("2^16 hand-offs pending");
        let first = self.handoffs_pushed - pending; // the number before the first pending one
        for k in &mut self.last_handoff {
            *k = if self.handoffs_pushed - *k < pending {
                *k - first
            } else {
                0
            };
        }
        self.handoffs_pushed = pending;
    }
    /// Drops the hand-offs that are over at `now` (reads no more than `hot` when there are none).
    fn forget_handoffs_before(&mut self, hot: &mut Hot, now: u64) {
        if hot.nr_handoffs == 0 {
            return;
        }
        while let Some(&at) = self.handoffs.front() {
            if at > now {
                break;
            }
            self.handoffs.pop_front();
            hot.nr_handoffs -= 1;
        }
        debug_assert_eq!(hot.nr_handoffs as usize, self.handoffs.len());
    }
}

/// CPUs grouped by (LLC, node): the transfer latency from any member of a group to a CPU outside
/// it is the same (it depends only on the latency class, which an LLC and node pair decide).
struct Groups {
    of_cpu: Vec<u32>,
    /// One member of each group.
    rep: Vec<u32>,
    /// `nearest_first[h * (n - 1)..][..n - 1]`: the groups other than h, nearest to h first (ties
    /// by group number), each with its transfer latency to h (from any member to any member: an
    /// LLC and node pair decide the class), looked up instead of asking the topology for every
    /// sharer group of every miss. The nearest and farthest sharer groups are then the first
    /// non-empty one from either end, not a scan of every group: a clean miss on a run-queue line
    /// every balancer reads does this once per line a balance pass reads.
    nearest_first: Vec<(u32, u32)>,
    /// Per CPU, the other CPUs of its cluster (SMT siblings, cores sharing its L2), by their slot
    /// (`slot`), with their transfer latency to it, and the LLC transfer latency: a miss's
    /// own-group sharers priced without asking the topology.
    cluster_ns: Vec<Box<[(u32, u32)]>>,
    /// Per CPU, its bit in `Held` (its slot): the CPUs cluster by cluster, in cluster order.
    slot: Vec<u32>,
    llc_ns: u32,
    /// A request leg inside the requester's domain: half the LLC figure (`home.rs`).
    llc_leg: u64,
    /// Per group, the transfer latency from the nearest other group (`u32::MAX` when there is
    /// none): a miss that already has a copy that near need not look at the other groups.
    nearest_other_ns: Vec<u32>,
}

impl Groups {
    fn new(topo: &Topology) -> Groups {
        let mut ids = std::collections::BTreeMap::new();
        let mut rep = Vec::new();
        let of_cpu = (0..topo.nr_cpus())
            .map(|c| {
                let key = (topo.cpus[c].llc, topo.cpus[c].node);
                *ids.entry(key).or_insert_with(|| {
                    rep.push(c as u32);
                    rep.len() as u32 - 1
                })
            })
            .collect();
        let n = rep.len();
        // xfer[g * n + h]: transfer latency from any member of group g to any member of group h
        let xfer: Vec<u32> = (0..n * n)
            .map(|i| topo.xfer_ns(rep[i / n] as usize, rep[i % n] as usize))
            .collect();
        let mut nearest_first = Vec::with_capacity(n * n.saturating_sub(1));
        let mut nearest_other_ns = Vec::with_capacity(n);
        for h in 0..n {
            let mut others: Vec<(u32, u32)> = (0..n)
                .filter(|&g| g != h)
                .map(|g| (g as u32, xfer[g * n + h]))
                .collect();
            others.sort_by_key(|&(g, ns)| (ns, g));
            nearest_other_ns.push(others.first().map_or(u32::MAX, |&(_, ns)| ns));
            nearest_first.extend(others);
        }
        let mut slot = vec![u32::MAX; topo.nr_cpus()];
        for (i, &c) in topo.cluster_cpus.iter().flatten().enumerate() {
            slot[c as usize] = i as u32;
        }
        assert!(slot.iter().all(|&s| s != u32::MAX), "a CPU in no cluster");
        let cluster_ns = (0..topo.nr_cpus())
            .map(|c| {
                let sibs = topo.cluster_siblings(c).iter();
                sibs.filter(|&&s| s as usize != c)
                    .map(|&s| (slot[s as usize], topo.xfer_ns(s as usize, c)))
                    .collect()
            })
            .collect();
        let llc_ns = topo.class_ns(LatencyClass::Llc);
        Groups {
            of_cpu,
            rep,
            nearest_first,
            cluster_ns,
            slot,
            llc_ns,
            llc_leg: (llc_ns as u64 / 2).max(1),
            nearest_other_ns,
        }
    }

    /// (nearest, farthest) transfer latency to `cpu` from the sharers other than `cpu` of the line
    /// `id` (not Modified).
    fn sharer_xfer_bounds(
        &self,
        line: &Hot,
        held: &Held,
        id: LineId,
        cpu: usize,
    ) -> Option<(u32, u32)> {
        let (mut lo, mut hi) = (u32::MAX, 0);
        let mut note = |ns: u32| {
            lo = lo.min(ns);
            hi = hi.max(ns);
        };
        let mine = self.of_cpu[cpu] as usize;
        let n = held.in_group(id, mine);
        if n > 0 {
            // cpu's own group: itself, its cluster (SMT siblings, cores sharing its L2), and CPUs
            // of its LLC in other clusters
            let mut others = n - u32::from(held.has(id, cpu as u32));
            for &(s, ns) in self.cluster_ns[cpu].iter() {
                if held.has_slot(id, s) {
                    note(ns);
                    others -= 1;
                }
            }
            if others > 0 {
                note(self.llc_ns);
            }
        }
        if line.nr_sharers == n {
            // no sharer outside the own group (the common case: a line written by its owner,
            // then read inside its LLC)
            return (lo < u32::MAX).then_some((lo, hi));
        }
        // the other groups: the first non-empty one from each end of the distance order
        let k = self.rep.len() - 1;
        let order = &self.nearest_first[mine * k..(mine + 1) * k];
        let groups = held.groups_of(id);
        let sharing = |&&(g, _): &&(u32, u32)| groups[g as usize] > 0;
        if let Some(&(_, ns)) = order.iter().find(sharing) {
            note(ns);
            if let Some(&(_, ns)) = order.iter().rev().find(sharing) {
                note(ns);
            }
        }
        (lo < u32::MAX).then_some((lo, hi))
    }
}

/// Outcome of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// When the requesting CPU can go on (a store retires into the store buffer at once).
    pub done: u64,
    /// When the access takes effect on the line: a store's value is visible to others from then.
    pub visible: u64,
    pub hitm: bool,
}

pub struct Coherence {
    /// Per line, what an access reads (`Hot`); `lines` has the rest, at the same index.
    hot: Vec<Hot>,
    pub lines: Vec<Line>,
    /// Which CPUs hold each line (`Held`).
    held: Held,
    /// The loads of every line's fields, line by line: `field_loads[first_load[id] + f]` is the
    /// count of field `f` of line `id` (`FieldStats::loads`; the line's is their sum). Apart from
    /// the lines' structs, so that a hit writes one dense array.
    field_loads: Vec<u64>,
    first_load: Vec<u32>,
    /// The stores and locked RMWs of every field, at the same index as `field_loads`: an access
    /// that hits a line it owns then counts itself without reading the line's struct and its
    /// fields' heap block (two host cache misses).
    field_writes: Vec<FieldWrites>,
    /// Per CPU, what its loads look up (`load::Reader`).
    readers: Vec<Reader>,
    nr_cpus: usize,
    groups: Groups,
    homes: HomeLegs,
    node_of_cpu: Vec<u32>,
    rmw_hold_ns: u64,
    /// A locked RMW on a line this core owns, ns (`Assumptions::locked_hit_ns`).
    locked_hit_ns: u64,
}

impl Coherence {
    pub fn new(topo: &Topology) -> Self {
        let groups = Groups::new(topo);
        let homes = HomeLegs::new(topo, &groups);
        let words = topo.nr_cpus().div_ceil(64);
        // `Line::held_words` has a bit per word (so a group's sharers fit `Held::groups`' u16)
        assert!(words <= 64, "{} CPUs", topo.nr_cpus());
        const { assert!(64 * 64 <= u16::MAX as usize) };
        Coherence {
            hot: Vec::new(),
            lines: Vec::new(),
            held: Held {
                bits: Vec::new(),
                stride: 0,
                words,
                slot: groups.slot.clone(),
                groups: Vec::new(),
                nr_groups: groups.rep.len(),
            },
            field_loads: Vec::new(),
            first_load: Vec::new(),
            field_writes: Vec::new(),
            readers: Reader::all(&groups, &homes),
            nr_cpus: topo.nr_cpus(),
            homes,
            node_of_cpu: topo.cpus.iter().map(|c| c.node).collect(),
            groups,
            rmw_hold_ns: DEFAULT_RMW_HOLD_NS,
            locked_hit_ns: Assumptions::default().locked_hit_ns,
        }
    }

    /// The RMW hold window (see the module comment); `DEFAULT_RMW_HOLD_NS` unless a machine sets it.
    pub fn set_rmw_hold_ns(&mut self, ns: u64) {
        self.rmw_hold_ns = ns;
    }

    /// The locked-RMW hit cost (the run's `Assumptions::locked_hit_ns`).
    pub fn set_locked_hit_ns(&mut self, ns: u64) {
        self.locked_hit_ns = ns;
    }

    /// A named line with its fields (offset, name) for the Pareto view.
    pub fn add_line(&mut self, name: impl Into<String>, fields: &[(u32, &'static str)]) -> LineId {
        self.held.add(self.lines.len());
        self.first_load.push(self.field_loads.len() as u32);
        self.field_loads.extend(fields.iter().map(|_| 0));
        (self.field_writes).extend(fields.iter().map(|_| FieldWrites::default()));
        self.hot.push(Hot {
            owner: None,
            last: 0,
            nr_sharers: 0,
            home: 0,
            nr_handoffs: 0,
            held_words: 0,
            free_at: 0,
            reads_until: 0,
            stall_ns: 0,
            owner_ready_at: 0,
        });
        self.lines.push(Line {
            name: name.into(),
            handoffs: VecDeque::new(),
            handoffs_pushed: 0,
            last_handoff: Vec::new(),
            stats: LineStats::default(),
            fields: fields
                .iter()
                .map(|&(offset, field)| FieldStats {
                    offset,
                    field,
                    ..Default::default()
                })
                .collect(),
        });
        self.lines.len() - 1
    }

    /// The counters of line `id`.
    pub fn stats(&self, id: LineId) -> LineStats {
        let writes = self.writes_of(id);
        LineStats {
            loads: self.loads_of(id).iter().sum(),
            stores: writes.iter().map(|w| w.stores).sum(),
            atomics: writes.iter().map(|w| w.atomics).sum(),
            stall_ns: self.hot[id].stall_ns,
            ..self.lines[id].stats.clone()
        }
    }

    /// The counters of line `id`'s fields, in their order.
    pub fn fields(&self, id: LineId) -> Vec<FieldStats> {
        let line = &self.lines[id];
        (line
            .fields
            .iter()
            .zip(self.loads_of(id))
            .zip(self.writes_of(id)))
        .map(|((f, &loads), w)| FieldStats {
            loads,
            stores: w.stores,
            atomics: w.atomics,
            ..f.clone()
        })
        .collect()
    }

    /// The load counts of line `id`'s fields.
    fn loads_of(&self, id: LineId) -> &[u64] {
        let first = self.first_load[id] as usize;
        &self.field_loads[first..first + self.lines[id].fields.len()]
    }

    /// The store and RMW counts of line `id`'s fields.
    fn writes_of(&self, id: LineId) -> &[FieldWrites] {
        let first = self.first_load[id] as usize;
        &self.field_writes[first..first + self.lines[id].fields.len()]
    }

    /// Counts a load of field `field` of line `id`.
    #[inline(always)]
    fn count_load(&mut self, id: LineId, field: usize) {
        debug_assert!(field < self.lines[id].fields.len());
        self.field_loads[self.first_load[id] as usize + field] += 1;
    }

    /// `cpu` wrote field `field` of `line` before `now`, in code whose cost its caller prices (the
    /// owner of a run queue updating it): the line is Modified in `cpu`'s cache, every other copy
    /// is gone. Writes between two accesses by others are one store (the others see only the last).
    pub fn owner_wrote(&mut self, id: LineId, cpu: usize, field: usize, now: u64) {
        self.field_writes[self.first_load[id] as usize + field].stores += 1;
        let (hot, line) = (&mut self.hot[id], &mut self.lines[id]);
        line.forget_handoffs_before(hot, now);
        if hot.owner == Some(cpu as u32) {
            return;
        }
        hot.set_owner(&mut self.held, id, cpu as u32);
        hot.owner_ready_at = hot.owner_ready_at.max(now);
        hot.last = cpu as u32;
    }

    /// A load by `cpu` that hits its own cache, counted exactly as `access` counts it; false (and
    /// nothing counted) when it would miss. A fast path for lines read in bulk.
    #[inline]
    pub fn load_hit(&mut self, id: LineId, cpu: usize, field: usize) -> bool {
        let r = self.reader(cpu);
        self.hit(&r, id, field)
    }

    /// `cpu` accesses field `field` (index into the line's fields) of `line` at time `now`, served
    /// as soon as its request reaches the line's serialization point (before any request issued
    /// later). Callers that order requests by their arrival there use `request_leg` and `serve`.
    pub fn access(
        &mut self,
        topo: &Topology,
        id: LineId,
        cpu: usize,
        op: Op,
        field: usize,
        now: u64,
    ) -> Access {
        let leg = self.request_leg(topo, id, cpu, op, now);
        self.serve(topo, id, cpu, op, field, now, leg)
    }

    /// Serves an access by `cpu` issued at `now` whose request leg (`request_leg`, computed at
    /// issue) was `leg`: it reached the serialization point at now + leg, after the requests
    /// already served, and is served there before the ones that arrive later. Requests queue in
    /// that order; what each costs is the measured transfer (`home::served_at`).
    #[allow(clippy::too_many_arguments)]
    pub fn serve(
        &mut self,
        topo: &Topology,
        id: LineId,
        cpu: usize,
        op: Op,
        field: usize,
        now: u64,
        leg: u64,
    ) -> Access {
        let hold = self.rmw_hold_ns;
        let locked_hit_ns = self.locked_hit_ns;
        let (hot, line) = (&mut self.hot[id], &mut self.lines[id]);
        let c = cpu as u32;
        let group = |x: u32| self.groups.of_cpu[x as usize];
        let at_field = self.first_load[id] as usize + field;
        match op {
            Op::Load => self.field_loads[at_field] += 1,
            Op::Store => self.field_writes[at_field].stores += 1,
            Op::Atomic => self.field_writes[at_field].atomics += 1,
        }
        // the request is at the serialization point: what the line is then decides its service
        let at = now + leg;
        line.forget_handoffs_before(hot, at);
        // Still in this CPU's cache: the line was requested by others, but not yet handed over.
        // (No hand-off pending means nobody is handing off: the per-CPU counts are not touched.)
        let still_held = hot.nr_handoffs > 0 && line.is_handing_off(cpu);
        let start = now.max(hot.free_at);
        let modified_elsewhere = hot.owner.filter(|&o| o != c);
        let locked = |op| {
            if op == Op::Atomic {
                locked_hit_ns
            } else {
                HIT_NS
            }
        };
        // (when the CPU goes on, when the access takes effect on the line, HITM)
        let (done, visible, hitm) = match (op, hot.owner) {
            (Op::Load, Some(o)) if o == c => (at + HIT_NS, at + HIT_NS, false),
            (Op::Load, _) if still_held => (at + HIT_NS, at + HIT_NS, false),
            (Op::Load, None) if self.held.has(id, c) => (at + HIT_NS, at + HIT_NS, false),
            (Op::Load, Some(o)) => {
                // HITM: the owner downgrades to Shared and forwards the line.
                let start = start.max(hot.reads_until);
                let done = served_at(start, at, topo.xfer_ns(o as usize, cpu) as u64);
                hot.free_at = done;
                line.stats.handoffs[handoff_distance(topo, o as usize, cpu)] += 1;
                line.push_handoff(hot, o, start, self.nr_cpus);
                // the owner's copy stays, as the first sharer
                hot.owner = None;
                hot.nr_sharers = 1;
                self.held.groups[id * self.held.nr_groups + group(o) as usize] = 1;
                hot.add_sharer(&mut self.held, id, c, group(c));
                hot.last = c;
                (done, done, true)
            }
            (Op::Load, None) => {
                // Clean miss: served from the nearest copy once the ownership transfers queued
                // before it are done, concurrently with the other loads of the shared line.
                let nearest = match self.groups.sharer_xfer_bounds(hot, &self.held, id, cpu) {
                    Some((lo, _)) => lo,
                    None => topo.xfer_ns(hot.last as usize, cpu),
                };
                hot.add_sharer(&mut self.held, id, c, group(c));
                let done = served_at(start, at, nearest as u64);
                hot.reads_until = hot.reads_until.max(done);
                (done, done, false)
            }
            (Op::Store, Some(o)) if o == c => {
                // Owned (or being fetched for an earlier store of this CPU): the store buffer
                // commits it once the line is here, in order.
                let visible = at.max(hot.owner_ready_at) + HIT_NS;
                (now + HIT_NS, visible, false)
            }
            (Op::Store, _) if still_held => (now + HIT_NS, at + HIT_NS, false),
            (Op::Atomic, Some(o)) if o == c => {
                // A locked instruction drains the store buffer first.
                let done = at.max(hot.owner_ready_at) + locked_hit_ns;
                hot.free_at = hot.free_at.max(done + hold);
                (done, done, false)
            }
            // A locked instruction on a line not handed over yet (the hand-off is not delayed).
            (Op::Atomic, _) if still_held => (at + locked_hit_ns, at + locked_hit_ns, false),
            (_, owner) => {
                // Read-for-ownership: from the owner, or invalidate every sharer (the farthest
                // bounds it), after the loads in flight have their copies.
                let start = start.max(hot.reads_until);
                let cost = match owner {
                    Some(o) => topo.xfer_ns(o as usize, cpu),
                    None => match self.groups.sharer_xfer_bounds(hot, &self.held, id, cpu) {
                        Some((_, farthest)) => farthest,
                        None => topo.xfer_ns(hot.last as usize, cpu),
                    },
                } as u64;
                // a figure measured by CAS ping-pong already contains the locked instruction
                let op_ns = match owner {
                    Some(o) if op == Op::Atomic && topo.cas_measured(o as usize, cpu) => 0,
                    _ => locked(op),
                };
                let visible = served_at(start, at, cost) + op_ns;
                hot.free_at = visible;
                let from = owner.unwrap_or(hot.last) as usize;
                if from != cpu {
                    line.stats.handoffs[handoff_distance(topo, from, cpu)] += 1;
                }
                if op == Op::Atomic {
                    // the core keeps a line it has just done a locked RMW on a little while
                    hot.free_at += hold;
                }
                if let Some(o) = owner {
                    line.push_handoff(hot, o, start, self.nr_cpus);
                }
                hot.set_owner(&mut self.held, id, c);
                hot.owner_ready_at = visible;
                hot.last = c;
                // a store retires into the store buffer: the CPU does not wait for the line
                let done = if op == Op::Store {
                    now + HIT_NS
                } else {
                    visible
                };
                (
                    done,
                    visible,
                    modified_elsewhere.is_some() && op == Op::Atomic,
                )
            }
        };
        if let (true, Some(prev)) = (hitm, modified_elsewhere) {
            line.fields[field].hitm += 1;
            if topo.same_socket(prev as usize, cpu) {
                line.stats.hitm_local += 1;
            } else {
                line.stats.hitm_remote += 1;
            }
        }
        hot.stall_ns += done - now;
        Access {
            done,
            visible,
            hitm,
        }
    }
}

#[cfg(test)]
mod tests;
