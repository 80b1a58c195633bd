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

use super::llc_shared::NR_BUSY_CPUS;
use super::rq::RqLine;
use super::*;
use crate::coherence::{Coherence, Op};

/// CPUs per line of mask bits (64 bytes of bits).
pub(super) const CPUS_PER_MASK_LINE: usize = 512;

/// The kick flags of `rq->nohz_flags` (sched.h): balance, blocked-load update, next_balance
/// collation; NOHZ_KICK_MASK is the three.
pub(crate) const NOHZ_BALANCE_KICK: u8 = 1;
pub(crate) const NOHZ_STATS_KICK: u8 = 2;
pub(crate) const NOHZ_NEWILB_KICK: u8 = 4;
pub(crate) const NOHZ_NEXT_KICK: u8 = 8;
pub(crate) const NOHZ_KICK_MASK: u8 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;

/// LOAD_AVG_PERIOD (ms): `nohz.next_blocked = now + msecs_to_jiffies(LOAD_AVG_PERIOD)`.
const LOAD_AVG_PERIOD_MS: u64 = 32;

// The kick's IPI (smp_call_function_single_async) costs stated assumptions (docs/MODEL.md §12,
// `Assumptions::ipi_*`): the sender's x2APIC ICR write and csd bookkeeping; the delivery (the
// target enters the kernel that much later); the receiver's interrupt entry,
// flush_smp_call_function_queue, nohz_csd_func and the softirq raise. The call_single_queue and
// nohz_flags accesses are priced on their lines.

/// The global `struct nohz`: its cache lines, the fields laid out in them, and the values the
/// model needs (the mask's bits, next_balance, has_blocked, ...); and per CPU the two lines a kick
/// touches on the ILB CPU: `rq->nohz_flags` and its `call_single_queue`.
pub(crate) struct NohzState {
    /// The line holding nr_cpus, has_blocked, needs_update, next_balance, next_blocked (and,
    /// off-stack, the mask pointer).
    line: LineId,
    /// idle_cpus_mask's bits, one line per 512 CPUs.
    pub(super) mask_lines: Vec<LineId>,
    /// Field indexes in `line` (`None`: the field is not there in this configuration / patch set).
    f_mask_ptr: Option<usize>,
    f_nr_cpus: Option<usize>,
    f_has_blocked: usize,
    f_needs_update: usize,
    f_next_balance: usize,
    f_next_blocked: usize,
    f_ilb_cpu_last: Option<usize>,
    /// The mask's bits, and how many are set (what nr_cpus counts, or cpumask_empty tests).
    pub(super) idle: Vec<bool>,
    pub(super) nr_idle: usize,
    /// nohz.next_balance (jiffies).
    pub(super) next_balance: u64,
    /// nohz.has_blocked: an idle CPU may still have blocked load to decay.
    pub(super) has_blocked: bool,
    /// nohz.needs_update: a CPU entered NOHZ idle since the last next_balance collation.
    pub(super) needs_update: bool,
    /// nohz.next_blocked (jiffies): the next blocked-load update of the idle CPUs.
    pub(super) next_blocked: u64,
    /// nohz.ilb_cpu_last (patch 2/2 of "Reduce nohz_idle_balance CPU overhead").
    ilb_cpu_last: usize,
    /// Per LLC: the `sd_llc_shared` line (`llc_shared.rs`) and its `nr_busy_cpus` (CPUs whose
    /// tick is not stopped).
    pub(super) llc_shared_lines: Vec<LineId>,
    nr_busy_cpus: Vec<u32>,
    /// Per CPU, `sd_llc->nohz_idle`: already subtracted from its LLC's nr_busy_cpus.
    sd_nohz_idle: Vec<bool>,
    /// Per CPU: `rq->nohz_flags` (its line and value) and the `call_single_queue` line.
    flags_lines: Vec<LineId>,
    pub(super) nohz_flags: Vec<u8>,
    pub(super) csq_lines: Vec<LineId>,
}

