//! The trace as Perfetto protobuf (`perfetto.protos.Trace`, docs/TRACE.md): what Perfetto builds
//! its CPU scheduling tracks, thread states and `sched` / `thread_state` tables from.
//!
//! - one `ProcessTree` packet: a process per workload process, a thread per simulated task
//!   (tid = task + 1; pid 0 stays the idle task, as in the kernel);
//! - per CPU, `FtraceEventBundle`s: `sched_switch` and `sched_waking` in the `compact_sched`
//!   encoding, and `sched_wakeup_new` (the initial enqueue), `sched_migrate_task` (set_task_cpu at
//!   a wakeup or by load balancing) and `cpu_idle` as full `FtraceEvent`s;
//! - track events on one track per CPU (`CPU n kernel`): the kernel pass, the symbol charged and
//!   the cache-line wait slices, the softirq / cmpxchg instants; counter tracks for each CPU's
//!   nr_running and each line's waiters.
//!
//! The field numbers are those of Perfetto's protos (protos/perfetto/trace/trace_packet.proto,
//! ftrace/ftrace_event_bundle.proto, ftrace/ftrace_event.proto, ftrace/sched.proto,
//! ftrace/power.proto, track_event/track_event.proto, track_event/track_descriptor.proto,
//! track_event/counter_descriptor.proto, ps/process_tree.proto), checked by
//! scripts/perfetto-check.py against the `perfetto` package's `perfetto_trace_pb2`.

use super::trace::{Rec, TraceFormat, Tracer};
use super::*;
use crate::error::Invalid;
use crate::protobuf::Pb;

/// Field numbers, by message.
mod f {
    // Trace
    pub const TRACE_PACKET: u32 = 1;
    // TracePacket
    pub const PKT_FTRACE_EVENTS: u32 = 1;
    pub const PKT_PROCESS_TREE: u32 = 2;
    pub const PKT_TIMESTAMP: u32 = 8;
    pub const PKT_SEQ_ID: u32 = 10;
    pub const PKT_TRACK_EVENT: u32 = 11;
    pub const PKT_SEQ_FLAGS: u32 = 13;
    pub const PKT_TRACK_DESCRIPTOR: u32 = 60;
    // ProcessTree, .Process, .Thread
    pub const PT_PROCESSES: u32 = 1;
    pub const PT_THREADS: u32 = 2;
    pub const PROC_PID: u32 = 1;
    pub const PROC_PPID: u32 = 2;
    pub const PROC_CMDLINE: u32 = 3;
    pub const THR_TID: u32 = 1;
    pub const THR_NAME: u32 = 2;
    pub const THR_TGID: u32 = 3;
    // FtraceEventBundle, .CompactSched
    pub const FB_CPU: u32 = 1;
    pub const FB_EVENT: u32 = 2;
    pub const FB_COMPACT_SCHED: u32 = 4;
    pub const CS_SWITCH_TIMESTAMP: u32 = 1;
    pub const CS_SWITCH_PREV_STATE: u32 = 2;
    pub const CS_SWITCH_NEXT_PID: u32 = 3;
    pub const CS_SWITCH_NEXT_PRIO: u32 = 4;
    pub const CS_INTERN_TABLE: u32 = 5;
    pub const CS_SWITCH_NEXT_COMM_INDEX: u32 = 6;
    pub const CS_WAKING_TIMESTAMP: u32 = 7;
    pub const CS_WAKING_PID: u32 = 8;
    pub const CS_WAKING_TARGET_CPU: u32 = 9;
    pub const CS_WAKING_PRIO: u32 = 10;
    pub const CS_WAKING_COMM_INDEX: u32 = 11;
    pub const CS_WAKING_COMMON_FLAGS: u32 = 12;
    // FtraceEvent
    pub const FE_TIMESTAMP: u32 = 1;
    pub const FE_PID: u32 = 2;
    pub const FE_CPU_IDLE: u32 = 13;
    pub const FE_SCHED_WAKEUP_NEW: u32 = 114;
    pub const FE_SCHED_MIGRATE_TASK: u32 = 491;
    // SchedWakeupNewFtraceEvent
    pub const WN_COMM: u32 = 1;
    pub const WN_PID: u32 = 2;
    pub const WN_PRIO: u32 = 3;
    pub const WN_SUCCESS: u32 = 4;
    pub const WN_TARGET_CPU: u32 = 5;
    // SchedMigrateTaskFtraceEvent
    pub const MT_COMM: u32 = 1;
    pub const MT_PID: u32 = 2;
    pub const MT_PRIO: u32 = 3;
    pub const MT_ORIG_CPU: u32 = 4;
    pub const MT_DEST_CPU: u32 = 5;
    // CpuIdleFtraceEvent
    pub const CI_STATE: u32 = 1;
    pub const CI_CPU_ID: u32 = 2;
    // TrackDescriptor, CounterDescriptor
    pub const TD_UUID: u32 = 1;
    pub const TD_NAME: u32 = 2;
    pub const TD_COUNTER: u32 = 8;
    // TrackEvent
    pub const TE_TYPE: u32 = 9;
    pub const TE_TRACK_UUID: u32 = 11;
    pub const TE_NAME: u32 = 23;
    pub const TE_COUNTER_VALUE: u32 = 30;
    // TrackEvent.Type
    pub const SLICE_BEGIN: u64 = 1;
    pub const SLICE_END: u64 = 2;
    pub const INSTANT: u64 = 3;
    pub const COUNTER: u64 = 4;
    // TracePacket.SequenceFlags
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
}

