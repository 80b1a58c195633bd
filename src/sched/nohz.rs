//! NOHZ idle state and its kick. A CPU whose tick is stopped enters `nohz.idle_cpus_mask` (and,
//! before 5d86d542f68f, `nohz.nr_cpus`) in nohz_balance_enter_idle and leaves them from its first
//! busy tick (nohz_balance_exit_idle). A busy tick reads the `nohz` struct in nohz_balancer_kick and
//! may kick an idle CPU to run the idle load balancer (`step_ilb` in `balance.rs`).
//!
//! Layout, as the kernel's configuration lays out the global `struct nohz` (fair.c, cacheline
//! aligned) on a machine built with NR_CPUS = 8192: the mask's bits take one line per 512 CPUs,
//! separate from the struct's other fields either way. With CONFIG_CPUMASK_OFFSTACK=y (distribution
//! kernels) the struct holds a pointer to separately allocated bits, which every mask update loads
//! first; without it the 1 KiB of bits sit inline and the other fields start at offset 0x400.

use super::*;
use crate::coherence::{Coherence, Op};

/// CPUs per line of mask bits (64 bytes of bits).
const CPUS_PER_MASK_LINE: usize = 512;

/// The global `struct nohz`: its cache lines, the fields laid out in them, and the values the
/// model needs (the mask's bits, next_balance, ilb_cpu_last).
pub(crate) struct NohzState {
    /// The line holding nr_cpus, next_balance (and, off-stack, the mask pointer).
    line: LineId,
    /// idle_cpus_mask's bits, one line per 512 CPUs.
    mask_lines: Vec<LineId>,
    /// Field indexes in `line` (`None`: the field is not there in this configuration / patch set).
    f_mask_ptr: Option<usize>,
    f_nr_cpus: Option<usize>,
    f_next_balance: usize,
    f_ilb_cpu_last: Option<usize>,
    /// The mask's bits, and how many are set (what nr_cpus counts, or cpumask_empty tests).
    pub(super) idle: Vec<bool>,
    nr_idle: usize,
    /// nohz.next_balance (jiffies).
    pub(super) next_balance: u64,
    /// nohz.ilb_cpu_last (patch 2/2 of "Reduce nohz_idle_balance CPU overhead").
    ilb_cpu_last: usize,
    /// Per LLC: the `sd_llc_shared` line and its `nr_busy_cpus` (CPUs whose tick is not stopped).
    llc_shared_lines: Vec<LineId>,
    nr_busy_cpus: Vec<u32>,
    /// Per CPU, `sd_llc->nohz_idle`: already subtracted from its LLC's nr_busy_cpus.
    sd_nohz_idle: Vec<bool>,
}

impl NohzState {
    pub(super) fn new(topo: &Topology, lines: &mut Coherence, p: &Patches) -> Self {
        let (nr_cpus, offstack) = (topo.nr_cpus(), topo.spec.cpumask_offstack);
        // field offsets: off-stack, relative to the struct; inline, relative to its line at 0x400
        let mut fields: Vec<(u32, &'static str)> = Vec::new();
        let mut add = |off: u32, name: &'static str| {
            fields.push((off, name));
            fields.len() - 1
        };
        let f_mask_ptr = offstack.then(|| add(0, "nohz.idle_cpus_mask (pointer)"));
        let base = if offstack { 8 } else { 0 };
        let f_nr_cpus = (!p.nohz_no_nr_cpus).then(|| add(base, "nohz.nr_cpus"));
        let f_ilb_cpu_last = p
            .nohz_ilb_round_robin
            .then(|| add(base + 12, "nohz.ilb_cpu_last"));
        let f_next_balance = add(base + 16, "nohz.next_balance");
        let (name, mask_name) = if offstack {
            ("nohz", "nohz.idle_cpus_mask bits")
        } else {
            ("nohz+0x400", "nohz.idle_cpus_mask bits (inline)")
        };
        let line = lines.add_line(name, &fields);
        let mask_lines = (0..nr_cpus.div_ceil(CPUS_PER_MASK_LINE))
            .map(|i| {
                let first = i * CPUS_PER_MASK_LINE;
                let last = (first + CPUS_PER_MASK_LINE).min(nr_cpus) - 1;
                lines.add_line(format!("{mask_name} {first}-{last}"), &[(0, "bits")])
            })
            .collect();
        let llc_shared_lines = (0..topo.nr_llcs)
            .map(|l| {
                let name = format!("sd_llc_shared(llc{l})");
                lines.add_line(name, &[(0, "nr_busy_cpus")])
            })
            .collect();
        // sd_init(): nr_busy_cpus starts at the LLC's weight
        let nr_busy_cpus = (0..topo.nr_llcs)
            .map(|l| topo.llc_cpus[l].weight() as u32)
            .collect();
        NohzState {
            line,
            llc_shared_lines,
            nr_busy_cpus,
            sd_nohz_idle: vec![false; nr_cpus],
            mask_lines,
            f_mask_ptr,
            f_nr_cpus,
            f_next_balance,
            f_ilb_cpu_last,
            idle: vec![false; nr_cpus],
            nr_idle: 0,
            next_balance: 0,
            ilb_cpu_last: 0,
        }
    }

