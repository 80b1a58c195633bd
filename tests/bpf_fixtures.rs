//! The project's own sched_ext fixtures (tests/bpf/*.bpf.c, objects built by
//! scripts/build-bpf.sh and committed) loaded against the simulated v6.18 kernel and their
//! callbacks run with a stand-in host that records the kfunc calls: loader and interpreter end
//! to end, with no sched_ext core yet.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::bpf::helpers;
use schedplay::bpf::loader::{LoadOptions, Object, load};
use schedplay::bpf::maps::Map;
use schedplay::bpf::memory::Memory;
use schedplay::bpf::target::{Kfunc, Target};
use schedplay::bpf::vm::{CallError, Host, VmError, run};
use schedplay::sched::ext::vmlinux::{TASK_SCX, TASK_STRUCT_SIZE, V6_18, kf};

const FIFO: &[u8] = include_bytes!("bpf/fifo.bpf.o");
const VTIME: &[u8] = include_bytes!("bpf/vtime.bpf.o");
const LLC: &[u8] = include_bytes!("bpf/llc.bpf.o");
const NR_CPUS: u32 = 4;
const SCX_DSQ_LOCAL: u64 = 1 << 63 | 2;
// Offsets in the simulated task_struct (what CO-RE must have turned the object's into).
const SLICE: u64 = TASK_SCX as u64 + 48;
const VTIME_OFF: u64 = TASK_SCX as u64 + 56;
const WEIGHT: u64 = TASK_SCX as u64 + 4;

fn opts() -> LoadOptions {
    LoadOptions { nr_cpus: NR_CPUS }
}

/// A stand-in for the sched_ext core: answers kfuncs and records them.
struct Stub<'a> {
    maps: &'a mut [Map],
    cpu: u32,
    idle: bool,
    move_ok: Vec<u64>,
    calls: Vec<(i32, [u64; 5])>,
    errors: Vec<String>,
}

impl Host for Stub<'_> {
    fn helper(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        helpers::call(id, a, mem, self.maps, self.cpu, NR_CPUS)
    }
    fn kfunc(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        self.calls.push((id, a));
        Ok(match id {
            kf::SELECT_CPU_DFL => {
                mem.store(a[3], 1, self.idle as u64)?;
                a[1]
            }
            kf::DSQ_INSERT | kf::DSQ_INSERT_VTIME | kf::CREATE_DSQ => 0,
            kf::DSQ_MOVE_TO_LOCAL => self.move_ok.contains(&a[0]) as u64,
            kf::TASK_CPU => 2,
            kf::NOW => 777,
            kf::ERROR_BSTR => {
                self.errors.push(mem.c_str(a[0], 1024)?);
                0
            }
            _ => return Err(CallError::Unknown),
        })
    }
}

struct Sim {
    obj: Object,
    task: u64,
}

impl Sim {
    fn new(bytes: &[u8], target: &Target) -> Sim {
        let mut obj = load(bytes, target, &opts()).unwrap_or_else(|e| panic!("{e}"));
        let task = obj
            .mem
            .add("task_struct", vec![0; TASK_STRUCT_SIZE as usize], true);
        Sim { obj, task }
    }
    /// Runs program `name` with `ctx` as its argument array; returns r0 and the host's record.
    fn call(
        &mut self,
        name: &str,
        args: &[u64],
        stub: impl FnOnce(&mut Stub),
    ) -> (Result<u64, VmError>, Stub<'_>) {
        let entry = self.obj.program(name).expect(name).entry;
        let mut ctx = Vec::new();
        for a in args {
            ctx.extend_from_slice(&a.to_le_bytes());
        }
        ctx.resize(64, 0);
        let ctx = self.obj.mem.add("ctx", ctx, false);
        let mut host = Stub {
            maps: &mut self.obj.maps,
            cpu: 1,
            idle: false,
            move_ok: Vec::new(),
            calls: Vec::new(),
            errors: Vec::new(),
        };
        stub(&mut host);
        let r = run(
            &self.obj.image,
            entry,
            &[ctx],
            &mut self.obj.mem,
            &mut host,
            100_000,
        )
        .map(|o| o.ret);
        (r, host)
    }
    fn task_u64(&self, off: u64) -> u64 {
        self.obj.mem.load(self.task + off, 8).unwrap()
    }
    fn set_task(&mut self, off: u64, size: usize, v: u64) {
        self.obj.mem.store(self.task + off, size, v).unwrap();
    }
    fn global_u64(&self, name: &str) -> u64 {
        let b = self.obj.read_global(name).expect(name);
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(v)
    }
}

