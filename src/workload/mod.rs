//! Workloads: each task runs a script of steps (CPU bursts, sleeps, blocking waits, wakeups of other
//! tasks, completed units of work). The scheduler asks for the next step whenever a burst ends.
//!
//! Adding a workload: a module with its `Workload` impl and its `INFO` entry (name, description,
//! unit, knobs with default, range and unit, builder, task count), its `mod` line below, and `INFO`
//! appended to `WORKLOADS`. Knob descriptions are generated from the defaults.

mod atomics;
mod hackbench;
pub(crate) mod oltp;
pub mod rtapp;
mod schbench;
mod serve;
mod slab;
mod spin;
pub mod syscall;
mod tcp;

use crate::assumptions::Assumptions;
use crate::error::{FieldError, Invalid};
use crate::machine::topology::Topology;
use crate::sim::rng::SimRng;
use serde::Serialize;
use std::collections::BTreeMap;

pub type TaskId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run on the CPU for `ns`; the burst touches `shared_lines` cache lines last written by
    /// another thread of the same process (priced by where that thread ran).
    Run { ns: u64, shared_lines: u32 },
    /// Block; a timer or device interrupt wakes the task after `ns`.
    Sleep { ns: u64 },
    /// Block in recv() until the next request of this task's connection, which reaches the
    /// server's network card `ns` from now (the reply's trip, the driver host, the request's
    /// trip): the receive queue's interrupt CPU wakes the task from NET_RX (`sched/net_rx.rs`).
    AwaitRequest { ns: u64 },
    /// Block until another task wakes it (a wakeup that came earlier is not lost).
    Block,
    /// Wake `task`, handing it `lines` freshly written cache lines (pipe data, a request).
    /// `sync`: the kernel makes this wakeup `WF_SYNC` (a pipe write, a unix or loopback TCP
    /// socket's data ready, `wake_up_interruptible_sync_poll`; a futex wake is not).
    Wake {
        task: TaskId,
        lines: u32,
        sync: bool,
    },
    /// The next burst reads `lines` cache lines task `from` wrote (a message in a pipe): fetched
    /// from the CPU `from` last ran on.
    Read { from: TaskId, lines: u32 },
    /// One unit of the workload's throughput completed, with its latency.
    Complete { latency_ns: u64 },
    /// The task exits.
    Exit,
    /// A user-space access to line `line` of the workload's own lines (`Workload::lines`), priced
    /// by the cache-line model at the task's CPU and charged as user time. A load or an atomic's
    /// outcome (the value the line held when it was served) reaches `Workload::served` before the
    /// task's next `next()`.
    Access { line: u32, op: LineOp },
    /// A piece of the kernel work of the system call the task is in (`syscall.rs`): compute, or
    /// an access to a kernel object's line priced by the cache-line model; the task stays in the
    /// kernel and asks for its next step when it is done.
    Kernel(syscall::KernelStep),
}

/// An operation of `Step::Access` on a 64-bit value in a workload's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineOp {
    /// `mov` from the line.
    Load,
    /// `mov` to the line. The task waits until it commits: in these loops the next op is either
    /// locked (which drains the store buffer) or another store to the line (a full store buffer
    /// goes at the rate its stores commit).
    Store(u64),
    /// `lock xadd`.
    FetchAdd(u64),
    /// `xchg` (a test-and-set).
    Swap(u64),
    /// `lock cmpxchg`: stores `new` if the line holds `old` when it is served (success is the value
    /// found == `old`).
    CompareExchange { old: u64, new: u64 },
}

impl LineOp {
    /// The value the line holds after the op, given the value it held when the op was served.
    pub fn apply(self, found: u64) -> u64 {
        match self {
            LineOp::Load => found,
            LineOp::Store(v) | LineOp::Swap(v) => v,
            LineOp::FetchAdd(d) => found.wrapping_add(d),
            LineOp::CompareExchange { old, new } => {
                if found == old {
                    new
                } else {
                    found
                }
            }
        }
    }
}

/// A cache line a workload's tasks access (`Step::Access`): one named line with one 64-bit field
/// at offset 0, shown in the report's c2c table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserLine {
    pub name: &'static str,
    pub field: &'static str,
}