impl NohzState {
    pub(super) fn new(topo: &Topology, lines: &mut Coherence, p: &Patches) -> Self {
        let (nr_cpus, offstack) = (topo.nr_cpus(), topo.spec.cpumask_offstack);
        // field offsets (v6.18: mask, nr_cpus, has_blocked, needs_update, [ilb_cpu_last],
        // next_balance, next_blocked): off-stack, relative to the struct; inline, relative to
        // its line at 0x400
        let mut fields: Vec<(u32, &'static str)> = Vec::new();
        let mut add = |off: u32, name: &'static str| {
            fields.push((off, name));
            fields.len() - 1
        };
        let f_mask_ptr = offstack.then(|| add(0, "nohz.idle_cpus_mask (pointer)"));
        let mut off = if offstack { 8 } else { 0 };
        let f_nr_cpus = (!p.nohz_no_nr_cpus).then(|| {
            off += 4;
            add(off - 4, "nohz.nr_cpus")
        });
        let f_has_blocked = add(off, "nohz.has_blocked");
        let f_needs_update = add(off + 4, "nohz.needs_update");
        off += 8;
        let f_ilb_cpu_last = p.nohz_ilb_round_robin.then(|| {
            off += 4;
            add(off - 4, "nohz.ilb_cpu_last")
        });
        let nb = off.next_multiple_of(8);
        let f_next_balance = add(nb, "nohz.next_balance");
        let f_next_blocked = add(nb + 8, "nohz.next_blocked");
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
                let id = lines.add_line(name, super::llc_shared::FIELDS);
                // build_sched_domains() uses the sds of the span's first CPU, which __sdt_alloc()
                // allocated on that CPU's node
                let first = topo.llc_cpus[l].iter().next().unwrap_or(0);
                lines.set_home_near(id, first);
                id
            })
            .collect();
        // sd_init(): nr_busy_cpus starts at the LLC's weight
        let nr_busy_cpus = (0..topo.nr_llcs)
            .map(|l| topo.llc_cpus[l].weight() as u32)
            .collect();
        let flags_lines = (0..nr_cpus)
            .map(|c| {
                let id = lines.add_line(format!("rq(cpu{c}).nohz_flags"), &[(0, "nohz_flags")]);
                lines.set_home_near(id, c);
                id
            })
            .collect();
        let csq_lines = (0..nr_cpus)
            .map(|c| {
                let name = format!("call_single_queue(cpu{c})");
                let id = lines.add_line(name, &[(0, "call_single_queue")]);
                lines.set_home_near(id, c); // a per-CPU variable
                id
            })
            .collect();
        NohzState {
            line,
            llc_shared_lines,
            nr_busy_cpus,
            sd_nohz_idle: vec![false; nr_cpus],
            mask_lines,
            f_mask_ptr,
            f_nr_cpus,
            f_has_blocked,
            f_needs_update,
            f_next_balance,
            f_next_blocked,
            f_ilb_cpu_last,
            idle: vec![false; nr_cpus],
            nr_idle: 0,
            next_balance: 0,
            has_blocked: false,
            needs_update: false,
            next_blocked: 0,
            ilb_cpu_last: 0,
            flags_lines,
            nohz_flags: vec![0; nr_cpus],
            csq_lines,
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
    /// Entry: `WRITE_ONCE(nohz.needs_update, 1)`.
    NeedsUpdate,
    /// Entry, at `out:`: `WRITE_ONCE(nohz.has_blocked, 1)`.
    HasBlocked,
}