#[test]
fn fifo_loads_with_its_programs_maps_and_ops() {
    let s = Sim::new(FIFO, &V6_18);
    let o = &s.obj;
    let mut names: Vec<_> = o.programs.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fifo_dispatch",
            "fifo_enqueue",
            "fifo_exit",
            "fifo_init",
            "fifo_select_cpu"
        ]
    );
    assert!(o.program("fifo_init").unwrap().sleepable);
    assert_eq!(o.license, "Dual MIT/GPL");
    let stats = o.map("stats").unwrap();
    assert_eq!(
        (stats.key_size, stats.value_size, stats.max_entries),
        (4, 8, 2)
    );
    assert!(o.map(".rodata").is_some() && o.map(".bss").is_some());
    let ops = &o.struct_ops[0];
    assert_eq!(
        (ops.name.as_str(), ops.type_name.as_str()),
        ("fifo_ops", "sched_ext_ops")
    );
    assert_eq!(ops.string("name"), "fifo");
    let cbs: Vec<_> = ops.callbacks.keys().map(String::as_str).collect();
    assert_eq!(cbs, ["dispatch", "enqueue", "exit", "init", "select_cpu"]);
    assert_eq!(o.programs[ops.callbacks["enqueue"]].name, "fifo_enqueue");
    assert_eq!(ops.uint("timeout_ms"), 0);
}

#[test]
fn fifo_callbacks_run_against_the_stub() {
    let mut s = Sim::new(FIFO, &V6_18);
    // User space sets the .rodata option before load.
    s.obj
        .set_global("slice_ns", &5_000_000u64.to_le_bytes())
        .unwrap();
    let task = s.task;
    // select_cpu on an idle CPU: direct dispatch to SCX_DSQ_LOCAL with the option's slice.
    let (r, h) = s.call("fifo_select_cpu", &[task, 3, 0x8], |h| h.idle = true);
    assert_eq!(r.unwrap(), 3);
    assert_eq!(h.calls[0].0, kf::SELECT_CPU_DFL);
    assert_eq!(
        h.calls[1],
        (kf::DSQ_INSERT, [task, SCX_DSQ_LOCAL, 5_000_000, 0, 0])
    );
    // enqueue: the shared DSQ 0 with the enqueue flags passed through; scx_bpf_now exists.
    let (r, h) = s.call("fifo_enqueue", &[task, 0x1], |_| {});
    r.unwrap();
    let ids: Vec<i32> = h.calls.iter().map(|c| c.0).collect();
    assert_eq!(ids, [kf::NOW, kf::DSQ_INSERT]);
    assert_eq!(h.calls[1].1, [task, 0, 5_000_000, 1, 0]);
    assert_eq!(s.global_u64("last_enq_ns"), 777);
    // The per-CPU stats landed on CPU 1 (the stub's), index 0 then 1.
    let stats = s.obj.map("stats").unwrap();
    let at = |i, cpu| s.obj.mem.load(stats.element(i, cpu), 8).unwrap();
    assert_eq!((at(0, 1), at(1, 1), at(0, 0), at(1, 2)), (1, 1, 0, 0));
    // dispatch and init.
    let (_, h) = s.call("fifo_dispatch", &[1, 0], |_| {});
    assert_eq!((h.calls[0].0, h.calls[0].1[0]), (kf::DSQ_MOVE_TO_LOCAL, 0));
    let (r, h) = s.call("fifo_init", &[], |_| {});
    assert_eq!(
        (
            r.unwrap(),
            h.calls[0].0,
            h.calls[0].1[0],
            h.calls[0].1[1] as i32
        ),
        (0, kf::CREATE_DSQ, 0, -1)
    );
    // exit: the first exit's kind is kept (cmpxchg), exit_code read through CO-RE.
    let ei = s.obj.mem.add(
        "scx_exit_info",
        {
            let mut v = vec![0u8; 64];
            v[0..4].copy_from_slice(&1025u32.to_le_bytes());
            v[8..16].copy_from_slice(&(-5i64).to_le_bytes());
            v
        },
        false,
    );
    s.call("fifo_exit", &[ei], |_| {}).0.unwrap();
    s.obj.mem.region_mut(ei).unwrap().data[0] = 64;
    s.call("fifo_exit", &[ei], |_| {}).0.unwrap();
    assert_eq!(s.global_u64("exit_kind") as u32, 1025);
    assert_eq!(s.global_u64("exit_code") as i64, -5);
}

