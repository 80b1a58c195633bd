//! `rtapp`: an rt-app JSON workload file (github.com/scheduler-tools/rt-app, doc/tutorial.txt),
//! `run --workload-file FILE.json`. The `global` and `tasks` sections; per task `instance`,
//! `loop`, `priority` (the nice value of a SCHED_OTHER thread), `policy` (SCHED_OTHER only),
//! `delay`, `phases` (each with `loop`) or the events directly; the events `run`, `runtime`,
//! `sleep`, `timer`, `lock` / `unlock`, `signal` / `wait` / `broad`, `barrier`, and `mem` /
//! `iorun` as CPU work. Event keys match by prefix (`run0`, `sleep1`), as rt-app's parser does.
//! Anything else is refused with its JSON path and the reason (`fork`: tasks are created at start;
//! `yield`: the engine has no sched_yield; RT and deadline policies: only the fair class is
//! modelled; `cpus`: no affinity).
//!
//! One unit of throughput is one loop of a task (its latency: the loop's duration).
//!
//! At 804 lines this file is at the limit: the event table and the task builder are one unit
//! today; the events move to their own file when the next event type is added.

mod json;

use super::{Knobs, Step, TaskId, TaskSpec, Workload};
use crate::error::{FieldError, Invalid};
use crate::sim::rng::SimRng;
pub use json::{J, MAX_BYTES, parse};
use std::collections::VecDeque;

/// The workload's name in a scenario; its one knob, `file`, holds the JSON text.
pub const NAME: &str = "rtapp";
/// The knob holding the file's text.
pub const FILE_KNOB: &str = "file";
/// The error field of everything wrong in the file.
const FIELD: &str = "workload_file";

/// `mem` and `iorun` as CPU work: rt-app's memload memsets its buffer and iorun writes it to
/// `io_device` (/dev/null by default); both are priced at 10 GB/s, a memset rate of one core
/// (stated assumption, docs/MODEL.md).
const BYTES_PER_NS: u64 = 10;