    /// The first step of nohz_balance_enter_idle / exit_idle.
    pub(super) fn first_step(&self) -> NohzStep {
        if self.f_mask_ptr.is_some() {
            NohzStep::MaskPointer
        } else {
            NohzStep::MaskBit
        }
    }
}

/// The steps of nohz_balance_enter_idle / nohz_balance_exit_idle, one shared-line access each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NohzStep {
    /// Off-stack mask: load the pointer from the struct.
    MaskPointer,
    /// cpumask_set_cpu / cpumask_clear_cpu: a locked bit operation on the bits' line.
    MaskBit,
    /// atomic_inc / atomic_dec of nohz.nr_cpus (gone with `nohz-no-nr-cpus`).
    NrCpus,
    /// set_cpu_sd_state_idle / _busy: atomic_dec / atomic_inc of the LLC's nr_busy_cpus.
    NrBusyCpus,
}

/// nohz_balancer_kick(), run from a busy CPU's tick (v6.18 order; the checks for reduced capacity,
/// asym packing and misfit cannot fire on the model's equal-capacity CPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KickStep {
    /// v6.18: `atomic_read(&nohz.nr_cpus)`, then `time_before(now, nohz.next_balance)` (same line).
    /// `nohz-no-nr-cpus` (with its series): the time check first.
    ReadNohz,
    /// `nohz-no-nr-cpus`: `cpumask_empty(nohz.idle_cpus_mask)`.
    MaskEmpty,
    /// Kick when this CPU has two or more tasks; else read the LLC's nr_busy_cpus.
    NrRunning,
    /// `atomic_read(&sds->nr_busy_cpus) > 1`: kick.
    LlcBusy,
    /// kick_ilb(): `nohz.next_balance = jiffies + 1`, find_new_ilb(), the IPI.
    Kick,
}

impl Engine {
    /// tick_nohz_idle_stop_tick() at idle entry: the cpuidle governor stops the tick only when the
    /// predicted idle is longer than a tick; the CPU then enters the NOHZ idle state (the returned
    /// job, nohz_balance_enter_idle).
    pub(super) fn tick_nohz_idle_stop_tick(&mut self, c: usize) -> Option<Job> {
        if self.cpus[c].idle.pred_idle >= self.tick_ns && !self.cpus[c].tick.stopped {
            self.cpus[c].tick.stopped = true;
            // tick_nohz_stop_tick(): the timekeeper gives the duty up
            if self.tick_do_timer_cpu == Some(c as u32) {
                self.tick_do_timer_cpu = None;
            }
            return Some(Job::NohzEnter(self.nohz.first_step()));
        }
        None
    }

    /// tick_nohz_idle_exit(): a stopped tick restarts at the next tick boundary (plus this CPU's
    /// offset) when the CPU leaves idle.
    pub(super) fn tick_nohz_idle_restart_tick(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if cpu.tick.stopped {
            cpu.tick.stopped = false;
            cpu.tick.generation = cpu.tick.generation.wrapping_add(1);
            let next = (now / self.tick_ns + 1) * self.tick_ns + cpu.tick.offset;
            self.q.push(next, Ev::Tick(c as u32, cpu.tick.generation));
        }
    }

    /// nohz_balance_enter_idle / nohz_balance_exit_idle: the mask bit, then nr_cpus.
    pub(super) fn step_nohz(&mut self, c: usize, step: NohzStep, enter: bool) -> Option<NohzStep> {
        let sym = if enter {
            Sym::NohzBalanceEnter
        } else {
            Sym::NohzBalanceExit
        };
        if step != NohzStep::MaskPointer {
            self.drain_store_buffer(c, sym);
        }
        if self.must_wait(c) {
            return Some(step);
        }
        let n = &self.nohz;
        match step {
            NohzStep::MaskPointer => {
                let f = n.f_mask_ptr.expect("off-stack layout");
                self.kaccess(c, n.line, Op::Load, f, sym);
                Some(NohzStep::MaskBit)
            }
            NohzStep::MaskBit => {
                let line = n.mask_lines[c / CPUS_PER_MASK_LINE];
                let next = Some(
                    n.f_nr_cpus
                        .map_or(NohzStep::NrBusyCpus, |_| NohzStep::NrCpus),
                );
                self.kaccess(c, line, Op::Atomic, 0, sym);
                let nohz = &mut self.nohz;
                if nohz.idle[c] != enter {
                    nohz.nr_idle = if enter {
                        nohz.nr_idle + 1
                    } else {
                        nohz.nr_idle - 1
                    };
                }
                nohz.idle[c] = enter;
                self.cpus[c].idle.in_nohz_mask = enter;
                if enter {
                    self.cpus[c].rq.has_blocked_load = true;
                }
                next
            }
            NohzStep::NrCpus => {
                let f = n.f_nr_cpus.expect("nr_cpus present");
                self.kaccess(c, n.line, Op::Atomic, f, sym);
                Some(NohzStep::NrBusyCpus)
            }
            NohzStep::NrBusyCpus => {
                // set_cpu_sd_state_idle / _busy: only when sd->nohz_idle changes
                if n.sd_nohz_idle[c] == enter {
                    return None;
                }
                let llc = self.topo.cpus[c].llc as usize;
                self.kaccess(c, n.llc_shared_lines[llc], Op::Atomic, 0, sym);
                let nohz = &mut self.nohz;
                nohz.sd_nohz_idle[c] = enter;
                let busy = &mut nohz.nr_busy_cpus[llc];
                *busy = if enter { *busy - 1 } else { *busy + 1 };
                None
            }
        }
    }

