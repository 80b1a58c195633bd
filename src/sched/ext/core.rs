//! The sched_ext core for one loaded BPF scheduler (`struct scx_sched` and the paths of
//! kernel/sched/ext.c that call its ops), v6.18: select_cpu with direct dispatch, do_enqueue_task,
//! balance_one's dispatch loop with the dispatch buffer, set_next_task (running), stopping /
//! quiescent, slices run down by update_curr_scx, the kfuncs those paths offer (`kfuncs.rs`), the
//! built-in idle mask, `scx_bpf_error` / run-time faults / the watchdog ending the scheduler with
//! its reason (scx_exit → scx_disable_workfn, which calls ops.exit and hands tasks back to fair).
//! It is driven by calls (wake, enqueue, pick, tick, stop, timers) from the engine's
//! `sched_class` seam (`sched::ext_class`). Also what user space does between open and attach
//! (`.rodata` options, `ops.*` members, UEI sizing, the topology behind the per-CPU ksyms) and
//! the `fentry/bpf_scx_reg` probe that runs as the scheduler attaches.

use super::dsq::*;
use super::idle::CpuTopo;
pub use super::internal::*;
use super::kfuncs::KState;
use super::vmlinux::{TASK_SCX, TASK_STRUCT_SIZE, V6_18};
use crate::bpf::loader::{LoadError, LoadOptions, Object, StructOpsMap, load};
use crate::bpf::vm::{VmError, run};

// Offsets in the simulated task_struct (vmlinux.rs).
const T_PID: u64 = 0;
const T_WEIGHT: u64 = TASK_SCX as u64 + 4;
const T_SLICE: u64 = TASK_SCX as u64 + 48;
const T_VTIME: u64 = TASK_SCX as u64 + 56;
const T_FLAGS: u64 = 8;
const T_NR_CPUS_ALLOWED: u64 = 24;
const T_MIGRATION_DISABLED: u64 = 28;
const T_CPUS_PTR: u64 = 32;
const T_SCX_FLAGS: u64 = TASK_SCX as u64;

/// `SCX_OPS_ENQ_LAST` (ext_internal.h `enum scx_ops_flags`).
pub const SCX_OPS_ENQ_LAST: u64 = 1 << 1;
/// `SCX_OPS_BUILTIN_IDLE_PER_NODE`.
pub const SCX_OPS_BUILTIN_IDLE_PER_NODE: u64 = 1 << 6;
/// `enum scx_ent_flags` / `scx_task_state` (include/linux/sched/ext.h).
const SCX_TASK_QUEUED: u32 = 1;
const SCX_TASK_STATE_SHIFT: u32 = 8;
const SCX_TASK_ENABLED: u32 = 3;
/// `SCX_EXIT_DUMP_DFL_LEN`: the dump size when `exit_dump_len` is 0.
const SCX_EXIT_DUMP_DFL_LEN: u64 = 32768;

/// `UEI_DEFINE(name)`'s sizing, as scx's `UEI_SET_SIZE` does before load: the `.rodata` global
/// `<name>_dump_len` and the `.data.<name>_dump` section (1 byte in the object) become
/// `exit_dump_len` bytes (`SCX_EXIT_DUMP_DFL_LEN` when 0).
fn uei_init(obj: &mut Object, exit_dump_len: u64) {
    let len = if exit_dump_len == 0 {
        SCX_EXIT_DUMP_DFL_LEN
    } else {
        exit_dump_len
    };
    let names: Vec<String> = obj
        .globals
        .iter()
        .filter(|g| g.section.starts_with(".rodata"))
        .filter_map(|g| g.name.strip_suffix("_dump_len").map(str::to_string))
        .collect();
    for n in names {
        let sec = format!(".data.{n}_dump");
        let Some(mi) = obj.maps.iter().position(|m| m.name == sec) else {
            continue;
        };
        let Some(base) = obj.maps[mi].data_addr() else {
            continue;
        };
        obj.mem.resize(base, len as usize);
        obj.maps[mi].value_size = len as u32;
        for g in obj.globals.iter_mut().filter(|g| g.section == sec) {
            g.size = len - (g.addr - base);
        }
        let sz = obj
            .global(&format!("{n}_dump_len"))
            .map_or(0, |g| g.size as usize);
        let _ = obj.set_global(&format!("{n}_dump_len"), &len.to_le_bytes()[..sz.min(8)]);
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub nr_cpus: u32,
}

/// `SCX_ENUM_INIT` (tools/sched_ext/include/scx/enums.h): scx schedulers read the kernel's enum
/// values from `.rodata` variables `__SCX_<NAME>` that user space fills from kernel BTF before
/// load; left at 0 they would silently mean DSQ 0 and slice 0. Every such global the object has
/// gets v6.18's value of `SCX_<NAME>`.
fn scx_enum_init(obj: &mut Object) {
    let wanted: Vec<(String, i64)> = obj
        .globals
        .iter()
        .filter_map(|g| {
            let name = g.name.strip_prefix("__")?;
            V6_18
                .enums
                .iter()
                .flat_map(|e| e.values.iter())
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (g.name.clone(), *v))
        })
        .collect();
    for (g, v) in wanted {
        let size = obj.global(&g).map_or(0, |x| x.size as usize).min(8);
        let _ = obj.set_global(&g, &v.to_le_bytes()[..size]);
    }
}

