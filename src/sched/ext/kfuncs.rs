//! The kernel side of a BPF scheduler's calls: the state the kfuncs read and change (DSQs, the
//! idle mask, the direct-dispatch slot, the dispatch buffer, the exit record) and the kfuncs
//! themselves, as kernel/sched/ext.c and ext_idle.c define them for v6.18, including the context
//! checks (`scx_kf_allowed`) that turn a kfunc called from the wrong op into an error.

use super::dsq::*;
use super::idle::{CpuTopo, Lent};
use super::internal::{
    ExitInfo, OpCtx, SCX_ENQ_HEAD, SCX_EXIT_ERROR, SCX_EXIT_ERROR_BPF, SCX_EXIT_UNREG_BPF, Shared,
    Touch, Where,
};
use super::vmlinux::{TASK_SCX, kf};
use crate::bpf::cpumask::Cpumasks;
use crate::bpf::helpers;
use crate::bpf::loader::Ksym;
use crate::bpf::maps::Map;
use crate::bpf::memory::Memory;
use crate::bpf::timer::Timers;
use crate::bpf::vm::{CallError, Host};
use std::collections::{BTreeMap, VecDeque};

const T_SLICE: u64 = TASK_SCX as u64 + 48;
const T_VTIME: u64 = TASK_SCX as u64 + 56;

#[derive(Clone, Debug)]
pub struct TaskState {
    pub addr: u64,
    pub pid: i32,
    pub cpu: u32,
    pub wh: Where,
    pub runnable_at: u64,
    pub selected_cpu: Option<u32>,
    /// A direct dispatch select_cpu left for the enqueue (`p->scx.ddsp_dsq_id` and flags, and
    /// the vtime of an insert_vtime): kept per task, as the wakeup's enqueue may come later
    /// (through the target's wake list) after other wakeups' select_cpu.
    pub ddsp: Option<(usize, u64, u64)>,
    pub ddsp_vtime: Option<u64>,
}

pub struct KState {
    pub nr_cpus: u32,
    pub name: String,
    pub tasks: Vec<TaskState>,
    pub local: Vec<Dsq>,
    pub global: Dsq,
    pub user: BTreeMap<u64, Dsq>,
    pub idle: Vec<bool>,
    pub op: OpCtx,
    pub now_ns: u64,
    pub timeout_ns: u64,
    pub max_batch: u32,
    /// The task whose select_cpu / enqueue is running (the only one it may direct-dispatch).
    pub ddsp_task: Option<usize>,
    /// A pending direct dispatch: task, DSQ, enq flags (and its vtime, for an insert_vtime).
    pub ddsp: Option<(usize, u64, u64)>,
    pub ddsp_vtime: Option<u64>,
    /// ops.dispatch's inserts, flushed after it returns: task, DSQ, flags, vtime.
    pub dsp_buf: Vec<(usize, u64, u64, Option<u64>)>,
    pub dsp_cpu: u32,
    /// The CPU the current op runs on (`bpf_get_smp_processor_id`, per-CPU maps).
    pub cur_cpu: u32,
    /// Tasks moved or inserted by the current dispatch round.
    pub dsp_nr: u32,
    pub kicks: Vec<(u32, u64)>,
    pub exit: Option<ExitInfo>,
    pub exit_called: bool,
    pub op_calls: BTreeMap<&'static str, u64>,
    pub insns: u64,
    /// Shared lines touched since the engine last took them (it prices them).
    pub touched: Vec<(Shared, Touch)>,
    /// Tasks inserted into each DSQ, by id (local DSQs as `SCX_DSQ_LOCAL_ON | cpu`).
    pub dispatched: BTreeMap<u64, u64>,
    /// The machine's layout (nodes, LLCs, SMT cores) for the idle kfuncs and per-CPU ksyms.
    pub topo: CpuTopo,
    /// `SCX_OPS_BUILTIN_IDLE_PER_NODE`: one idle mask per NUMA node.
    pub per_node_idle: bool,
    /// The program's `bpf_cpumask`s (kernel/bpf/cpumask.c).
    pub masks: Cpumasks,
    /// Masks the core lends (idle, idle SMT, online), by which.
    pub lent: BTreeMap<Lent, u64>,
    /// BPF timers armed by the program.
    pub timers: Timers,
    /// Open DSQ iterators (`bpf_iter_scx_dsq`), by the iterator's address: the tasks left.
    pub dsq_iters: BTreeMap<u64, VecDeque<u64>>,
    /// `scx_bpf_cpuperf_set`'s last target per CPU (SCX_CPUPERF_ONE = 1024 until set).
    pub cpuperf: Vec<u32>,
    /// The `task_struct` `bpf_get_current_task_btf` answers on a CPU running no ext task
    /// (the idle task, or the loader's thread during the attach probe).
    pub current_other: u64,
    /// `p->cpus_ptr` of every task: all CPUs (no workload here sets an affinity).
    pub cpus_all: u64,
}

