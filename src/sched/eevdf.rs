//! EEVDF arithmetic of kernel/sched/fair.c and core.c (v6.18), bit-exact: the nice-to-weight
//! tables, `calc_delta_fair` with the 32-bit `inv_weight` fixed point, the entity state
//! (`struct sched_entity`'s EEVDF fields) and the base slice. The run-queue operations that use
//! them (avg_vruntime, pick_eevdf, place_entity, ...) are in `rq.rs`.

/// `scale_load_down(NICE_0_LOAD)`: the weight of a nice-0 task (all sums use down-scaled weights).
pub const NICE_0_WEIGHT: u32 = 1024;

/// `sched_prio_to_weight[]` (core.c), nice −20..19.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]` (core.c): 2^32 / weight.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `normalized_sysctl_sched_base_slice` (fair.c, v6.16+): 0.70 ms.
pub const NORMALIZED_BASE_SLICE_NS: u64 = 700_000;

/// `sysctl_sched_base_slice` as `update_sysctl()` scales it at boot (SCHED_TUNABLESCALING_LOG):
/// × (1 + ilog2(min(online CPUs, 8))).
pub fn sysctl_sched_base_slice(nr_cpus: usize) -> u64 {
    let cpus = nr_cpus.clamp(1, 8) as u64;
    NORMALIZED_BASE_SLICE_NS * (1 + cpus.ilog2() as u64)
}

fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// `__calc_delta(delta, weight, lw)`: delta · weight / lw.weight through `inv_weight` (2^32/w),
/// renormalised to 32 bits, then `mul_u64_u32_shr`.
pub fn calc_delta(delta: u64, weight: u64, inv_weight: u32) -> u64 {
    let mut fact = weight;
    let mut shift = 32u32;
    let hi = (fact >> 32) as u32;
    if hi != 0 {
        let fs = fls(hi);
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact as u32 as u64) * inv_weight as u64; // mul_u32_u32
    let hi = (fact >> 32) as u32;
    if hi != 0 {
        let fs = fls(hi);
        shift -= fs;
        fact >>= fs;
    }
    ((delta as u128 * fact as u128) >> shift) as u64
}

/// True when virtual time `a` is before `b` (`(s64)(a − b) < 0`: vruntimes wrap).
pub fn before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// The EEVDF part of `struct sched_entity` (a task; no group entities: no cgroups).
#[derive(Clone, Debug)]
pub(crate) struct Entity {
    /// `scale_load_down(load.weight)`.
    pub weight: u32,
    pub inv_weight: u32,
    pub vruntime: u64,
    /// Virtual deadline (relative to vruntime while `rel_deadline`).
    pub deadline: u64,
    /// V − vruntime, saved at dequeue (valid while not on a run queue).
    pub vlag: i64,
    /// RUN_TO_PARITY protection point, set when picked (valid while curr).
    pub vprot: u64,
    /// Requested slice, ns.
    pub slice: u64,
    pub rel_deadline: bool,
    /// DELAY_DEQUEUE: blocked but still queued until picked or woken.
    pub sched_delayed: bool,
    /// PELT averages (`se->avg`).
    pub avg: super::pelt::SchedAvg,
}

impl Entity {
    pub fn new(nice: i32, slice: u64) -> Entity {
        let i = (nice.clamp(-20, 19) + 20) as usize;
        Entity {
            weight: SCHED_PRIO_TO_WEIGHT[i],
            inv_weight: SCHED_PRIO_TO_WMULT[i],
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            vprot: 0,
            slice,
            rel_deadline: false,
            sched_delayed: false,
            avg: Default::default(),
        }
    }

    /// `calc_delta_fair(delta, se)`: wall time → this entity's virtual time.
    pub fn calc_delta_fair(&self, delta: u64) -> u64 {
        if self.weight == NICE_0_WEIGHT {
            delta
        } else {
            calc_delta(delta, NICE_0_WEIGHT as u64, self.inv_weight)
        }
    }

    /// `protect_slice()`: RUN_TO_PARITY keeps curr until it reaches `vprot`.
    pub fn protect_slice(&self) -> bool {
        (self.vprot.wrapping_sub(self.vruntime) as i64) > 0
    }

    /// `update_deadline()`: once vruntime reaches the deadline, a new request of one slice.
    pub fn update_deadline(&mut self, base_slice: u64) -> bool {
        if before(self.vruntime, self.deadline) {
            return false;
        }
        self.slice = base_slice;
        self.deadline = self.vruntime.wrapping_add(self.calc_delta_fair(self.slice));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_slice_scales_as_update_sysctl() {
        assert_eq!(sysctl_sched_base_slice(1), 700_000);
        assert_eq!(sysctl_sched_base_slice(2), 1_400_000);
        assert_eq!(sysctl_sched_base_slice(7), 2_100_000);
        assert_eq!(sysctl_sched_base_slice(512), 2_800_000);
    }

    #[test]
    fn calc_delta_fair_matches_the_weight_ratio() {
        // nice 0 is the identity; nice 5 (335) runs 1024/335 faster in virtual time.
        assert_eq!(Entity::new(0, 1).calc_delta_fair(1_000_000), 1_000_000);
        let v = Entity::new(5, 1).calc_delta_fair(1_000_000);
        // by hand: fact = 1024·12820798 = 13128497152 (> 2^32: fls(3) = 2, shift 30,
        // fact 3282124288); 1e6·3282124288 >> 30 = 3056716 (1024/335 = 3.05672)
        assert_eq!(v, 3_056_716);
        let v = Entity::new(-5, 1).calc_delta_fair(1_000_000);
        // 1024·1376151 = 1409178624 < 2^32: 1e6·1409178624 >> 32 = 328099
        assert_eq!(v, 328_099);
    }
}