/// The one sequence all track events are written on.
const SEQ: u64 = 1;
/// Events per `FtraceEventBundle` at most (the kernel's are one ring-buffer page, ~100 events;
/// larger bundles are as valid and smaller files).
const BUNDLE_EVENTS: usize = 4096;

fn kernel_track(cpu: u32) -> u64 {
    0x1_0000 + cpu as u64
}
fn nr_running_track(cpu: u32) -> u64 {
    0x2_0000 + cpu as u64
}
fn waiters_track(line: LineId) -> u64 {
    0x100_0000 + line as u64
}

/// A task's pid (tid): task + 1, so that 0 is the idle task (swapper) as in the kernel.
pub fn task_pid(t: TaskId) -> i32 {
    t as i32 + 1
}

/// One track event before encoding: (time, order of writing, packet bytes).
type TrackPacket = (u64, usize, Vec<u8>);

/// Event counts of a written trace (the test and the CLI's summary read them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfettoCounts {
    pub sched_switch: u64,
    pub sched_waking: u64,
    pub sched_wakeup_new: u64,
    pub sched_migrate_task: u64,
    pub cpu_idle: u64,
    pub track_events: u64,
    pub bytes: u64,
}

impl Engine {
    /// A context switch on `c` at `t` (from `sched_switch_to`).
    #[inline]
    pub(super) fn trace_switch(
        &mut self,
        c: usize,
        prev: Option<TaskId>,
        next: Option<TaskId>,
        t: u64,
    ) {
        if self
            .tracer
            .as_deref()
            .is_some_and(|tr| tr.format == TraceFormat::Perfetto)
        {
            let prev_state = prev.map_or(0, |p| self.task_switch_state(p));
            let tr = self.tracer.as_deref_mut().expect("checked");
            if tr.in_window(t) {
                let r = Rec::Switch {
                    cpu: c as u32,
                    t,
                    prev_state,
                    next,
                };
                tr.push(r, 1);
            }
        }
    }

    /// try_to_wake_up of `task` by CPU `c` to run on `target`: `sched_waking`, and
    /// `sched_migrate_task` when the task changes CPU.
    #[inline]
    pub(super) fn trace_waking(&mut self, c: usize, task: TaskId, prev: usize, target: usize) {
        let now = self.now;
        if let Some(tr) = self.tracer.as_deref_mut()
            && tr.format == TraceFormat::Perfetto
            && tr.in_window(now)
        {
            let r = Rec::Waking {
                cpu: c as u32,
                t: now,
                task,
                target: target as u32,
            };
            tr.push(r, 1);
            if prev != target {
                self.trace_migrate(c, task, prev, target);
            }
        }
    }

    /// set_task_cpu() of `task` from `orig` to `dest`, executed by CPU `c`.
    #[inline]
    pub(super) fn trace_migrate(&mut self, c: usize, task: TaskId, orig: usize, dest: usize) {
        let now = self.now;
        if let Some(tr) = self.tracer.as_deref_mut()
            && tr.format == TraceFormat::Perfetto
            && tr.in_window(now)
        {
            let r = Rec::Migrate {
                cpu: c as u32,
                t: now,
                task,
                orig: orig as u32,
                dest: dest as u32,
            };
            tr.push(r, 1);
        }
    }