/// Global keys accepted: they steer logging or calibration on a real machine and change nothing in
/// a simulated run (`duration`: the scenario's `seconds` is the run's length).
const GLOBAL_IGNORED: &[&str] = &[
    "duration",
    "calibration",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

#[derive(Clone, Debug, PartialEq)]
enum Ev {
    Run(u64),
    Sleep(u64),
    Timer {
        id: usize,
        period: u64,
        absolute: bool,
    },
    Lock(usize),
    Unlock(usize),
    Signal(usize),
    Broad(usize),
    CondWait(usize),
    Barrier(usize),
}

#[derive(Clone, Debug)]
struct Phase {
    /// Repeats of the phase per task loop (≥ 1).
    loops: u64,
    events: Vec<Ev>,
}

#[derive(Clone, Debug)]
struct TaskDef {
    name: String,
    instances: u32,
    /// Task loops; None: forever (`loop: -1`).
    loops: Option<u64>,
    nice: i32,
    delay_ns: u64,
    phases: Vec<Phase>,
}

#[derive(Clone, Debug, Default)]
struct Names(Vec<String>);

impl Names {
    fn id(&mut self, n: &str) -> usize {
        self.0.iter().position(|x| x == n).unwrap_or_else(|| {
            self.0.push(n.to_string());
            self.0.len() - 1
        })
    }
}

/// A parsed file: what each thread runs.
#[derive(Clone, Debug)]
pub struct Program {
    defs: Vec<TaskDef>,
    mutexes: usize,
    conds: usize,
    barriers: usize,
    timers: usize,
}

fn err(path: &str, msg: impl Into<String>) -> FieldError {
    FieldError::new(FIELD, format!("{path}: {}", msg.into()))
}

fn us(path: &str, v: &J) -> Result<u64, FieldError> {
    match v {
        J::Num(x) if *x >= 0.0 && x.fract() == 0.0 && *x <= 1e12 => Ok(*x as u64 * 1000),
        J::Num(x) => Err(err(
            path,
            format!("{x} is out of range: microseconds in 0..=10^12"),
        )),
        other => Err(err(
            path,
            format!("{} where microseconds were expected", other.kind()),
        )),
    }
}

fn name_of(path: &str, v: &J) -> Result<String, FieldError> {
    match v {
        J::Str(s) if !s.is_empty() => Ok(s.clone()),
        J::Obj(kv) => match kv.iter().find(|(k, _)| k == "ref") {
            Some((_, J::Str(s))) => Ok(s.clone()),
            _ => Err(err(path, "an object without a \"ref\" string")),
        },
        other => Err(err(
            path,
            format!("{} where a resource name was expected", other.kind()),
        )),
    }
}

/// The events of rt-app, longest prefix first (`runtime` before `run`).
const EVENTS: &[&str] = &[
    "runtime", "run", "sleep", "timer", "lock", "unlock", "signal", "wait", "broad", "barrier",
    "sync", "suspend", "resume", "mem", "iorun", "fork", "yield",
];

struct Builder {
    mutexes: Names,
    conds: Names,
    barriers: Names,
    timers: Names,
}

impl Builder {
    fn event(
        &mut self,
        path: &str,
        task: &str,
        key: &str,
        v: &J,
        out: &mut Vec<Ev>,
    ) -> Result<(), FieldError> {
        let Some(kind) = EVENTS.iter().find(|e| key.starts_with(**e)) else {
            return Err(err(
                path,
                format!(
                    "unknown event or key {key:?}: events are {}",
                    EVENTS.join(", ")
                ),
            ));
        };
        match *kind {
            "run" | "runtime" => out.push(Ev::Run(us(path, v)?.max(1))),
            "sleep" => out.push(Ev::Sleep(us(path, v)?)),
            "mem" | "iorun" => {
                let bytes = us(path, v)? / 1000;
                out.push(Ev::Run((bytes / BYTES_PER_NS).max(1)));
            }
            "timer" => {
                let J::Obj(kv) = v else {
                    return Err(err(path, "a timer is an object {\"ref\", \"period\"}"));
                };
                let mut period = None;
                let mut absolute = false;
                let mut id = None;
                for (k, x) in kv {
                    let p = format!("{path}.{k}");
                    match k.as_str() {
                        "ref" => id = Some(self.timers.id(&name_of(&p, x)?)),
                        "period" => period = Some(us(&p, x)?),
                        "mode" => match x {
                            J::Str(s) if s == "absolute" => absolute = true,
                            J::Str(s) if s == "relative" => absolute = false,
                            _ => return Err(err(&p, "mode is \"absolute\" or \"relative\"")),
                        },
                        _ => return Err(err(&p, "a timer has only ref, period and mode")),
                    }
                }
                let (Some(id), Some(period)) = (id, period) else {
                    return Err(err(path, "a timer needs \"ref\" and \"period\""));
                };
                out.push(Ev::Timer {
                    id,
                    period: period.max(1),
                    absolute,
                });
            }
            "lock" => out.push(Ev::Lock(self.mutexes.id(&name_of(path, v)?))),
            "unlock" => out.push(Ev::Unlock(self.mutexes.id(&name_of(path, v)?))),
            "signal" => out.push(Ev::Signal(self.conds.id(&name_of(path, v)?))),
            "broad" => out.push(Ev::Broad(self.conds.id(&name_of(path, v)?))),
            "wait" => {
                // pthread_cond_wait: the mutex is released while waiting and taken back after
                let cond = self.conds.id(&name_of(path, v)?);
                let mutex = match v {
                    J::Obj(kv) => kv.iter().find(|(k, _)| k == "mutex"),
                    _ => None,
                };
                match mutex {
                    Some((_, m)) => {
                        let m = self.mutexes.id(&name_of(&format!("{path}.mutex"), m)?);
                        out.extend([Ev::Unlock(m), Ev::CondWait(cond), Ev::Lock(m)]);
                    }
                    None => out.push(Ev::CondWait(cond)),
                }
            }
            "barrier" => out.push(Ev::Barrier(self.barriers.id(&name_of(path, v)?))),
            // sync {ref, mutex}: signal the condition and wait on it, the mutex released meanwhile
            "sync" => {
                let cond = self.conds.id(&name_of(path, v)?);
                let m = match v {
                    J::Obj(kv) => kv.iter().find(|(k, _)| k == "mutex"),
                    _ => None,
                };
                let Some((_, m)) = m else {
                    return Err(err(path, "sync is an object {\"ref\", \"mutex\"}"));
                };
                let m = self.mutexes.id(&name_of(&format!("{path}.mutex"), m)?);
                out.extend([
                    Ev::Signal(cond),
                    Ev::Unlock(m),
                    Ev::CondWait(cond),
                    Ev::Lock(m),
                ]);
            }
            // suspend until a `resume` of the same name (no name: the task's own), as rt-app's
            // condition pair per name
            "suspend" | "resume" => {
                let name = match v {
                    J::Null => task.to_string(),
                    other => name_of(path, other)?,
                };
                let cv = self.conds.id(&format!("suspend {name}"));
                out.push(if *kind == "suspend" {
                    Ev::CondWait(cv)
                } else {
                    Ev::Broad(cv)
                });
            }
            "fork" => {
                return Err(err(
                    path,
                    "fork is not supported: schedplay creates every task at the start",
                ));
            }
            "yield" => {
                return Err(err(
                    path,
                    "yield is not supported: the engine does not model sched_yield",
                ));
            }
            _ => unreachable!("every EVENTS entry is handled"),
        }
        Ok(())
    }

    /// The events of one phase (or of a task without phases), skipping the keys `skip`.
    fn events(
        &mut self,
        path: &str,
        task: &str,
        kv: &[(String, J)],
        skip: &[&str],
    ) -> Result<Vec<Ev>, Invalid> {
        let mut out = Vec::new();
        let mut errs = Vec::new();
        for (k, v) in kv {
            if skip.contains(&k.as_str()) {
                continue;
            }
            if let Err(e) = self.event(&format!("{path}.{k}"), task, k, v, &mut out) {
                errs.push(e);
            }
        }
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(Invalid(errs))
        }
    }
}

