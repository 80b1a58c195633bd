//! Loads read in bulk: a balance pass reads every run-queue line of a domain (update_sg_lb_stats),
//! most of them a hit or a clean miss of a line other CPUs share. `Coherence::load` is what
//! `load_hit` then `access(.., Op::Load, ..)` (its request leg, then its service) do, with those two
//! cases computed in one pass instead of through the general request and service paths: the same
//! arithmetic on the same state, in the same order, so what a line holds and counts afterwards is
//! the same. Every other case (a HITM, a line being handed off) goes through `access`.

use super::home::HomeLegs;
use super::{Coherence, Groups, HIT_NS, Held, Hot, LineId, Op, served_at};
use crate::machine::topology::Topology;

/// What the loads of one CPU look up once instead of once per line (a balance pass reads every
/// run-queue line of a domain): the CPU's group, its bit in a line's sharer mask, its coherence
/// domain, and its group's nearest other group. One per CPU, made with the line model.
#[derive(Clone, Copy, Debug)]
pub struct Reader {
    cpu: usize,
    group: usize,
    /// The word and bit of its slot in `Held` (`Groups::slot`).
    word: usize,
    /// Where the CPU's word of line 0 is in `Held::bits` (`word * stride`), set by `reader` for
    /// the lines there are then, and `Held::stride` then.
    held_at: usize,
    stride: usize,
    bit: u64,
    /// `HomeLegs::domain_of` of the CPU.
    domain: u32,
    /// `Groups::nearest_other_ns` of its group.
    nearest_other_ns: u32,
    /// Its only other CPU of its cluster (by its slot) and that one's transfer latency, when the
    /// cluster has exactly two (SMT2 without L2 clusters): `Groups::cluster_ns` without a loop.
    sibling: Option<(u32, u32)>,
}

impl Reader {
    pub(super) fn all(groups: &Groups, homes: &HomeLegs) -> Vec<Reader> {
        (0..groups.of_cpu.len())
            .map(|cpu| {
                let group = groups.of_cpu[cpu] as usize;
                let slot = groups.slot[cpu] as usize;
                Reader {
                    cpu,
                    group,
                    word: slot / 64,
                    held_at: 0,
                    stride: 0,
                    bit: 1 << (slot % 64),
                    domain: homes.domain_of[cpu],
                    nearest_other_ns: groups.nearest_other_ns[group],
                    sibling: match *groups.cluster_ns[cpu] {
                        [only] => Some(only),
                        _ => None,
                    },
                }
            })
            .collect()
    }
}

impl Groups {
    /// The nearest transfer latency to `r`'s CPU from the sharers of the line `id`, the CPU (whose
    /// group holds `n` of them) not among them: the first of `sharer_xfer_bounds`, without
    /// looking for the farthest.
    #[inline(always)]
    fn nearest_sharer_ns(
        &self,
        line: &Hot,
        held: &Held,
        id: LineId,
        r: &Reader,
        n: u32,
    ) -> Option<u32> {
        let mut lo = u32::MAX;
        if n > 0 {
            let mut others = n;
            let mut note = |(s, ns): (u32, u32)| {
                if held.has_slot(id, s) {
                    lo = lo.min(ns);
                    others -= 1;
                }
            };
            match r.sibling {
                Some(sib) => note(sib),
                None => self.cluster_ns[r.cpu].iter().copied().for_each(note),
            }
            if others > 0 {
                lo = lo.min(self.llc_ns);
            }
        }
        // the other groups, unless a copy is already as near as the nearest of them (the usual
        // case: a run-queue line read by many CPUs of the reader's LLC)
        if line.nr_sharers != n && lo > r.nearest_other_ns {
            let k = self.rep.len() - 1;
            let order = &self.nearest_first[r.group * k..(r.group + 1) * k];
            let groups = held.groups_of(id);
            if let Some(&(_, ns)) = order.iter().find(|&&(g, _)| groups[g as usize] > 0) {
                lo = lo.min(ns);
            }
        }
        (lo < u32::MAX).then_some(lo)
    }
}