#[derive(Clone, Debug)]
pub struct TaskSpec {
    pub process: u32,
}

pub trait Workload {
    fn tasks(&self) -> &[TaskSpec];
    fn processes(&self) -> &[String];
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step;
    /// Resident set of process `process` in bytes, as `get_mm_counter(mm, MM_ANONPAGES) +
    /// get_mm_counter(mm, MM_SHMEMPAGES)` would count it (read by RFC v4 26/28's
    /// exceed_llc_capacity()). A workload states it with its source (docs/MODEL.md §18); the
    /// default 0 is for workloads whose own data is a few pages per thread (spin, atomics,
    /// hackbench's 100-byte messages, schbench, rt-app loops): they fit any L3.
    fn rss_bytes(&self, _process: u32) -> u64 {
        0
    }
    /// Working set of one task in cache lines (the `ws_kib` knob; docs/MODEL.md §21).
    fn ws_lines(&self) -> u32 {
        0
    }
    /// Share of a burst's time spent waiting on memory, percent: stretched by the remote/local
    /// latency ratio away from the task's home node (the `mem_bound_pct` knob).
    fn mem_bound_pct(&self) -> u32 {
        0
    }
    /// The knob values this instance runs with, defaults resolved (the report shows them).
    fn knobs(&self) -> Knobs;
    /// Whether `task` completes the units the throughput counts (hackbench receivers, schbench
    /// workers); sysbench-style "events (avg/stddev)" is taken over these tasks only.
    fn counts_units(&self, _task: TaskId) -> bool {
        true
    }
    /// The lines `Step::Access` names, by index (created with the engine).
    fn lines(&self) -> &[UserLine] {
        &[]
    }
    /// The lines of the kernel objects `Step::Kernel` names by index (`KernelLine::Object`).
    fn kernel_lines(&self) -> Vec<syscall::KernelLineDecl> {
        Vec::new()
    }
    /// The per-CPU kernel lines `Step::Kernel` names (`KernelLine::PerCpu`): (name, field), one of
    /// each per CPU, named `name (cpuN)`.
    fn per_cpu_kernel_lines(&self) -> &[UserLine] {
        &[]
    }
    /// The value the line held when `task`'s last load or atomic was served.
    fn served(&mut self, _task: TaskId, _value: u64) {}
    /// The CPU `task` starts on (default: task i on CPU i % CPUs).
    /// The task's nice value (0 unless the workload sets priorities: rt-app's `priority`).
    fn nice(&self, _task: TaskId) -> i32 {
        0
    }
    fn initial_cpu(&self, _task: TaskId, _topo: &Topology) -> Option<u32> {
        None
    }
    /// Knob values the machine cannot honour (field-named, with what it allows).
    fn machine_errors(&self, _topo: &Topology) -> Vec<FieldError> {
        Vec::new()
    }
    /// Connections from another host whose packets RSS spreads over the card's queues, when a
    /// task serves more than one (`serve`); 0: task i's connection is i.
    fn connections(&self) -> usize {
        0
    }
    /// Open loop (`serve`): the next request the driver host sends, drawn from `rng`, a stream
    /// of its own, so that the arrivals do not depend on what the server does. Asked at the
    /// start and at each arrival.
    fn next_arrival(&mut self, _now: u64, _rng: &mut SimRng) -> Option<Arrival> {
        None
    }
    /// NET_RX took a request of `conn` off the ring (`tcp_v4_rcv` queued it on the socket of
    /// `task`), just before it wakes `task`.
    fn delivered(&mut self, _task: TaskId, _conn: u32, _now: u64) {}
    /// NET_RX took a packet of `conn` for `task` off the ring: the kernel steps of its receive
    /// on the interrupt CPU (`tcp_v4_rcv` on the connection's socket), run before the wakeup;
    /// none: the flat `NET_RX_PKT_NS` alone.
    fn rx_script(&mut self, _task: TaskId, _conn: u32) -> Vec<syscall::KernelStep> {
        Vec::new()
    }
    /// Open loop: the offered rate and what is still unanswered (the report's `serve` block).
    fn open_loop(&self) -> Option<OpenLoop> {
        None
    }
}

