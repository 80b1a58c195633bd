//! `spin`: CPU hogs. Each runs in 10 ms bursts forever (a burst boundary is only a bookkeeping
//! point: the task never blocks); throughput counts CPU-seconds delivered.

use super::{KnobDefault, KnobInfo, Step, TaskId, TaskSpec, Workload, WorkloadInfo};
use crate::sim::rng::SimRng;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "spin",
    description: "N CPU hogs that never sleep",
    unit: "10 ms CPU slices",
    knobs: &[
        KnobInfo {
            name: "threads",
            what: "spinning threads",
            unit: "threads",
            min: 1,
            max: 16384,
            default: KnobDefault::NrCpus,
            ..KnobInfo::INT
        },
        super::ws_knob(4),
        super::mem_knob(0),
    ],
    build: |k| Box::new(Spin::new(k.int("threads") as usize)),
    tasks: |k| k.int("threads"),
};

const BURST_NS: u64 = 10_000_000;

pub struct Spin {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    started: Vec<bool>,
}

impl Spin {
    pub fn new(threads: usize) -> Self {
        Spin {
            tasks: vec![TaskSpec { process: 0 }; threads],
            procs: vec!["spin".into()],
            started: vec![false; threads],
        }
    }
}

impl Workload for Spin {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn knobs(&self) -> super::Knobs {
        [("threads".to_string(), self.tasks.len().to_string())].into()
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn next(&mut self, task: TaskId, _now: u64, _rng: &mut SimRng) -> Step {
        let s = &mut self.started[task as usize];
        if *s {
            *s = false;
            // One unit = one burst of CPU time (reported per second as CPU-seconds / 100).
            return Step::Complete {
                latency_ns: BURST_NS,
            };
        }
        *s = true;
        Step::Run {
            ns: BURST_NS,
            shared_lines: 0,
        }
    }
}
