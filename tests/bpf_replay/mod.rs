//! A fixed sequence of fixture callbacks (vtime: enable, then 1000 rounds of enqueue, running and
//! stopping with varying weights and used slices) whose outcome is checked to be the same
//! natively and in wasm: the interpreter and loader are bit-identical on both.

use schedplay::bpf::helpers;
use schedplay::bpf::loader::{LoadOptions, load};
use schedplay::bpf::maps::Map;
use schedplay::bpf::memory::Memory;
use schedplay::bpf::vm::{CallError, Host, run};
use schedplay::sched::ext::vmlinux::{TASK_SCX, TASK_STRUCT_SIZE, V6_18, kf};

pub const VTIME: &[u8] = include_bytes!("../bpf/vtime.bpf.o");

/// (instructions run, final dsq_vtime, final vtime_now), pinned by the native test.
#[allow(dead_code)] // the benchmark uses only `replay`
pub const EXPECTED: (u64, u64, u64) = (45_003, 3_328_159_955, 3_327_986_364);

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

pub fn replay() -> (u64, u64, u64) {
    let mut obj = load(VTIME, &V6_18, &LoadOptions { nr_cpus: 1 }).expect("vtime loads");
    let task = obj
        .mem
        .add("task_struct", vec![0; TASK_STRUCT_SIZE as usize], true);
    let ctx = obj.mem.add("ctx", vec![0; 64], true);
    let mut insns = 0;
    let slice_off = task + TASK_SCX as u64 + 48;
    let weight_off = task + TASK_SCX as u64 + 4;
    let mut call = |obj: &mut schedplay::bpf::loader::Object, name: &str, args: &[u64]| {
        for (i, a) in args.iter().enumerate() {
            obj.mem.store(ctx + 8 * i as u64, 8, *a).unwrap();
        }
        let entry = obj.program(name).unwrap().entry;
        let mut stub = Stub {
            maps: &mut obj.maps,
        };
        insns += run(&obj.image, entry, &[ctx], &mut obj.mem, &mut stub, 10_000)
            .unwrap()
            .insns;
    };
    call(&mut obj, "vtime_enable", &[task]);
    for i in 0..1000u64 {
        obj.mem.store(weight_off, 4, 1 + (i * 37) % 10_000).unwrap();
        call(&mut obj, "vtime_enqueue", &[task, 1]);
        call(&mut obj, "vtime_running", &[task]);
        obj.mem
            .store(slice_off, 8, (i * 7919) % 20_000_000)
            .unwrap();
        call(&mut obj, "vtime_stopping", &[task, 1]);
    }
    let vt = obj.mem.load(task + TASK_SCX as u64 + 56, 8).unwrap();
    let b = obj.read_global("vtime_now").unwrap();
    (insns, vt, u64::from_le_bytes(b.try_into().unwrap()))
}