    /// The recorded trace as Perfetto protobuf (a `Trace` message), or the cap error.
    pub fn trace_perfetto(&self) -> Result<(Vec<u8>, PerfettoCounts), Invalid> {
        let mut tr = self.finished_tracer()?;
        Ok(self.write_perfetto(&mut tr))
    }

    fn comm(&self, t: TaskId) -> String {
        let p = self.tasks[t as usize].process as usize;
        let pname = self
            .workload
            .processes()
            .get(p)
            .map_or("task", |s| s.as_str());
        // the kernel's comm holds 15 bytes
        let mut s: String = pname.chars().filter(|c| !c.is_control()).collect();
        while s.len() > 15 {
            s.pop();
        }
        s
    }

    fn write_perfetto(&self, tr: &mut Tracer) -> (Vec<u8>, PerfettoCounts) {
        let mut counts = PerfettoCounts::default();
        let mut out = Pb::default();
        let n = self.cpus.len();
        let processes = self.workload.processes();
        // the process ids: its first task's tid (the main thread), as Linux numbers them
        let mut tgid: Vec<Option<i32>> = vec![None; processes.len().max(1)];
        for (t, task) in self.tasks.iter().enumerate() {
            let p = task.process as usize;
            if p >= tgid.len() {
                tgid.resize(p + 1, None);
            }
            tgid[p].get_or_insert(task_pid(t as TaskId));
        }
        let mut tree = Pb::default();
        for (p, pid) in tgid.iter().enumerate() {
            let Some(pid) = *pid else { continue };
            let mut m = Pb::default();
            m.int(f::PROC_PID, pid as i64);
            m.int(f::PROC_PPID, 0);
            m.string(
                f::PROC_CMDLINE,
                processes.get(p).map_or("task", |s| s.as_str()),
            );
            tree.message(f::PT_PROCESSES, &m);
        }
        for t in 0..self.tasks.len() {
            let mut m = Pb::default();
            m.int(f::THR_TID, task_pid(t as TaskId) as i64);
            m.string(f::THR_NAME, &self.comm(t as TaskId));
            let p = self.tasks[t].process as usize;
            m.int(f::THR_TGID, tgid[p].unwrap_or(0) as i64);
            tree.message(f::PT_THREADS, &m);
        }
        let mut pkt = Pb::default();
        pkt.uint(f::PKT_TIMESTAMP, tr.from);
        pkt.message(f::PKT_PROCESS_TREE, &tree);
        out.message(f::TRACE_PACKET, &pkt);

        // track descriptors: the first packet of the sequence clears its incremental state
        let mut first = true;
        let mut descriptor = |out: &mut Pb, uuid: u64, name: &str, counter: bool| {
            let mut d = Pb::default();
            d.uint(f::TD_UUID, uuid);
            d.string(f::TD_NAME, name);
            if counter {
                d.message(f::TD_COUNTER, &Pb::default());
            }
            let mut pkt = Pb::default();
            pkt.uint(f::PKT_SEQ_ID, SEQ);
            if std::mem::take(&mut first) {
                pkt.uint(f::PKT_SEQ_FLAGS, f::SEQ_INCREMENTAL_STATE_CLEARED);
            }
            pkt.message(f::PKT_TRACK_DESCRIPTOR, &d);
            out.message(f::TRACE_PACKET, &pkt);
        };
        for c in 0..n as u32 {
            descriptor(&mut out, kernel_track(c), &format!("CPU {c} kernel"), false);
            descriptor(
                &mut out,
                nr_running_track(c),
                &format!("nr_running CPU {c}"),
                true,
            );
        }
        let mut lines: Vec<LineId> = tr.waits.iter().map(|w| w.0).collect();
        lines.sort_unstable();
        lines.dedup();
        for &l in &lines {
            let name = format!("waiters {}", self.lines.lines[l].name);
            descriptor(&mut out, waiters_track(l), &name, true);
        }

        // the records in time order, a parent before what it holds (as the JSON writer sorts)
        tr.recs.sort_by_key(|r| {
            let (t, d) = r.key();
            let len = match r {
                Rec::Slice { start, end, .. } => u64::MAX - (end - start),
                _ => 0,
            };
            (t, d, len)
        });
        self.write_ftrace(tr, &mut out, &mut counts);
        let mut events = self.track_events(tr);
        events.sort_by_key(|e| (e.0, e.1));
        counts.track_events = events.len() as u64;
        for (_, _, p) in events {
            out.bytes(f::TRACE_PACKET, &p);
        }
        let bytes = out.into_bytes();
        counts.bytes = bytes.len() as u64;
        (bytes, counts)
    }