/// One loaded, attached BPF scheduler.
pub struct ScxSched {
    pub obj: Object,
    pub ops: StructOpsMap,
    pub k: KState,
    ctx: u64,
}

impl ScxSched {
    /// Opens the object (`bpf_object__open` + load): programs, maps, one `sched_ext_ops`.
    /// Options (`.rodata`) may be set on `obj` before `attach`.
    pub fn open(bytes: &[u8], cfg: Config) -> Result<ScxSched, LoadError> {
        let mut obj = load(
            bytes,
            &V6_18,
            &LoadOptions {
                nr_cpus: cfg.nr_cpus,
            },
        )?;
        let mut all = obj
            .struct_ops
            .iter()
            .filter(|s| s.type_name == "sched_ext_ops");
        let ops = all
            .next()
            .cloned()
            .ok_or("no struct sched_ext_ops in the object")?;
        if all.next().is_some() {
            return Err("more than one struct sched_ext_ops in the object".into());
        }
        // bpf_scx_init_member / validate_ops (ext.c): a valid name and timeout.
        let name = ops.string("name");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(LoadError(format!(
                "sched_ext_ops.name '{name}' must be non-empty and use only letters, digits, '_' and '.'"
            )));
        }
        let timeout_ms = ops.uint("timeout_ms");
        if timeout_ms * 1_000_000 > SCX_WATCHDOG_MAX_TIMEOUT_NS {
            return Err(LoadError(format!(
                "sched_ext_ops.timeout_ms {timeout_ms} is above 30000 (-E2BIG)"
            )));
        }
        // Programs the core does not attach: an fentry probe on bpf_scx_reg runs once at attach
        // (scx's scx_lib_init_probe); `syscall` programs are user space's to run, and are not.
        for p in &obj.programs {
            if let Some(f) = p.section.strip_prefix("fentry/")
                && f != "bpf_scx_reg"
            {
                return Err(LoadError(format!(
                    "program {} traces {f} (fentry): only fentry/bpf_scx_reg, which runs once at attach, is supported",
                    p.name
                )));
            }
        }
        scx_enum_init(&mut obj);
        uei_init(&mut obj, ops.uint("exit_dump_len"));
        let ctx = obj.mem.add("ops arguments", vec![0; 64], false);
        let mut k = KState::new(cfg.nr_cpus, name);
        k.current_other = obj.mem.add(
            "task_struct 0 (swapper)",
            vec![0; TASK_STRUCT_SIZE as usize],
            false,
        );
        k.cpus_all = k.masks.lend(
            &mut obj.mem,
            "cpus_mask (all CPUs)",
            &vec![true; cfg.nr_cpus as usize],
        );
        k.timeout_ns = if timeout_ms == 0 {
            SCX_WATCHDOG_MAX_TIMEOUT_NS
        } else {
            timeout_ms * 1_000_000
        };
        let batch = ops.uint("dispatch_max_batch") as u32;
        k.max_batch = if batch == 0 {
            SCX_DSP_DFL_MAX_BATCH
        } else {
            batch
        };
        let mut s = ScxSched { obj, ops, k, ctx };
        s.set_topology(CpuTopo::flat(cfg.nr_cpus));
        Ok(s)
    }

    /// The machine's layout: per-node idle tracking, `scx_bpf_cpu_node`, and the typed per-CPU
    /// ksyms (`sd_llc_id` is the LLC's first CPU, `sd_llc_size` its CPU count, as
    /// kernel/sched/topology.c's update_top_cache_domain sets them).
    pub fn set_topology(&mut self, t: CpuTopo) {
        for c in 0..self.k.nr_cpus {
            let i = c as usize;
            self.obj.set_ksym("sd_llc_id", c, t.llc_id[i] as i64);
            self.obj.set_ksym("sd_llc_size", c, t.llc_size[i] as i64);
        }
        self.k.topo = t;
        self.k.per_node_idle = self.ops.uint("flags") & SCX_OPS_BUILTIN_IDLE_PER_NODE != 0;
    }

    /// What user space sets between open and load: a `.rodata` option (a global, written in its
    /// own size), or a data member of the ops as `ops.<member>` (`ops.flags`, `ops.timeout_ms`,
    /// `ops.exit_dump_len`, as scx's loaders write `skel->struct_ops.x_ops->flags`).
    pub fn set_option(&mut self, name: &str, v: u64) -> Result<(), String> {
        if let Some(m) = name.strip_prefix("ops.") {
            let Some(b) = self.ops.data.get_mut(m) else {
                return Err(format!(
                    "sched_ext_ops has no data member '{m}' (flags, timeout_ms, exit_dump_len, dispatch_max_batch, hotplug_seq)"
                ));
            };
            if m == "name" {
                return Err("ops.name cannot be set as a number".into());
            }
            let n = b.len().min(8);
            b[..n].copy_from_slice(&v.to_le_bytes()[..n]);
            if m == "timeout_ms" {
                if v * 1_000_000 > SCX_WATCHDOG_MAX_TIMEOUT_NS {
                    return Err(format!("ops.timeout_ms {v} is above 30000 (-E2BIG)"));
                }
                self.k.timeout_ns = if v == 0 {
                    SCX_WATCHDOG_MAX_TIMEOUT_NS
                } else {
                    v * 1_000_000
                };
            }
            if m == "exit_dump_len" {
                uei_init(&mut self.obj, v);
            }
            if m == "dispatch_max_batch" {
                self.k.max_batch = if v == 0 {
                    SCX_DSP_DFL_MAX_BATCH
                } else {
                    v as u32
                };
            }
            self.k.per_node_idle = self.ops.uint("flags") & SCX_OPS_BUILTIN_IDLE_PER_NODE != 0;
            return Ok(());
        }
        let size = self.obj.global(name).map_or(8, |g| g.size.min(8) as usize);
        self.obj.set_global(name, &v.to_le_bytes()[..size])
    }

    /// Runs the BPF timers due at `now` (softirq context: no op's kfunc set is allowed).
    pub fn fire_timers(&mut self) {
        for d in self.k.timers.take_due(self.k.now_ns) {
            if self.k.exit.is_some() {
                return;
            }
            *self.k.op_calls.entry("timer").or_default() += 1;
            self.run_prog(d.entry, &d.args, OpCtx::Unlocked, ("a BPF timer", ""));
            self.after_exit();
        }
    }

    /// `scx_enable`: ops.init; a failure ends the scheduler before any task is switched.
    pub fn attach(&mut self) {
        self.run_attach_probe();
        if let Some(r) = self.call("init", OpCtx::Unlocked, &[]) {
            let r = r as i32;
            if r < 0 && self.k.exit.is_none() {
                self.k
                    .exit(SCX_EXIT_ERROR, 0, format!("ops.init() failed ({r})"));
            }
        }
        // validate_ops (ext.c:4540), after ops.init as scx_enable calls it (ext.c:4644)
        if self.enabled()
            && self.ops.uint("flags") & SCX_OPS_ENQ_LAST != 0
            && !self.ops.callbacks.contains_key("enqueue")
        {
            self.k.exit(
                SCX_EXIT_ERROR,
                0,
                "SCX_OPS_ENQ_LAST requires ops.enqueue() to be implemented".into(),
            );
        }
        self.after_exit();
    }

    /// An `fentry/bpf_scx_reg` program (scx's `scx_lib_init_probe`) runs as the link is made,
    /// from the loader's thread, under the BPF prolog's `migrate_disable()`:
    /// `bpf_get_current_task_btf()->migration_disabled` is 1 there.
    fn run_attach_probe(&mut self) {
        let Some(p) = self
            .obj
            .programs
            .iter()
            .find(|p| p.section == "fentry/bpf_scx_reg")
        else {
            return;
        };
        let entry = p.entry;
        let mut t = vec![0u8; TASK_STRUCT_SIZE as usize];
        t[T_MIGRATION_DISABLED as usize] = 1;
        let loader = self.obj.mem.add("task_struct (loader)", t, false);
        let other = std::mem::replace(&mut self.k.current_other, loader);
        let op = self.k.op;
        self.run_prog(entry, &[self.ctx], op, ("fentry/", "bpf_scx_reg"));
        self.k.current_other = other;
    }

    /// Runs the program at `entry` with `args` in op context `op` (restored after): its
    /// instructions are counted (all of the budget when the budget ejects it), and a run-time
    /// fault ends the scheduler with "runtime error in `what`" (two parts, so the hot path formats
    /// nothing). The program's return value, or None when it faulted.
    fn run_prog(
        &mut self,
        entry: usize,
        args: &[u64],
        op: OpCtx,
        what: (&str, &str),
    ) -> Option<u64> {
        let saved = std::mem::replace(&mut self.k.op, op);
        let mut host = self.k.host(&mut self.obj.maps, &self.obj.ksyms);
        let r = run(
            &self.obj.image,
            entry,
            args,
            &mut self.obj.mem,
            &mut host,
            OP_BUDGET,
        );
        self.k.op = saved;
        match r {
            Ok(o) => {
                self.k.insns += o.insns;
                Some(o.ret)
            }
            Err(e) => {
                if let VmError::Budget { limit } = e {
                    self.k.insns += limit;
                }
                let e = match e {
                    VmError::UnknownKfunc { pc, id } => match self.obj.missing_weak_name(id) {
                        Some(n) => format!("insn {pc}: called kfunc {n}, which this kernel lacks"),
                        None => e.to_string(),
                    },
                    e => e.to_string(),
                };
                self.k.exit(
                    SCX_EXIT_ERROR,
                    0,
                    format!("runtime error in {}{}: {e}", what.0, what.1),
                );
                None
            }
        }
    }

    pub fn enabled(&self) -> bool {
        self.k.exit.is_none()
    }

    /// Calls op `name` with `args` in context `ctx`. None if the op is absent, the scheduler is
    /// already disabled, or the call failed (then the scheduler is disabled with the reason).
    pub fn call(&mut self, name: &'static str, ctx: OpCtx, args: &[u64]) -> Option<u64> {
        if self.k.exit.is_some() {
            return None;
        }
        let p = *self.ops.callbacks.get(name)?;
        let entry = self.obj.programs[p].entry;
        let mut bytes = [0u8; 64];
        for (i, a) in args.iter().enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&a.to_le_bytes());
        }
        self.obj.mem.poke(self.ctx, &bytes).ok()?;
        *self.k.op_calls.entry(name).or_default() += 1;
        let out = self
            .run_prog(entry, &[self.ctx], ctx, ("ops.", name))
            .filter(|_| self.k.exit.is_none());
        // scx_disable_workfn runs ops.exit once an exit is recorded.
        self.after_exit();
        out
    }

    /// A new task (`scx_init_task` + `scx_enable_task`): its task_struct, ops.init_task, ops.enable.
    pub fn add_task(&mut self, pid: i32, weight: u32, cpu: u32) -> usize {
        let mut t = vec![0u8; TASK_STRUCT_SIZE as usize];
        t[T_PID as usize..T_PID as usize + 4].copy_from_slice(&pid.to_le_bytes());
        t[T_WEIGHT as usize..T_WEIGHT as usize + 4].copy_from_slice(&weight.to_le_bytes());
        let at = |o: u64| o as usize..o as usize + 8;
        t[at(T_CPUS_PTR)].copy_from_slice(&self.k.cpus_all.to_le_bytes());
        t[T_NR_CPUS_ALLOWED as usize..T_NR_CPUS_ALLOWED as usize + 4]
            .copy_from_slice(&(self.k.nr_cpus as i32).to_le_bytes());
        let _ = T_FLAGS; // PF_* flags: 0 (a user thread, not a kthread)
        let addr = self.obj.mem.add(format!("task_struct {pid}"), t, true);
        let idx = self.k.add_task(addr, pid, cpu);
        // scx_init_task_args { .fork = true, .cgroup = NULL }.
        let mut args = vec![0u8; 16];
        args[0] = 1;
        let args = self.obj.mem.add("scx_init_task_args", args, false);
        if let Some(r) = self.call("init_task", OpCtx::Unlocked, &[addr, args])
            && (r as i32) < 0
        {
            self.k.exit(
                SCX_EXIT_ERROR,
                0,
                format!("ops.init_task() failed ({}) for pid {pid}", r as i32),
            );
        }
        self.set_scx_flags(idx, SCX_TASK_ENABLED << SCX_TASK_STATE_SHIFT, true);
        self.call("enable", OpCtx::Rest, &[addr]);
        self.after_exit();
        idx
    }

    /// Sets or clears bits of `p->scx.flags` (SCX_TASK_QUEUED, the task state).
    fn set_scx_flags(&mut self, t: usize, bits: u32, on: bool) {
        let a = self.task_addr(t) + T_SCX_FLAGS;
        let f = self.obj.mem.load(a, 4).unwrap_or(0) as u32;
        let f = if on { f | bits } else { f & !bits };
        let _ = self.obj.mem.poke(a, &f.to_le_bytes());
    }

    pub fn task_addr(&self, t: usize) -> u64 {
        self.k.tasks[t].addr
    }
    pub fn slice(&self, t: usize) -> u64 {
        self.obj
            .mem
            .load(self.task_addr(t) + T_SLICE, 8)
            .unwrap_or(0)
    }
    pub fn vtime(&self, t: usize) -> u64 {
        self.obj
            .mem
            .load(self.task_addr(t) + T_VTIME, 8)
            .unwrap_or(0)
    }
    /// Sets `t`'s `scx.slice` (SCX_KICK_PREEMPT zeroes the running task's).
    pub fn set_slice(&mut self, t: usize, ns: u64) {
        let a = self.task_addr(t) + T_SLICE;
        let _ = self.obj.mem.poke(a, &ns.to_le_bytes());
    }
    pub fn set_vtime(&mut self, t: usize, v: u64) {
        let a = self.task_addr(t) + T_VTIME;
        let _ = self.obj.mem.poke(a, &v.to_le_bytes());
    }

    /// `select_task_rq_scx` on a wakeup: the CPU the task should be enqueued on.
    pub fn select_task_rq(&mut self, t: usize, prev_cpu: u32, wake_flags: u64) -> u32 {
        let addr = self.task_addr(t);
        self.k.cur_cpu = prev_cpu;
        self.k.ddsp_task = Some(t);
        let cpu = if self.ops.callbacks.contains_key("select_cpu") {
            match self.call(
                "select_cpu",
                OpCtx::SelectCpu,
                &[addr, prev_cpu as u64, wake_flags],
            ) {
                Some(c) if (c as u32) < self.k.nr_cpus => c as u32,
                Some(c) => {
                    self.k.exit(
                        SCX_EXIT_ERROR,
                        0,
                        format!("select_cpu returned invalid cpu {}", c as i32),
                    );
                    prev_cpu
                }
                None => prev_cpu,
            }
        } else {
            // No op: scx_select_cpu_dfl, and a direct dispatch to an idle CPU's local DSQ.
            let (cpu, idle) = self.k.select_cpu_dfl(prev_cpu);
            if idle {
                self.k.ddsp = Some((t, SCX_DSQ_LOCAL, 0));
            }
            cpu
        };
        self.k.tasks[t].selected_cpu = Some(cpu);
        self.k.tasks[t].ddsp = self.k.ddsp.take();
        self.k.tasks[t].ddsp_vtime = self.k.ddsp_vtime.take();
        self.k.ddsp_task = None;
        self.after_exit();
        cpu
    }

    /// `enqueue_task_scx` → `do_enqueue_task` on `cpu`'s run queue.
    pub fn enqueue_task(&mut self, t: usize, cpu: u32, enq_flags: u64) {
        let addr = self.task_addr(t);
        self.k.cur_cpu = cpu;
        self.k.tasks[t].cpu = cpu;
        self.k.tasks[t].runnable_at = self.k.now_ns;
        self.k.ddsp = self.k.tasks[t].ddsp.take();
        self.k.ddsp_vtime = self.k.tasks[t].ddsp_vtime.take();
        // enqueue_task_scx: p->scx.flags |= SCX_TASK_QUEUED
        self.set_scx_flags(t, SCX_TASK_QUEUED, true);
        if enq_flags & SCX_ENQ_WAKEUP != 0 || self.k.tasks[t].wh == Where::Off {
            self.call("runnable", OpCtx::Rest, &[addr, enq_flags]);
        }
        self.k.tasks[t].wh = Where::Bpf;
        // 1. A direct dispatch left by select_cpu.
        if self.k.ddsp.is_none() || self.k.ddsp.map(|d| d.0) != Some(t) {
            self.k.ddsp = None;
            if !self.enabled() || !self.ops.callbacks.contains_key("enqueue") {
                // 2./4. Bypass or no enqueue op: the global DSQ with the default slice.
                let _ = self
                    .obj
                    .mem
                    .poke(addr + T_SLICE, &SCX_SLICE_DFL.to_le_bytes());
                self.k
                    .dispatch_enqueue(t, SCX_DSQ_GLOBAL, cpu, enq_flags, None);
                self.after_exit();
                return;
            }
            // 5. ops.enqueue; an insert inside it is a direct dispatch.
            self.k.ddsp_task = Some(t);
            self.call("enqueue", OpCtx::Enqueue, &[addr, enq_flags]);
        }
        if let Some((dt, dsq, flags)) = self.k.ddsp.take() {
            let target_cpu = self.k.tasks[dt].selected_cpu.take().unwrap_or(cpu);
            let vt = self.k.ddsp_vtime.take();
            self.k
                .dispatch_enqueue(dt, dsq, target_cpu, flags | enq_flags, vt);
        }
        self.k.ddsp_task = None;
        self.after_exit();
    }

    /// `__schedule`'s ext half on `cpu` (v6.18 `pick_next_task` → `balance_scx` →
    /// `balance_one`, `pick_task_scx`, then `put_prev_set_next_task`): the task to run, or None
    /// for the idle class. `prev` is the ext task that ran there and is still runnable
    /// (`SCX_TASK_QUEUED`); None when it blocked (its dequeue already ran) or the CPU was idle.
    /// A kept `prev` is returned without any op (`next == prev`: no put_prev, no set_next); its
    /// spent slice is refilled to `SCX_SLICE_DFL` (pick_task_scx, ext.c:2417).
    pub fn pick_task(&mut self, cpu: u32, prev: Option<usize>) -> Option<usize> {
        self.k.cur_cpu = cpu;
        let keep = self.balance_one(cpu, prev);
        self.after_exit();
        if !self.enabled() {
            return None;
        }
        let next = match prev {
            Some(p) if keep => {
                if self.slice(p) == 0 {
                    self.set_slice(p, SCX_SLICE_DFL);
                }
                return Some(p);
            }
            _ => self.k.local[cpu as usize].iter().next().map(|e| e.task),
        };
        if let Some(p) = prev {
            // the next task is ext's, or the idle class's (below ext)
            self.put_prev_task_scx(p, cpu, next.is_some());
            if !self.enabled() {
                return None;
            }
        }
        let n = next?;
        self.set_next_task(n, cpu);
        Some(n)
    }

    /// `balance_one` (ext.c:2040): true when `prev` should keep the CPU (`SCX_RQ_BAL_KEEP`).
    /// A runnable `prev` with slice left keeps it (ext.c:2079); otherwise the local DSQ, the
    /// global DSQ, then up to `SCX_DSP_MAX_LOOPS` rounds of ops.dispatch (after each, a `prev`
    /// whose slice the scheduler refilled keeps the CPU, ext.c:2113). With nothing found `prev`
    /// keeps running unless `SCX_OPS_ENQ_LAST` is set (ext.c:2138–2146); with it, `prev` goes to
    /// ops.enqueue with `SCX_ENQ_LAST` as the CPU turns to the idle class (put_prev_task_scx).
    fn balance_one(&mut self, cpu: u32, prev: Option<usize>) -> bool {
        let c = cpu as usize;
        let bypass = !self.enabled();
        if let Some(p) = prev
            && self.slice(p) > 0
            && !bypass
        {
            return true;
        }
        if self.k.local[c].nr() > 0 || self.k.consume(SCX_DSQ_GLOBAL, cpu) {
            return false;
        }
        if !bypass && self.ops.callbacks.contains_key("dispatch") {
            let prev_addr = prev.map_or(0, |p| self.task_addr(p));
            for _ in 0..SCX_DSP_MAX_LOOPS {
                self.k.dsp_cpu = cpu;
                self.k.dsp_nr = 0;
                self.call("dispatch", OpCtx::Dispatch, &[cpu as u64, prev_addr]);
                self.k.flush_dispatch_buf(cpu);
                if let Some(p) = prev
                    && self.slice(p) > 0
                {
                    return true;
                }
                if self.k.local[c].nr() > 0 || self.k.consume(SCX_DSQ_GLOBAL, cpu) {
                    return false;
                }
                if self.k.dsp_nr == 0 || !self.enabled() {
                    break;
                }
            }
        }
        prev.is_some() && (self.ops.uint("flags") & SCX_OPS_ENQ_LAST == 0 || !self.enabled())
    }

    /// `set_next_task_scx`: `t` leaves its local DSQ and runs on `cpu` (ops.running); a CPU
    /// that was idle leaves the built-in idle mask.
    fn set_next_task(&mut self, t: usize, cpu: u32) {
        let c = cpu as usize;
        self.k.local[c].remove(t);
        self.k.tasks[t].wh = Where::Running(cpu);
        self.k.tasks[t].cpu = cpu;
        if std::mem::replace(&mut self.k.idle[c], false) {
            // __scx_update_idle(rq, false): cpumask_clear_cpu, an atomic bitop
            self.k
                .touched
                .push((self.k.idle_shared(cpu), Touch::Atomic));
        }
        let addr = self.task_addr(t);
        self.call("running", OpCtx::Rest, &[addr]);
        self.after_exit();
    }

    /// `update_curr_scx`: `ran_ns` of the running task's slice is used; true when it is spent
    /// (the tick then reschedules, ext.c:2685).
    pub fn charge(&mut self, t: usize, ran_ns: u64) -> bool {
        let a = self.task_addr(t) + T_SLICE;
        let s = self.obj.mem.load(a, 8).unwrap_or(0);
        let left = s.saturating_sub(ran_ns);
        let _ = self.obj.mem.poke(a, &left.to_le_bytes());
        left == 0
    }

    /// `ops.tick` for the running task.
    pub fn tick(&mut self, t: usize) {
        let addr = self.task_addr(t);
        self.call("tick", OpCtx::Rest, &[addr]);
        self.after_exit();
    }

    /// The running task `t` blocks or exits (`dequeue_task_scx` with `SCX_DEQ_SLEEP`):
    /// ops.stopping, then ops.quiescent.
    pub fn dequeue_task(&mut self, t: usize) {
        let addr = self.task_addr(t);
        self.call("stopping", OpCtx::Rest, &[addr, 0]);
        // dequeue_task_scx: SCX_TASK_QUEUED is cleared before ops.quiescent
        self.set_scx_flags(t, SCX_TASK_QUEUED, false);
        self.call("quiescent", OpCtx::Rest, &[addr, SCX_DEQ_SLEEP]);
        self.k.tasks[t].wh = Where::Off;
        self.after_exit();
    }

    /// `put_prev_task_scx` (ext.c:2321) for a runnable `t` that another task replaces on `cpu`:
    /// ops.stopping; with slice left (a higher class took the CPU) back to the head of the local
    /// DSQ; else through ops.enqueue, with `SCX_ENQ_LAST` when the next task is the idle class's
    /// (`next_on_ext` false: `sched_class_above(&ext_sched_class, next->sched_class)`,
    /// ext.c:2351–2354).
    pub fn put_prev_task_scx(&mut self, t: usize, cpu: u32, next_on_ext: bool) {
        let addr = self.task_addr(t);
        self.call("stopping", OpCtx::Rest, &[addr, 1]);
        if self.slice(t) > 0 {
            self.k.tasks[t].wh = Where::Queued(SCX_DSQ_LOCAL);
            self.k
                .dispatch_enqueue(t, SCX_DSQ_LOCAL, cpu, SCX_ENQ_HEAD, None);
        } else {
            let flags = if next_on_ext { 0 } else { SCX_ENQ_LAST };
            self.enqueue_task(t, cpu, flags);
        }
        self.after_exit();
    }

    /// A CPU with nothing to run goes idle (the built-in idle mask, `update_idle`).
    pub fn set_idle(&mut self, cpu: u32, idle: bool) {
        if self.k.idle[cpu as usize] != idle {
            self.k
                .touched
                .push((self.k.idle_shared(cpu), Touch::Atomic));
        }
        self.k.idle[cpu as usize] = idle;
        self.call("update_idle", OpCtx::Rest, &[cpu as u64, idle as u64]);
        self.after_exit();
    }

    /// The watchdog (`check_rq_for_timeouts`): a runnable task that has waited longer than the
    /// timeout ends the scheduler with SCX_EXIT_ERROR_STALL.
    pub fn watchdog(&mut self) {
        if !self.enabled() {
            return;
        }
        let now = self.k.now_ns;
        let stalled = self.k.tasks.iter().find(|t| {
            matches!(t.wh, Where::Bpf | Where::Queued(_))
                && now.saturating_sub(t.runnable_at) > self.k.timeout_ns
        });
        if let Some(t) = stalled {
            let waited = now - t.runnable_at;
            let msg = format!(
                "task[{}] failed to run for {}.{:03}s",
                t.pid,
                waited / 1_000_000_000,
                waited / 1_000_000 % 1000
            );
            self.k.exit(SCX_EXIT_ERROR_STALL, 0, msg);
            self.after_exit();
        }
    }

    /// `scx_disable_workfn` once an exit is recorded: ops.exit(ei) runs once with the kind,
    /// reason and message; every task is then the fair class's.
    fn after_exit(&mut self) {
        let Some(ei) = self.k.exit.clone() else {
            return;
        };
        if self.k.exit_called {
            return;
        }
        self.k.exit_called = true;
        let Some(&p) = self.ops.callbacks.get("exit") else {
            return;
        };
        let reason = self.obj.mem.add(
            "exit reason",
            format!("{}\0", ei.reason).into_bytes(),
            false,
        );
        let msg = self
            .obj
            .mem
            .add("exit msg", format!("{}\0", ei.msg).into_bytes(), false);
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(&ei.kind.to_le_bytes());
        b[8..16].copy_from_slice(&ei.exit_code.to_le_bytes());
        b[24..32].copy_from_slice(&reason.to_le_bytes());
        b[48..56].copy_from_slice(&msg.to_le_bytes());
        let info = self.obj.mem.add("scx_exit_info", b, false);
        let entry = self.obj.programs[p].entry;
        let _ = self.obj.mem.poke(self.ctx, &info.to_le_bytes());
        *self.k.op_calls.entry("exit").or_default() += 1;
        self.k.op = OpCtx::Unlocked;
        let mut host = self.k.host(&mut self.obj.maps, &self.obj.ksyms);
        if let Ok(o) = run(
            &self.obj.image,
            entry,
            &[self.ctx],
            &mut self.obj.mem,
            &mut host,
            OP_BUDGET,
        ) {
            self.k.insns += o.insns;
        }
        self.k.op = OpCtx::None;
    }
}

#[cfg(test)]
mod tests;