/// A request the driver host sends (`Workload::next_arrival`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// When it reaches the server's card, ns (absolute).
    pub at_ns: u64,
    pub conn: u32,
    /// The thread serving `conn`.
    pub task: TaskId,
}

/// An open-loop workload's own figures (the report's `serve` block).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenLoop {
    /// The rate the driver host sends at, requests/s.
    pub offered_per_sec: f64,
    /// Requests sent and not yet answered when the run ends.
    pub outstanding: u64,
}

/// What a knob is when the scenario leaves it out. Some defaults depend on the machine; the
/// knob's description is generated from this (`KnobDefault::describe`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KnobDefault {
    /// A fixed number.
    Fixed(u64),
    /// One of an enum knob's values.
    Choice(&'static str),
    /// The machine's number of CPUs.
    NrCpus,
    /// The number of CPUs divided by another knob's value, at least 1.
    NrCpusPer(&'static str),
    /// A multiple of the number of CPUs (oltp's clients at the throughput peak).
    NrCpusTimes(u64),
}

impl KnobDefault {
    /// The default as the knob's description states it, e.g. "(default 10)".
    pub fn describe(&self) -> String {
        match self {
            KnobDefault::Fixed(n) => format!("(default {n})"),
            KnobDefault::Choice(v) => format!("(default {v})"),
            KnobDefault::NrCpus => "(default: number of CPUs)".to_string(),
            KnobDefault::NrCpusPer(k) => format!("(default: CPUs / {})", k.replace('_', " ")),
            KnobDefault::NrCpusTimes(n) => format!("(default: {n} × number of CPUs)"),
        }
    }
}

/// One knob of a workload. Serialized for the page and `presets` as `name`, `kind`, `min`, `max`,
/// `values`, `description` (generated: `what` and the default), `unit`, `default_rule`.
#[derive(Clone, Copy, Debug)]
pub struct KnobInfo {
    pub name: &'static str,
    /// "int" (an integer in `min..=max`) or "enum" (one of `values`).
    pub kind: &'static str,
    pub min: u64,
    pub max: u64,
    pub values: &'static [&'static str],
    /// What the knob is, without its default.
    pub what: &'static str,
    /// What one unit of an int knob counts ("" for an enum).
    pub unit: &'static str,
    pub default: KnobDefault,
}

impl KnobInfo {
    /// Base of an integer knob's literal (`KnobInfo { name, .., ..KnobInfo::INT }`).
    pub const INT: KnobInfo = KnobInfo {
        name: "",
        kind: "int",
        min: 1,
        max: 1,
        values: &[],
        what: "",
        unit: "",
        default: KnobDefault::Fixed(1),
    };
    /// Base of an enum knob's literal.
    pub const ENUM: KnobInfo = KnobInfo {
        name: "",
        kind: "enum",
        min: 0,
        max: 0,
        values: &[],
        what: "",
        unit: "",
        default: KnobDefault::Choice(""),
    };

    pub fn description(&self) -> String {
        format!("{} {}", self.what, self.default.describe())
    }
}

impl Serialize for KnobInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("KnobInfo", 8)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("kind", self.kind)?;
        st.serialize_field("min", &self.min)?;
        st.serialize_field("max", &self.max)?;
        st.serialize_field("values", self.values)?;
        st.serialize_field("description", &self.description())?;
        st.serialize_field("unit", self.unit)?;
        // Not `default`: the page reads a `default` field as a value to prefill.
        st.serialize_field("default_rule", &self.default)?;
        st.end()
    }
}

/// One workload: what the page and `presets` list (serialized: `name`, `description`, `unit`,
/// `knobs`), how to build it and how many tasks it would create. Each workload module defines its
/// entry as `INFO`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// What one unit of throughput is.
    pub unit: &'static str,
    pub knobs: &'static [KnobInfo],
    /// Builds the workload from validated knob values.
    #[serde(skip)]
    pub build: fn(&KnobValues) -> Box<dyn Workload>,
    /// The number of tasks `build` would create, from possibly invalid knob values (saturating):
    /// checked against the limits before anything is allocated.
    #[serde(skip)]
    pub tasks: fn(&KnobValues) -> u64,
}

