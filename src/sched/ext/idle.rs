//! The built-in idle tracking's kfuncs (kernel/sched/ext_idle.c, v6.18) beyond
//! `scx_bpf_select_cpu_dfl`: the idle and idle-SMT cpumasks a program reads (global, or per NUMA
//! node with `SCX_OPS_BUILTIN_IDLE_PER_NODE`), `scx_bpf_select_cpu_and`, `scx_bpf_pick_idle_cpu`
//! / `_any_cpu` and their `_node` forms, the online and possible masks, and the node a CPU is in.
//! The masks are regions the core lends read-only (`bpf::cpumask`), refreshed from the idle state
//! each time a program asks for one, as the kernel's are live.
//!
//! These are methods of `kfuncs::KState` written here (an `impl` split by mechanism, as the
//! engine's is across `sched/`), so this file and `kfuncs.rs` name each other's types.

use super::internal::{SCX_EXIT_ERROR, Shared, Touch};
use super::kfuncs::KState;
use super::vmlinux::kf;
use crate::bpf::cpumask;
use crate::bpf::memory::Memory;
use crate::bpf::vm::CallError;

/// `SCX_PICK_IDLE_CORE` (ext_internal.h `enum scx_pick_idle_cpu_flags`).
pub const SCX_PICK_IDLE_CORE: u64 = 1;
/// `SCX_PICK_IDLE_IN_NODE`.
pub const SCX_PICK_IDLE_IN_NODE: u64 = 2;
const EBUSY: i64 = -16;

/// What the core knows of the machine's layout: each CPU's NUMA node, its LLC (the id the
/// kernel's `sd_llc_id` holds: the LLC's first CPU) and the LLC's size, and its SMT core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuTopo {
    pub node: Vec<u32>,
    pub llc_id: Vec<u32>,
    pub llc_size: Vec<u32>,
    pub core: Vec<u32>,
}

impl CpuTopo {
    /// One node, one LLC, no SMT: what a core made without a machine sees.
    pub fn flat(nr_cpus: u32) -> Self {
        let n = nr_cpus as usize;
        CpuTopo {
            node: vec![0; n],
            llc_id: vec![0; n],
            llc_size: vec![nr_cpus; n],
            core: (0..nr_cpus).collect(),
        }
    }
    pub fn nr_nodes(&self) -> u32 {
        self.node.iter().max().map_or(1, |m| m + 1)
    }
    fn smt(&self) -> bool {
        let mut c = self.core.clone();
        c.sort_unstable();
        c.dedup();
        c.len() < self.core.len()
    }
}

/// Which lent mask (the key of `KState::lent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lent {
    Idle(Option<u32>),
    IdleSmt(Option<u32>),
    Online,
}

impl KState {
    /// The idle-mask line a change of `cpu`'s bit touches: the node's with per-node tracking.
    pub fn idle_shared(&self, cpu: u32) -> Shared {
        if self.per_node_idle {
            Shared::IdleMaskNode(self.topo.node.get(cpu as usize).copied().unwrap_or(0))
        } else {
            Shared::IdleMask
        }
    }

    /// CPUs whose whole SMT core is idle (`idle_masks.smt`).
    fn idle_smt(&self) -> Vec<bool> {
        let n = self.nr_cpus as usize;
        (0..n)
            .map(|c| {
                (0..n)
                    .filter(|&d| self.topo.core[d] == self.topo.core[c])
                    .all(|d| self.idle[d])
            })
            .collect()
    }

