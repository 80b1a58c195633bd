//! The text renderers: a report and an A/B delta in the shapes users know (perf report, perf
//! c2c, sysbench, schbench, perf bench sched messaging, the seed mails' % changes).

use super::{CacheLineRow, Delta, Report};
use std::fmt::Write as _;

impl Report {
    /// What `perf bench sched messaging` (hackbench) prints: the group layout and the time one
    /// run of `loops` messages takes (groups run round after round for the simulated time, so the
    /// time of one run is its message count over the simulated rate), plus messages per second.
    fn hackbench_text(&self, s: &mut String) {
        let knob = |k: &str| {
            self.workload_knobs
                .get(k)
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
        };
        let (groups, fds, loops) = (knob("groups"), knob("fds"), knob("loops"));
        let what = match self.workload_knobs.get("mode").and_then(|v| v.as_str()) {
            Some("thread") => "threads",
            _ => "processes",
        };
        let per_run = groups * fds * fds * loops;
        let _ = writeln!(
            s,
            "\n# Running 'sched/messaging' benchmark:\n# {fds} sender and receiver {what} per group\n# {groups} groups == {} {what} run\n",
            groups * fds * 2
        );
        if self.throughput_per_sec > 0.0 {
            let _ = writeln!(
                s,
                "     Total time: {:.3} [sec]    ({per_run} messages: {loops} loops x {fds} senders x {fds} receivers x {groups} groups)",
                per_run as f64 / self.throughput_per_sec
            );
        } else {
            let _ = writeln!(s, "     Total time: - [sec]    (no message was read)");
        }
        let _ = writeln!(
            s,
            "     {:.0} messages in {:.3} s simulated: {:.2} messages/sec",
            self.throughput_per_sec * self.measured_seconds(),
            self.measured_seconds(),
            self.throughput_per_sec
        );
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} on {} ({} CPUs, {} nodes, {} LLCs), kernel {}, HZ={}, patches: {}, {:.3} s simulated, seed {}",
            self.workload,
            self.machine.name,
            self.machine.cpus,
            self.machine.nodes,
            self.machine.llcs,
            if self.sched.is_empty() {
                self.kernel.clone()
            } else {
                let k: Vec<String> = self.sched.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{} ({})", self.kernel, k.join(" "))
            },
            self.hz,
            if self.patches.is_empty() {
                "none".to_string()
            } else {
                self.patches.join(",")
            },
            self.sim_seconds,
            self.seed
        );
        // cat /sys/kernel/debug/sched/features of the run
        let _ = writeln!(s, "sched features: {}", self.sched_features_line());
        if self.warmup_s > 0.0 {
            let _ = writeln!(
                s,
                "warm-up: the first {:.3} s are excluded from every figure below but the time series",
                self.warmup_s
            );
        }
        if !self.not_settled.is_empty() {
            let _ = writeln!(
                s,
                "NOT SETTLED: {} still trend(s) over the measured window more than their noise (docs/MODEL.md, Steady state); try a longer run or --warmup auto",
                self.not_settled.join(", ")
            );
        }
        if self.workload == "hackbench" {
            self.hackbench_text(&mut s);
        } else {
            let _ = writeln!(
                s,
                "\n    {}:  {:.0} ({:.2} per sec.)",
                self.throughput_unit,
                self.throughput_per_sec * self.measured_seconds(),
                self.throughput_per_sec
            );
        }
        let _ = writeln!(
            s,
            "Latency (ms):\n         min: {:>12.3}\n         avg: {:>12.3}\n         max: {:>12.3}\n         95th percentile: {:>.3}",
            self.latency_ms.min, self.latency_ms.avg, self.latency_ms.max, self.latency_ms.p95
        );
        let w = &self.wakeup_latency_us;
        let _ = writeln!(
            s,
            "Wakeup Latencies percentiles (usec)\n\t  50.0th: {:.1}\n\t  90.0th: {:.1}\n\t* 99.0th: {:.1}\n\t  99.9th: {:.1}\n\t  max: {:.1}",
            w.p50, w.p90, w.p99, w.p999, w.max
        );
        let _ = writeln!(
            s,
            "Threads fairness:\n    events (avg/stddev): {:.4}/{:.2}    ({} of {} threads complete {})",
            self.counted_events_avg,
            self.counted_events_stddev,
            self.counted_tasks,
            self.tasks,
            self.throughput_unit
        );
        let _ = writeln!(
            s,
            "\nutilization {:.1}%  (idle {:.1}% kept apart from the profile)  contention {:.2}% of non-idle cycles",
            self.utilization * 100.0,
            self.idle_pct,
            self.contention_pct
        );
        // vmstat's columns: cs (context switches per second), us / sy / id shares of CPU time.
        let cs = self.counters.get("context_switches").copied().unwrap_or(0);
        let secs = self.measured_seconds().max(f64::MIN_POSITIVE);
        let _ = writeln!(
            s,
            "vmstat: cs {:.0}/s ({:.0} per CPU per s)  us {:.1}%  sy {:.1}%  id {:.1}%",
            cs as f64 / secs,
            self.context_switches_per_cpu_sec,
            self.utilization * 100.0 - self.kernel_pct(),
            self.kernel_pct(),
            self.idle_pct
        );
        let idles = self.counters.get("idle_entries").copied().unwrap_or(0);
        let cpus = self.machine.cpus.max(1) as f64;
        let _ = writeln!(
            s,
            "idle entries: {:.0} per CPU per s",
            idles as f64 / secs / cpus
        );
        if let Some(n) = &self.network {
            let _ = writeln!(
                s,
                "network: card on node {2}, {0} rx queues with interrupts on {1} CPUs, {3} packets, {4:.2} per interrupt, {5:.1}% woken onto the interrupt CPU",
                n.queues,
                n.irq_cpus,
                n.nic_node,
                n.packets,
                n.packets_per_interrupt,
                n.woken_on_irq_cpu_pct
            );
        }
        if let Some(x) = &self.scx {
            let _ = writeln!(s, "{}", scx_text(x));
        }
        if let Some(v) = &self.serve {
            let _ = writeln!(
                s,
                "serve: offered {:.0}/s, achieved {:.0}/s, latency (usec) p50 {:.1} p90 {:.1} p99 {:.1} p99.9 {:.1} (card to reply, plus the link), drops {} (the model never drops), {} outstanding at the end",
                v.offered_per_sec,
                v.achieved_per_sec,
                v.p50_us,
                v.p90_us,
                v.p99_us,
                v.p999_us,
                v.drops,
                v.outstanding
            );
        }
        let _ = writeln!(
            s,
            "\n# perf report (cycles, non-idle)\n# Overhead  Command  Shared Object      Symbol"
        );
        for p in &self.profile {
            let (obj, k) = if p.symbol == "[user]" {
                ("[unknown]", "[.]")
            } else {
                ("[kernel.kallsyms]", "[k]")
            };
            let _ = writeln!(
                s,
                "  {:>7.2}%  {:<7}  {:<17}  {} {}",
                p.percent, "sim", obj, k, p.symbol
            );
        }
        let _ = writeln!(
            s,
            "\n# perf c2c: Shared Data Cache Line Table\n# {:<40} {:>4} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10} {:>9}",
            "Cacheline",
            "Node",
            "Loads",
            "Stores",
            "Atomics",
            "LclHitm",
            "RmtHitm",
            "AvgStall",
            "XSktHoff"
        );
        // Per-CPU lines (run queues, nohz_flags, call_single_queue, slab lines) and per-channel
        // lines (a hackbench receiver's socket or pipe, `(rxN)`) are one row each in the JSON; the
        // text shows the shared lines, the per-CPU and per-channel ones with the most HITMs, and a
        // sum of the rest.
        const PER_CPU_ROWS: usize = 8;
        let (mut per_cpu, shared): (Vec<&CacheLineRow>, Vec<&CacheLineRow>) = self
            .cachelines
            .iter()
            .partition(|l| l.name.contains("(cpu") || l.name.contains("(rx"));
        per_cpu.sort_by_key(|l| std::cmp::Reverse(l.hitm_local + l.hitm_remote));
        let rest = per_cpu.split_off(per_cpu.len().min(PER_CPU_ROWS));
        for l in shared.into_iter().chain(per_cpu) {
            let _ = writeln!(
                s,
                "  {:<40} {:>4} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8.0}ns {:>9}",
                l.name,
                l.home_node,
                l.loads,
                l.stores,
                l.atomics,
                l.hitm_local,
                l.hitm_remote,
                l.avg_stall_ns,
                l.cross_socket_handoffs
            );
            for o in l
                .offsets
                .iter()
                .filter(|o| o.loads + o.stores + o.atomics > 0)
            {
                let _ = writeln!(
                    s,
                    "      0x{:02x} {:<30} loads {:>9} stores {:>9} atomics {:>9} hitm {:>9}",
                    o.offset, o.field, o.loads, o.stores, o.atomics, o.hitm
                );
            }
        }
        if !rest.is_empty() {
            let sum = |f: fn(&CacheLineRow) -> u64| rest.iter().map(|l| f(l)).sum::<u64>();
            let _ = writeln!(
                s,
                "  {:<40} {:>4} {:>10} {:>10} {:>10} {:>9} {:>9}",
                format!("({} more per-CPU lines)", rest.len()),
                "",
                sum(|l| l.loads),
                sum(|l| l.stores),
                sum(|l| l.atomics),
                sum(|l| l.hitm_local),
                sum(|l| l.hitm_remote)
            );
        }
        self.locality.text(&mut s);
        if !self.account_mm_sched_callers.is_empty() {
            let all: u64 = self.account_mm_sched_callers.values().sum();
            let _ = writeln!(s, "\n# account_mm_sched calls by update_curr caller");
            for (k, v) in &self.account_mm_sched_callers {
                let pct = if all > 0 {
                    *v as f64 * 100.0 / all as f64
                } else {
                    0.0
                };
                let _ = writeln!(s, "  {k:<40} {v:>12}  {pct:5.1}%");
            }
        }
        let _ = writeln!(s, "\n# counters");
        for (k, v) in &self.counters {
            let _ = writeln!(s, "  {k:<40} {v}");
        }
        let _ = writeln!(s, "  {:<40} {}", "simulated events", self.events);
        let _ = writeln!(s, "  {:<40} {}", "report hash", self.report_hash);
        s
    }
}

