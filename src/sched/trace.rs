//! Trace export: a timeline view of a run in the Chrome JSON trace-event format, which Perfetto's UI
//! opens (docs/TRACE.md). The tracer only watches: it is fed from the places where the engine
//! charges CPU time (`kcharge`, `kaccess`, the store-buffer drain and the mode switches in
//! `exec.rs`), so its slices are exactly what the profile counts, and it never changes the engine's
//! state (the report hash is the same with tracing on). Off, it is one `None` test per hook.
//!
//! Tracks: one thread per CPU (pid 1 = the machine, tid = CPU + 1, named `CPU n`) with nested
//! slices — depth 0 the CPU's mode (the running task's user time, `idle`, `idle (nohz)`, `kernel`),
//! depth 1 the kernel symbol charged, depth 2 the stall on a named cache line (`wait <line>`) or
//! the store-buffer drain; counters for each CPU's nr_running and the number of CPUs waiting on
//! each line; instants for SCHED_SOFTIRQ raises and failed cmpxchgs; flows from a waker (or a
//! migrating CPU) to the CPU where the task next runs.

use super::*;
use crate::error::{FieldError, Invalid};
use std::fmt::Write as _;

/// The most events one trace may hold (about 100 bytes each: ~100 MB of JSON, what a browser tab
/// can still build and Perfetto's UI still load; an assumption, docs/TRACE.md).
pub const TRACE_MAX_EVENTS: usize = 1_000_000;

