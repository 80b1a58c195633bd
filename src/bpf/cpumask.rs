//! The generic cpumask kfuncs of kernel/bpf/cpumask.c (v6.18): `struct bpf_cpumask` objects a
//! program creates, reference-counts and stores as `__kptr`s (`bpf_kptr_xchg`), and the
//! read-only `const struct cpumask *` ones a host lends (an idle mask, `p->cpus_ptr`). A cpumask
//! is a region of `nr_cpus` bits rounded up to whole `unsigned long`s, bit `c` for CPU `c`, as
//! the kernel's bitmap is; the kfuncs read and write it through the checked memory, so a mask the
//! program released (its bytes are dropped) faults on the next use.

use super::memory::{Fault, Memory};
use super::target::Kfunc;
use super::vm::CallError;
use std::collections::BTreeMap;

/// Kfunc ids of this module (a host's `Target` lists them with its own).
pub mod id {
    pub const CREATE: i32 = 1000;
    pub const ACQUIRE: i32 = 1001;
    pub const RELEASE: i32 = 1002;
    pub const FIRST: i32 = 1003;
    pub const FIRST_ZERO: i32 = 1004;
    pub const FIRST_AND: i32 = 1005;
    pub const SET_CPU: i32 = 1006;
    pub const CLEAR_CPU: i32 = 1007;
    pub const TEST_CPU: i32 = 1008;
    pub const TEST_AND_SET_CPU: i32 = 1009;
    pub const TEST_AND_CLEAR_CPU: i32 = 1010;
    pub const SETALL: i32 = 1011;
    pub const CLEAR: i32 = 1012;
    pub const AND: i32 = 1013;
    pub const OR: i32 = 1014;
    pub const XOR: i32 = 1015;
    pub const EQUAL: i32 = 1016;
    pub const INTERSECTS: i32 = 1017;
    pub const SUBSET: i32 = 1018;
    pub const EMPTY: i32 = 1019;
    pub const FULL: i32 = 1020;
    pub const COPY: i32 = 1021;
    pub const ANY_DISTRIBUTE: i32 = 1022;
    pub const ANY_AND_DISTRIBUTE: i32 = 1023;
    pub const WEIGHT: i32 = 1024;
    pub const ITER_NUM_NEW: i32 = 1030;
    pub const ITER_NUM_NEXT: i32 = 1031;
    pub const ITER_NUM_DESTROY: i32 = 1032;
}

const fn k(name: &'static str, id: i32, params: u8) -> Kfunc {
    Kfunc { name, id, params }
}

/// kernel/bpf/cpumask.c's kfuncs and the numeric open-coded iterator (kernel/bpf/bpf_iter.c),
/// with their parameter counts.
pub const KFUNCS: &[Kfunc] = &[
    k("bpf_cpumask_create", id::CREATE, 0),
    k("bpf_cpumask_acquire", id::ACQUIRE, 1),
    k("bpf_cpumask_release", id::RELEASE, 1),
    k("bpf_cpumask_first", id::FIRST, 1),
    k("bpf_cpumask_first_zero", id::FIRST_ZERO, 1),
    k("bpf_cpumask_first_and", id::FIRST_AND, 2),
    k("bpf_cpumask_set_cpu", id::SET_CPU, 2),
    k("bpf_cpumask_clear_cpu", id::CLEAR_CPU, 2),
    k("bpf_cpumask_test_cpu", id::TEST_CPU, 2),
    k("bpf_cpumask_test_and_set_cpu", id::TEST_AND_SET_CPU, 2),
    k("bpf_cpumask_test_and_clear_cpu", id::TEST_AND_CLEAR_CPU, 2),
    k("bpf_cpumask_setall", id::SETALL, 1),
    k("bpf_cpumask_clear", id::CLEAR, 1),
    k("bpf_cpumask_and", id::AND, 3),
    k("bpf_cpumask_or", id::OR, 3),
    k("bpf_cpumask_xor", id::XOR, 3),
    k("bpf_cpumask_equal", id::EQUAL, 2),
    k("bpf_cpumask_intersects", id::INTERSECTS, 2),
    k("bpf_cpumask_subset", id::SUBSET, 2),
    k("bpf_cpumask_empty", id::EMPTY, 1),
    k("bpf_cpumask_full", id::FULL, 1),
    k("bpf_cpumask_copy", id::COPY, 2),
    k("bpf_cpumask_any_distribute", id::ANY_DISTRIBUTE, 1),
    k("bpf_cpumask_any_and_distribute", id::ANY_AND_DISTRIBUTE, 2),
    k("bpf_cpumask_weight", id::WEIGHT, 1),
    k("bpf_iter_num_new", id::ITER_NUM_NEW, 3),
    k("bpf_iter_num_next", id::ITER_NUM_NEXT, 1),
    k("bpf_iter_num_destroy", id::ITER_NUM_DESTROY, 1),
];