    /// Per CPU, its ftrace events in bundles of at most `BUNDLE_EVENTS`.
    fn write_ftrace(&self, tr: &Tracer, out: &mut Pb, counts: &mut PerfettoCounts) {
        let n = self.cpus.len();
        let mut per_cpu: Vec<Vec<&Rec>> = vec![Vec::new(); n];
        for r in &tr.recs {
            match r {
                Rec::Switch { cpu, .. }
                | Rec::Waking { cpu, .. }
                | Rec::Migrate { cpu, .. }
                | Rec::CpuIdle { cpu, .. } => per_cpu[*cpu as usize].push(r),
                _ => {}
            }
        }
        // the initial enqueue of every task (wake_up_new_task) when the window starts at 0
        if tr.from == 0 {
            let mut ev = Pb::default();
            for t in 0..self.tasks.len() as TaskId {
                let mut w = Pb::default();
                w.string(f::WN_COMM, &self.comm(t));
                w.int(f::WN_PID, task_pid(t) as i64);
                w.int(f::WN_PRIO, self.task_prio(t) as i64);
                w.int(f::WN_SUCCESS, 1);
                w.int(
                    f::WN_TARGET_CPU,
                    tr.initial_cpus.get(t as usize).copied().unwrap_or(0) as i64,
                );
                let mut e = Pb::default();
                e.uint(f::FE_TIMESTAMP, 0);
                e.uint(f::FE_PID, 0);
                e.message(f::FE_SCHED_WAKEUP_NEW, &w);
                ev.message(f::FB_EVENT, &e);
                counts.sched_wakeup_new += 1;
            }
            let mut b = Pb::default();
            b.uint(f::FB_CPU, 0);
            b.raw(&ev);
            let mut pkt = Pb::default();
            pkt.message(f::PKT_FTRACE_EVENTS, &b);
            out.message(f::TRACE_PACKET, &pkt);
        }
        for (c, recs) in per_cpu.iter().enumerate() {
            // the task running on this CPU (the events' common_pid), from its switches
            let mut cur: i32 = 0;
            for chunk in recs.chunks(BUNDLE_EVENTS) {
                let mut cs = CompactSched::default();
                let mut full = Pb::default();
                for r in chunk {
                    match **r {
                        Rec::Switch {
                            t,
                            prev_state,
                            next,
                            ..
                        } => {
                            let (pid, prio, comm) = match next {
                                Some(nt) => (task_pid(nt), self.task_prio(nt), self.comm(nt)),
                                None => (0, 120, format!("swapper/{c}")),
                            };
                            cs.switch(t, prev_state, pid, prio, &comm);
                            cur = pid;
                            counts.sched_switch += 1;
                        }
                        Rec::Waking {
                            t, task, target, ..
                        } => {
                            let comm = self.comm(task);
                            cs.waking(t, task_pid(task), target, self.task_prio(task), &comm);
                            counts.sched_waking += 1;
                        }
                        Rec::Migrate {
                            t,
                            task,
                            orig,
                            dest,
                            ..
                        } => {
                            let mut m = Pb::default();
                            m.string(f::MT_COMM, &self.comm(task));
                            m.int(f::MT_PID, task_pid(task) as i64);
                            m.int(f::MT_PRIO, self.task_prio(task) as i64);
                            m.int(f::MT_ORIG_CPU, orig as i64);
                            m.int(f::MT_DEST_CPU, dest as i64);
                            let mut e = Pb::default();
                            e.uint(f::FE_TIMESTAMP, t);
                            e.uint(f::FE_PID, cur as u64);
                            e.message(f::FE_SCHED_MIGRATE_TASK, &m);
                            full.message(f::FB_EVENT, &e);
                            counts.sched_migrate_task += 1;
                        }
                        Rec::CpuIdle { t, state, .. } => {
                            let mut m = Pb::default();
                            m.uint(f::CI_STATE, state as u64);
                            m.uint(f::CI_CPU_ID, c as u64);
                            let mut e = Pb::default();
                            e.uint(f::FE_TIMESTAMP, t);
                            e.uint(f::FE_PID, cur as u64);
                            e.message(f::FE_CPU_IDLE, &m);
                            full.message(f::FB_EVENT, &e);
                            counts.cpu_idle += 1;
                        }
                        _ => {}
                    }
                }
                let mut b = Pb::default();
                b.uint(f::FB_CPU, c as u64);
                b.raw(&full);
                if !cs.is_empty() {
                    b.message(f::FB_COMPACT_SCHED, &cs.encode());
                }
                let mut pkt = Pb::default();
                pkt.message(f::PKT_FTRACE_EVENTS, &b);
                out.message(f::TRACE_PACKET, &pkt);
            }
        }
    }

