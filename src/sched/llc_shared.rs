//! `sd_llc_shared` (include/linux/sched/topology.h): one `struct sched_domain_shared` per LLC,
//! a single cache line holding `ref`, `nr_busy_cpus`, `has_idle_cores` and `nr_idle_scan`. The
//! line is made with the nohz state (whose kick reads and idle entry/exit update `nr_busy_cpus`);
//! this module prices the other two fields on that same line: every wakeup that scans reads
//! `has_idle_cores` (SMT) and `nr_idle_scan`, idle entry reads and sets `has_idle_cores`, a
//! failed idle-core scan clears it, LLC balancing writes `nr_idle_scan` when it changes.

use super::*;
use crate::coherence::{HIT_NS, Op};

/// Field indices of the line: `nr_busy_cpus` (offset 4), `has_idle_cores` (8), `nr_idle_scan`
/// (12); `ref` (0) is only touched when domains are built.
pub(super) const NR_BUSY_CPUS: usize = 0;
pub(super) const HAS_IDLE_CORES: usize = 1;
pub(super) const NR_IDLE_SCAN: usize = 2;

/// The line's fields for `Coherence::add_line`.
pub(super) const FIELDS: &[(u32, &str)] = &[
    (4, "nr_busy_cpus"),
    (8, "has_idle_cores"),
    (12, "nr_idle_scan"),
];

impl Engine {
    /// READ_ONCE of `field` of `llc`'s line by `exec`, issued at now. Returns the stall, for the
    /// caller to charge.
    pub(super) fn llc_shared_load(&mut self, exec: usize, llc: usize, field: usize) -> u64 {
        let id = self.nohz.llc_shared_lines[llc];
        if self.lines.load_hit(id, exec, field) {
            return HIT_NS;
        }
        let a = self
            .lines
            .access(&self.topo, id, exec, Op::Load, field, self.now);
        a.done - self.now
    }

    /// WRITE_ONCE of `field` by `exec`: the store retires into `exec`'s store buffer and takes the
    /// line for ownership when it commits (the next reader in the LLC misses on it); the writer
    /// goes on. Returns the wait for a store-buffer entry (nil unless the buffer is full).
    pub(super) fn llc_shared_store(
        &mut self,
        exec: usize,
        llc: usize,
        field: usize,
        sym: Sym,
    ) -> u64 {
        let id = self.nohz.llc_shared_lines[llc];
        self.buffered_store(exec, id, field, sym)
    }

    /// set_idle_cores(cpu, false) after a failed idle-core scan. Returns the store's wait.
    pub(super) fn clear_idle_cores(&mut self, exec: usize, llc: usize) -> u64 {
        self.llc_has_idle_cores[llc] = false;
        self.llc_shared_store(exec, llc, HAS_IDLE_CORES, Sym::SelectIdleSibling)
    }

    /// __update_idle_core() at idle entry (SMT only): test_idle_cores() reads the line; unless
    /// the hint is already set, a CPU whose SMT siblings are all idle sets it (set_idle_cores).
    /// Returns the read's stall (and the store's wait).
    pub(super) fn update_idle_core(&mut self, c: usize) -> u64 {
        if self.topo.spec.smt <= 1 {
            return 0; // sched_smt_present is off
        }
        let llc = self.topo.cpus[c].llc as usize;
        let mut ns = self.llc_shared_load(c, llc, HAS_IDLE_CORES);
        if !self.llc_has_idle_cores[llc]
            && self.topo.smt_siblings(c).all(|s| self.cpus[s].is_idle())
        {
            ns += self.llc_shared_store(c, llc, HAS_IDLE_CORES, Sym::Schedule);
            self.llc_has_idle_cores[llc] = true;
        }
        ns
    }

    /// update_idle_cpu_scan()'s store: READ_ONCE(nr_idle_scan), written only when it changes.
    /// Returns the read's stall (and the store's wait).
    pub(super) fn set_nr_idle_scan(&mut self, exec: usize, llc: usize, y: u32) -> u64 {
        let mut ns = self.llc_shared_load(exec, llc, NR_IDLE_SCAN);
        if self.llc_nr_idle_scan[llc] != y {
            ns += self.llc_shared_store(exec, llc, NR_IDLE_SCAN, Sym::UpdateSdLbStats);
            self.llc_nr_idle_scan[llc] = y;
        }
        ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::scenario::Experiment;

    fn engine(cores: u32, workload: &str, threads: Option<u32>) -> Engine {
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.overrides.sockets = Some(1);
        e.machine.overrides.cores_per_socket = Some(cores);
        e.machine.overrides.nodes_per_socket = Some(1);
        e.machine.overrides.smt = Some(2);
        e.workload.name = workload.into();
        if let Some(n) = threads {
            e.workload
                .knobs
                .insert("threads".into(), n.to_string().into());
        }
        crate::sched::test_engine(&e)
    }

    /// One line per LLC carries the three fields; the nohz kick's nr_busy_cpus is on it.
    #[test]
    fn the_three_fields_share_one_line_and_every_writer_writes_it() {
        let mut e = engine(8, "spin", Some(1));
        let id = e.nohz.llc_shared_lines[0];
        let names: Vec<_> = e.lines.fields(id).iter().map(|f| f.field).collect();
        assert_eq!(names, ["nr_busy_cpus", "has_idle_cores", "nr_idle_scan"]);
        let stores = |e: &Engine, f: usize| e.lines.fields(id)[f].stores;
        // idle entry: a CPU whose siblings are idle sets the hint, once
        let c = (0..e.topo.nr_cpus())
            .find(|&c| e.topo.smt_siblings(c).all(|s| e.cpus[s].is_idle()))
            .expect("an idle core");
        e.llc_has_idle_cores[0] = false;
        assert!(e.update_idle_core(c) > 0);
        assert!(e.llc_has_idle_cores[0]);
        assert_eq!(stores(&e, HAS_IDLE_CORES), 1);
        e.update_idle_core(c);
        assert_eq!(stores(&e, HAS_IDLE_CORES), 1, "already set: read only");
        assert!(e.lines.fields(id)[HAS_IDLE_CORES].loads >= 1);
        // a failed idle-core scan clears it
        e.clear_idle_cores(c ^ 1, 0);
        assert_eq!(stores(&e, HAS_IDLE_CORES), 2);
        // LLC balancing writes nr_idle_scan only when it changes
        let y = e.llc_nr_idle_scan[0];
        e.set_nr_idle_scan(0, 0, y);
        assert_eq!(stores(&e, NR_IDLE_SCAN), 0);
        e.set_nr_idle_scan(0, 0, y / 2);
        assert_eq!(
            (stores(&e, NR_IDLE_SCAN), e.llc_nr_idle_scan[0]),
            (1, y / 2)
        );
    }

    /// Wakers that get past select_idle_sibling's first checks read has_idle_cores and
    /// nr_idle_scan on the same line the idle entries write.
    #[test]
    fn wakeups_read_the_line() {
        let mut e = engine(4, "schbench", None);
        e.run_until(20_000_000, u64::MAX);
        let id = e.nohz.llc_shared_lines[0];
        let f = &e.lines.fields(id);
        assert!(
            f[HAS_IDLE_CORES].loads > 0 && f[NR_IDLE_SCAN].loads > 0,
            "{f:?}"
        );
        assert!(f[HAS_IDLE_CORES].stores > 0, "{f:?}");
        assert!(e.lines.stats(id).hitm_local > 0);
    }
}