    fn in_node(&self, node: Option<u32>) -> impl Fn(usize) -> bool + '_ {
        move |c| node.is_none_or(|n| self.topo.node[c] == n)
    }

    /// The address of lent mask `which`, with its bits refreshed.
    fn lend(&mut self, mem: &mut Memory, which: Lent) -> u64 {
        let n = self.nr_cpus as usize;
        let bits: Vec<bool> = match which {
            Lent::Online => vec![true; n],
            Lent::Idle(node) => {
                let f = self.in_node(node);
                (0..n).map(|c| self.idle[c] && f(c)).collect()
            }
            Lent::IdleSmt(node) => {
                let smt = if self.topo.smt() {
                    self.idle_smt()
                } else {
                    self.idle.clone()
                };
                let f = self.in_node(node);
                (0..n).map(|c| smt[c] && f(c)).collect()
            }
        };
        let a = match self.lent.get(&which) {
            Some(&a) => a,
            None => {
                let a = self.masks.lend(mem, &format!("{which:?} cpumask"), &bits);
                self.lent.insert(which, a);
                a
            }
        };
        let _ = cpumask::poke(mem, a, &bits);
        a
    }

    /// `validate_node`: a node kfunc needs per-node idle tracking and a valid node.
    fn node_ok(&mut self, what: &str, node: u64) -> Option<u32> {
        if !self.per_node_idle {
            self.exit(
                SCX_EXIT_ERROR,
                0,
                format!("{what}: per-node idle tracking is disabled"),
            );
            return None;
        }
        let node = node as i64;
        if node < 0 || node >= self.topo.nr_nodes() as i64 {
            self.exit(SCX_EXIT_ERROR, 0, format!("{what}: invalid node {node}"));
            return None;
        }
        Some(node as u32)
    }

    /// `scx_pick_idle_cpu`: the first idle CPU of `allowed` (in `node` if given; with
    /// SCX_PICK_IDLE_CORE, one whose whole core is idle), claimed; None if there is none.
    fn pick_idle(&mut self, allowed: &[bool], node: Option<u32>, flags: u64) -> Option<u32> {
        let shared = match node {
            Some(n) if self.per_node_idle => Shared::IdleMaskNode(n),
            _ => Shared::IdleMask,
        };
        self.touched.push((shared, Touch::Load));
        let smt = self.idle_smt();
        let pick = {
            let f = self.in_node(node);
            (0..self.nr_cpus as usize).find(|&c| {
                allowed.get(c).copied().unwrap_or(false)
                    && f(c)
                    && self.idle[c]
                    && (flags & SCX_PICK_IDLE_CORE == 0 || smt[c])
            })
        };
        pick.map(|c| {
            self.idle[c] = false;
            self.touched
                .push((self.idle_shared(c as u32), Touch::Atomic));
            c as u32
        })
    }

    fn mask_arg(&self, mem: &Memory, a: u64) -> Result<Vec<bool>, CallError> {
        Ok(cpumask::read(mem, a, self.nr_cpus)?)
    }

    /// Runs one of ext_idle.c's kfuncs; None if `id` is not one of them.
    pub fn idle_kfunc(
        &mut self,
        id: i32,
        a: [u64; 5],
        mem: &mut Memory,
    ) -> Result<Option<u64>, CallError> {
        let ebusy = EBUSY as u64;
        Ok(Some(match id {
            kf::GET_IDLE_CPUMASK | kf::GET_IDLE_SMTMASK => {
                if self.per_node_idle {
                    // v6.18 answers cpu_none_mask and errors: the global masks do not exist
                    self.exit(
                        SCX_EXIT_ERROR,
                        0,
                        "SCX_OPS_BUILTIN_IDLE_PER_NODE enabled: use the _node idle masks".into(),
                    );
                    return Ok(Some(0));
                }
                self.touched.push((Shared::IdleMask, Touch::Load));
                let w = if id == kf::GET_IDLE_CPUMASK {
                    Lent::Idle(None)
                } else {
                    Lent::IdleSmt(None)
                };
                self.lend(mem, w)
            }
            kf::GET_IDLE_CPUMASK_NODE | kf::GET_IDLE_SMTMASK_NODE => {
                let what = if id == kf::GET_IDLE_CPUMASK_NODE {
                    "scx_bpf_get_idle_cpumask_node"
                } else {
                    "scx_bpf_get_idle_smtmask_node"
                };
                let Some(n) = self.node_ok(what, a[0]) else {
                    return Ok(Some(0));
                };
                self.touched.push((Shared::IdleMaskNode(n), Touch::Load));
                let w = if id == kf::GET_IDLE_CPUMASK_NODE {
                    Lent::Idle(Some(n))
                } else {
                    Lent::IdleSmt(Some(n))
                };
                self.lend(mem, w)
            }
            kf::GET_ONLINE_CPUMASK | kf::GET_POSSIBLE_CPUMASK => self.lend(mem, Lent::Online),
            // the lent masks are the core's: putting them back releases nothing
            kf::PUT_IDLE_CPUMASK | kf::PUT_CPUMASK => 0,
            kf::CPU_NODE => match self.topo.node.get(a[0] as usize) {
                Some(&n) => n as u64,
                None => -1i64 as u64, // NUMA_NO_NODE
            },
            kf::NR_NODE_IDS => self.topo.nr_nodes() as u64,
            kf::SELECT_CPU_AND => {
                use super::internal::OpCtx;
                if !self.allowed_ctx(
                    "scx_bpf_select_cpu_and",
                    &[OpCtx::SelectCpu, OpCtx::Enqueue, OpCtx::Unlocked],
                ) {
                    return Ok(Some(ebusy));
                }
                let allowed = self.mask_arg(mem, a[3])?;
                let prev = a[1] as u32;
                if (prev as usize) < allowed.len()
                    && allowed[prev as usize]
                    && self.idle[prev as usize]
                    && a[4] & SCX_PICK_IDLE_CORE == 0
                {
                    self.touched.push((self.idle_shared(prev), Touch::Load));
                    self.idle[prev as usize] = false;
                    self.touched.push((self.idle_shared(prev), Touch::Atomic));
                    return Ok(Some(prev as u64));
                }
                // the previous CPU's node first, then anywhere (unless IN_NODE)
                let node = self.topo.node.get(prev as usize).copied();
                match self.pick_idle(&allowed, node, a[4]) {
                    Some(c) => c as u64,
                    None if a[4] & SCX_PICK_IDLE_IN_NODE != 0 => ebusy,
                    None => self
                        .pick_idle(&allowed, None, a[4])
                        .map_or(ebusy, |c| c as u64),
                }
            }
            kf::PICK_IDLE_CPU | kf::PICK_ANY_CPU => {
                if self.per_node_idle {
                    self.exit(
                        SCX_EXIT_ERROR,
                        0,
                        "per-node idle tracking is enabled: use the _node pick kfuncs".into(),
                    );
                    return Ok(Some(ebusy));
                }
                let allowed = self.mask_arg(mem, a[0])?;
                match self.pick_idle(&allowed, None, a[1]) {
                    Some(c) => c as u64,
                    None if id == kf::PICK_ANY_CPU => any_of(&allowed),
                    None => ebusy,
                }
            }
            kf::PICK_IDLE_CPU_NODE | kf::PICK_ANY_CPU_NODE => {
                let Some(n) = self.node_ok("scx_bpf_pick_idle_cpu_node", a[1]) else {
                    return Ok(Some(ebusy));
                };
                let allowed = self.mask_arg(mem, a[0])?;
                let found = self.pick_idle(&allowed, Some(n), a[2]).or_else(|| {
                    (a[2] & SCX_PICK_IDLE_IN_NODE == 0)
                        .then(|| self.pick_idle(&allowed, None, a[2]))
                        .flatten()
                });
                match found {
                    Some(c) => c as u64,
                    None if id == kf::PICK_ANY_CPU_NODE => any_of(&allowed),
                    None => ebusy,
                }
            }
            kf::CPUPERF_SET => {
                if let Some(p) = self.cpuperf.get_mut(a[0] as usize) {
                    *p = (a[1] as u32).min(1024);
                }
                0
            }
            kf::CPUPERF_CUR => self.cpuperf.get(a[0] as usize).copied().unwrap_or(0) as u64,
            // SCHED_CAPACITY_SCALE: every CPU of these machines is a full-capacity one
            kf::CPUPERF_CAP => 1024,
            _ => return Ok(None),
        }))
    }
}

/// `cpumask_any_distribute`'s answer when nothing is idle: the first allowed CPU (or -EBUSY).
fn any_of(allowed: &[bool]) -> u64 {
    allowed
        .iter()
        .position(|&b| b)
        .map_or(EBUSY as u64, |c| c as u64)
}