    /// The slices, instants and counters as track-event packets, each with its time and its
    /// order of writing (per track, an end before a begin at the same time).
    fn track_events(&self, tr: &Tracer) -> Vec<TrackPacket> {
        let mut events: Vec<TrackPacket> = Vec::new();
        let mut seq = 0usize;
        let mut push = |events: &mut Vec<TrackPacket>, t: u64, ev: Pb| {
            let mut pkt = Pb::default();
            pkt.uint(f::PKT_TIMESTAMP, t);
            pkt.uint(f::PKT_SEQ_ID, SEQ);
            pkt.message(f::PKT_TRACK_EVENT, &ev);
            events.push((t, seq, pkt.into_bytes()));
            seq += 1;
        };
        let n = self.cpus.len();
        // per CPU: the open slices' ends (a stack: the records are sorted parents first)
        let mut open: Vec<Vec<u64>> = vec![Vec::new(); n];
        let close_until = |events: &mut Vec<TrackPacket>,
                           push: &mut dyn FnMut(&mut Vec<TrackPacket>, u64, Pb),
                           stack: &mut Vec<u64>,
                           cpu: u32,
                           t: u64| {
            while let Some(&e) = stack.last() {
                if e > t {
                    break;
                }
                stack.pop();
                let mut ev = Pb::default();
                ev.uint(f::TE_TYPE, f::SLICE_END);
                ev.uint(f::TE_TRACK_UUID, kernel_track(cpu));
                push(events, e, ev);
            }
        };
        for r in &tr.recs {
            match *r {
                Rec::Slice {
                    cpu,
                    depth,
                    name,
                    start,
                    end,
                } => {
                    let label = match name {
                        trace::Name::Kernel => "kernel".to_string(),
                        trace::Name::Sym(s) => s.name().to_string(),
                        trace::Name::Wait(l) => format!("wait {}", self.lines.lines[l].name),
                        trace::Name::StoreBuffer => "wait store buffer".to_string(),
                        // a task's run and idle are the sched tracks' (from sched_switch)
                        _ => continue,
                    };
                    let _ = depth;
                    let stack = &mut open[cpu as usize];
                    close_until(&mut events, &mut push, stack, cpu, start);
                    let mut ev = Pb::default();
                    ev.uint(f::TE_TYPE, f::SLICE_BEGIN);
                    ev.uint(f::TE_TRACK_UUID, kernel_track(cpu));
                    ev.string(f::TE_NAME, &label);
                    push(&mut events, start, ev);
                    stack.push(end);
                }
                Rec::Instant { cpu, t, name } => {
                    close_until(&mut events, &mut push, &mut open[cpu as usize], cpu, t);
                    let mut ev = Pb::default();
                    ev.uint(f::TE_TYPE, f::INSTANT);
                    ev.uint(f::TE_TRACK_UUID, kernel_track(cpu));
                    ev.string(f::TE_NAME, name);
                    push(&mut events, t, ev);
                }
                Rec::NrRunning { cpu, t, n } => {
                    let mut ev = Pb::default();
                    ev.uint(f::TE_TYPE, f::COUNTER);
                    ev.uint(f::TE_TRACK_UUID, nr_running_track(cpu));
                    ev.int(f::TE_COUNTER_VALUE, n as i64);
                    push(&mut events, t, ev);
                }
                _ => {}
            }
        }
        for (c, stack) in open.iter_mut().enumerate() {
            close_until(&mut events, &mut push, stack, c as u32, u64::MAX);
        }
        // each line's waiters as a step counter (+1 at a stall's start, -1 at its end)
        let mut steps: Vec<(LineId, u64, i32)> = Vec::with_capacity(tr.waits.len() * 2);
        for &(l, s, e) in &tr.waits {
            steps.push((l, s, 1));
            steps.push((l, e, -1));
        }
        steps.sort_unstable();
        let mut i = 0;
        while i < steps.len() {
            let l = steps[i].0;
            let mut depth = 0i64;
            while i < steps.len() && steps[i].0 == l {
                let t = steps[i].1;
                while i < steps.len() && steps[i].0 == l && steps[i].1 == t {
                    depth += steps[i].2 as i64;
                    i += 1;
                }
                let mut ev = Pb::default();
                ev.uint(f::TE_TYPE, f::COUNTER);
                ev.uint(f::TE_TRACK_UUID, waiters_track(l));
                ev.int(f::TE_COUNTER_VALUE, depth);
                push(&mut events, t, ev);
            }
        }
        events
    }
}