/// The `Host` a program runs against: the kernel state and the object's maps.
pub struct Call<'a> {
    k: &'a mut KState,
    maps: &'a mut [Map],
    ksyms: &'a [Ksym],
}

fn task_of(k: &KState, addr: u64) -> Result<usize, CallError> {
    k.tasks
        .iter()
        .position(|t| t.addr == addr)
        .ok_or_else(|| CallError::Failed(format!("{addr:#x} is not a task_struct")))
}

/// `scx_bpf_error_bstr`'s formatting: each conversion takes the next u64 of `data`.
fn bstr(fmt: &str, data: &[u64]) -> String {
    let mut out = String::new();
    let mut it = data.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&n) = chars.peek() {
            chars.next();
            if n.is_ascii_alphabetic() && !matches!(n, 'l' | 'h' | 'z') {
                spec.push(n);
                break;
            }
            spec.push(n);
        }
        let v = it.next().copied().unwrap_or(0);
        match spec.chars().last() {
            Some('%') | None => out.push('%'),
            Some('x') => out.push_str(&format!("{v:x}")),
            Some('d' | 'i') => out.push_str(&(v as i64).to_string()),
            _ => out.push_str(&v.to_string()),
        }
    }
    out
}

impl KState {
    pub fn new(nr_cpus: u32, name: String) -> Self {
        KState {
            nr_cpus,
            name,
            tasks: Vec::new(),
            local: (0..nr_cpus)
                .map(|c| Dsq::new(SCX_DSQ_LOCAL_ON | c as u64))
                .collect(),
            global: Dsq::new(SCX_DSQ_GLOBAL),
            user: BTreeMap::new(),
            idle: vec![true; nr_cpus as usize],
            op: OpCtx::None,
            now_ns: 0,
            timeout_ns: 0,
            max_batch: 32,
            ddsp_task: None,
            ddsp: None,
            ddsp_vtime: None,
            dsp_buf: Vec::new(),
            dsp_cpu: 0,
            cur_cpu: 0,
            dsp_nr: 0,
            kicks: Vec::new(),
            exit: None,
            exit_called: false,
            op_calls: BTreeMap::new(),
            insns: 0,
            touched: Vec::new(),
            dispatched: BTreeMap::new(),
            topo: CpuTopo::flat(nr_cpus),
            per_node_idle: false,
            masks: Cpumasks::new(nr_cpus),
            lent: BTreeMap::new(),
            timers: Timers::default(),
            dsq_iters: BTreeMap::new(),
            cpuperf: vec![1024; nr_cpus as usize],
            current_other: 0,
            cpus_all: 0,
        }
    }

