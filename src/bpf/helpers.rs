//! The helpers that need nothing but maps and memory (`bpf_map_*_elem`, `bpf_probe_read_kernel*`),
//! for any host to delegate to. Numbers are `enum bpf_func_id` (include/uapi/linux/bpf.h).

use super::maps::Map;
use super::memory::Memory;
use super::vm::CallError;

pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const MAP_UPDATE_ELEM: i32 = 2;
pub const MAP_DELETE_ELEM: i32 = 3;
pub const KTIME_GET_NS: i32 = 5;
pub const GET_SMP_PROCESSOR_ID: i32 = 8;
pub const PROBE_READ_KERNEL: i32 = 113;
pub const PROBE_READ_KERNEL_STR: i32 = 115;
pub const MAP_LOOKUP_PERCPU_ELEM: i32 = 195;
pub const TRACE_PRINTK: i32 = 6;
pub const PER_CPU_PTR: i32 = 153;
pub const THIS_CPU_PTR: i32 = 154;
pub const TASK_STORAGE_GET: i32 = 156;
pub const TASK_STORAGE_DELETE: i32 = 157;
pub const GET_CURRENT_TASK_BTF: i32 = 158;
pub const KPTR_XCHG: i32 = 194;

/// `bpf_per_cpu_ptr(&ksym, cpu)` / `bpf_this_cpu_ptr`: CPU `cpu`'s copy of a typed per-CPU
/// ksym, or NULL for a CPU out of range (or a handle that is not a per-CPU ksym).
pub fn per_cpu_ptr(ksyms: &[super::loader::Ksym], handle: u64, cpu: u64) -> u64 {
    ksyms
        .iter()
        .find(|k| k.handle == handle)
        .and_then(|k| k.per_cpu.get(usize::try_from(cpu).ok()?))
        .copied()
        .unwrap_or(0)
}

fn map(maps: &mut [Map], handle: u64) -> Result<&mut Map, CallError> {
    maps.iter_mut()
        .find(|m| m.handle == handle)
        .ok_or_else(|| CallError::Failed(format!("{handle:#x} is not a map")))
}

/// Runs helper `id` if it is one of these; `Err(Unknown)` otherwise. `cpu` is the CPU the
/// program runs on (per-CPU maps), `nr_cpus` bounds `bpf_map_lookup_percpu_elem`.
pub fn call(
    id: i32,
    a: [u64; 5],
    mem: &mut Memory,
    maps: &mut [Map],
    cpu: u32,
    nr_cpus: u32,
) -> Result<u64, CallError> {
    match id {
        MAP_LOOKUP_ELEM => Ok(map(maps, a[0])?.lookup(mem, a[1], cpu)?),
        MAP_UPDATE_ELEM => Ok(map(maps, a[0])?.update(mem, a[1], a[2], cpu)? as u64),
        MAP_DELETE_ELEM => Ok(map(maps, a[0])?.delete(mem, a[1])? as u64),
        MAP_LOOKUP_PERCPU_ELEM => {
            let c = a[2] as u32;
            if c >= nr_cpus {
                return Ok(0);
            }
            Ok(map(maps, a[0])?.lookup(mem, a[1], c)?)
        }
        TASK_STORAGE_GET | TASK_STORAGE_DELETE => {
            let m = map(maps, a[0])?;
            if m.kind != super::maps::MapKind::TaskStorage {
                return Err(CallError::Failed(format!(
                    "map {} is not a task storage map",
                    m.name
                )));
            }
            if a[1] == 0 {
                return Ok(if id == TASK_STORAGE_GET {
                    0
                } else {
                    -22i64 as u64
                });
            }
            if id == TASK_STORAGE_GET {
                Ok(m.storage_get(mem, a[1], a[2], a[3])?)
            } else {
                Ok(m.storage_delete(a[1]) as u64)
            }
        }
        // bpf_kptr_xchg(dst, new): swaps a kptr field, returning the old pointer (ownership
        // moves with it; kernel/bpf/helpers.c)
        KPTR_XCHG => {
            let old = mem.load(a[0], 8)?;
            mem.store(a[0], 8, a[1])?;
            Ok(old)
        }
        // bpf_trace_printk goes to the trace pipe, which nothing here reads
        TRACE_PRINTK => Ok(0),
        PROBE_READ_KERNEL => {
            // (dst, size, src): copy, or zero dst and return -EFAULT as the kernel does.
            let n = a[1] as u32 as usize;
            let src = mem.slice(a[2], n).map(<[u8]>::to_vec);
            let dst = mem.slice_mut(a[0], n)?;
            match src {
                Ok(s) => {
                    dst.copy_from_slice(&s);
                    Ok(0)
                }
                Err(_) => {
                    dst.fill(0);
                    Ok(-14i64 as u64)
                }
            }
        }
        PROBE_READ_KERNEL_STR => {
            // (dst, size, src): at most size-1 bytes and a NUL; returns the length with the NUL.
            let n = a[1] as u32 as usize;
            if n == 0 {
                return Ok(-7i64 as u64);
            }
            let s = mem.c_str(a[2], n - 1).map(String::into_bytes);
            let dst = mem.slice_mut(a[0], n)?;
            match s {
                Ok(s) => {
                    dst[..s.len()].copy_from_slice(&s);
                    dst[s.len()] = 0;
                    Ok(s.len() as u64 + 1)
                }
                Err(_) => {
                    dst.fill(0);
                    Ok(-14i64 as u64)
                }
            }
        }
        _ => Err(CallError::Unknown),
    }
}