impl Coherence {
    /// What `cpu`'s loads look up (`load_by`), for the lines there are now: a reader taken before
    /// an `add_line` must not be used after it (debug builds check).
    #[inline]
    pub fn reader(&self, cpu: usize) -> Reader {
        let r = self.readers[cpu];
        let stride = self.held.stride;
        Reader {
            held_at: r.word * stride,
            stride,
            ..r
        }
    }

    /// A load by `cpu` of field `field` of `id` issued at `now`: a hit counted as `load_hit` counts
    /// it, else served as `access` serves it. Returns its stall (done − now).
    #[inline]
    pub fn load(&mut self, topo: &Topology, id: LineId, cpu: usize, field: usize, now: u64) -> u64 {
        let r = self.reader(cpu);
        self.load_by(topo, &r, id, field, now)
    }

    /// `load` by the reader `r` (`reader`). The hit is checked in line (a balance pass hits about
    /// half the lines it reads).
    #[inline]
    pub fn load_by(
        &mut self,
        topo: &Topology,
        r: &Reader,
        id: LineId,
        field: usize,
        now: u64,
    ) -> u64 {
        if self.hit(r, id, field) {
            return HIT_NS;
        }
        self.load_miss(topo, r, id, field, now)
    }

    /// `load_by` for a loop of loads (a balance pass): the same, with the clean miss in line too,
    /// so a pass of misses does not save and restore registers per line.
    #[inline(always)]
    pub fn load_in_pass(
        &mut self,
        topo: &Topology,
        r: &Reader,
        id: LineId,
        field: usize,
        now: u64,
    ) -> u64 {
        if self.hit(r, id, field) {
            return HIT_NS;
        }
        self.clean_miss(topo, r, id, field, now)
    }

    /// Whether the reader `r` holds `id` (it owns it Modified, or is a sharer); a hit is counted
    /// as a load of the line's field. Touches two dense arrays and no line (`Held`).
    #[inline(always)]
    pub(super) fn hit(&mut self, r: &Reader, id: LineId, field: usize) -> bool {
        debug_assert_eq!(r.stride, self.held.stride, "a reader from before add_line");
        let hit = self.held.bits[r.held_at + id] & r.bit != 0;
        if hit {
            self.count_load(id, field);
        }
        hit
    }

    /// `load` of a line not in the reader's cache.
    #[inline(never)]
    fn load_miss(
        &mut self,
        topo: &Topology,
        r: &Reader,
        id: LineId,
        field: usize,
        now: u64,
    ) -> u64 {
        self.clean_miss(topo, r, id, field, now)
    }

    /// `load_miss`: the clean miss here, the rest through `load_contended`.
    #[inline(always)]
    fn clean_miss(
        &mut self,
        topo: &Topology,
        r: &Reader,
        id: LineId,
        field: usize,
        now: u64,
    ) -> u64 {
        let line = &mut self.hot[id];
        if line.nr_handoffs > 0 {
            // (the rest of the line only then)
            self.lines[id].forget_handoffs_before(line, now);
        }
        if line.owner.is_some() || line.nr_handoffs > 0 {
            return self.load_contended(topo, id, r.cpu, field, now);
        }
        // A clean miss: nobody holds the line Modified, the reader has no copy (`load_by` said
        // so), no hand-off pending.
        // request_leg: ordered in the requester's domain when a copy is there, else at the home
        // (forwarded to the last holder's domain when that is elsewhere).
        let my_group = id * self.held.nr_groups + r.group; // in `Held::groups`
        let in_group = u32::from(self.held.groups[my_group]);
        let last = line.last as usize;
        let leg = if in_group > 0 || line.nr_sharers > 0 && self.homes.domain_of[last] == r.domain {
            self.groups.llc_leg
        } else {
            let home = line.home;
            let to_home = self.homes.to_node(r.group as u32, home);
            let holder_home =
                topo.cpus[last].node == home || self.homes.domain_holds_node(topo, last, home);
            let forward = if line.nr_sharers == 0 || holder_home {
                0
            } else {
                self.homes.to_node(self.groups.of_cpu[last], home)
            };
            to_home + forward
        };
        // serve: from the nearest copy, after the ownership transfers queued before it
        self.field_loads[self.first_load[id] as usize + field] += 1;
        let at = now + leg;
        let start = now.max(line.free_at);
        let nearest = match self
            .groups
            .nearest_sharer_ns(line, &self.held, id, r, in_group)
        {
            Some(lo) => lo,
            None => topo.xfer_ns(last, r.cpu),
        };
        // add_new_sharer
        self.held.bits[r.held_at + id] |= r.bit;
        line.held_words |= 1 << r.word;
        line.nr_sharers += 1;
        self.held.groups[my_group] += 1;
        let done = served_at(start, at, nearest as u64);
        line.reads_until = line.reads_until.max(done);
        line.stall_ns += done - now;
        done - now
    }