/// Workloads, append-only names and knobs.
pub const WORKLOADS: &[WorkloadInfo] = &[
    oltp::INFO,
    hackbench::INFO,
    schbench::INFO,
    spin::INFO,
    atomics::INFO,
    oltp::hammerdb::INFO,
    serve::INFO,
];

pub fn info(name: &str) -> Option<&'static WorkloadInfo> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// Knob values as strings, checked against the knob table.
pub type Knobs = BTreeMap<String, String>;

pub fn validate_knobs(name: &str, knobs: &Knobs) -> Vec<FieldError> {
    if name == rtapp::NAME {
        return rtapp::validate(knobs);
    }
    let Some(w) = info(name) else {
        let allowed: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        return vec![FieldError::new(
            "workload",
            format!("unknown workload {name:?}: allowed {}", allowed.join(", ")),
        )];
    };
    let mut errs = Vec::new();
    for (k, v) in knobs {
        match w.knobs.iter().find(|x| x.name == k) {
            None => {
                let allowed: Vec<&str> = w.knobs.iter().map(|x| x.name).collect();
                errs.push(FieldError::new(
                    k,
                    format!(
                        "{k} is not a knob of {name}: allowed {}",
                        allowed.join(", ")
                    ),
                ));
            }
            Some(kn) if kn.kind == "enum" => {
                if !kn.values.contains(&v.as_str()) {
                    errs.push(FieldError::new(
                        k,
                        format!("{v:?} is not allowed: {}", kn.values.join(" or ")),
                    ));
                }
            }
            Some(kn) => match v.parse::<u64>() {
                Ok(x) if (kn.min..=kn.max).contains(&x) => {}
                _ => errs.push(FieldError::new(
                    k,
                    crate::error::range_or_nan(
                        v,
                        format!(
                            "{v:?} is out of range: an integer in {}..={}",
                            kn.min, kn.max
                        ),
                    ),
                )),
            },
        }
    }
    errs
}

/// The knob values of one workload on one machine: the value given, else the knob's default.
pub struct KnobValues<'a> {
    info: &'static WorkloadInfo,
    knobs: &'a Knobs,
    nr_cpus: u64,
    /// The run's assumed figures (the OLTP timings read theirs).
    pub assume: Assumptions,
}

impl KnobValues<'_> {
    fn knob(&self, name: &str) -> &'static KnobInfo {
        self.info
            .knobs
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("{} has no knob {name}", self.info.name))
    }

    /// An integer knob (a value that does not parse counts as absent).
    pub fn int(&self, name: &str) -> u64 {
        if let Some(v) = self.knobs.get(name).and_then(|v| v.parse().ok()) {
            return v;
        }
        match self.knob(name).default {
            KnobDefault::Fixed(n) => n,
            KnobDefault::NrCpus => self.nr_cpus,
            KnobDefault::NrCpusPer(k) => (self.nr_cpus / self.int(k).max(1)).max(1),
            KnobDefault::NrCpusTimes(n) => self.nr_cpus.saturating_mul(n),
            KnobDefault::Choice(_) => 0,
        }
    }

    /// An enum knob.
    pub fn choice(&self, name: &str) -> &str {
        match (self.knobs.get(name), self.knob(name).default) {
            (Some(v), _) => v,
            (None, KnobDefault::Choice(v)) => v,
            (None, _) => "",
        }
    }
}

/// The value an integer knob `knob` of workload `name` has on a machine of `nr_cpus` CPUs: the
/// given one, else its default (which may depend on the machine). None for an unknown workload or
/// a knob that is not an integer knob of it.
pub fn int_value(name: &str, knobs: &Knobs, knob: &str, nr_cpus: u64) -> Option<u64> {
    let info = info(name)?;
    info.knobs
        .iter()
        .find(|k| k.name == knob && k.kind == "int")?;
    Some(
        KnobValues {
            info,
            knobs,
            nr_cpus,
            assume: Assumptions::default(),
        }
        .int(knob),
    )
}