fn loops(path: &str, v: &J) -> Result<Option<u64>, FieldError> {
    match v {
        J::Num(x) if *x == -1.0 => Ok(None),
        J::Num(x) if *x >= 1.0 && x.fract() == 0.0 && *x <= 1e9 => Ok(Some(*x as u64)),
        _ => Err(err(
            path,
            "loop is -1 (forever) or a whole number in 1..=10^9",
        )),
    }
}

const TASK_KEYS: &[&str] = &["instance", "loop", "priority", "policy", "phases", "delay"];
const REFUSED_TASK_KEYS: &[(&str, &str)] = &[
    ("cpus", "CPU affinity is not modelled"),
    ("nodes_membind", "memory binding is not modelled"),
    ("taskgroup", "task groups (cgroups) are not modelled"),
    ("dl-runtime", "SCHED_DEADLINE is not modelled"),
    ("dl-period", "SCHED_DEADLINE is not modelled"),
    ("dl-deadline", "SCHED_DEADLINE is not modelled"),
    ("util_min", "uclamp is not modelled"),
    ("util_max", "uclamp is not modelled"),
];

fn policy_ok(path: &str, v: &J) -> Result<(), FieldError> {
    match v {
        J::Str(s) if s == "SCHED_OTHER" => Ok(()),
        J::Str(s) => Err(err(
            path,
            format!("{s} is not supported: only SCHED_OTHER (the fair class) is modelled"),
        )),
        other => Err(err(
            path,
            format!("{} where a policy name was expected", other.kind()),
        )),
    }
}