    pub fn host<'a>(&'a mut self, maps: &'a mut [Map], ksyms: &'a [Ksym]) -> Call<'a> {
        Call {
            k: self,
            maps,
            ksyms,
        }
    }

    /// `scx_kf_allowed` for the other kfunc modules.
    pub(super) fn allowed_ctx(&mut self, what: &str, ok: &[OpCtx]) -> bool {
        self.allowed(what, ok)
    }

    pub fn add_task(&mut self, addr: u64, pid: i32, cpu: u32) -> usize {
        self.tasks.push(TaskState {
            addr,
            pid,
            cpu,
            wh: Where::Off,
            runnable_at: 0,
            selected_cpu: None,
            ddsp: None,
            ddsp_vtime: None,
        });
        self.tasks.len() - 1
    }

    /// `scx_exit`: the first exit is kept.
    pub fn exit(&mut self, kind: u32, exit_code: i64, msg: String) {
        if self.exit.is_some() {
            return;
        }
        let reason = match kind {
            SCX_EXIT_UNREG_BPF => "unregistered from BPF",
            SCX_EXIT_ERROR_BPF => "scx_bpf_error",
            super::internal::SCX_EXIT_ERROR_STALL => "runnable task stall",
            SCX_EXIT_ERROR => "runtime error",
            _ => "disabled",
        };
        self.exit = Some(ExitInfo {
            kind,
            exit_code,
            reason: reason.to_string(),
            msg,
            at_ns: self.now_ns,
        });
    }

    fn allowed(&mut self, what: &str, ok: &[OpCtx]) -> bool {
        if ok.contains(&self.op) {
            return true;
        }
        self.exit(
            SCX_EXIT_ERROR,
            0,
            format!(
                "{what} called from a context that does not allow it ({:?})",
                self.op
            ),
        );
        false
    }

    /// The DSQ an id names from `cpu` (LOCAL is `cpu`'s).
    fn dsq_mut(&mut self, id: u64, cpu: u32) -> Option<&mut Dsq> {
        if id == SCX_DSQ_LOCAL {
            self.local.get_mut(cpu as usize)
        } else if id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON {
            self.local.get_mut((id & SCX_DSQ_LOCAL_CPU_MASK) as usize)
        } else if id == SCX_DSQ_GLOBAL {
            Some(&mut self.global)
        } else {
            self.user.get_mut(&id)
        }
    }

    /// `dispatch_enqueue`: task `t` into DSQ `id` (LOCAL meaning `cpu`'s).
    pub fn dispatch_enqueue(
        &mut self,
        t: usize,
        id: u64,
        cpu: u32,
        flags: u64,
        vtime: Option<u64>,
    ) {
        let Some(d) = self.dsq_mut(id, cpu) else {
            self.exit(SCX_EXIT_ERROR, 0, format!("non-existent DSQ {id:#x}"));
            return;
        };
        let (order, v) = match vtime {
            Some(v) => (Order::Vtime, v),
            None => (Order::Fifo, 0),
        };
        let real = d.id;
        let inserted = d.insert(
            Entry { task: t, vtime: v },
            order,
            flags & SCX_ENQ_HEAD != 0,
        );
        self.touched.push((Shared::Dsq(real), Touch::Atomic));
        if let Err(e) = inserted {
            self.exit(SCX_EXIT_ERROR, 0, e);
            return;
        }
        *self.dispatched.entry(real).or_default() += 1;
        self.tasks[t].wh = Where::Queued(real);
    }

    /// Moves the first task of DSQ `id` to `cpu`'s local DSQ (`consume_dispatch_q`).
    pub fn consume(&mut self, id: u64, cpu: u32) -> bool {
        let Some(d) = self.dsq_mut(id, cpu) else {
            return false;
        };
        let real = d.id;
        let popped = d.pop();
        // an empty DSQ is seen without its lock (list_empty / nr read), a non-empty one is locked
        let Some(e) = popped else {
            self.touched.push((Shared::Dsq(real), Touch::Load));
            return false;
        };
        self.touched.push((Shared::Dsq(real), Touch::Atomic));
        self.dispatch_enqueue(e.task, SCX_DSQ_LOCAL, cpu, 0, None);
        true
    }

    /// `flush_dispatch_buf`.
    pub fn flush_dispatch_buf(&mut self, cpu: u32) {
        for (t, id, flags, vt) in std::mem::take(&mut self.dsp_buf) {
            self.dispatch_enqueue(t, id, cpu, flags, vt);
        }
    }

    /// `scx_select_cpu_dfl`, simplified: `prev_cpu` if idle, else the lowest idle CPU; the
    /// chosen idle CPU is claimed (test_and_clear). Returns (cpu, was idle).
    pub fn select_cpu_dfl(&mut self, prev: u32) -> (u32, bool) {
        let prev = prev.min(self.nr_cpus - 1);
        // the idle mask is read, and a found CPU claimed with a test_and_clear
        self.touched.push((self.idle_shared(prev), Touch::Load));
        let node = self.topo.node[prev as usize];
        let pick = if self.idle[prev as usize] {
            Some(prev)
        } else if self.per_node_idle {
            // per-node tracking looks in prev's node first (SCX_PICK_IDLE_IN_NODE's order)
            (0..self.nr_cpus)
                .find(|&c| self.topo.node[c as usize] == node && self.idle[c as usize])
                .or_else(|| (0..self.nr_cpus).find(|&c| self.idle[c as usize]))
        } else {
            (0..self.nr_cpus).find(|&c| self.idle[c as usize])
        };
        match pick {
            Some(c) => {
                self.idle[c as usize] = false;
                self.touched.push((self.idle_shared(c), Touch::Atomic));
                (c, true)
            }
            None => (prev, false),
        }
    }

    fn insert(
        &mut self,
        mem: &mut Memory,
        a: [u64; 5],
        vtime: Option<u64>,
    ) -> Result<u64, CallError> {
        let name = if vtime.is_some() {
            "scx_bpf_dsq_insert_vtime"
        } else {
            "scx_bpf_dsq_insert"
        };
        if !self.allowed(name, &[OpCtx::SelectCpu, OpCtx::Enqueue, OpCtx::Dispatch]) {
            return Ok(0);
        }
        let t = task_of(self, a[0])?;
        let flags = if vtime.is_some() { a[4] } else { a[3] };
        if flags >> 56 != 0 {
            self.exit(SCX_EXIT_ERROR, 0, format!("invalid enq_flags {flags:#x}"));
            return Ok(0);
        }
        // A slice of 0 keeps the current one (ext.c:5443).
        if a[2] != 0 {
            mem.poke(a[0] + T_SLICE, &a[2].to_le_bytes())?;
        }
        if let Some(v) = vtime {
            mem.poke(a[0] + T_VTIME, &v.to_le_bytes())?;
        }
        if self.op == OpCtx::Dispatch {
            if self.dsp_buf.len() >= self.max_batch as usize {
                self.exit(SCX_EXIT_ERROR, 0, "dispatch buffer overflow".into());
                return Ok(0);
            }
            self.dsp_buf.push((t, a[1], flags, vtime));
            self.dsp_nr += 1;
        } else if self.ddsp_task != Some(t) || self.ddsp.is_some() {
            self.exit(
                SCX_EXIT_ERROR,
                0,
                format!(
                    "{name}: direct dispatch of pid {} not allowed here",
                    self.tasks[t].pid
                ),
            );
        } else {
            self.ddsp = Some((t, a[1], flags));
            self.ddsp_vtime = vtime;
        }
        Ok(0)
    }

    fn kfunc(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        if let Some(v) = self.idle_kfunc(id, a, mem)? {
            return Ok(v);
        }
        match self.masks.call(id, a, mem) {
            Err(CallError::Unknown) => {}
            r => return r,
        }
        Ok(match id {
            kf::ITER_SCX_DSQ_NEW => {
                // (it, dsq_id, flags): the DSQ's tasks in order (SCX_DSQ_ITER_REV = 1 << 16)
                let Some(d) = self.dsq_mut(a[1], self.cur_cpu) else {
                    self.dsq_iters.insert(a[0], VecDeque::new());
                    return Ok(-2i64 as u64);
                };
                let mut v: VecDeque<usize> = d.iter().map(|e| e.task).collect();
                if a[2] & (1 << 16) != 0 {
                    v = v.into_iter().rev().collect();
                }
                let tasks = v.into_iter().map(|t| self.tasks[t].addr).collect();
                self.dsq_iters.insert(a[0], tasks);
                0
            }
            kf::ITER_SCX_DSQ_NEXT => self
                .dsq_iters
                .get_mut(&a[0])
                .and_then(VecDeque::pop_front)
                .unwrap_or(0),
            kf::ITER_SCX_DSQ_DESTROY => {
                self.dsq_iters.remove(&a[0]);
                0
            }
            kf::REENQUEUE_LOCAL => {
                // only ops.cpu_release may call it, and no higher class takes a CPU here
                self.allowed("scx_bpf_reenqueue_local", &[]);
                0
            }
            kf::DSQ_INSERT => self.insert(mem, a, None)?,
            kf::DSQ_INSERT_VTIME => self.insert(mem, a, Some(a[3]))?,
            kf::DSQ_MOVE_TO_LOCAL => {
                if !self.allowed("scx_bpf_dsq_move_to_local", &[OpCtx::Dispatch]) {
                    return Ok(0);
                }
                let cpu = self.dsp_cpu;
                self.flush_dispatch_buf(cpu);
                if self.dsq_mut(a[0], cpu).is_none() {
                    self.exit(SCX_EXIT_ERROR, 0, format!("non-existent DSQ {:#x}", a[0]));
                    return Ok(0);
                }
                let moved = self.consume(a[0], cpu);
                self.dsp_nr += moved as u32;
                moved as u64
            }
            kf::SELECT_CPU_DFL => {
                if !self.allowed(
                    "scx_bpf_select_cpu_dfl",
                    &[OpCtx::SelectCpu, OpCtx::Enqueue],
                ) {
                    return Ok(a[1]);
                }
                let (cpu, idle) = self.select_cpu_dfl(a[1] as u32);
                mem.store(a[3], 1, idle as u64)?;
                cpu as u64
            }
            kf::CREATE_DSQ => {
                if a[0] & SCX_DSQ_FLAG_BUILTIN != 0 {
                    -22i64 as u64
                } else {
                    match self.user.entry(a[0]) {
                        std::collections::btree_map::Entry::Occupied(_) => -17i64 as u64,
                        std::collections::btree_map::Entry::Vacant(v) => {
                            v.insert(Dsq::new(a[0]));
                            0
                        }
                    }
                }
            }
            kf::DESTROY_DSQ => {
                self.user.remove(&a[0]);
                0
            }
            kf::DSQ_NR_QUEUED => match self.dsq_mut(a[0], 0) {
                Some(d) => d.nr() as u64,
                None => -2i64 as u64,
            },
            kf::KICK_CPU => {
                self.kicks.push((a[0] as u32, a[1]));
                0
            }
            kf::TASK_CPU => self.tasks[task_of(self, a[0])?].cpu as u64,
            kf::TASK_RUNNING => {
                matches!(self.tasks[task_of(self, a[0])?].wh, Where::Running(_)) as u64
            }
            kf::NOW => self.now_ns,
            kf::NR_CPU_IDS => self.nr_cpus as u64,
            kf::TEST_AND_CLEAR_CPU_IDLE => {
                // a test_and_clear_bit on the idle mask
                let c = (a[0] as u32).min(self.nr_cpus - 1);
                self.touched.push((self.idle_shared(c), Touch::Atomic));
                match self.idle.get_mut(a[0] as usize) {
                    Some(i) if *i => {
                        *i = false;
                        1
                    }
                    _ => 0,
                }
            }
            kf::ERROR_BSTR | kf::EXIT_BSTR => {
                let (code, fmt, data, sz) = if id == kf::EXIT_BSTR {
                    (a[0] as i64, a[1], a[2], a[3])
                } else {
                    (0, a[0], a[1], a[2])
                };
                let f = mem.c_str(fmt, 1024)?;
                let n = (sz as usize / 8).min(12);
                let d: Vec<u64> = (0..n)
                    .map(|i| mem.load(data + 8 * i as u64, 8))
                    .collect::<Result<_, _>>()?;
                let kind = if id == kf::EXIT_BSTR {
                    SCX_EXIT_UNREG_BPF
                } else {
                    SCX_EXIT_ERROR_BPF
                };
                self.exit(kind, code, bstr(&f, &d));
                0
            }
            kf::RCU_READ_LOCK | kf::RCU_READ_UNLOCK => 0,
            _ => return Err(CallError::Unknown),
        })
    }
}