    /// nohz_balancer_kick(): read the `nohz` struct; when nohz.next_balance has passed and this
    /// CPU has more than one task, kick an idle CPU to run the idle load balancer.
    pub(super) fn step_nohz_kick(&mut self, c: usize, step: KickStep) -> Option<KickStep> {
        if self.must_wait(c) {
            return Some(step);
        }
        let n = &self.nohz;
        let (line, nothing_idle) = (n.line, n.nr_idle == 0);
        let not_due = self.jiffies() < n.next_balance;
        match step {
            KickStep::ReadNohz => match n.f_nr_cpus {
                Some(f) => {
                    // if (likely(!atomic_read(&nohz.nr_cpus))) return; then the time check
                    self.kaccess(c, line, Op::Load, f, Sym::SchedTick);
                    (!nothing_idle && !not_due).then_some(KickStep::NrRunning)
                }
                None => {
                    let f = n.f_next_balance;
                    self.kaccess(c, line, Op::Load, f, Sym::SchedTick);
                    (!not_due).then_some(KickStep::MaskEmpty)
                }
            },
            KickStep::MaskEmpty => {
                // cpumask_empty() reads words until a set bit: the first line of bits (a later
                // line only when CPUs 0-511 are all busy; not priced)
                let first = n.mask_lines[0];
                self.kaccess(c, first, Op::Load, 0, Sym::SchedTick);
                (!nothing_idle).then_some(KickStep::NrRunning)
            }
            KickStep::NrRunning => Some(if self.cpus[c].nr_running() >= 2 {
                KickStep::Kick
            } else {
                KickStep::LlcBusy
            }),
            KickStep::LlcBusy => {
                let llc = self.topo.cpus[c].llc as usize;
                self.kaccess(c, n.llc_shared_lines[llc], Op::Load, 0, Sym::SchedTick);
                (self.nohz.nr_busy_cpus[llc] > 1).then_some(KickStep::Kick)
            }
            KickStep::Kick => {
                self.kick_ilb(c);
                None
            }
        }
    }

    /// kick_ilb() with find_new_ilb(): the first idle CPU of the mask in ascending order, or with
    /// `nohz-ilb-round-robin` the first after `nohz.ilb_cpu_last`.
    fn kick_ilb(&mut self, c: usize) {
        let n = self.cpus.len();
        let from = match self.nohz.f_ilb_cpu_last {
            Some(_) => self.nohz.ilb_cpu_last + 1,
            None => 0,
        };
        let Some(ilb) = (0..n)
            .map(|k| (from + k) % n)
            .find(|&k| k != c && self.nohz.idle[k] && self.cpus[k].is_idle())
        else {
            return;
        };
        // nohz.next_balance = jiffies + 1, and with round robin nohz.ilb_cpu_last = ilb: stores
        // to one line, committed by one read-for-ownership (priced as one store, to the last)
        let nohz = &mut self.nohz;
        let f = match nohz.f_ilb_cpu_last {
            Some(f) => {
                nohz.ilb_cpu_last = ilb;
                f
            }
            None => nohz.f_next_balance,
        };
        let line = nohz.line;
        self.kaccess(c, line, Op::Store, f, Sym::SchedTick);
        self.nohz.next_balance = self.jiffies() + 1;
        self.metrics.count(Counter::IlbKicks);
        let cpus: Vec<u32> = (1..=n)
            .map(|k| ((ilb + k) % n) as u32)
            .filter(|&k| self.nohz.idle[k as usize])
            .collect();
        self.push_job(
            ilb,
            Job::Ilb(Box::new(IlbState {
                cpus,
                next: 0,
                walk: None,
            })),
        );
    }

    /// The end of _nohz_idle_balance(): nohz.next_balance = the earliest next_balance of the idle
    /// CPUs, a store to the struct (the caller has waited for its cursor).
    pub(super) fn nohz_set_next_balance(&mut self, c: usize, next: u64) {
        let (line, f) = (self.nohz.line, self.nohz.f_next_balance);
        self.kaccess(c, line, Op::Store, f, Sym::NohzIdleBalance);
        self.nohz.next_balance = next;
    }
}