impl Program {
    /// Reads an rt-app file; every problem is one error naming its JSON path.
    pub fn parse(text: &str) -> Result<Program, Invalid> {
        let root = json::parse(text).map_err(|e| Invalid(vec![FieldError::new(FIELD, e)]))?;
        let J::Obj(top) = root else {
            return Err(err("$", "the file is not a JSON object").into());
        };
        let mut errs = Vec::new();
        let mut b = Builder {
            mutexes: Names::default(),
            conds: Names::default(),
            barriers: Names::default(),
            timers: Names::default(),
        };
        let mut defs = Vec::new();
        let mut seen_tasks = false;
        for (k, v) in &top {
            match (k.as_str(), v) {
                ("global", J::Obj(g)) => {
                    for (gk, gv) in g {
                        let p = format!("global.{gk}");
                        if gk == "default_policy" {
                            if let Err(e) = policy_ok(&p, gv) {
                                errs.push(e);
                            }
                        } else if !GLOBAL_IGNORED.contains(&gk.as_str()) {
                            errs.push(err(&p, "unknown or unsupported global key"));
                        }
                    }
                }
                ("tasks", J::Obj(ts)) => {
                    seen_tasks = true;
                    for (name, t) in ts {
                        match Self::task(&mut b, name, t) {
                            Ok(d) => defs.push(d),
                            Err(Invalid(e)) => errs.extend(e),
                        }
                    }
                }
                ("resources", J::Obj(_)) => {} // declarations: rt-app also creates them by name
                ("global" | "tasks" | "resources", other) => errs.push(err(
                    k,
                    format!("{} where an object was expected", other.kind()),
                )),
                _ => errs.push(err(k, "unknown top-level key: global, tasks, resources")),
            }
        }
        if !seen_tasks {
            errs.push(err("tasks", "missing: the file has no tasks"));
        }
        if defs.iter().map(|d| d.instances as u64).sum::<u64>() == 0 && errs.is_empty() {
            errs.push(err("tasks", "no task has an instance"));
        }
        if !errs.is_empty() {
            return Err(Invalid(errs));
        }
        Ok(Program {
            defs,
            mutexes: b.mutexes.0.len(),
            conds: b.conds.0.len(),
            barriers: b.barriers.0.len(),
            timers: b.timers.0.len(),
        })
    }

