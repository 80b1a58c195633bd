//! The report's `scx` section: which sched_ext scheduler ran a side, what it was asked and did
//! (ops calls, instructions, inserts per DSQ, kicks) and, if it exited, when and why.

use crate::sched::Engine;
use crate::sched::ext::dsq::{SCX_DSQ_GLOBAL, SCX_DSQ_LOCAL_ON};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScxReport {
    /// The object's file name.
    pub file: String,
    /// `sched_ext_ops.name`.
    pub ops_name: String,
    /// Calls of each op over the whole run.
    pub op_calls: BTreeMap<String, u64>,
    /// BPF instructions run, and the share of CPU time their cost took (0.4 ns each), %.
    pub insns: u64,
    pub bpf_time_pct: f64,
    /// Tasks inserted into each DSQ: `global`, `local` (all CPUs' local DSQs), user DSQs by id.
    pub dispatched: BTreeMap<String, u64>,
    /// `scx_bpf_kick_cpu` kicks, and those that sent an IPI to another CPU.
    pub kicks: u64,
    pub kick_ipis: u64,
    /// Set when the scheduler was disabled: the tasks ran on the fair class from then on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ScxExit>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScxExit {
    /// `enum scx_exit_kind` and its reason ("scx_bpf_error", "runnable task stall", ...).
    pub kind: u32,
    pub reason: String,
    pub msg: String,
    /// Simulated time of the exit, s.
    pub at_s: f64,
}

/// The `scx` section of `e`'s report, if a BPF scheduler was attached.
pub fn scx_report(e: &Engine, file: &str) -> Option<ScxReport> {
    let x = e.ext_class()?;
    let k = &x.sched.k;
    let mut dispatched: BTreeMap<String, u64> = BTreeMap::new();
    for (&id, &n) in &k.dispatched {
        let name = if id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON {
            "local".to_string()
        } else if id == SCX_DSQ_GLOBAL {
            "global".to_string()
        } else {
            format!("{id:#x}")
        };
        *dispatched.entry(name).or_default() += n;
    }
    let cpu_ns = e.now.max(1) as f64 * e.topo.nr_cpus() as f64;
    let bpf_ns = k.insns as f64 * crate::sched::BPF_INSN_PS as f64 / 1000.0;
    Some(ScxReport {
        file: file.to_string(),
        ops_name: k.name.clone(),
        op_calls: (k.op_calls.iter())
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        insns: k.insns,
        bpf_time_pct: bpf_ns * 100.0 / cpu_ns,
        dispatched,
        kicks: x.kicks,
        kick_ipis: x.kick_ipis,
        exit: k.exit.as_ref().map(|ei| ScxExit {
            kind: ei.kind,
            reason: ei.reason.clone(),
            msg: ei.msg.clone(),
            at_s: ei.at_ns as f64 / 1e9,
        }),
    })
}
