//! SLUB's per-CPU allocation and free of kernel objects (v6.18 mm/slub.c, classic per-CPU slabs:
//! `skbuff_cache`, `skbuff_fclone_cache`, kmalloc and `skb_small_head_cache` have no sheaves), as
//! kernel steps (`Step::Kernel`) on per-CPU lines (`Workload::per_cpu_kernel_lines`): each cache is
//! two lines of a CPU, the next object its freelist hands out and its current slab's `struct
//! slab`. Shared by every workload whose messages are slab objects (hackbench's AF_UNIX skbs, the
//! TCP path's skbs):
//! - allocation pops the CPU's lockless freelist (`this_cpu_cmpxchg`); when it runs dry,
//!   `___slab_alloc` → `get_freelist` takes the chain freed to the slab with one cmpxchg on its
//!   `struct slab` (once per `SLAB_OBJECTS` allocations);
//! - a free on another CPU than the slab's is `__slab_free`: the free pointer written into the
//!   object, then a cmpxchg on the allocating CPU's `struct slab` (one of that CPU's lines; a
//!   locked hit when both run on one CPU).

use super::syscall::{KernelAccess, KernelFn, KernelLine, KernelStep};

/// One SLUB allocation or free with memcg accounting: half of the 68 ns of a
/// `kmem_cache_alloc`+`kmem_cache_free` pair of an accounted 64-byte object [R: WL-V1; the half
/// split A].
pub const SLAB_OP_NS: u64 = 34;
/// Objects a CPU takes from its slab per refill (`get_freelist`: one cmpxchg on `struct slab` for
/// the chain freed to it) [A: 32; `calculate_order` gives 16–64 for 256- and 512-byte objects].
pub const SLAB_OBJECTS: u32 = 32;

/// A cache's two per-CPU lines: indices into `Workload::per_cpu_kernel_lines`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cache {
    /// The next object the CPU's freelist hands out.
    pub object: u32,
    /// Its slab's `struct slab` (freelist, counters).
    pub slab: u32,
}

/// Counts one task's allocations from its CPU's freelists: every `SLAB_OBJECTS`th finds them dry.
#[derive(Clone, Copy, Debug, Default)]
pub struct Freelist {
    allocs: u32,
}

impl Freelist {
    /// One more allocation; true when it refills from the slab.
    pub fn alloc(&mut self) -> bool {
        self.allocs = self.allocs.wrapping_add(1);
        self.allocs.is_multiple_of(SLAB_OBJECTS)
    }
}

/// One object from each of `caches` on the running CPU (`mine` names its lines): the pops'
/// compute (`op_ns` each; 0 when the caller's own figure already holds it) and, when `refill`,
/// the cmpxchg on each slab. The object's initialisation (its stores) is the caller's, charged to
/// the caller's function.
pub fn alloc(
    out: &mut Vec<KernelStep>,
    caches: &[Cache],
    mine: impl Fn(u32) -> KernelLine,
    refill: bool,
    op_ns: u64,
) {
    if op_ns > 0 {
        out.push(KernelStep::Compute {
            func: KernelFn::SlabAlloc,
            ns: caches.len() as u64 * op_ns,
        });
    }
    if refill {
        for c in caches {
            out.push(access(
                mine(c.slab),
                KernelAccess::Atomic,
                KernelFn::SlabAlloc,
            ));
        }
    }
}

/// Frees one object of each of `caches`, in that order, to the slabs of the CPU `theirs` names
/// (`__slab_free`: the free pointer into the object, the cmpxchg on `struct slab`).
pub fn free(
    out: &mut Vec<KernelStep>,
    caches: &[Cache],
    theirs: impl Fn(u32) -> KernelLine,
    op_ns: u64,
) {
    if op_ns > 0 {
        out.push(KernelStep::Compute {
            func: KernelFn::SlabFree,
            ns: caches.len() as u64 * op_ns,
        });
    }
    for c in caches {
        out.push(access(
            theirs(c.object),
            KernelAccess::Store,
            KernelFn::SlabFree,
        ));
        out.push(access(
            theirs(c.slab),
            KernelAccess::Atomic,
            KernelFn::SlabFree,
        ));
    }
}

fn access(line: KernelLine, op: KernelAccess, func: KernelFn) -> KernelStep {
    KernelStep::Access { line, op, func }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_refills_its_freelist_once_every_slab_objects_allocations() {
        let mut f = Freelist::default();
        let refills = (0..10 * SLAB_OBJECTS).filter(|_| f.alloc()).count();
        assert_eq!(refills, 10);
    }

    #[test]
    fn a_remote_free_writes_the_object_then_cmpxchgs_the_allocating_cpus_slab() {
        let mut s = Vec::new();
        let c = Cache { object: 0, slab: 1 };
        free(&mut s, &[c], |line| KernelLine::PerCpu { line, of: 7 }, 0);
        let lines: Vec<_> = s
            .iter()
            .map(|k| match k {
                KernelStep::Access { line, op, .. } => (*line, *op),
                _ => panic!("no compute asked"),
            })
            .collect();
        assert_eq!(
            lines,
            [
                (KernelLine::PerCpu { line: 0, of: 7 }, KernelAccess::Store),
                (KernelLine::PerCpu { line: 1, of: 7 }, KernelAccess::Atomic)
            ]
        );
    }
}