/// The bytes of a cpumask of `nr_cpus` bits (whole 64-bit words, at least one).
pub fn mask_bytes(nr_cpus: u32) -> usize {
    (nr_cpus as usize).div_ceil(64).max(1) * 8
}

/// The `bpf_cpumask` objects of one loaded program and the state of `cpumask_any_distribute`.
#[derive(Clone, Debug, Default)]
pub struct Cpumasks {
    pub nr_cpus: u32,
    /// Live `bpf_cpumask`s: address → reference count.
    pub refs: BTreeMap<u64, u32>,
    pub created: u64,
    pub freed: u64,
    /// `distribute_cpu_mask_prev` (lib/cpumask.c), one for the machine here.
    prev: u32,
}

fn bits(mem: &Memory, a: u64, n: u32) -> Result<Vec<bool>, Fault> {
    let b = mem.slice(a, mask_bytes(n))?;
    Ok((0..n as usize)
        .map(|c| b[c / 8] >> (c % 8) & 1 == 1)
        .collect())
}

fn put(mem: &mut Memory, a: u64, v: &[bool]) -> Result<(), Fault> {
    let b = mem.slice_mut(a, mask_bytes(v.len() as u32))?;
    b.fill(0);
    for (c, &on) in v.iter().enumerate() {
        if on {
            b[c / 8] |= 1 << (c % 8);
        }
    }
    Ok(())
}

/// Writes `v` into a mask the host owns (read-only to programs).
pub fn poke(mem: &mut Memory, a: u64, v: &[bool]) -> Result<(), Fault> {
    let mut b = vec![0u8; mask_bytes(v.len() as u32)];
    for (c, &on) in v.iter().enumerate() {
        if on {
            b[c / 8] |= 1 << (c % 8);
        }
    }
    mem.poke(a, &b)
}

/// The bits of mask `a` (for hosts and tests).
pub fn read(mem: &Memory, a: u64, nr_cpus: u32) -> Result<Vec<bool>, Fault> {
    bits(mem, a, nr_cpus)
}

fn first(v: &[bool], want: bool) -> u64 {
    v.iter().position(|&b| b == want).unwrap_or(v.len()) as u64
}

impl Cpumasks {
    pub fn new(nr_cpus: u32) -> Self {
        Cpumasks {
            nr_cpus,
            ..Default::default()
        }
    }

    /// A host-lent cpumask region with these bits (read-only to programs).
    pub fn lend(&self, mem: &mut Memory, name: &str, v: &[bool]) -> u64 {
        let a = mem.add(name.to_string(), vec![0; mask_bytes(self.nr_cpus)], false);
        let _ = poke(mem, a, v);
        a
    }

    /// `cpumask_any_distribute`: the next set CPU after the last one given, wrapping.
    fn distribute(&mut self, v: &[bool]) -> u64 {
        let n = v.len();
        let start = (self.prev as usize + 1) % n.max(1);
        match (0..n).map(|i| (start + i) % n).find(|&c| v[c]) {
            Some(c) => {
                self.prev = c as u32;
                c as u64
            }
            None => n as u64,
        }
    }