    /// `load_miss` of a line modified elsewhere or with a hand-off still ahead (it may still be in
    /// `cpu`'s cache): the general path. Out of line, so the clean miss saves fewer registers.
    #[cold]
    #[inline(never)]
    fn load_contended(
        &mut self,
        topo: &Topology,
        id: LineId,
        cpu: usize,
        field: usize,
        now: u64,
    ) -> u64 {
        self.access(topo, id, cpu, Op::Load, field, now).done - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;

    /// Two copies of the same lines, driven by the same random stores, atomics and loads at rising
    /// times, one loading through `load` or `load_in_pass`, the other through `load_hit` then `access`: every load costs the same
    /// and every line ends in the same state with the same counters.
    #[test]
    fn load_is_access_for_a_load() {
        let mut rng = crate::sim::rng::SimRng::new(5);
        for name in ["gnr-2s-snc3", "milan-2s"] {
            let t = Topology::new(preset(name).unwrap()).unwrap();
            let n = t.nr_cpus() as u64;
            let (mut a, mut b) = (Coherence::new(&t), Coherence::new(&t));
            for cc in [&mut a, &mut b] {
                for l in 0..4 {
                    let id = cc.add_line(format!("l{l}"), &[(0, "x"), (8, "y")]);
                    cc.set_home_near(id, (l * 37) % n as usize);
                }
            }
            let (mut now, mut misses) = (0u64, 0);
            for _ in 0..20_000 {
                now += rng.below(40);
                let id = rng.below(4) as usize;
                // a few CPUs read often (hits), the rest rarely
                let cpu = if rng.below(2) == 0 {
                    rng.below(8)
                } else {
                    rng.below(n)
                } as usize;
                let f = rng.below(2) as usize;
                match rng.below(10) {
                    0 => {
                        let op = [Op::Store, Op::Atomic][rng.below(2) as usize];
                        assert_eq!(
                            a.access(&t, id, cpu, op, f, now),
                            b.access(&t, id, cpu, op, f, now)
                        );
                    }
                    1 => {
                        a.owner_wrote(id, cpu, f, now);
                        b.owner_wrote(id, cpu, f, now);
                    }
                    _ => {
                        let want = if b.load_hit(id, cpu, f) {
                            HIT_NS
                        } else {
                            b.access(&t, id, cpu, Op::Load, f, now).done - now
                        };
                        // half through a pass's in-line path, with the reader looked up once
                        let got = if now % 2 == 0 {
                            a.load(&t, id, cpu, f, now)
                        } else {
                            let r = a.reader(cpu);
                            a.load_in_pass(&t, &r, id, f, now)
                        };
                        assert_eq!(got, want, "{name}: load of line {id} by {cpu} at {now}");
                        misses += u32::from(want > HIT_NS);
                    }
                }
            }
            assert!(misses > 1000, "{name}: {misses} misses");
            let state = |c: &Coherence| {
                let stats: Vec<_> = (0..c.lines.len())
                    .map(|l| (c.stats(l), c.fields(l)))
                    .collect();
                format!("{:?} {:?} {:?} {:?}", c.hot, c.lines, c.held, stats)
            };
            assert_eq!(state(&a), state(&b), "{name}");
        }
    }
}