/// A side's patches and the sched features it switched, for the A/B header.
fn side_text(r: &Report) -> String {
    let mut t = if r.patches.is_empty() {
        "(none)".to_string()
    } else {
        r.patches.join(",")
    };
    if !r.features.is_empty() {
        t.push_str(&format!("; sched features {}", r.features.join(",")));
    }
    if let Some(x) = &r.scx {
        t.push_str(&format!("; sched_ext {} ({})", x.ops_name, x.file));
        if let Some(ei) = &x.exit {
            t.push_str(&format!(", disabled at {:.3} s: {}", ei.at_s, ei.reason));
        }
    }
    t
}

/// The sched_ext lines of a report: the scheduler, its ops calls, inserts per DSQ, kicks, and
/// the kernel's "disabled" line if it exited.
fn scx_text(x: &super::scx::ScxReport) -> String {
    let mut s = format!(
        "sched_ext: {} ({}), {} BPF instructions ({:.3}% of CPU time)",
        x.ops_name, x.file, x.insns, x.bpf_time_pct
    );
    let calls: Vec<String> = (x.op_calls.iter())
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = write!(s, "\n  ops calls: {}", calls.join(", "));
    let dsq: Vec<String> = (x.dispatched.iter())
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = write!(
        s,
        "\n  inserts per DSQ: {}; kicks {} ({} IPIs)",
        dsq.join(", "),
        x.kicks,
        x.kick_ipis
    );
    if let Some(ei) = &x.exit {
        let _ = write!(
            s,
            "\n  sched_ext: BPF scheduler \"{}\" disabled ({}) at {:.6} s\n  sched_ext: {}: {}",
            x.ops_name, ei.reason, ei.at_s, x.ops_name, ei.msg
        );
    }
    s
}

