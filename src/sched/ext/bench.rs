//! A fixed sequence of a vtime scheduler's callbacks (enable, then 1000 rounds of enqueue,
//! running and stopping with varying weights and used slices) against stub kfuncs: the
//! interpreter's speed on clang-compiled code with its kfunc calls, and its sameness natively and
//! in wasm. In the library so that tests/bpf_bench.rs, tests/bpf_fixtures.rs, tests/wasm_bpf.rs
//! and scripts/bench-wasm.mjs (through `wasm::bpf_bench`) run the same code; nothing is timed here.

use crate::bpf::helpers;
use crate::bpf::loader::{LoadOptions, Object, load};
use crate::bpf::maps::Map;
use crate::bpf::memory::Memory;
use crate::bpf::vm::{CallError, Host, run};
use crate::sched::ext::vmlinux::{TASK_SCX, TASK_STRUCT_SIZE, V6_18, kf};

/// The callbacks a replay makes.
pub const VTIME_REPLAY_CALLS: u64 = 3001;

struct Stub<'a> {
    maps: &'a mut [Map],
}

impl Host for Stub<'_> {
    fn helper(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        helpers::call(id, a, mem, self.maps, 0, 1)
    }
    fn kfunc(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        match id {
            kf::SELECT_CPU_DFL => {
                mem.store(a[3], 1, 0)?;
                Ok(a[1])
            }
            kf::DSQ_INSERT_VTIME | kf::DSQ_INSERT | kf::CREATE_DSQ | kf::DSQ_MOVE_TO_LOCAL => Ok(0),
            _ => Err(CallError::Unknown),
        }
    }
}

/// Loads `object` (tests/bpf/vtime.bpf.o: `vtime_enable`, `vtime_enqueue`, `vtime_running`,
/// `vtime_stopping`, the global `vtime_now`) and replays the callbacks: (instructions run, the
/// task's final `dsq_vtime`, the final `vtime_now`), or what failed.
pub fn vtime_replay(object: &[u8]) -> Result<(u64, u64, u64), String> {
    let mut obj = load(object, &V6_18, &LoadOptions { nr_cpus: 1 }).map_err(|e| e.0)?;
    let task = obj
        .mem
        .add("task_struct", vec![0; TASK_STRUCT_SIZE as usize], true);
    let ctx = obj.mem.add("ctx", vec![0; 64], true);
    let mut insns = 0;
    let slice_off = task + TASK_SCX as u64 + 48;
    let weight_off = task + TASK_SCX as u64 + 4;
    let mut call = |obj: &mut Object, name: &str, args: &[u64]| -> Result<(), String> {
        for (i, a) in args.iter().enumerate() {
            obj.mem
                .store(ctx + 8 * i as u64, 8, *a)
                .map_err(|e| format!("{e:?}"))?;
        }
        let entry = obj
            .program(name)
            .ok_or_else(|| format!("no program {name}"))?
            .entry;
        let mut stub = Stub {
            maps: &mut obj.maps,
        };
        insns += run(&obj.image, entry, &[ctx], &mut obj.mem, &mut stub, 10_000)
            .map_err(|e| format!("{name}: {e:?}"))?
            .insns;
        Ok(())
    };
    let err = |e: crate::bpf::memory::Fault| format!("{e:?}");
    call(&mut obj, "vtime_enable", &[task])?;
    for i in 0..1000u64 {
        obj.mem
            .store(weight_off, 4, 1 + (i * 37) % 10_000)
            .map_err(err)?;
        call(&mut obj, "vtime_enqueue", &[task, 1])?;
        call(&mut obj, "vtime_running", &[task])?;
        obj.mem
            .store(slice_off, 8, (i * 7919) % 20_000_000)
            .map_err(err)?;
        call(&mut obj, "vtime_stopping", &[task, 1])?;
    }
    let vt = obj.mem.load(task + TASK_SCX as u64 + 56, 8).map_err(err)?;
    let b = obj.read_global("vtime_now").ok_or("no global vtime_now")?;
    let now = u64::from_le_bytes(b.try_into().map_err(|_| "vtime_now is not 8 bytes")?);
    Ok((insns, vt, now))
}
