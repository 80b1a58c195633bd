//! Run-time checks and read-outs: structural invariants, CPU-time conservation, and the per-task
//! and per-CPU figures the report reads.

use super::*;

impl Engine {
    // ---- report helpers --------------------------------------------------------------------

    /// CPU time each task has received.
    pub fn task_runtime(&self) -> Vec<u64> {
        self.tasks.iter().map(|t| t.sum_exec).collect()
    }

    /// All time charged to CPU `c` (every symbol, idle included).
    pub fn cpu_time_ns(&self, c: usize) -> u64 {
        self.metrics.cpu_sym[c].iter().sum()
    }

    pub fn task_events(&self) -> Vec<u64> {
        self.tasks.iter().map(|t| t.events).collect()
    }

    pub fn processes(&self) -> &[String] {
        self.workload.processes()
    }

    /// The workload being run (its knobs and which tasks count units, for the report).
    pub fn workload(&self) -> &dyn Workload {
        &*self.workload
    }

    /// Cache-aware scheduling (RFC v4) is on: the report lists account_mm_sched()'s callers.
    /// The network card and what its receive path counted, when any packet arrived.
    pub fn net_counts(&self) -> Option<(&crate::machine::nic::Nic, NetCounts)> {
        (self.net.counts.packets > 0).then_some((&self.net.nic, self.net.counts))
    }

    pub fn cache_aware_on(&self) -> bool {
        self.cas.is_some()
    }

    /// Checks structural invariants; returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![0u32; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            // the EEVDF sums are the queue's: Σ (v − min_vruntime)·w and Σ w
            let (mut avg, mut load) = (0i64, 0i64);
            for &t in &cpu.rq.queued {
                let se = &self.tasks[t as usize].se;
                avg += se.vruntime.wrapping_sub(cpu.rq.min_vruntime) as i64 * se.weight as i64;
                load += se.weight as i64;
                if se.sched_delayed != (self.tasks[t as usize].state == TaskState::Sleeping) {
                    return Err(format!(
                        "task {t} queued on CPU {c} in state {:?}, delayed {}",
                        self.tasks[t as usize].state, se.sched_delayed
                    ));
                }
            }
            let delayed = cpu
                .rq
                .queued
                .iter()
                .filter(|&&t| self.tasks[t as usize].se.sched_delayed)
                .count();
            if delayed != cpu.rq.nr_delayed {
                return Err(format!(
                    "CPU {c}: nr_delayed {} but {delayed} delayed tasks queued",
                    cpu.rq.nr_delayed
                ));
            }
            if (avg, load) != (cpu.rq.avg_vruntime, cpu.rq.avg_load) {
                return Err(format!(
                    "CPU {c}: avg_vruntime/avg_load {}/{} but the queue sums to {avg}/{load}",
                    cpu.rq.avg_vruntime, cpu.rq.avg_load
                ));
            }
            for &t in cpu.rq.queued.iter().chain(cpu.rq.curr.iter()) {
                seen[t as usize] += 1;
                if self.tasks[t as usize].cpu as usize != c {
                    return Err(format!(
                        "task {t} queued on CPU {c} but says CPU {}",
                        self.tasks[t as usize].cpu
                    ));
                }
            }
            if let Some(t) = cpu.rq.curr
                && self.tasks[t as usize].state != TaskState::Running
            {
                return Err(format!(
                    "CPU {c} runs task {t} in state {:?}",
                    self.tasks[t as usize].state
                ));
            }
        }
        if let Some(x) = self.scx.as_deref().filter(|x| !x.switched_back) {
            // an ext task not running is in the BPF scheduler's hands or in a DSQ
            self.check_scx(x, &mut seen)?;
        }
        for (t, task) in self.tasks.iter().enumerate() {
            // runnable, running, or blocked but delayed (DELAY_DEQUEUE): on exactly one queue
            let queued = matches!(task.state, TaskState::Running | TaskState::Runnable)
                || task.se.sched_delayed;
            if queued != (seen[t] == 1) || seen[t] > 1 {
                return Err(format!(
                    "task {t} in state {:?} is on {} run queues",
                    task.state, seen[t]
                ));
            }
        }
        let overloaded = self.cpus.iter().filter(|c| c.nr_running() >= 2).count();
        if overloaded != self.nr_overloaded {
            return Err(format!(
                "overload count {} but {overloaded} CPUs have 2+ tasks",
                self.nr_overloaded
            ));
        }
        Ok(())
    }

    /// CPU time is conserved: every CPU's charged time (all symbols, idle included) equals now plus
    /// the kernel work already costed beyond now. Call after `flush_accounting`.
    pub fn check_cpu_time(&self) -> Result<(), String> {
        for c in 0..self.cpus.len() {
            let (charged, expected) = (self.cpu_time_ns(c), self.now + self.overshoot_ns(c));
            if charged != expected {
                let exec = &self.cpus[c].exec;
                return Err(format!(
                    "CPU {c}: charged {charged} ns, expected {expected} at t={} ({:?}, since {}, cursor {}, request {:?})",
                    self.now,
                    exec.mode,
                    exec.since,
                    exec.cursor,
                    exec.request_debug()
                ));
            }
        }
        Ok(())
    }

    /// Time a CPU has charged beyond now (kernel work already costed past the end of the run).
    pub fn overshoot_ns(&self, c: usize) -> u64 {
        let cpu = &self.cpus[c];
        let end = if cpu.exec.mode == Mode::Kernel {
            // a request in flight has its wait charged when it is served
            cpu.exec.charged_until().unwrap_or(cpu.exec.cursor)
        } else {
            cpu.exec.since
        };
        end.saturating_sub(self.now)
    }
}