    /// Runs kfunc `id` if it is this module's; `Err(Unknown)` otherwise.
    pub fn call(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        let n = self.nr_cpus;
        let cpu_ok = |c: u64| (c as u32) < n;
        let get = |mem: &Memory, x: u64| bits(mem, x, n);
        Ok(match id {
            id::CREATE => {
                let addr = mem.add(
                    format!("bpf_cpumask #{}", self.created),
                    vec![0; mask_bytes(n)],
                    true,
                );
                self.created += 1;
                self.refs.insert(addr, 1);
                addr
            }
            id::ACQUIRE => {
                match self.refs.get_mut(&a[0]) {
                    Some(r) => *r += 1,
                    None => {
                        return Err(CallError::Failed(format!(
                            "bpf_cpumask_acquire: {:#x} is not a live bpf_cpumask",
                            a[0]
                        )));
                    }
                }
                a[0]
            }
            id::RELEASE => {
                let Some(r) = self.refs.get_mut(&a[0]) else {
                    return Err(CallError::Failed(format!(
                        "bpf_cpumask_release: {:#x} is not a live bpf_cpumask",
                        a[0]
                    )));
                };
                *r -= 1;
                if *r == 0 {
                    self.refs.remove(&a[0]);
                    self.freed += 1;
                    // freed: a later use through a stale pointer faults
                    if let Some(reg) = mem.region_mut(a[0]) {
                        reg.data.clear();
                    }
                }
                0
            }
            id::FIRST => first(&get(mem, a[0])?, true),
            id::FIRST_ZERO => first(&get(mem, a[0])?, false),
            id::FIRST_AND => {
                let (x, y) = (get(mem, a[0])?, get(mem, a[1])?);
                (0..n as usize)
                    .find(|&c| x[c] && y[c])
                    .unwrap_or(n as usize) as u64
            }
            id::SET_CPU | id::CLEAR_CPU => {
                if cpu_ok(a[0]) {
                    let mut v = get(mem, a[1])?;
                    v[a[0] as usize] = id == id::SET_CPU;
                    put(mem, a[1], &v)?;
                }
                0
            }
            id::TEST_CPU => (cpu_ok(a[0]) && get(mem, a[1])?[a[0] as usize]) as u64,
            id::TEST_AND_SET_CPU | id::TEST_AND_CLEAR_CPU => {
                if !cpu_ok(a[0]) {
                    return Ok(0);
                }
                let mut v = get(mem, a[1])?;
                let old = v[a[0] as usize];
                v[a[0] as usize] = id == id::TEST_AND_SET_CPU;
                put(mem, a[1], &v)?;
                old as u64
            }
            id::SETALL | id::CLEAR => {
                put(mem, a[0], &vec![id == id::SETALL; n as usize])?;
                0
            }
            id::AND | id::OR | id::XOR => {
                let (x, y) = (get(mem, a[1])?, get(mem, a[2])?);
                let v: Vec<bool> = x
                    .iter()
                    .zip(&y)
                    .map(|(&p, &q)| match id {
                        id::AND => p && q,
                        id::OR => p || q,
                        _ => p ^ q,
                    })
                    .collect();
                put(mem, a[0], &v)?;
                // and returns whether the result is non-empty; or/xor return nothing
                (id == id::AND && v.iter().any(|&b| b)) as u64
            }
            id::EQUAL => (get(mem, a[0])? == get(mem, a[1])?) as u64,
            id::INTERSECTS => {
                let (x, y) = (get(mem, a[0])?, get(mem, a[1])?);
                x.iter().zip(&y).any(|(&p, &q)| p && q) as u64
            }
            id::SUBSET => {
                let (x, y) = (get(mem, a[0])?, get(mem, a[1])?);
                x.iter().zip(&y).all(|(&p, &q)| !p || q) as u64
            }
            id::EMPTY => !get(mem, a[0])?.iter().any(|&b| b) as u64,
            id::FULL => get(mem, a[0])?.iter().all(|&b| b) as u64,
            id::COPY => {
                let v = get(mem, a[1])?;
                put(mem, a[0], &v)?;
                0
            }
            id::ANY_DISTRIBUTE => {
                let v = get(mem, a[0])?;
                self.distribute(&v)
            }
            id::ANY_AND_DISTRIBUTE => {
                let (x, y) = (get(mem, a[0])?, get(mem, a[1])?);
                let v: Vec<bool> = x.iter().zip(&y).map(|(&p, &q)| p && q).collect();
                self.distribute(&v)
            }
            id::WEIGHT => get(mem, a[0])?.iter().filter(|&&b| b).count() as u64,
            id::ITER_NUM_NEW => iter_num_new(mem, a[0], a[1] as i32, a[2] as i32)?,
            id::ITER_NUM_NEXT => iter_num_next(mem, a[0])?,
            id::ITER_NUM_DESTROY => {
                mem.store(a[0], 8, 0)?;
                0
            }
            _ => return Err(CallError::Unknown),
        })
    }
}

/// `bpf_iter_num_new(it, start, end)` (kernel/bpf/bpf_iter.c): the 8-byte iterator holds
/// `{int cur; int end;}`; an empty or too long range gives an empty iterator (and -EINVAL /
/// -E2BIG, as `BPF_MAX_LOOPS` bounds it).
fn iter_num_new(mem: &mut Memory, it: u64, start: i32, end: i32) -> Result<u64, Fault> {
    let empty = |mem: &mut Memory, e: i64| -> Result<u64, Fault> {
        mem.store(it, 8, 0)?;
        Ok(e as u64)
    };
    if start > end {
        return empty(mem, -22);
    }
    if (end as i64 - start as i64) as u64 > super::vm::BPF_MAX_LOOPS {
        return empty(mem, -7);
    }
    mem.store(it, 4, (start as i64 - 1) as u32 as u64)?;
    mem.store(it + 4, 4, end as u32 as u64)?;
    Ok(0)
}