/// What the trace is written as: Chrome JSON (`trace_json`) or Perfetto protobuf (`perfetto.rs`).
/// The tracer records only what its format writes, so the cap counts written events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Json,
    Perfetto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Name {
    Task(TaskId),
    Idle,
    NohzIdle,
    Kernel,
    Sym(Sym),
    Wait(LineId),
    StoreBuffer,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Rec {
    Slice {
        cpu: u32,
        depth: u8,
        name: Name,
        start: u64,
        end: u64,
    },
    NrRunning {
        cpu: u32,
        t: u64,
        n: u32,
    },
    Instant {
        cpu: u32,
        t: u64,
        name: &'static str,
    },
    /// A flow arrow: its start (on the waker / source CPU) or its end (where the task runs next).
    Flow {
        cpu: u32,
        t: u64,
        id: u64,
        end: bool,
        name: &'static str,
    },
    /// Perfetto only: `sched_switch` on `cpu` (None: the idle task, pid 0).
    Switch {
        cpu: u32,
        t: u64,
        prev_state: i64,
        next: Option<TaskId>,
    },
    /// Perfetto only: `sched_waking` of `task` by `cpu`, to run on `target`.
    Waking {
        cpu: u32,
        t: u64,
        task: TaskId,
        target: u32,
    },
    /// Perfetto only: `sched_migrate_task` (set_task_cpu) by `cpu`.
    Migrate {
        cpu: u32,
        t: u64,
        task: TaskId,
        orig: u32,
        dest: u32,
    },
    /// Perfetto only: `cpu_idle` (state, or `CPU_IDLE_EXIT` when the CPU leaves idle).
    CpuIdle {
        cpu: u32,
        t: u64,
        state: u32,
    },
}

/// cpu_idle's state on idle exit (PWR_EVENT_EXIT, `(u32)-1`).
pub(super) const CPU_IDLE_EXIT: u32 = u32::MAX;

impl Rec {
    fn perfetto_only(&self) -> bool {
        matches!(
            self,
            Rec::Switch { .. } | Rec::Waking { .. } | Rec::Migrate { .. } | Rec::CpuIdle { .. }
        )
    }

    pub(super) fn key(&self) -> (u64, u8) {
        match *self {
            Rec::Slice { start, depth, .. } => (start, depth),
            Rec::NrRunning { t, .. }
            | Rec::Instant { t, .. }
            | Rec::Flow { t, .. }
            | Rec::Switch { t, .. }
            | Rec::Waking { t, .. }
            | Rec::Migrate { t, .. }
            | Rec::CpuIdle { t, .. } => (t, 3),
        }
    }
}

/// What a CPU was doing since `start` (depth 0), and the kernel symbol slice being extended.
#[derive(Clone, Copy)]
pub(super) struct CpuTrack {
    mode: Name,
    start: u64,
    sym: Option<(Sym, u64, u64)>,
    /// The last closed depth-0 slice, held back so that a task's bursts around an empty kernel
    /// pass stay one slice.
    last: Option<(Name, u64, u64)>,
    /// nr_running as last recorded, and a newer value seen at `pending_t` (the last value of an
    /// instant wins: a switch dequeues `next` before it sets it as curr).
    nr: u32,
    pending: Option<(u64, u32)>,
}

pub struct Tracer {
    pub(super) format: TraceFormat,
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) cap: usize,
    pub(super) recs: Vec<Rec>,
    /// Stalls on named lines in the window: (line, start, end); 2 counter events each.
    pub(super) waits: Vec<(LineId, u64, u64)>,
    pub(super) count: usize,
    overflow: bool,
    /// The window was not given: at `cap - headroom` events the window ends where recording
    /// stands (`to` = that time), so the trace is the longest one from `from` that fits the cap.
    auto_cut: bool,
    /// The window was cut at `to` by the cap.
    pub(super) cut: bool,
    pub(super) cpus: Vec<CpuTrack>,
    /// Each task's CPU when recording started (where `sched_wakeup_new` put it at 0).
    pub(super) initial_cpus: Vec<u32>,
    /// Per task: the flow waiting for the task's next run (id, name).
    flows: Vec<Option<(u64, &'static str)>>,
    next_flow: u64,
}

impl Tracer {
    /// A tracer recording [from_ns, to_ns) with at most `cap` events.
    pub fn new(nr_cpus: usize, nr_tasks: usize, from_ns: u64, to_ns: u64, cap: usize) -> Tracer {
        Tracer {
            format: TraceFormat::Json,
            initial_cpus: Vec::new(),
            auto_cut: false,
            cut: false,
            from: from_ns,
            to: to_ns,
            cap,
            recs: Vec::new(),
            waits: Vec::new(),
            count: 0,
            overflow: false,
            cpus: vec![
                CpuTrack {
                    mode: Name::Idle,
                    start: 0,
                    sym: None,
                    last: None,
                    nr: 0,
                    pending: None,
                };
                nr_cpus
            ],
            flows: vec![None; nr_tasks],
            next_flow: 0,
        }
    }

    /// Room kept below the cap once an automatic window is cut: the records still open then
    /// (per CPU its mode, symbol, wait and nr_running) start before the cut and must still fit.
    fn headroom(&self) -> usize {
        16 * self.cpus.len() + 1024
    }

    pub(super) fn push(&mut self, r: Rec, n: usize) {
        if self.auto_cut && !self.cut && self.count + n + self.headroom() > self.cap {
            // end the window here: what starts from now on is outside it
            self.cut = true;
            self.to = r.key().0.max(self.from + 1);
        }
        if r.key().0 >= self.to {
            return;
        }
        if self.count + n > self.cap {
            self.overflow = true;
            return;
        }
        self.count += n;
        self.recs.push(r);
    }

    pub(super) fn in_window(&self, t: u64) -> bool {
        t >= self.from && t < self.to
    }

    fn slice(&mut self, cpu: usize, depth: u8, name: Name, start: u64, end: u64) {
        let (s, e) = (start.max(self.from), end.min(self.to));
        if s < e {
            let r = Rec::Slice {
                cpu: cpu as u32,
                depth,
                name,
                start: s,
                end: e,
            };
            self.push(r, 1);
        }
    }

    fn flush_sym(&mut self, c: usize) {
        if let Some((sym, s, e)) = self.cpus[c].sym.take() {
            self.slice(c, 1, Name::Sym(sym), s, e);
        }
    }

    /// A stall `[start, end)` on `line` charged to `sym`: the wait slice nests in the symbol's, and
    /// the line's waiters counter counts it.
    #[cold]
    #[inline(never)]
    fn wait(&mut self, c: usize, sym: Sym, line: Option<LineId>, start: u64, end: u64) {
        if start >= end {
            return;
        }
        self.charge(c, sym, start, end - start);
        let name = line.map_or(Name::StoreBuffer, Name::Wait);
        self.slice(c, 2, name, start, end);
        if let Some(l) = line
            && end > self.from
            && start < self.to
        {
            if self.auto_cut && !self.cut && self.count + 2 + self.headroom() > self.cap {
                self.cut = true;
                self.to = start.max(self.from + 1);
            }
            if start >= self.to {
                return;
            }
            if self.count + 2 > self.cap {
                self.overflow = true;
            } else {
                self.count += 2;
                self.waits.push((l, start.max(self.from), end.min(self.to)));
            }
        }
    }

    /// Kernel time `[start, start + ns)` charged to `sym` (adjacent charges to one symbol merge).
    #[cold]
    #[inline(never)]
    fn charge(&mut self, c: usize, sym: Sym, start: u64, ns: u64) {
        if ns == 0 {
            return;
        }
        match &mut self.cpus[c].sym {
            Some((s, _, e)) if *s == sym && *e == start => *e = start + ns,
            _ => {
                self.flush_sym(c);
                self.cpus[c].sym = Some((sym, start, start + ns));
            }
        }
    }

    /// The CPU's mode changes at `t`: its previous mode becomes a depth-0 slice.
    pub(super) fn switch(&mut self, c: usize, mode: Name, t: u64) {
        self.flush_sym(c);
        if mode == self.cpus[c].mode && mode != Name::Kernel {
            return; // the next burst of the same task (user-space steps switch no mode)
        }
        let CpuTrack { mode: m, start, .. } = self.cpus[c];
        self.cpus[c].mode = mode;
        self.cpus[c].start = t;
        if start >= t {
            return; // an empty kernel pass (a script step at kernel exit) splits nothing
        }
        match &mut self.cpus[c].last {
            Some((lm, _, le)) if *lm == m && *le == start => *le = t,
            last => {
                if let Some((lm, ls, le)) = last.replace((m, start, t)) {
                    self.slice(c, 0, lm, ls, le);
                }
            }
        }
    }

    /// Emits the depth-0 slice held back for merging.
    pub(super) fn flush_mode(&mut self, c: usize) {
        if let Some((m, s, e)) = self.cpus[c].last.take() {
            self.slice(c, 0, m, s, e);
        }
    }

    fn nr_running(&mut self, c: usize, t: u64, n: u32) {
        if let Some((pt, pn)) = self.cpus[c].pending
            && pt != t
        {
            self.commit_nr(c, pt, pn);
        }
        self.cpus[c].pending = Some((t, n));
    }

    pub(super) fn commit_nr(&mut self, c: usize, t: u64, n: u32) {
        self.cpus[c].pending = None;
        if n != self.cpus[c].nr && self.in_window(t) {
            self.cpus[c].nr = n;
            self.push(
                Rec::NrRunning {
                    cpu: c as u32,
                    t,
                    n,
                },
                1,
            );
        } else if !self.in_window(t) {
            self.cpus[c].nr = n;
        }
    }

    #[cold]
    #[inline(never)]
    fn instant(&mut self, c: usize, t: u64, name: &'static str) {
        if self.in_window(t) {
            self.push(
                Rec::Instant {
                    cpu: c as u32,
                    t,
                    name,
                },
                1,
            );
        }
    }

    fn flow_start(&mut self, c: usize, task: TaskId, t: u64, name: &'static str) {
        if !self.in_window(t) || self.format != TraceFormat::Json {
            return;
        }
        let id = self.next_flow;
        self.next_flow += 1;
        self.flows[task as usize] = Some((id, name));
        let r = Rec::Flow {
            cpu: c as u32,
            t,
            id,
            end: false,
            name,
        };
        self.push(r, 1);
    }

    fn flow_end(&mut self, c: usize, task: TaskId, t: u64) {
        if let Some((id, name)) = self.flows[task as usize].take()
            && self.in_window(t)
        {
            let r = Rec::Flow {
                cpu: c as u32,
                t,
                id,
                end: true,
                name,
            };
            self.push(r, 1);
        }
    }
}

/// The machine is process 1 and CPU n is thread n + 1: Perfetto gives pid/tid 0 the kernel's
/// swapper meaning (its maintainers advise synthetic traces to start at 1); tracks are named `CPU n`.
fn tid(cpu: u32) -> u32 {
    cpu + 1
}

/// ns as the trace's µs with 3 decimals (exact: no float formatting).
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl Engine {
    /// Starts recording a trace of `[from_ns, to_ns)` capped at `cap` events (before the run starts).
    pub fn set_tracer(&mut self, from_ns: u64, to_ns: u64, cap: usize) {
        self.set_tracer_as(TraceFormat::Json, from_ns, to_ns, false, cap);
    }

    /// Starts recording a trace in `format`; with `auto_cut` the window ends where the cap is
    /// reached instead of failing (the trace is then `[from_ns, cut)`).
    pub fn set_tracer_as(
        &mut self,
        format: TraceFormat,
        from_ns: u64,
        to_ns: u64,
        auto_cut: bool,
        cap: usize,
    ) {
        let mut t = Tracer::new(self.cpus.len(), self.tasks.len(), from_ns, to_ns, cap);
        t.format = format;
        t.auto_cut = auto_cut;
        t.initial_cpus = self.tasks.iter().map(|k| k.cpu).collect();
        if format == TraceFormat::Perfetto && from_ns == 0 {
            // the first switch of each CPU happened in Engine::new, at 0
            for c in 0..self.cpus.len() {
                if let Some(next) = self.sched_info.cur[c] {
                    let r = Rec::Switch {
                        cpu: c as u32,
                        t: 0,
                        prev_state: 0,
                        next: Some(next),
                    };
                    t.push(r, 1);
                }
            }
        }
        for c in 0..self.cpus.len() {
            t.cpus[c].nr = self.cpus[c].nr_running() as u32;
            // Engine::new already ran each CPU's first kernel pass from 0 (the initial wakeups and
            // switch): its charges, in symbol order (their order is not kept), open the trace.
            t.cpus[c].mode = Name::Kernel;
            let mut at = 0;
            for sym in Sym::ALL {
                let ns = self.metrics.cpu_sym[c][sym as usize];
                if !matches!(sym, Sym::Idle | Sym::User) && ns > 0 {
                    t.charge(c, sym, at, ns);
                    at += ns;
                }
            }
        }
        self.tracer = Some(Box::new(t));
        for c in 0..self.cpus.len() {
            if self.cpus[c].exec.mode != Mode::Kernel {
                self.trace_mode(c, self.cpus[c].exec.since);
            }
        }
    }

    #[inline]
    pub(super) fn trace_charge(&mut self, c: usize, sym: Sym, start: u64, ns: u64) {
        if let Some(t) = self.tracer.as_deref_mut() {
            t.charge(c, sym, start, ns);
        }
    }

    /// A stall `[start, end)` on `line` (None: the store buffer) charged to `sym`.
    #[inline]
    pub(super) fn trace_wait(
        &mut self,
        c: usize,
        sym: Sym,
        line: Option<LineId>,
        start: u64,
        end: u64,
    ) {
        if let Some(t) = self.tracer.as_deref_mut() {
            t.wait(c, sym, line, start, end);
        }
    }

    /// CPU `c` switches to kernel, idle or user mode at `t`.
    #[inline]
    pub(super) fn trace_mode(&mut self, c: usize, t: u64) {
        if self.tracer.is_some() {
            self.trace_mode_on(c, t);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_mode_on(&mut self, c: usize, t: u64) {
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        let cpu = &self.cpus[c];
        let mode = match cpu.exec.mode {
            Mode::Kernel => Name::Kernel,
            Mode::Idle if cpu.tick.stopped => Name::NohzIdle,
            Mode::Idle => Name::Idle,
            Mode::User => Name::Task(cpu.rq.curr.unwrap_or(0)),
        };
        if tr.format == TraceFormat::Perfetto {
            // cpu_idle: 0 idle with the tick running, 1 with the tick stopped (no C-states are
            // modelled); the exit when the CPU leaves idle
            let was_idle = matches!(tr.cpus[c].mode, Name::Idle | Name::NohzIdle);
            let state = match mode {
                Name::Idle => Some(0),
                Name::NohzIdle => Some(1),
                _ if was_idle => Some(CPU_IDLE_EXIT),
                _ => None,
            };
            if let Some(state) = state
                && tr.in_window(t)
            {
                let r = Rec::CpuIdle {
                    cpu: c as u32,
                    t,
                    state,
                };
                tr.push(r, 1);
            }
        }
        tr.switch(c, mode, t);
        if let Name::Task(task) = mode {
            tr.flow_end(c, task, t);
        }
    }

    /// CPU `c`'s nr_running may have changed (enqueue, dequeue).
    #[inline]
    pub(super) fn trace_nr_running(&mut self, c: usize) {
        if self.tracer.is_some() {
            self.trace_nr_running_on(c);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_nr_running_on(&mut self, c: usize) {
        let Some(t) = self.tracer.as_deref_mut() else {
            return;
        };
        t.nr_running(c, self.now, self.cpus[c].nr_running() as u32);
    }

    #[inline]
    pub(super) fn trace_instant(&mut self, c: usize, name: &'static str) {
        if let Some(t) = self.tracer.as_deref_mut() {
            t.instant(c, self.now, name);
        }
    }

    /// A wakeup (`wakeup`) or a migration (`migrate`) of `task` by CPU `c`: an arrow to where it runs next.
    #[inline]
    pub(super) fn trace_flow(&mut self, c: usize, task: TaskId, name: &'static str) {
        if self.tracer.is_some() {
            self.trace_flow_on(c, task, name);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_flow_on(&mut self, c: usize, task: TaskId, name: &'static str) {
        let Some(t) = self.tracer.as_deref_mut() else {
            return;
        };
        t.flow_start(c, task, self.now, name);
    }

    /// The trace so far as Chrome JSON trace events (`{"traceEvents": [...]}`), or an error naming
    /// the event cap when the window held more (field `trace_to`: narrow the window).
    pub fn trace_json(&self) -> Result<String, Invalid> {
        let mut tr = self.finished_tracer()?;
        Ok(self.write_trace(&mut tr))
    }

    /// The trace's window `[from, to)` in ns (`to` is the end of the run when no end was given
    /// and the cap did not cut it) and whether the cap cut it; None without a tracer.
    pub fn trace_window(&self) -> Option<(u64, u64, bool)> {
        let tr = self.tracer.as_deref()?;
        let end = if tr.cut { tr.to } else { tr.to.min(self.now) };
        Some((tr.from, end, tr.cut))
    }

    /// The format being recorded; None without a tracer.
    pub fn trace_format(&self) -> Option<TraceFormat> {
        self.tracer.as_deref().map(|t| t.format)
    }

    /// Events recorded so far (what the cap counts).
    pub fn trace_events(&self) -> usize {
        self.tracer.as_deref().map_or(0, |t| t.count)
    }

    /// A copy of the tracer with what is still open closed at the end of the run, or the cap
    /// error.
    pub(super) fn finished_tracer(&self) -> Result<Tracer, Invalid> {
        let Some(tr) = self.tracer.as_deref() else {
            return Err(FieldError::new("trace", "tracing was not enabled for this run").into());
        };
        let mut tr = Tracer {
            recs: tr.recs.clone(),
            waits: tr.waits.clone(),
            cpus: tr.cpus.clone(),
            initial_cpus: tr.initial_cpus.clone(),
            flows: Vec::new(),
            ..*tr
        };
        // Close what is open: each CPU's mode up to now (kernel work up to its cursor).
        for c in 0..tr.cpus.len() {
            let end = match self.cpus[c].exec.mode {
                // (a load or atomic in flight: its wait so far)
                Mode::Kernel => match self.cpus[c].exec.charged_until() {
                    Some(t) => t.max(self.now),
                    None => self.cpus[c].exec.cursor.max(self.now),
                },
                _ => self.now.max(self.cpus[c].exec.since),
            };
            tr.switch(c, Name::Kernel, end);
            tr.flush_mode(c);
            if let Some((t, n)) = tr.cpus[c].pending {
                tr.commit_nr(c, t, n);
            }
        }
        if tr.overflow {
            return Err(FieldError::new(
                "trace_to",
                format!(
                    "the trace window [{} s, {} s) holds more than {} events (the trace cap): \
                     narrow it with trace_from/trace_to",
                    tr.from as f64 / 1e9,
                    tr.to as f64 / 1e9,
                    tr.cap
                ),
            )
            .into());
        }
        if tr.cut {
            // a CPU computing ahead may have recorded work past the cut before it was made
            let to = tr.to;
            tr.recs.retain(|r| r.key().0 < to);
            for r in &mut tr.recs {
                if let Rec::Slice { end, .. } = r {
                    *end = (*end).min(to);
                }
            }
            tr.waits.retain(|w| w.1 < to);
            for w in &mut tr.waits {
                w.2 = w.2.min(to);
            }
        }
        Ok(tr)
    }

    fn write_trace(&self, tr: &mut Tracer) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut out = String::with_capacity(tr.count * 100 + 4096);
        out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            q(&format!(
                "{} ({} CPUs)",
                self.topo.spec.name,
                self.cpus.len()
            ))
        );
        for c in 0..self.cpus.len() {
            let _ = write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"CPU {c}\"}}}}\
                 ,\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{c}}}}}",
                tid(c as u32),
                tid(c as u32)
            );
        }
        // Stable order: by time, a parent before the slices it holds (then the longer first).
        tr.recs.sort_by_key(|r| {
            let (t, d) = r.key();
            let len = match r {
                Rec::Slice { start, end, .. } => u64::MAX - (end - start),
                _ => 0,
            };
            (t, d, len)
        });
        let processes = self.workload.processes();
        for r in &tr.recs {
            if r.perfetto_only() {
                continue; // never recorded for JSON
            }
            out.push_str(",\n");
            match *r {
                Rec::Slice {
                    cpu,
                    name,
                    start,
                    end,
                    ..
                } => {
                    let (label, args) = match name {
                        Name::Task(t) => {
                            let p = self.tasks[t as usize].process as usize;
                            let pname = processes.get(p).map_or("", |s| s.as_str());
                            (
                                format!("{pname}/{t}"),
                                format!(",\"args\":{{\"task\":{t},\"process\":{}}}", q(pname)),
                            )
                        }
                        Name::Idle => ("idle".into(), String::new()),
                        Name::NohzIdle => ("idle (nohz)".into(), String::new()),
                        Name::Kernel => ("kernel".into(), String::new()),
                        Name::Sym(s) => (s.name().into(), String::new()),
                        Name::Wait(l) => {
                            (format!("wait {}", self.lines.lines[l].name), String::new())
                        }
                        Name::StoreBuffer => ("wait store buffer".into(), String::new()),
                    };
                    let _ = write!(
                        out,
                        "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{}{args}}}",
                        tid(cpu),
                        us(start),
                        us(end - start),
                        q(&label)
                    );
                }
                Rec::NrRunning { cpu, t, n } => {
                    let _ = write!(
                        out,
                        "{{\"ph\":\"C\",\"pid\":1,\"ts\":{},\"name\":\"nr_running\",\"args\":{{\"CPU {cpu}\":{n}}}}}",
                        us(t)
                    );
                }
                Rec::Instant { cpu, t, name } => {
                    let _ = write!(
                        out,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{},\"ts\":{},\"name\":{}}}",
                        tid(cpu),
                        us(t),
                        q(name)
                    );
                }
                Rec::Flow {
                    cpu,
                    t,
                    id,
                    end,
                    name,
                } => {
                    let ph = if end { "\"f\",\"bp\":\"e\"" } else { "\"s\"" };
                    let _ = write!(
                        out,
                        "{{\"ph\":{ph},\"pid\":1,\"tid\":{},\"ts\":{},\"id\":{id},\"cat\":\"{name}\",\"name\":\"{name}\"}}",
                        tid(cpu),
                        us(t)
                    );
                }
                Rec::Switch { .. }
                | Rec::Waking { .. }
                | Rec::Migrate { .. }
                | Rec::CpuIdle { .. } => {}
            }
        }
        // Each line's waiters: +1 at a stall's start, -1 at its end, as a step counter.
        let mut steps: Vec<(LineId, u64, i32)> = Vec::with_capacity(tr.waits.len() * 2);
        for &(l, s, e) in &tr.waits {
            steps.push((l, s, 1));
            steps.push((l, e, -1));
        }
        steps.sort_unstable();
        let mut i = 0;
        while i < steps.len() {
            let (l, _, _) = steps[i];
            let mut depth = 0i64;
            while i < steps.len() && steps[i].0 == l {
                let t = steps[i].1;
                while i < steps.len() && steps[i].0 == l && steps[i].1 == t {
                    depth += steps[i].2 as i64;
                    i += 1;
                }
                let _ = write!(
                    out,
                    ",\n{{\"ph\":\"C\",\"pid\":1,\"ts\":{},\"name\":\"waiters\",\"args\":{{{}:{depth}}}}}",
                    us(t),
                    q(&self.lines.lines[l].name)
                );
            }
        }
        out.push_str("\n]}\n");
        out
    }
}