/// The placement knobs every workload has (docs/MODEL.md §21), with the workload's sourced default:
/// the working set each task keeps warm where it last ran, KiB.
pub const fn ws_knob(default_kib: u64) -> KnobInfo {
    KnobInfo {
        name: "ws_kib",
        what: "working set per task, warm in the caches where it last ran",
        unit: "KiB",
        min: 0,
        max: 1 << 20,
        default: KnobDefault::Fixed(default_kib),
        ..KnobInfo::INT
    }
}

/// The share of a burst's time that waits on memory (stretched away from the home node), %.
pub const fn mem_knob(default_pct: u64) -> KnobInfo {
    KnobInfo {
        name: "mem_bound_pct",
        what: "share of burst time waiting on memory (slower on a remote node)",
        unit: "%",
        min: 0,
        max: 100,
        default: KnobDefault::Fixed(default_pct),
        ..KnobInfo::INT
    }
}

/// A workload with its placement knobs (`ws_kib`, `mem_bound_pct`): everything else is the
/// workload's own.
struct Placed {
    inner: Box<dyn Workload>,
    ws_kib: u64,
    mem_pct: u64,
}

impl Workload for Placed {
    fn tasks(&self) -> &[TaskSpec] {
        self.inner.tasks()
    }
    fn processes(&self) -> &[String] {
        self.inner.processes()
    }
    fn rss_bytes(&self, process: u32) -> u64 {
        self.inner.rss_bytes(process)
    }
    fn next(&mut self, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
        self.inner.next(task, now, rng)
    }
    fn ws_lines(&self) -> u32 {
        (self.ws_kib * 1024 / 64) as u32
    }
    fn mem_bound_pct(&self) -> u32 {
        self.mem_pct as u32
    }
    fn knobs(&self) -> Knobs {
        let mut k = self.inner.knobs();
        k.insert("ws_kib".into(), self.ws_kib.to_string());
        k.insert("mem_bound_pct".into(), self.mem_pct.to_string());
        k
    }
    fn counts_units(&self, task: TaskId) -> bool {
        self.inner.counts_units(task)
    }
    fn lines(&self) -> &[UserLine] {
        self.inner.lines()
    }
    fn kernel_lines(&self) -> Vec<syscall::KernelLineDecl> {
        self.inner.kernel_lines()
    }
    fn per_cpu_kernel_lines(&self) -> &[UserLine] {
        self.inner.per_cpu_kernel_lines()
    }
    fn served(&mut self, task: TaskId, value: u64) {
        self.inner.served(task, value)
    }
    fn nice(&self, task: TaskId) -> i32 {
        self.inner.nice(task)
    }
    fn initial_cpu(&self, task: TaskId, topo: &Topology) -> Option<u32> {
        self.inner.initial_cpu(task, topo)
    }
    fn machine_errors(&self, topo: &Topology) -> Vec<FieldError> {
        self.inner.machine_errors(topo)
    }
    fn connections(&self) -> usize {
        self.inner.connections()
    }
    fn next_arrival(&mut self, now: u64, rng: &mut SimRng) -> Option<Arrival> {
        self.inner.next_arrival(now, rng)
    }
    fn delivered(&mut self, task: TaskId, conn: u32, now: u64) {
        self.inner.delivered(task, conn, now)
    }
    fn rx_script(&mut self, task: TaskId, conn: u32) -> Vec<syscall::KernelStep> {
        self.inner.rx_script(task, conn)
    }
    fn open_loop(&self) -> Option<OpenLoop> {
        self.inner.open_loop()
    }
}

/// Builds a workload for a machine with `nr_cpus` CPUs and the run's assumed figures. Knobs must
/// have been validated.
pub fn build(
    name: &str,
    knobs: &Knobs,
    nr_cpus: usize,
    assume: &Assumptions,
) -> Result<Box<dyn Workload>, Invalid> {
    if name == rtapp::NAME {
        return Ok(Box::new(rtapp::build(knobs)?));
    }
    let errs = validate_knobs(name, knobs);
    let Some(info) = info(name).filter(|_| errs.is_empty()) else {
        return Err(Invalid(errs));
    };
    let k = KnobValues {
        info,
        knobs,
        nr_cpus: nr_cpus as u64,
        assume: *assume,
    };
    Ok(Box::new(Placed {
        inner: (info.build)(&k),
        ws_kib: k.int("ws_kib"),
        mem_pct: k.int("mem_bound_pct"),
    }))
}

