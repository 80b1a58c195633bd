//! task_cache_work(), the per-process LLC scan queued by task_tick_cache() and run on the way
//! back to user space: RFC v4's form (scan the nodes of the preferred and current CPUs, 25/28's
//! single-thread clear) and 7.2's (one scanner per epoch through sc_stat.next_scan, the
//! invalid_llc_nr() gate, every online CPU scanned, update_avg_scale()).

use super::merged;
use super::*;

impl Engine {
    /// task_cache_work(): scan the LLCs of this CPU's node, sum occupancy per LLC, switch the
    /// preferred LLC only past 2x hysteresis, and refresh nr_running_avg.
    pub(super) fn task_cache_work(
        &mut self,
        c: usize,
        cas: &mut CacheAware,
        mm: u32,
        task: TaskId,
        phase: WorkPhase,
    ) -> Option<CasJob> {
        let jiffies = self.jiffies();
        let phase = match phase {
            WorkPhase::ClearCpuSingle => {
                let m = &mut cas.mms[mm as usize];
                self.kaccess(c, m.line, Op::Store, F_CPU, Sym::TaskCacheWork);
                self.metrics.count(Counter::MmSchedCpuStores);
                if m.mm_sched_cpu == -1 {
                    self.metrics.count(Counter::MmSchedCpuRedundantStores);
                }
                m.mm_sched_cpu = -1;
                return None;
            }
            WorkPhase::Scan
                if self.patches.cas_skip_many_threads && cas.mms[mm as usize].nr_threads <= 1 =>
            {
                // work->next = work; then 25/28:
                // if (get_nr_threads(p) <= 1) { mm->mm_sched_cpu = -1; return; }
                cas.work_queued[task as usize] = false;
                WorkPhase::ClearCpuSingle
            }
            WorkPhase::Start => {
                cas.work_queued[task as usize] = false;
                if !self.patches.merged.sched_cache_next_scan {
                    WorkPhase::Gate
                } else {
                    let m = &cas.mms[mm as usize];
                    self.kaccess(c, m.line, Op::Load, merged::F_NEXT_SCAN, Sym::TaskCacheWork);
                    if jiffies < m.next_scan {
                        return None;
                    }
                    WorkPhase::ClaimScan { seen: m.next_scan }
                }
            }
            WorkPhase::ClaimScan { seen } => {
                let period = cas.epoch_period;
                let m = &mut cas.mms[mm as usize];
                self.kaccess(
                    c,
                    m.line,
                    Op::Atomic,
                    merged::F_NEXT_SCAN,
                    Sym::TaskCacheWork,
                );
                // only 1 thread is allowed to scan: another claimed this period first
                if m.next_scan != seen {
                    return None;
                }
                m.next_scan = jiffies + period;
                WorkPhase::Gate
            }
            WorkPhase::Gate => {
                let m = &cas.mms[mm as usize];
                let l = self.patches.llc;
                let invalid = m.nr_threads <= 1
                    || (merged::invalid_llc_nr_loads(&l) && {
                        self.kaccess(c, m.avg_line, Op::Load, m.avg_field, Sym::InvalidLlcNr);
                        let smt = self.topo.spec.smt as u64;
                        merged::invalid_llc_nr(
                            &l,
                            m.nr_running_avg,
                            smt,
                            self.sd.llc_size[c] as u64,
                        )
                    });
                if invalid {
                    WorkPhase::GateTestCpu
                } else {
                    WorkPhase::Scan
                }
            }
            WorkPhase::GateTestCpu => {
                let m = &cas.mms[mm as usize];
                self.kaccess(c, m.line, Op::Load, F_CPU, Sym::TaskCacheWork);
                if m.mm_sched_cpu == -1 {
                    return None;
                }
                WorkPhase::GateClearCpu
            }
            WorkPhase::GateClearCpu => {
                let m = &mut cas.mms[mm as usize];
                self.kaccess(c, m.line, Op::Store, F_CPU, Sym::TaskCacheWork);
                self.metrics.count(Counter::MmSchedCpuStores);
                m.mm_sched_cpu = -1;
                return None;
            }
            WorkPhase::Scan
                if self.rss_check_on()
                    && exceed_llc_capacity(cas.mms[mm as usize].rss_bytes, self.l3_bytes()) =>
            {
                // 26/28, after 25/28's single-thread clear: "Do not check exceed_llc_nr()
                // because the active number of threads needs to been updated anyway.";
                // if (exceed_llc_capacity(mm, curr_cpu)) return; (no scan, no nr_running_avg)
                cas.work_queued[task as usize] = false;
                return None;
            }
            WorkPhase::Scan => {
                let merged_form = self.patches.merged.sched_cache;
                if merged_form {
                    // READ_ONCE(mm->sc_stat.cpu) of the scan (the line stays shared across it)
                    let m = &cas.mms[mm as usize];
                    self.kaccess(c, m.line, Op::Load, F_CPU, Sym::TaskCacheWork);
                }
                let node = self.topo.cpus[c].node as usize;
                let pref = cas.mms[mm as usize].mm_sched_cpu;
                // scan mask: node(mm_sched_cpu) ∪ node(this CPU) (NUMA balancing off)
                let mut nodes = vec![node];
                if pref >= 0 {
                    let pn = self.topo.cpus[pref as usize].node as usize;
                    if pn != node {
                        nodes.push(pn);
                    }
                }
                let (mut best, mut best_cpu, mut current, mut nr_running) =
                    (0u64, -1i32, 0u64, 0u64);
                let mut cost = 0u64;
                let cur_llc = if pref >= 0 {
                    self.topo.cpus[pref as usize].llc as i32
                } else {
                    -1
                };
                for llc in 0..self.topo.nr_llcs {
                    let first = self.llc_list[llc][0] as usize;
                    // 7.2 get_scan_cpumasks(): every online CPU with NUMA balancing off
                    if !merged_form && !nodes.contains(&(self.topo.cpus[first].node as usize)) {
                        continue;
                    }
                    let (mut a_occ, mut m_occ, mut m_cpu) = (0u64, 0u64, first as i32);
                    for &i in &self.llc_list[llc] {
                        let i = i as usize;
                        cost += SCAN_LINES_PER_CPU * self.topo.xfer_ns(c, i) as u64;
                        let occ = cas.fraction(mm as usize, i, jiffies);
                        a_occ += occ;
                        if occ > m_occ {
                            m_occ = occ;
                            m_cpu = i as i32;
                        }
                        if self.cpus[i]
                            .rq
                            .curr
                            .is_some_and(|t| self.tasks[t as usize].process == mm)
                        {
                            nr_running += 1;
                        }
                    }
                    if a_occ > best {
                        best = a_occ;
                        best_cpu = m_cpu;
                    }
                    if llc as i32 == cur_llc {
                        current = a_occ;
                    }
                    for &i in &self.llc_list[llc] {
                        cas.mms[mm as usize].pcpu[i as usize].occ = a_occ;
                    }
                }
                self.kcharge(c, Sym::TaskCacheWork, cost / self.assume.stats_mlp);
                let switch = best_cpu >= 0 && CacheAware::should_switch(best, current);
                cas.work_queued[task as usize] = false;
                let m = &mut cas.mms[mm as usize];
                m.nr_running_avg = if merged_form {
                    merged::update_avg_scale(
                        m.nr_running_avg,
                        nr_running,
                        self.sd.llc_size[c] as u64,
                    )
                } else {
                    update_avg(m.nr_running_avg, nr_running)
                };
                if switch {
                    m.mm_sched_cpu = best_cpu;
                    WorkPhase::StoreCpu
                } else {
                    WorkPhase::StoreAvg
                }
            }
            WorkPhase::StoreCpu => {
                self.kaccess(
                    c,
                    cas.mms[mm as usize].line,
                    Op::Store,
                    F_CPU,
                    Sym::TaskCacheWork,
                );
                self.metrics.count(Counter::MmSchedCpuStores);
                WorkPhase::StoreAvg
            }
            WorkPhase::StoreAvg => {
                let m = &cas.mms[mm as usize];
                self.kaccess(c, m.avg_line, Op::Store, m.avg_field, Sym::TaskCacheWork);
                return None;
            }
        };
        Some(CasJob::Work { mm, task, phase })
    }
}