    fn task(b: &mut Builder, name: &str, t: &J) -> Result<TaskDef, Invalid> {
        let path = format!("tasks.{name}");
        let J::Obj(kv) = t else {
            return Err(err(&path, "a task is an object").into());
        };
        let mut errs = Vec::new();
        let mut def = TaskDef {
            name: name.to_string(),
            instances: 1,
            loops: None,
            nice: 0,
            delay_ns: 0,
            phases: Vec::new(),
        };
        for (k, v) in kv {
            let p = format!("{path}.{k}");
            let r = match k.as_str() {
                "instance" => match v {
                    J::Num(x) if *x >= 0.0 && x.fract() == 0.0 && *x <= 16384.0 => {
                        def.instances = *x as u32;
                        Ok(())
                    }
                    _ => Err(err(&p, "instance is a whole number in 0..=16384")),
                },
                "loop" => loops(&p, v).map(|l| def.loops = l),
                "priority" => match v {
                    J::Num(x) if (-20.0..=19.0).contains(x) && x.fract() == 0.0 => {
                        def.nice = *x as i32;
                        Ok(())
                    }
                    _ => Err(err(
                        &p,
                        "priority of a SCHED_OTHER task is its nice value, -20..=19",
                    )),
                },
                "policy" => policy_ok(&p, v),
                "delay" => us(&p, v).map(|d| def.delay_ns = d),
                "phases" => {
                    let J::Obj(ph) = v else {
                        errs.push(err(&p, "phases is an object of named phases"));
                        continue;
                    };
                    for (pn, pv) in ph {
                        let pp = format!("{p}.{pn}");
                        let J::Obj(pkv) = pv else {
                            errs.push(err(&pp, "a phase is an object"));
                            continue;
                        };
                        let mut ploops = 1;
                        if let Some((_, l)) = pkv.iter().find(|(k, _)| k == "loop") {
                            match loops(&format!("{pp}.loop"), l) {
                                Ok(Some(n)) => ploops = n,
                                Ok(None) => errs.push(err(
                                    &format!("{pp}.loop"),
                                    "a phase loops a whole number of times (1..=10^9)",
                                )),
                                Err(e) => errs.push(e),
                            }
                        }
                        match b.events(&pp, name, pkv, &["loop"]) {
                            Ok(events) => def.phases.push(Phase {
                                loops: ploops,
                                events,
                            }),
                            Err(Invalid(e)) => errs.extend(e),
                        }
                    }
                    Ok(())
                }
                other => match REFUSED_TASK_KEYS.iter().find(|(n, _)| *n == other) {
                    Some((_, why)) => Err(err(&p, format!("not supported: {why}"))),
                    None => Ok(()), // an event: read below
                },
            };
            if let Err(e) = r {
                errs.push(e);
            }
        }
        let has_phases = kv.iter().any(|(k, _)| k == "phases");
        let direct: Vec<(String, J)> = kv
            .iter()
            .filter(|(k, _)| {
                !TASK_KEYS.contains(&k.as_str()) && !REFUSED_TASK_KEYS.iter().any(|(n, _)| n == k)
            })
            .cloned()
            .collect();
        if has_phases && !direct.is_empty() {
            errs.push(err(
                &format!("{path}.{}", direct[0].0),
                "events next to \"phases\": put them in a phase",
            ));
        } else if !has_phases {
            match b.events(&path, name, &direct, &[]) {
                Ok(events) => def.phases.push(Phase { loops: 1, events }),
                Err(Invalid(e)) => errs.extend(e),
            }
        }
        if errs.is_empty() && def.phases.iter().all(|p| p.events.is_empty()) {
            errs.push(err(&path, "the task has no event"));
        }
        if errs.is_empty() {
            Ok(def)
        } else {
            Err(Invalid(errs))
        }
    }

    /// Threads the file creates.
    pub fn nr_tasks(&self) -> u64 {
        self.defs.iter().map(|d| d.instances as u64).sum()
    }
}

/// Where a thread stands in its script.
#[derive(Clone, Debug, Default)]
struct Cursor {
    phase: usize,
    phase_loop: u64,
    ev: usize,
    task_loop: u64,
    started: bool,
    loop_start: u64,
    /// Steps already decided (the wakeups a broadcast or a barrier issues).
    pending: VecDeque<Step>,
    /// The last event of a task loop has been issued: the loop completes at the next step.
    loop_done: bool,
    /// Per timer: the next expiry.
    timer_next: Vec<Option<u64>>,
}

pub struct RtApp {
    prog: Program,
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    /// Per thread: its definition.
    def_of: Vec<usize>,
    cur: Vec<Cursor>,
    mutex_owner: Vec<Option<TaskId>>,
    mutex_waiters: Vec<VecDeque<TaskId>>,
    cond_waiters: Vec<VecDeque<TaskId>>,
    /// Per barrier: the threads that use it, and those waiting at it.
    barrier_users: Vec<usize>,
    barrier_waiting: Vec<Vec<TaskId>>,
}