/// Knob values the machine cannot honour (`Workload::machine_errors`). Knobs must have been validated.
pub fn check_machine(
    name: &str,
    knobs: &Knobs,
    topo: &Topology,
    assume: &Assumptions,
) -> Result<(), Invalid> {
    let errs = build(name, knobs, topo.nr_cpus(), assume)?.machine_errors(topo);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(Invalid(errs))
    }
}

/// Number of tasks a workload would create (checked against limits before anything is allocated).
pub fn task_count(name: &str, knobs: &Knobs, nr_cpus: usize) -> u64 {
    if name == rtapp::NAME {
        return rtapp::task_count(knobs);
    }
    info(name).map_or(0, |info| {
        (info.tasks)(&KnobValues {
            info,
            knobs,
            nr_cpus: nr_cpus as u64,
            assume: Assumptions::default(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::limits::MAX_CPUS;

    #[test]
    fn knob_defaults_lie_in_their_ranges_and_descriptions_state_them() {
        for w in WORKLOADS {
            for k in w.knobs {
                let at = format!("{}.{}", w.name, k.name);
                let d = k.description();
                assert!(d.ends_with(&k.default.describe()), "{at}: {d}");
                assert!(!k.what.contains("default"), "{at}: default typed in `what`");
                match (k.kind, k.default) {
                    ("enum", KnobDefault::Choice(v)) => {
                        assert!(k.values.contains(&v), "{at}: {v} not in {:?}", k.values)
                    }
                    ("int", KnobDefault::Choice(_)) | ("enum", _) => panic!("{at}: kind/default"),
                    ("int", _) => {
                        assert!(k.min <= k.max && !k.unit.is_empty(), "{at}");
                        for cpus in [1, 2, 3, 64, 96, 512, MAX_CPUS] {
                            let v = KnobValues {
                                info: w,
                                knobs: &Knobs::new(),
                                nr_cpus: cpus as u64,
                                assume: Assumptions::default(),
                            }
                            .int(k.name);
                            assert!((k.min..=k.max).contains(&v), "{at}: {v} on {cpus} CPUs");
                        }
                    }
                    _ => panic!("{at}: kind {}", k.kind),
                }
            }
        }
    }

    #[test]
    fn the_task_count_is_what_the_builder_creates() {
        let mut given = Knobs::new();
        given.insert("groups".into(), "3".into());
        given.insert("message_threads".into(), "5".into());
        for w in WORKLOADS {
            for knobs in [Knobs::new(), given.clone()] {
                let knobs: Knobs = knobs
                    .into_iter()
                    .filter(|(k, _)| w.knobs.iter().any(|x| x.name == k))
                    .collect();
                for cpus in [1, 7, 64, 512] {
                    let built = build(w.name, &knobs, cpus, &Assumptions::default()).unwrap();
                    assert_eq!(
                        built.tasks().len() as u64,
                        task_count(w.name, &knobs, cpus),
                        "{} {knobs:?} on {cpus} CPUs",
                        w.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_page_reads_the_same_json_keys() {
        let v = serde_json::to_value(WORKLOADS).unwrap();
        let w = &v[1];
        for key in ["name", "description", "unit", "knobs"] {
            assert!(w.get(key).is_some(), "{key}");
        }
        for key in [
            "name",
            "kind",
            "min",
            "max",
            "values",
            "description",
            "unit",
        ] {
            assert!(w["knobs"][0].get(key).is_some(), "{key}");
        }
        assert!(w["knobs"][0].get("default").is_none());
        assert_eq!(w["knobs"][0]["description"], "groups (default 10)");
        assert_eq!(
            v[0]["knobs"][0]["default_rule"],
            serde_json::json!({"nr_cpus_times": 2})
        );
    }
}