#[test]
fn a_missing_weak_kfunc_is_skipped_by_its_existence_test() {
    let kfuncs: Vec<Kfunc> = V6_18
        .kfuncs
        .iter()
        .filter(|k| k.name != "scx_bpf_now")
        .copied()
        .collect();
    let target = Target {
        kfuncs: Box::leak(kfuncs.into_boxed_slice()),
        ..V6_18
    };
    let mut s = Sim::new(FIFO, &target);
    assert_eq!(s.obj.missing_weak, ["scx_bpf_now"]);
    let task = s.task;
    let (r, h) = s.call("fifo_enqueue", &[task, 0], |_| {});
    r.unwrap();
    assert_eq!(h.calls.len(), 1, "only the insert: {:?}", h.calls);
    assert_eq!(s.global_u64("last_enq_ns"), 0);
}

#[test]
fn vtime_charges_used_slice_by_weight_through_a_bpf_to_bpf_call() {
    let mut s = Sim::new(VTIME, &V6_18);
    let task = s.task;
    s.obj
        .set_global("slice_ns", &1_000_000u64.to_le_bytes())
        .unwrap();
    s.obj
        .set_global("vtime_now", &5_000u64.to_le_bytes())
        .unwrap();
    s.call("vtime_enable", &[task], |_| {}).0.unwrap();
    assert_eq!(
        s.task_u64(VTIME_OFF),
        5_000,
        "enable: dsq_vtime = vtime_now"
    );
    // Ran 400 us of a 1 ms slice at weight 200: vtime += 400000 * 100 / 200.
    s.set_task(SLICE, 8, 600_000);
    s.set_task(WEIGHT, 4, 200);
    s.call("vtime_stopping", &[task, 1], |_| {}).0.unwrap();
    assert_eq!(s.task_u64(VTIME_OFF), 5_000 + 200_000);
    // running advances vtime_now to the task's vtime (a fetch-add counts the calls).
    s.call("vtime_running", &[task], |_| {}).0.unwrap();
    assert_eq!(s.global_u64("vtime_now"), 205_000);
    assert_eq!(s.global_u64("nr_running_calls"), 1);
    // A sleeper far behind is clamped to vtime_now - slice.
    s.set_task(VTIME_OFF, 8, 0);
    s.obj
        .set_global("vtime_now", &5_000_000u64.to_le_bytes())
        .unwrap();
    let (_, h) = s.call("vtime_enqueue", &[task, 1], |_| {});
    assert_eq!(
        h.calls,
        [(kf::DSQ_INSERT_VTIME, [task, 0, 1_000_000, 4_000_000, 1])]
    );
    // weight 0 is guarded in the callee.
    s.set_task(WEIGHT, 4, 0);
    s.set_task(VTIME_OFF, 8, 0);
    s.set_task(SLICE, 8, 0);
    s.call("vtime_stopping", &[task, 0], |_| {}).0.unwrap();
    assert_eq!(s.task_u64(VTIME_OFF), 1_000_000);
}

#[test]
fn llc_reads_its_topology_from_rodata_and_steals_in_order() {
    let mut s = Sim::new(LLC, &V6_18);
    let task = s.task;
    s.obj.set_global("nr_llcs", &3u32.to_le_bytes()).unwrap();
    let mut map = Vec::new();
    for cpu in 0..4u32 {
        map.extend_from_slice(&[0u32, 1, 2, 2][cpu as usize].to_le_bytes());
    }
    s.obj.set_global("cpu_llc", &map).unwrap();
    let (r, h) = s.call("llc_init", &[], |_| {});
    assert_eq!(r.unwrap(), 0);
    let created: Vec<u64> = h.calls.iter().map(|c| c.1[0]).collect();
    assert_eq!(created, [0, 1, 2]);
    // enqueue: the DSQ of the LLC of the task's CPU (the stub says CPU 2 → LLC 2).
    let (_, h) = s.call("llc_enqueue", &[task, 0], |_| {});
    assert_eq!(h.calls[1].0, kf::DSQ_INSERT);
    assert_eq!(h.calls[1].1[1], 2);
    // dispatch on CPU 1 (LLC 1): own DSQ empty, then LLC 2, then LLC 0 which has work.
    let (_, h) = s.call("llc_dispatch", &[1, 0], |h| h.move_ok = vec![0]);
    let tried: Vec<u64> = h.calls.iter().map(|c| c.1[0]).collect();
    assert_eq!(tried, [1, 2, 0]);
    assert_eq!(s.global_u64("nr_steals"), 1);
    // An out-of-range option makes init report scx_bpf_error with its message and fail.
    s.obj.set_global("nr_llcs", &0u32.to_le_bytes()).unwrap();
    let (r, h) = s.call("llc_init", &[], |_| {});
    assert_eq!(r.unwrap() as i32, -22);
    assert_eq!(h.errors, ["nr_llcs out of range"]);
}