/// nohz_balancer_kick(), run from a busy CPU's tick (v6.18 order; the checks for reduced capacity,
/// asym packing and misfit cannot fire on the model's equal-capacity CPUs), then kick_ilb(). The
/// data are the kick flags gathered so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KickStep {
    /// v6.18: `atomic_read(&nohz.nr_cpus)`, then `nohz.has_blocked` / `next_blocked` (the STATS
    /// kick) and `time_before(now, nohz.next_balance)`, all one line. `nohz-no-nr-cpus` (with its
    /// series): the STATS and time checks first (a load of the line), nr_cpus gone.
    ReadNohz,
    /// `nohz-no-nr-cpus`: `cpumask_empty(nohz.idle_cpus_mask)`.
    MaskEmpty(u8),
    /// Kick when this CPU has two or more tasks; else read the LLC's nr_busy_cpus.
    NrRunning(u8),
    /// `atomic_read(&sds->nr_busy_cpus) > 1`: kick.
    LlcBusy(u8),
    /// `out:` add NOHZ_NEXT_KICK if nohz.needs_update; kick_ilb(flags): with NOHZ_BALANCE_KICK
    /// `nohz.next_balance = jiffies + 1`, then find_new_ilb().
    Kick(u8),
    /// kick_ilb(): `atomic_read(nohz_flags(ilb))`: nothing new, no kick.
    ReadIlbFlags(u32, u8),
    /// `atomic_fetch_or(flags, nohz_flags(ilb))`: a kick already in flight takes the bits.
    FetchOr(u32, u8),
    /// smp_call_function_single_async(): llist_add to the ILB's call_single_queue,
    Ipi(u32, u8),
    /// then the IPI itself, once the llist_add is done.
    Send(u32, u8),
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

    /// nohz_balance_enter_idle / nohz_balance_exit_idle: the mask bit, nr_cpus, nr_busy_cpus; on
    /// entry then the needs_update and has_blocked stores.
    pub(super) fn step_nohz(&mut self, c: usize, step: NohzStep, enter: bool) -> Option<NohzStep> {
        let sym = if enter {
            Sym::NohzBalanceEnter
        } else {
            Sym::NohzBalanceExit
        };
        if matches!(
            step,
            NohzStep::MaskBit | NohzStep::NrCpus | NohzStep::NrBusyCpus
        ) {
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
                let next = enter.then_some(NohzStep::NeedsUpdate);
                // set_cpu_sd_state_idle / _busy: only when sd->nohz_idle changes
                if n.sd_nohz_idle[c] == enter {
                    return next;
                }
                let llc = self.topo.cpus[c].llc as usize;
                self.kaccess(c, n.llc_shared_lines[llc], Op::Atomic, NR_BUSY_CPUS, sym);
                let nohz = &mut self.nohz;
                nohz.sd_nohz_idle[c] = enter;
                let busy = &mut nohz.nr_busy_cpus[llc];
                *busy = if enter { *busy - 1 } else { *busy + 1 };
                next
            }
            NohzStep::NeedsUpdate => {
                self.kaccess(c, n.line, Op::Store, n.f_needs_update, sym);
                self.nohz.needs_update = true;
                Some(NohzStep::HasBlocked)
            }
            NohzStep::HasBlocked => {
                self.kaccess(c, n.line, Op::Store, n.f_has_blocked, sym);
                self.nohz.has_blocked = true;
                None
            }
        }
    }

    /// nohz_balancer_kick(): read the `nohz` struct; gather the kick flags (NOHZ_STATS_KICK when
    /// the idle CPUs' blocked load is due, STATS|BALANCE when nohz.next_balance has passed and
    /// this CPU has two tasks or its LLC more than one busy CPU, NOHZ_NEXT_KICK when a CPU
    /// entered NOHZ idle since the last collation) and kick_ilb() with them.
    pub(super) fn step_nohz_kick(&mut self, c: usize, step: KickStep) -> Option<KickStep> {
        if matches!(step, KickStep::FetchOr(..) | KickStep::Ipi(..)) {
            self.drain_store_buffer(c, Sym::SchedTick);
        }
        if self.must_wait(c) {
            return Some(step);
        }
        let n = &self.nohz;
        let (line, nothing_idle) = (n.line, n.nr_idle == 0);
        let now = self.jiffies();
        let not_due = now < n.next_balance;
        // READ_ONCE(nohz.has_blocked) && time_after(now, READ_ONCE(nohz.next_blocked))
        let stats = if n.has_blocked && now > n.next_blocked {
            NOHZ_STATS_KICK
        } else {
            0
        };
        const BOTH: u8 = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
        match step {
            KickStep::ReadNohz => match n.f_nr_cpus {
                Some(f) => {
                    // if (likely(!atomic_read(&nohz.nr_cpus))) return; then the STATS and time
                    // checks read the same line (hits)
                    self.kaccess(c, line, Op::Load, f, Sym::SchedTick);
                    if nothing_idle {
                        None
                    } else if not_due {
                        Some(KickStep::Kick(stats))
                    } else {
                        Some(KickStep::NrRunning(stats))
                    }
                }
                None => {
                    let f = n.f_next_balance;
                    self.kaccess(c, line, Op::Load, f, Sym::SchedTick);
                    Some(if not_due {
                        KickStep::Kick(stats)
                    } else {
                        KickStep::MaskEmpty(stats)
                    })
                }
            },
            KickStep::MaskEmpty(flags) => {
                // cpumask_empty() reads words until a set bit: the first line of bits (a later
                // line only when CPUs 0-511 are all busy; not priced)
                let first = n.mask_lines[0];
                self.kaccess(c, first, Op::Load, 0, Sym::SchedTick);
                (!nothing_idle).then_some(KickStep::NrRunning(flags))
            }
            KickStep::NrRunning(flags) => Some(if self.cpus[c].nr_running() >= 2 {
                KickStep::Kick(BOTH)
            } else {
                KickStep::LlcBusy(flags)
            }),
            KickStep::LlcBusy(flags) => {
                let llc = self.topo.cpus[c].llc as usize;
                self.kaccess(
                    c,
                    n.llc_shared_lines[llc],
                    Op::Load,
                    NR_BUSY_CPUS,
                    Sym::SchedTick,
                );
                Some(KickStep::Kick(if self.nohz.nr_busy_cpus[llc] > 1 {
                    BOTH
                } else {
                    flags
                }))
            }
            KickStep::Kick(flags) => {
                // out: READ_ONCE(nohz.needs_update) (the nohz line, read above: a hit)
                let flags = flags | if n.needs_update { NOHZ_NEXT_KICK } else { 0 };
                if flags == 0 {
                    return None;
                }
                self.kick_ilb(c, flags)
            }
            KickStep::ReadIlbFlags(ilb, flags) => {
                let i = ilb as usize;
                self.kaccess(c, n.flags_lines[i], Op::Load, 0, Sym::SchedTick);
                (self.nohz.nohz_flags[i] & flags != flags).then_some(KickStep::FetchOr(ilb, flags))
            }
            KickStep::FetchOr(ilb, flags) => {
                let i = ilb as usize;
                self.kaccess(c, n.flags_lines[i], Op::Atomic, 0, Sym::SchedTick);
                let old = self.nohz.nohz_flags[i];
                self.nohz.nohz_flags[i] |= flags;
                // a csd already in flight: its owner will see the new bits
                (old & NOHZ_KICK_MASK == 0).then_some(KickStep::Ipi(ilb, flags))
            }
            KickStep::Ipi(ilb, flags) => {
                // __smp_call_single_queue(): llist_add (a cmpxchg) to the ILB's queue, then the
                // IPI itself (the queue was empty: nohz_csd is the ILB's only csd in the model)
                self.kaccess(c, n.csq_lines[ilb as usize], Op::Atomic, 0, Sym::SchedTick);
                Some(KickStep::Send(ilb, flags))
            }
            KickStep::Send(ilb, flags) => {
                let i = ilb as usize;
                self.kcharge(c, Sym::SchedTick, self.assume.ipi_send_ns);
                self.metrics.count(Counter::IlbKicks);
                self.trace_instant(c, "kick_ilb IPI");
                // the ILB CPU takes the interrupt IPI_DELIVERY_NS later (idle until then)
                let at = self.cpus[c].exec.cursor + self.assume.ipi_delivery_ns;
                self.push_job_at(i, Job::Ilb(Box::new(IlbState::kicked(flags))), at);
                None
            }
        }
    }

    /// kick_ilb(): `nohz.next_balance = jiffies + 1` for a balance kick, then find_new_ilb(): the
    /// first CPU of the mask in ascending order (with `nohz-ilb-round-robin` the first after
    /// `nohz.ilb_cpu_last`) other than this one that is still idle (idle_cpu(), a load of each
    /// candidate's rq line).
    fn kick_ilb(&mut self, c: usize, flags: u8) -> Option<KickStep> {
        let n = self.cpus.len();
        let from = match self.nohz.f_ilb_cpu_last {
            Some(_) => self.nohz.ilb_cpu_last + 1,
            None => 0,
        };
        // each candidate's idle_cpu() reads its rq line (dependent loads, one after the other)
        let mut probe_ns = 0u64;
        let mut ilb = None;
        for k in (0..n).map(|k| (from + k) % n) {
            if k == c || !self.nohz.idle[k] {
                continue;
            }
            probe_ns += self.rq_line_load(c, k, RqLine::Rq);
            if self.cpus[k].is_idle() {
                ilb = Some(k);
                break;
            }
        }
        // the stores to the nohz line (next_balance; with round robin ilb_cpu_last) are committed
        // by one read-for-ownership (priced as one store, to the last)
        let balance = flags & NOHZ_BALANCE_KICK != 0;
        let rr = self.nohz.f_ilb_cpu_last.filter(|_| ilb.is_some());
        let field = rr.or(balance.then_some(self.nohz.f_next_balance));
        if let Some(f) = field {
            let line = self.nohz.line;
            self.kaccess(c, line, Op::Store, f, Sym::SchedTick);
        }
        if balance {
            self.nohz.next_balance = self.jiffies() + 1;
        }
        if probe_ns > 0 {
            self.metrics.stall(c, probe_ns);
            self.kcharge(c, Sym::SchedTick, probe_ns);
        }
        let ilb = ilb?;
        if rr.is_some() {
            self.nohz.ilb_cpu_last = ilb;
        }
        Some(KickStep::ReadIlbFlags(ilb as u32, flags))
    }

    /// A store by the ILB CPU `c` to a field of the nohz struct (the caller has waited for its
    /// cursor).
    pub(super) fn nohz_store(&mut self, c: usize, field: NohzField) {
        let (line, f) = self.nohz_line_field(field);
        self.kaccess(c, line, Op::Store, f, Sym::NohzIdleBalance);
    }

    /// The nohz line and the index of `field` in it.
    pub(super) fn nohz_line_field(&self, field: NohzField) -> (LineId, usize) {
        let n = &self.nohz;
        let f = match field {
            NohzField::HasBlocked => n.f_has_blocked,
            NohzField::NeedsUpdate => n.f_needs_update,
            NohzField::NextBalance => n.f_next_balance,
            NohzField::NextBlocked => n.f_next_blocked,
        };
        (n.line, f)
    }

    /// CPU `c`'s `rq->nohz_flags` line.
    pub(super) fn nohz_flags_line(&self, c: usize) -> LineId {
        self.nohz.flags_lines[c]
    }

    /// The ILB CPU `c` receives the kick (nohz_csd_func): llist_del_all of its call_single_queue,
    /// then `atomic_fetch_andnot(NOHZ_KICK_MASK, nohz_flags)`; returns the flags it took.
    pub(super) fn nohz_csd_func(&mut self, c: usize, step: CsdStep) -> Option<u8> {
        let sym = Sym::NohzIdleBalance;
        match step {
            CsdStep::Queue => {
                self.kaccess(c, self.nohz.csq_lines[c], Op::Atomic, 0, sym);
                None
            }
            CsdStep::Flags => {
                self.kaccess(c, self.nohz.flags_lines[c], Op::Atomic, 0, sym);
                self.kcharge(c, sym, self.assume.ipi_recv_ns);
                let f = std::mem::take(&mut self.nohz.nohz_flags[c]);
                Some(f & NOHZ_KICK_MASK)
            }
        }
    }

    /// LOAD_AVG_PERIOD in jiffies.
    pub(super) fn load_avg_period_jiffies(&self) -> u64 {
        self.ms_to_jiffies(LOAD_AVG_PERIOD_MS)
    }
}