/// `FtraceEventBundle.CompactSched`: the switch and waking columns, timestamps delta-encoded
/// within the bundle (the first from 0), comms through the bundle's intern table.
#[derive(Default)]
struct CompactSched {
    intern: Vec<String>,
    switch_ts: Vec<u64>,
    switch_prev_state: Vec<u64>,
    switch_next_pid: Vec<u64>,
    switch_next_prio: Vec<u64>,
    switch_next_comm: Vec<u64>,
    last_switch: u64,
    waking_ts: Vec<u64>,
    waking_pid: Vec<u64>,
    waking_target_cpu: Vec<u64>,
    waking_prio: Vec<u64>,
    waking_comm: Vec<u64>,
    last_waking: u64,
}

impl CompactSched {
    fn is_empty(&self) -> bool {
        self.switch_ts.is_empty() && self.waking_ts.is_empty()
    }

    fn comm_index(&mut self, comm: &str) -> u64 {
        match self.intern.iter().position(|s| s == comm) {
            Some(i) => i as u64,
            None => {
                self.intern.push(comm.to_string());
                (self.intern.len() - 1) as u64
            }
        }
    }

    fn switch(&mut self, t: u64, prev_state: i64, pid: i32, prio: i32, comm: &str) {
        let ci = self.comm_index(comm);
        self.switch_ts.push(t - self.last_switch);
        self.last_switch = t;
        self.switch_prev_state.push(prev_state as u64);
        self.switch_next_pid.push(pid as i64 as u64);
        self.switch_next_prio.push(prio as i64 as u64);
        self.switch_next_comm.push(ci);
    }

    fn waking(&mut self, t: u64, pid: i32, target: u32, prio: i32, comm: &str) {
        let ci = self.comm_index(comm);
        self.waking_ts.push(t - self.last_waking);
        self.last_waking = t;
        self.waking_pid.push(pid as i64 as u64);
        self.waking_target_cpu.push(target as u64);
        self.waking_prio.push(prio as i64 as u64);
        self.waking_comm.push(ci);
    }

    fn encode(&self) -> Pb {
        let mut m = Pb::default();
        for s in &self.intern {
            m.string(f::CS_INTERN_TABLE, s);
        }
        m.packed(f::CS_SWITCH_TIMESTAMP, &self.switch_ts);
        m.packed(f::CS_SWITCH_PREV_STATE, &self.switch_prev_state);
        m.packed(f::CS_SWITCH_NEXT_PID, &self.switch_next_pid);
        m.packed(f::CS_SWITCH_NEXT_PRIO, &self.switch_next_prio);
        m.packed(f::CS_SWITCH_NEXT_COMM_INDEX, &self.switch_next_comm);
        m.packed(f::CS_WAKING_TIMESTAMP, &self.waking_ts);
        m.packed(f::CS_WAKING_PID, &self.waking_pid);
        m.packed(f::CS_WAKING_TARGET_CPU, &self.waking_target_cpu);
        m.packed(f::CS_WAKING_PRIO, &self.waking_prio);
        m.packed(f::CS_WAKING_COMM_INDEX, &self.waking_comm);
        let flags = vec![0u64; self.waking_ts.len()];
        m.packed(f::CS_WAKING_COMMON_FLAGS, &flags);
        m
    }
}