#[test]
fn what_the_host_lacks_is_refused_at_load_by_name() {
    let without = |name: &str| {
        let k: Vec<Kfunc> = V6_18
            .kfuncs
            .iter()
            .filter(|k| k.name != name)
            .copied()
            .collect();
        Target {
            kfuncs: Box::leak(k.into_boxed_slice()),
            ..V6_18
        }
    };
    let e = load(FIFO, &without("scx_bpf_dsq_insert"), &opts()).unwrap_err();
    assert!(
        e.to_string()
            .contains("kfunc scx_bpf_dsq_insert(4 args) is not provided"),
        "{e}"
    );
    let no_helpers = Target {
        helpers: &[],
        ..V6_18
    };
    let e = load(FIFO, &no_helpers, &opts()).unwrap_err();
    assert!(e.to_string().contains("helper #1 is not provided"), "{e}");
    let no_ops = Target {
        struct_ops: &[],
        ..V6_18
    };
    let e = load(FIFO, &no_ops, &opts()).unwrap_err();
    assert!(
        e.to_string()
            .contains("type sched_ext_ops is not one the host can attach"),
        "{e}"
    );
    // Not ELF, truncated, and maps beyond the memory guard.
    assert!(
        load(b"hello", &V6_18, &opts())
            .unwrap_err()
            .to_string()
            .contains("not an ELF file")
    );
    let e = load(&FIFO[..200], &V6_18, &opts()).unwrap_err();
    assert!(e.to_string().contains("past the end of the file"), "{e}");
    let e = load(FIFO, &V6_18, &LoadOptions { nr_cpus: 5_000_000 }).unwrap_err();
    assert!(
        e.to_string()
            .contains("map stats: the object's arrays hold more than 1048576 values"),
        "{e}"
    );
    let e = load(FIFO, &V6_18, &LoadOptions { nr_cpus: 0 }).unwrap_err();
    assert!(e.to_string().contains("nr_cpus must be at least 1"), "{e}");
}

#[test]
fn a_field_the_host_lacks_poisons_only_the_instructions_that_use_it() {
    use schedplay::bpf::target::{Field, Struct};
    // A task_struct without `scx`: loading succeeds (CO-RE poisons), running a callback that
    // touches p->scx stops with the poison error, one that does not runs.
    const PID_ONLY: &[Field] = &[Field::scalar("pid", 0, 4, true)];
    let structs: Vec<Struct> = V6_18
        .structs
        .iter()
        .map(|s| {
            if s.name == "task_struct" {
                Struct {
                    fields: PID_ONLY,
                    ..*s
                }
            } else {
                *s
            }
        })
        .collect();
    let target = Target {
        structs: Box::leak(structs.into_boxed_slice()),
        ..V6_18
    };
    let mut s = Sim::new(VTIME, &target);
    let task = s.task;
    let (r, _) = s.call("vtime_enable", &[task], |_| {});
    assert!(matches!(r, Err(VmError::Poisoned { .. })), "{r:?}");
    let (r, _) = s.call("vtime_dispatch", &[0, 0], |_| {});
    r.unwrap();
}

mod bpf_replay;

#[test]
fn the_replay_gives_the_pinned_outcome() {
    // tests/wasm_bpf.rs asserts the same figures inside wasm.
    assert_eq!(bpf_replay::replay(), bpf_replay::EXPECTED);
}

/// A host that refuses everything: mutated programs may call anything.
struct Refuse;
impl Host for Refuse {
    fn helper(&mut self, _: i32, _: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Err(CallError::Unknown)
    }
    fn kfunc(&mut self, _: i32, _: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Err(CallError::Unknown)
    }
}

#[test]
fn mutated_objects_are_refused_or_run_but_never_panic() {
    // Deterministic xorshift: flip 1-4 bytes of each fixture, 1500 times per fixture; whatever
    // loads has every program run (with arguments pointing at a small region).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut loaded, mut refused) = (0, 0);
    for obj in [FIFO, VTIME, LLC] {
        for _ in 0..1500 {
            let mut b = obj.to_vec();
            for _ in 0..1 + next() % 4 {
                let at = (next() % b.len() as u64) as usize;
                b[at] ^= 1 << (next() % 8);
            }
            match load(&b, &V6_18, &opts()) {
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
                Ok(mut o) => {
                    loaded += 1;
                    let arg = o.mem.add("arg", vec![0; 256], true);
                    for p in o.programs.clone() {
                        let _ = run(
                            &o.image,
                            p.entry,
                            &[arg, arg, arg],
                            &mut o.mem,
                            &mut Refuse,
                            10_000,
                        );
                    }
                }
            }
        }
    }
    // Both outcomes happen (the mutations reach code and headers alike).
    assert!(
        loaded > 100 && refused > 100,
        "loaded {loaded}, refused {refused}"
    );
}
