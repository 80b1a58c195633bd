//! Steady state: the warm-up a machine needs before its balancing has settled into its rhythm
//! (`auto_warmup`, docs/MODEL.md, "Steady state"). The test that flags a series still drifting
//! over the measured window is the report's (`report::settled`).

use crate::error::Invalid;
use crate::experiment::scenario::{Experiment, Side};
use crate::machine::domains::SchedDomains;

/// How much of a run is warm-up: a fixed number of simulated seconds, or `auto_warmup`'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    Seconds(f64),
    Auto,
}

impl Warmup {
    /// Sets `exp.warmup` (seconds) for this rule, on an experiment whose other fields are final.
    pub fn apply(self, exp: &mut Experiment) -> Result<(), Invalid> {
        exp.warmup = match self {
            Warmup::Seconds(s) => s,
            Warmup::Auto => auto_warmup(exp)?,
        };
        Ok(())
    }
}

impl std::fmt::Display for Warmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warmup::Seconds(s) => write!(f, "{s}"),
            Warmup::Auto => f.write_str("auto"),
        }
    }
}

/// The warm-up docs/MODEL.md recommends: until every sched domain of every CPU, the widest NUMA
/// level included, has come due once at its initial interval (`balance_interval` starts at
/// `min_interval` = the domain's weight in ms, `sd_init`), i.e. the largest `min_interval` on the
/// machine, at most half the run so that half is measured. Seconds, whole ms.
pub fn auto_warmup(exp: &Experiment) -> Result<f64, Invalid> {
    let spec = exp.run_spec(Side::A)?;
    let sd = SchedDomains::build(&spec.topo, spec.patches.snc3_distance_fix);
    let ms = (0..spec.topo.nr_cpus())
        .flat_map(|c| sd.of(c).map(|d| d.min_interval))
        .max()
        .unwrap_or(0) as f64;
    let half_ms = (exp.seconds * 1000.0 / 2.0).floor();
    Ok(ms.min(half_ms) / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_warmup_is_the_widest_interval_capped_at_half_the_run() {
        let mut e = Experiment::default(); // gnr-2s-snc3, 512 CPUs, 1 s
        assert_eq!(auto_warmup(&e).unwrap(), 0.5);
        e.seconds = 2.0;
        assert_eq!(auto_warmup(&e).unwrap(), 0.512);
        e.machine.preset = "milan-2s".into(); // 256 CPUs
        assert_eq!(auto_warmup(&e).unwrap(), 0.256);
    }

    #[test]
    fn warmup_rules_set_the_experiments_seconds() {
        let mut e = Experiment::default();
        Warmup::Auto.apply(&mut e).unwrap();
        assert_eq!(e.warmup, 0.5);
        Warmup::Seconds(0.1).apply(&mut e).unwrap();
        assert_eq!(e.warmup, 0.1);
    }
}