impl Host for Call<'_> {
    fn helper(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        let cpu = self.k.cur_cpu;
        match self.k.timers.call(id, a, mem, self.maps, self.k.now_ns) {
            Err(CallError::Unknown) => {}
            r => return r,
        }
        match id {
            helpers::KTIME_GET_NS => Ok(self.k.now_ns),
            helpers::GET_SMP_PROCESSOR_ID => Ok(cpu as u64),
            helpers::PER_CPU_PTR => Ok(helpers::per_cpu_ptr(self.ksyms, a[0], a[1])),
            helpers::THIS_CPU_PTR => Ok(helpers::per_cpu_ptr(self.ksyms, a[0], cpu as u64)),
            helpers::GET_CURRENT_TASK_BTF => Ok(self
                .k
                .tasks
                .iter()
                .find(|t| t.wh == Where::Running(cpu))
                .map_or(self.k.current_other, |t| t.addr)),
            _ => helpers::call(id, a, mem, self.maps, cpu, self.k.nr_cpus),
        }
    }
    fn kfunc(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        self.k.kfunc(id, a, mem)
    }
}

/// `bstr` for the core's tests.
#[cfg(test)]
pub fn tests_bstr(fmt: &str, data: &[u64]) -> String {
    bstr(fmt, data)
}