impl Delta {
    /// The seed mails' shape: each figure as a % change from A to B.
    pub fn to_text(&self, a: &Report, b: &Report) -> String {
        let mut s = String::new();
        // an A/B of two releases names each side's
        let release = |r: &Report| {
            if a.kernel != b.kernel {
                format!("kernel {}: ", r.kernel)
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            s,
            "A: {}{}\nB: {}{}\n",
            release(a),
            side_text(a),
            release(b),
            side_text(b)
        );
        let _ = writeln!(s, "{:<28} {:>14} {:>14} {:>9}", "", "A", "B", "change");
        let row = |s: &mut String, name: &str, x: f64, y: f64, d: f64| {
            let _ = writeln!(s, "{name:<28} {x:>14.3} {y:>14.3} {d:>+8.2}%");
        };
        row(
            &mut s,
            &format!("{} per sec.:", a.throughput_unit),
            a.throughput_per_sec,
            b.throughput_per_sec,
            self.throughput_pct,
        );
        row(
            &mut s,
            "min latency (ms):",
            a.latency_ms.min,
            b.latency_ms.min,
            self.latency_min_pct,
        );
        row(
            &mut s,
            "avg latency (ms):",
            a.latency_ms.avg,
            b.latency_ms.avg,
            self.latency_avg_pct,
        );
        row(
            &mut s,
            "max latency (ms):",
            a.latency_ms.max,
            b.latency_ms.max,
            self.latency_max_pct,
        );
        row(
            &mut s,
            "95th percentile (ms):",
            a.latency_ms.p95,
            b.latency_ms.p95,
            self.latency_p95_pct,
        );
        row(
            &mut s,
            "events avg:",
            a.counted_events_avg,
            b.counted_events_avg,
            self.counted_events_avg_pct,
        );
        row(
            &mut s,
            "events stddev:",
            a.counted_events_stddev,
            b.counted_events_stddev,
            self.counted_events_stddev_pct,
        );
        let _ = writeln!(
            s,
            "{:<28} {:>13.2}% {:>13.2}% {:>+8.2} pts",
            "contention (non-idle):", a.contention_pct, b.contention_pct, self.contention_points
        );
        let _ = writeln!(
            s,
            "\n# share of non-idle cycles\n{:<28} {:>8} {:>8}",
            "symbol", "A", "B"
        );
        for p in &self.profile {
            let _ = writeln!(s, "{:<28} {:>7.2}% {:>7.2}%", p.symbol, p.a, p.b);
        }
        s
    }
}