impl RtApp {
    pub fn new(prog: Program) -> RtApp {
        let mut def_of = Vec::new();
        for (i, d) in prog.defs.iter().enumerate() {
            def_of.extend(std::iter::repeat_n(i, d.instances as usize));
        }
        let n = def_of.len();
        let mut barrier_users = vec![0; prog.barriers];
        for &d in &def_of {
            let mut used = vec![false; prog.barriers];
            for p in &prog.defs[d].phases {
                for e in &p.events {
                    if let Ev::Barrier(b) = e {
                        used[*b] = true;
                    }
                }
            }
            used.iter()
                .enumerate()
                .for_each(|(b, &u)| barrier_users[b] += u as usize);
        }
        RtApp {
            tasks: vec![TaskSpec { process: 0 }; n],
            procs: vec!["rt-app".into()],
            cur: vec![
                Cursor {
                    timer_next: vec![None; prog.timers],
                    ..Default::default()
                };
                n
            ],
            mutex_owner: vec![None; prog.mutexes],
            mutex_waiters: vec![VecDeque::new(); prog.mutexes],
            cond_waiters: vec![VecDeque::new(); prog.conds],
            barrier_waiting: vec![Vec::new(); prog.barriers],
            barrier_users,
            def_of,
            prog,
        }
    }

    /// The thread names (`<task>-<instance>`), in task order.
    pub fn thread_names(&self) -> Vec<String> {
        let mut seen = vec![0u32; self.prog.defs.len()];
        self.def_of
            .iter()
            .map(|&d| {
                seen[d] += 1;
                format!("{}-{}", self.prog.defs[d].name, seen[d] - 1)
            })
            .collect()
    }

    /// Moves `t` to its next event, marking a finished task loop.
    fn advance(&mut self, t: usize) {
        let def = &self.prog.defs[self.def_of[t]];
        let c = &mut self.cur[t];
        c.ev += 1;
        if c.ev < def.phases[c.phase].events.len() {
            return;
        }
        c.ev = 0;
        c.phase_loop += 1;
        if c.phase_loop < def.phases[c.phase].loops {
            return;
        }
        c.phase_loop = 0;
        c.phase += 1;
        if c.phase < def.phases.len() {
            return;
        }
        c.phase = 0;
        c.loop_done = true;
    }
}