/// The fields of the nohz struct the ILB stores to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NohzField {
    HasBlocked,
    NeedsUpdate,
    NextBalance,
    NextBlocked,
}

/// The two accesses of the IPI's receipt on the ILB CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CsdStep {
    Queue,
    Flags,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::rq::tests::engine;

    const BOTH: u8 = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;

    /// Four CPUs with `threads` spinners, run 10.5 ms (between ticks: CPU 0 runs its spinner,
    /// the idle CPUs have stopped their ticks), then set by hand: CPUs 1-3 in the NOHZ mask, no
    /// blocked load, no collation pending, nohz.next_balance 5 jiffies ahead.
    fn quiet(threads: u32) -> Engine {
        let mut e = engine(4, threads);
        e.run_until(10_500_000, u64::MAX);
        for k in 1..4 {
            e.nohz.idle[k] = true;
        }
        e.nohz.nr_idle = 3;
        e.nohz.next_balance = e.jiffies() + 5;
        e.nohz.has_blocked = false;
        e.nohz.needs_update = false;
        e.nohz.nohz_flags = vec![0; 4];
        e
    }

    /// nohz_balancer_kick's steps on CPU 0, up to the IPI (not sent).
    fn kick_path(e: &mut Engine) -> Vec<KickStep> {
        let mut path = vec![];
        let mut s = Some(KickStep::ReadNohz);
        while let Some(st) = s {
            path.push(st);
            if matches!(st, KickStep::Ipi(..)) {
                break;
            }
            e.settle_request(0);
            e.now = e.now.max(e.cpus[0].exec.cursor);
            s = e.step_nohz_kick(0, st);
        }
        path
    }

    use KickStep::*;

    #[test]
    fn no_kick_when_no_cpu_is_in_the_mask_or_nothing_is_due() {
        let mut e = quiet(1);
        e.nohz.nr_idle = 0;
        assert_eq!(kick_path(&mut e), vec![ReadNohz]);
        let mut e = quiet(1);
        let nb = e.nohz.next_balance;
        assert_eq!(kick_path(&mut e), vec![ReadNohz, Kick(0)]);
        assert_eq!(e.nohz.next_balance, nb);
    }

    /// NOHZ_STATS_KICK: nohz.has_blocked and `time_after(now, nohz.next_blocked)`, even when
    /// nohz.next_balance is not due; a stats-only kick leaves nohz.next_balance alone.
    #[test]
    fn the_stats_kick_when_blocked_load_is_due() {
        let mut e = quiet(1);
        e.nohz.has_blocked = true;
        e.nohz.next_blocked = e.jiffies();
        assert_eq!(kick_path(&mut e), vec![ReadNohz, Kick(0)], "not after");
        let mut e = quiet(1);
        e.nohz.has_blocked = true;
        e.nohz.next_blocked = e.jiffies() - 1;
        let nb = e.nohz.next_balance;
        let s = NOHZ_STATS_KICK;
        let want = vec![
            ReadNohz,
            Kick(s),
            ReadIlbFlags(1, s),
            FetchOr(1, s),
            Ipi(1, s),
        ];
        assert_eq!(kick_path(&mut e), want);
        assert_eq!(e.nohz.next_balance, nb);
        assert_eq!(e.nohz.nohz_flags[1], s);
        let mut e = quiet(1);
        e.nohz.next_blocked = 0;
        assert_eq!(
            kick_path(&mut e),
            vec![ReadNohz, Kick(0)],
            "no blocked load"
        );
    }

    /// NOHZ_NEXT_KICK: a CPU entered NOHZ idle since the last collation.
    #[test]
    fn the_next_kick_when_needs_update() {
        let mut e = quiet(1);
        e.nohz.needs_update = true;
        let n = NOHZ_NEXT_KICK;
        let path = kick_path(&mut e);
        assert_eq!(path[..3], [ReadNohz, Kick(0), ReadIlbFlags(1, n)]);
    }

    /// When nohz.next_balance is due: two tasks on this CPU kick STATS|BALANCE (and store
    /// `nohz.next_balance = jiffies + 1`); one task kicks only if the LLC has more than one
    /// busy CPU.
    #[test]
    fn the_balance_kick_by_nr_running_then_by_the_llc_busy_count() {
        let mut e = quiet(2);
        let t = e.cpus[1].rq.curr.unwrap();
        e.put_prev(1, t);
        e.migrate_task(0, 1, 0, 0);
        e.nohz.next_balance = e.jiffies();
        assert_eq!(e.cpus[0].nr_running(), 2);
        let path = kick_path(&mut e);
        assert_eq!(path[..3], [ReadNohz, NrRunning(0), Kick(BOTH)]);
        assert_eq!(e.nohz.next_balance, e.jiffies() + 1);
        for (busy, flags) in [(1, 0), (2, BOTH)] {
            let mut e = quiet(1);
            e.nohz.next_balance = e.jiffies();
            e.nohz.nr_busy_cpus[0] = busy;
            let path = kick_path(&mut e);
            assert_eq!(path[..4], [ReadNohz, NrRunning(0), LlcBusy(0), Kick(flags)]);
            assert_eq!(path.len() > 4, flags != 0, "nr_busy_cpus {busy}");
        }
    }

    /// find_new_ilb() skips a CPU of the mask that is no longer idle; a kick whose flags are
    /// already set on the ILB, or whose ILB has a kick in flight, sends no IPI.
    #[test]
    fn find_new_ilb_checks_idle_and_a_kick_in_flight_sends_no_ipi() {
        let mut e = quiet(2); // CPU 1 runs the second spinner, still marked in the mask
        e.nohz.needs_update = true;
        assert!(!e.cpus[1].is_idle());
        let n = NOHZ_NEXT_KICK;
        assert_eq!(kick_path(&mut e)[2], ReadIlbFlags(2, n));
        let mut e = quiet(1);
        e.nohz.needs_update = true;
        e.nohz.nohz_flags[1] = NOHZ_NEXT_KICK | NOHZ_STATS_KICK;
        assert_eq!(kick_path(&mut e).last(), Some(&ReadIlbFlags(1, n)));
        let mut e = quiet(1);
        e.nohz.has_blocked = true;
        e.nohz.next_blocked = 0;
        e.nohz.needs_update = true;
        e.nohz.nohz_flags[1] = NOHZ_BALANCE_KICK;
        let f = n | NOHZ_STATS_KICK;
        assert_eq!(kick_path(&mut e).last(), Some(&FetchOr(1, f)));
        assert_eq!(e.nohz.nohz_flags[1], f | NOHZ_BALANCE_KICK);
    }

    /// The IPI: its send cost lands on the kicker, the kick is counted, and the ILB CPU, after
    /// the delivery (idle) and the receipt, takes the flags and runs the stats pass: the idle
    /// CPUs' blocked load decays, nohz.next_blocked moves LOAD_AVG_PERIOD ahead, and
    /// nohz.has_blocked stays set while some blocked load is left.
    #[test]
    fn the_ipi_costs_the_kicker_and_the_ilb_decays_blocked_load() {
        let mut e = quiet(1);
        e.nohz.has_blocked = true;
        e.nohz.next_blocked = 0;
        // CPU 2 idles with the blocked load of a CPU that ran a spinner
        let mut avg = e.cpus[0].rq.avg;
        avg.last_update_time -= 2_000_000;
        e.cpus[2].rq.avg = avg;
        e.cpus[2].rq.has_blocked_load = true;
        let before = avg.load_avg;
        assert!(before > 0);
        let path = kick_path(&mut e);
        let tick = Sym::SchedTick as usize;
        let (kicker0, ilb0) = (e.metrics.cpu_sym[0][tick], e.metrics.cpu_sym[1]);
        let kicks = e.metrics.counters[Counter::IlbKicks as usize];
        e.settle_request(0);
        e.now = e.now.max(e.cpus[0].exec.cursor);
        let send = e.step_nohz_kick(0, *path.last().unwrap());
        assert!(matches!(send, Some(Send(1, _))), "{send:?}");
        e.settle_request(0);
        e.now = e.now.max(e.cpus[0].exec.cursor);
        assert_eq!(e.step_nohz_kick(0, send.unwrap()), None);
        assert!(e.metrics.cpu_sym[0][tick] - kicker0 >= e.assume.ipi_send_ns);
        assert_eq!(e.metrics.counters[Counter::IlbKicks as usize], kicks + 1);
        let sent = e.cpus[0].exec.cursor;
        assert!(e.cpus[1].exec.jobs.len() == 1 && e.cpus[1].exec.mode == Mode::Idle);
        e.run_until(sent + e.assume.ipi_delivery_ns - 1, u64::MAX);
        assert_eq!(
            e.cpus[1].exec.mode,
            Mode::Idle,
            "the IPI is still on its way"
        );
        e.run_until(sent + 100_000, u64::MAX);
        let nohz_ib = Sym::NohzIdleBalance as usize;
        assert!(e.metrics.cpu_sym[1][nohz_ib] - ilb0[nohz_ib] >= e.assume.ipi_recv_ns);
        let j = e.jiffies();
        assert_eq!(e.nohz.nohz_flags[1], 0, "taken by nohz_csd_func");
        assert_eq!(e.cpus[1].exec.mode, Mode::Idle);
        assert_eq!(e.cpus[2].rq.last_blocked_load_update_tick, j);
        assert!(e.cpus[2].rq.avg.load_avg < before);
        assert_eq!(e.nohz.next_blocked, j + e.ms_to_jiffies(32));
        assert!(e.nohz.has_blocked, "CPU 2's load is not fully decayed");
        e.check_invariants().unwrap();
    }
}