/// `bpf_iter_num_next`: a pointer to the next value (the iterator's own `cur`), or NULL.
fn iter_num_next(mem: &mut Memory, it: u64) -> Result<u64, Fault> {
    let cur = mem.load(it, 4)? as u32 as i32 as i64;
    let end = mem.load(it + 4, 4)? as u32 as i32 as i64;
    if cur + 1 >= end {
        mem.store(it, 8, 0)?;
        return Ok(0);
    }
    mem.store(it, 4, (cur + 1) as u32 as u64)?;
    Ok(it)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(m: &mut Cpumasks, mem: &mut Memory, a: u64, cpus: &[u64]) {
        for &c in cpus {
            m.call(id::SET_CPU, [c, a, 0, 0, 0], mem).unwrap();
        }
    }

    #[test]
    fn set_operations_follow_the_bitmaps() {
        let mut mem = Memory::new();
        let mut m = Cpumasks::new(70);
        let x = m.call(id::CREATE, [0; 5], &mut mem).unwrap();
        let y = m.call(id::CREATE, [0; 5], &mut mem).unwrap();
        let d = m.call(id::CREATE, [0; 5], &mut mem).unwrap();
        set(&mut m, &mut mem, x, &[1, 65, 69]);
        set(&mut m, &mut mem, y, &[65, 3]);
        // a CPU past nr_cpus is ignored, as cpumask_set_cpu's kfunc checks it
        set(&mut m, &mut mem, y, &[70, 1000]);
        let call = |m: &mut Cpumasks, mem: &mut Memory, f, a: [u64; 5]| m.call(f, a, mem).unwrap();
        assert_eq!(call(&mut m, &mut mem, id::WEIGHT, [x, 0, 0, 0, 0]), 3);
        assert_eq!(call(&mut m, &mut mem, id::AND, [d, x, y, 0, 0]), 1);
        assert_eq!(read(&mem, d, 70).unwrap().iter().filter(|&&b| b).count(), 1);
        assert_eq!(call(&mut m, &mut mem, id::FIRST, [d, 0, 0, 0, 0]), 65);
        call(&mut m, &mut mem, id::XOR, [d, x, y, 0, 0]);
        assert_eq!(call(&mut m, &mut mem, id::WEIGHT, [d, 0, 0, 0, 0]), 3); // 1, 3, 69
        assert_eq!(call(&mut m, &mut mem, id::SUBSET, [d, x, 0, 0, 0]), 0);
        call(&mut m, &mut mem, id::CLEAR, [d, 0, 0, 0, 0]);
        assert_eq!(call(&mut m, &mut mem, id::EMPTY, [d, 0, 0, 0, 0]), 1);
        // an empty mask's first CPU is nr_cpus (cpumask_first's "none")
        assert_eq!(call(&mut m, &mut mem, id::FIRST, [d, 0, 0, 0, 0]), 70);
        // any_distribute walks the set CPUs round robin
        let picks: Vec<u64> = (0..4)
            .map(|_| call(&mut m, &mut mem, id::ANY_DISTRIBUTE, [x, 0, 0, 0, 0]))
            .collect();
        assert_eq!(picks, [1, 65, 69, 1]);
    }

    #[test]
    fn a_released_mask_cannot_be_used_again() {
        let mut mem = Memory::new();
        let mut m = Cpumasks::new(8);
        let x = m.call(id::CREATE, [0; 5], &mut mem).unwrap();
        m.call(id::ACQUIRE, [x, 0, 0, 0, 0], &mut mem).unwrap();
        m.call(id::RELEASE, [x, 0, 0, 0, 0], &mut mem).unwrap();
        // one reference left: still usable
        assert_eq!(m.call(id::TEST_CPU, [0, x, 0, 0, 0], &mut mem), Ok(0));
        m.call(id::RELEASE, [x, 0, 0, 0, 0], &mut mem).unwrap();
        assert_eq!((m.created, m.freed), (1, 1));
        assert!(m.call(id::TEST_CPU, [0, x, 0, 0, 0], &mut mem).is_err());
        assert!(m.call(id::RELEASE, [x, 0, 0, 0, 0], &mut mem).is_err());
    }

    #[test]
    fn the_numeric_iterator_yields_start_to_end_then_null() {
        let mut mem = Memory::new();
        let mut m = Cpumasks::new(1);
        let it = Memory::frame_top(0) - 8;
        assert_eq!(m.call(id::ITER_NUM_NEW, [it, 3, 6, 0, 0], &mut mem), Ok(0));
        let mut seen = Vec::new();
        loop {
            let p = m
                .call(id::ITER_NUM_NEXT, [it, 0, 0, 0, 0], &mut mem)
                .unwrap();
            if p == 0 {
                break;
            }
            seen.push(mem.load(p, 4).unwrap());
        }
        assert_eq!(seen, [3, 4, 5]);
        // an inverted range is -EINVAL and an empty iterator
        assert_eq!(
            m.call(id::ITER_NUM_NEW, [it, 5, 2, 0, 0], &mut mem),
            Ok(-22i64 as u64)
        );
        assert_eq!(m.call(id::ITER_NUM_NEXT, [it, 0, 0, 0, 0], &mut mem), Ok(0));
    }
}