impl Workload for RtApp {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn knobs(&self) -> Knobs {
        [("threads".to_string(), self.tasks.len().to_string())].into()
    }
    fn nice(&self, task: TaskId) -> i32 {
        self.prog.defs[self.def_of[task as usize]].nice
    }
    fn next(&mut self, task: TaskId, now: u64, _rng: &mut SimRng) -> Step {
        let t = task as usize;
        if let Some(s) = self.cur[t].pending.pop_front() {
            return s;
        }
        if std::mem::take(&mut self.cur[t].loop_done) {
            // one unit of throughput: a task loop, its latency the loop's duration
            let c = &mut self.cur[t];
            c.task_loop += 1;
            let latency_ns = now - c.loop_start;
            c.loop_start = now;
            if self.prog.defs[self.def_of[t]]
                .loops
                .is_some_and(|l| c.task_loop >= l)
            {
                c.pending.push_back(Step::Exit);
            }
            return Step::Complete { latency_ns };
        }
        if !self.cur[t].started {
            self.cur[t].started = true;
            self.cur[t].loop_start = now;
            let delay = self.prog.defs[self.def_of[t]].delay_ns;
            self.cur[t].ev = 0;
            if delay > 0 {
                return Step::Sleep { ns: delay };
            }
        }
        // Events with no CPU time or wait (a free lock, a signal nobody waits for) run on at once;
        // a script of only such events still ends each step (bounded per call).
        for _ in 0..4096 {
            let def = &self.prog.defs[self.def_of[t]];
            let c = &self.cur[t];
            let ev = def.phases[c.phase].events[c.ev].clone();
            let step = match ev {
                Ev::Run(ns) => Some(Step::Run {
                    ns,
                    shared_lines: 0,
                }),
                Ev::Sleep(ns) => Some(Step::Sleep { ns: ns.max(1) }),
                Ev::Timer {
                    id,
                    period,
                    absolute,
                } => {
                    let next = match self.cur[t].timer_next[id] {
                        None => now + period,
                        Some(n) if absolute || n + period > now => n + period,
                        // relative: a late timer restarts from now
                        Some(_) => now + period,
                    };
                    self.cur[t].timer_next[id] = Some(next);
                    (next > now).then_some(Step::Sleep { ns: next - now })
                }
                Ev::Lock(m) => match self.mutex_owner[m] {
                    None => {
                        self.mutex_owner[m] = Some(task);
                        None
                    }
                    Some(_) => {
                        self.mutex_waiters[m].push_back(task);
                        Some(Step::Block) // unlock hands the mutex over, then wakes us
                    }
                },
                Ev::Unlock(m) => {
                    if self.mutex_owner[m] == Some(task) {
                        self.mutex_owner[m] = self.mutex_waiters[m].pop_front();
                        self.mutex_owner[m].map(|w| Step::Wake {
                            task: w,
                            lines: 1,
                            sync: false,
                        })
                    } else {
                        None // not held: pthread returns EPERM, rt-app goes on
                    }
                }
                Ev::Signal(cv) => self.cond_waiters[cv].pop_front().map(|w| Step::Wake {
                    task: w,
                    lines: 0,
                    sync: false,
                }),
                Ev::Broad(cv) => {
                    let ws: Vec<TaskId> = self.cond_waiters[cv].drain(..).collect();
                    let c = &mut self.cur[t];
                    c.pending.extend(ws.iter().map(|&w| Step::Wake {
                        task: w,
                        lines: 0,
                        sync: false,
                    }));
                    c.pending.pop_front()
                }
                Ev::CondWait(cv) => {
                    self.cond_waiters[cv].push_back(task);
                    Some(Step::Block)
                }
                Ev::Barrier(b) => {
                    self.barrier_waiting[b].push(task);
                    if self.barrier_waiting[b].len() >= self.barrier_users[b] {
                        let ws: Vec<TaskId> = std::mem::take(&mut self.barrier_waiting[b])
                            .into_iter()
                            .filter(|&w| w != task)
                            .collect();
                        let c = &mut self.cur[t];
                        c.pending.extend(ws.iter().map(|&w| Step::Wake {
                            task: w,
                            lines: 0,
                            sync: false,
                        }));
                        c.pending.pop_front()
                    } else {
                        Some(Step::Block)
                    }
                }
            };
            self.advance(t);
            if let Some(s) = step {
                return s;
            }
            if self.cur[t].loop_done {
                return self.next(task, now, _rng);
            }
        }
        // only zero-time events for 4096 steps: give the CPU a moment (1 µs) rather than spin here
        Step::Run {
            ns: 1000,
            shared_lines: 0,
        }
    }
}

/// The workload a scenario's `file` knob describes.
pub fn build(knobs: &Knobs) -> Result<RtApp, Invalid> {
    let Some(text) = knobs.get(FILE_KNOB) else {
        return Err(
            FieldError::new(FIELD, "the rtapp workload needs its file (knob \"file\")").into(),
        );
    };
    Program::parse(text).map(RtApp::new)
}

/// Errors in a scenario's rtapp knobs (`file` only).
pub fn validate(knobs: &Knobs) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = knobs
        .keys()
        .filter(|k| *k != FILE_KNOB)
        .map(|k| FieldError::new(k, format!("unknown knob {k:?} of rtapp: only \"file\"")))
        .collect();
    match knobs.get(FILE_KNOB) {
        None => errs.push(FieldError::new(FIELD, "the rtapp workload needs its file")),
        Some(text) => {
            if let Err(Invalid(e)) = Program::parse(text) {
                errs.extend(e);
            }
        }
    }
    errs
}

/// Threads the scenario's file creates (0 when it does not parse).
pub fn task_count(knobs: &Knobs) -> u64 {
    knobs
        .get(FILE_KNOB)
        .and_then(|t| Program::parse(t).ok())
        .map_or(0, |p| p.nr_tasks())
}
