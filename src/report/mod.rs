//! The report of a run and the A/B delta (serde: the public, versioned, append-only JSON contract
//! of the CLI and the page, documented field by field in docs/SCHEMA.md); the text renderers are
//! `text`, the drift check `settled`.

pub mod domains_state;
pub mod schbench_v1;
pub mod schedstat;
pub mod scx;
pub mod settled;
mod text;

use crate::sched::metrics::{LINE_TOTALS, line_totals};
use crate::sched::{Counter, Engine, LocalityReport, Sym, UpdateCurrCaller};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MachineSummary {
    pub name: String,
    pub cpus: usize,
    pub sockets: u32,
    pub nodes: usize,
    pub llcs: usize,
    /// The cache-line service and kernel configuration the run assumed (since schema 3).
    #[serde(default)]
    pub rmw_hold_ns: u32,
    #[serde(default)]
    pub cpumask_offstack: bool,
    /// Store-buffer entries per CPU (since schema 8).
    #[serde(default)]
    pub store_buffer_entries: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Latency {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub p95: f64,
}

/// schbench-style wakeup latency percentiles, µs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WakeupLatency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// 95th percentile (schbench prints 50/90/99/99.9; the page's cards show p50/p95/p99). Since
    /// schema 4.
    #[serde(default)]
    pub p95: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileRow {
    pub symbol: String,
    pub percent: f64,
    pub ns: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OffsetRow {
    pub offset: u32,
    pub field: String,
    pub loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub hitm: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CacheLineRow {
    pub name: String,
    pub loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub hitm_local: u64,
    pub hitm_remote: u64,
    pub avg_stall_ns: f64,
    /// The node of the line's home agent (perf c2c's "Node" of the address).
    #[serde(default)]
    pub home_node: u32,
    /// Ownership hand-offs by the distance from the previous holder to the requester: in its
    /// LLC, its node, its socket, another socket (`coherence::HANDOFF_DISTANCES`).
    #[serde(default)]
    pub handoffs_by_distance: [u64; 4],
    #[serde(default)]
    pub cross_socket_handoffs: u64,
    pub offsets: Vec<OffsetRow>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeriesOut {
    pub interval_ms: f64,
    pub t_s: Vec<f64>,
    pub throughput: Vec<f64>,
    pub contention_pct: Vec<f64>,
    pub utilization: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpuHeat {
    pub busy: Vec<f64>,
    pub stall: Vec<f64>,
    pub idle: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub machine: MachineSummary,
    pub workload: String,
    /// The kernel release that ran (`kernels::KERNELS`); `patches` are the side's toggles on top
    /// of what it merged. Absent = 6.18 and not written for 6.18, so every 6.18 report (and its
    /// hash) is what it was before releases existed.
    #[serde(default = "default_kernel", skip_serializing_if = "is_default_kernel")]
    pub kernel: String,
    /// The kernel knobs set for the run (7.2's `CONFIG_SCHED_CACHE`, `llc_balancing/...`), key ->
    /// value; only those set, absent when none (every older report and hash unchanged).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sched: BTreeMap<String, u32>,
    /// The sched features the side switched from its release's defaults, as debugfs takes them
    /// (`NO_NI_RANDOM`, `NEXT_BUDDY`); absent when none, so a run at the defaults reports (and
    /// hashes) as before. `sched_features::debugfs_line` gives the whole line. Since schema 9.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    pub patches: Vec<String>,
    pub hz: u32,
    pub seed: u64,
    pub sim_seconds: f64,
    pub throughput_per_sec: f64,
    pub throughput_unit: String,
    pub latency_ms: Latency,
    pub wakeup_latency_us: WakeupLatency,
    pub events_avg: f64,
    pub events_stddev: f64,
    pub utilization: f64,
    pub idle_pct: f64,
    /// Share of non-idle cycles stalled on the scheduler's contended cache lines.
    pub contention_pct: f64,
    /// Share of non-idle cycles user code spent on cache-line transfers: working-set refills after
    /// migrations, data handed over by wakers, shared data written by sibling threads.
    pub user_transfer_pct: f64,
    pub profile: Vec<ProfileRow>,
    pub cachelines: Vec<CacheLineRow>,
    pub counters: BTreeMap<String, u64>,
    pub series: SeriesOut,
    pub cpu_heat: CpuHeat,
    pub events: u64,
    pub report_hash: String,
    /// The workload's knob values as run, defaults resolved (integers as numbers). Since schema 2.
    #[serde(default)]
    pub workload_knobs: BTreeMap<String, serde_json::Value>,
    /// Number of tasks; `events_avg` / `events_stddev` are over all of them. Since schema 2.
    #[serde(default)]
    pub tasks: usize,
    /// Tasks that complete the counted units (hackbench receivers, schbench workers, every oltp
    /// client and spin thread). Since schema 2.
    #[serde(default)]
    pub counted_tasks: usize,
    /// Completed units per counted task: mean and population stddev (sysbench's "events
    /// (avg/stddev)"). Since schema 2.
    #[serde(default)]
    pub counted_events_avg: f64,
    #[serde(default)]
    pub counted_events_stddev: f64,
    /// `REPORT_SCHEMA`: the schema version this report follows (docs/SCHEMA.md). Since schema 2;
    /// a report without it is schema 1.
    #[serde(default = "schema_1")]
    pub schema: u32,
    /// Simulated seconds at the start excluded from every figure but `sim_seconds`, `events` and
    /// `series` (sysbench `--warmup-time`). Printed only when not 0. Since schema 3.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_s: f64,
    /// Series (`throughput`, `contention_pct`, `utilization`) whose trend over the measured window
    /// is larger than their noise (`settled::not_settled`, docs/MODEL.md). Printed only when not
    /// empty. Since schema 3.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_settled: Vec<String>,
    /// Where placement cost user time: refills, communication, remote memory, SMT co-run, and
    /// starts and handoffs by distance (docs/MODEL.md §21). Since schema 4.
    #[serde(default)]
    pub locality: LocalityReport,
    /// `counters.context_switches` per CPU per measured second (vmstat's `cs` over the CPU count).
    /// Since schema 6.
    #[serde(default)]
    pub context_switches_per_cpu_sec: f64,
    /// account_mm_sched() calls by the update_curr() caller that made them (kernel names), with
    /// cache-aware scheduling only (printed only then). Since schema 7.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub account_mm_sched_callers: BTreeMap<String, u64>,
    /// The network card's receive path, for a workload whose requests come from another host
    /// (`oltp client=remote`, `hammerdb`); absent otherwise. Since schema 9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkReport>,
    /// The sched_ext scheduler that ran the side's tasks instead of the fair class (`scx.rs`);
    /// absent for the fair class, so its reports hash as before. Since schema 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scx: Option<scx::ScxReport>,
    /// An open-loop workload's (`serve`) rates and latency percentiles over the measured window;
    /// absent otherwise. Since schema 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<ServeReport>,
}

/// Open-loop serving (`workload/serve.rs`): what the driver host sent, what came back, and the
/// latency from the request's arrival at the card to its reply's departure plus the link.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ServeReport {
    /// The rate the driver host sends at, requests/s.
    pub offered_per_sec: f64,
    /// Replies per measured second.
    pub achieved_per_sec: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Requests dropped: always 0, the model never drops (the driver sends on schedule and TCP
    /// holds a backlog); an overload shows as `outstanding` and `achieved_per_sec` < offered.
    pub drops: u64,
    /// Requests sent and not yet answered when the run ended.
    pub outstanding: u64,
}

/// The receive path of requests from another host (`sched/net_rx.rs`), over the whole run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NetworkReport {
    /// Receive queues, and how many distinct CPUs their interrupts go to.
    pub queues: usize,
    pub irq_cpus: usize,
    /// The node the card is attached to.
    pub nic_node: u32,
    pub packets: u64,
    pub interrupts: u64,
    /// Packets per interrupt (NAPI polls take what arrived meanwhile).
    pub packets_per_interrupt: f64,
    /// Share of packets whose server thread was woken onto the interrupt CPU itself, %.
    pub woken_on_irq_cpu_pct: f64,
}

/// The version of the report JSON (docs/SCHEMA.md). Fields are only ever added; each addition
/// bumps this number.
pub const REPORT_SCHEMA: u32 = 10;

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn schema_1() -> u32 {
    1
}

/// Mean and population standard deviation.
fn mean_stddev(x: &[u64]) -> (f64, f64) {
    let n = x.len().max(1) as f64;
    let avg = x.iter().sum::<u64>() as f64 / n;
    let var = x
        .iter()
        .map(|&v| (v as f64 - avg) * (v as f64 - avg))
        .sum::<f64>()
        / n;
    (avg, var.sqrt())
}

fn pct(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { (a - b) * 100.0 / b }
}

/// FNV-1a: a short fingerprint of a text (the report's JSON, a grid), to compare runs across
/// builds and platforms.
pub fn fnv1a(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

pub(crate) fn default_kernel() -> String {
    crate::kernels::DEFAULT_KERNEL.into()
}
pub(crate) fn is_default_kernel(k: &String) -> bool {
    k == crate::kernels::DEFAULT_KERNEL
}

impl Report {
    pub fn from_engine(
        e: &mut Engine,
        workload: &str,
        unit: &'static str,
        patches: &[String],
        seed: u64,
    ) -> Report {
        e.flush_accounting();
        let metrics = &e.metrics;
        let win = metrics.window.as_deref();
        // Every headline figure below is over the measured window (all of the run without a
        // warm-up); `series`, `events` and `sim_seconds` cover the whole run.
        let m = &metrics.measured();
        let n = e.topo.nr_cpus();
        let secs = e.now as f64 / 1e9;
        let start_ns = win.map_or(0, |w| w.start_ns);
        let measured_secs = e.now.saturating_sub(start_ns) as f64 / 1e9;
        let idle = m.total(Sym::Idle);
        let non_idle = m.non_idle_ns();
        let total = idle + non_idle;
        let mut profile: Vec<ProfileRow> = Sym::ALL
            .iter()
            .filter(|&&s| s != Sym::Idle)
            .map(|&s| {
                let ns = m.total(s);
                ProfileRow {
                    symbol: s.name().to_string(),
                    percent: if non_idle > 0 {
                        ns as f64 * 100.0 / non_idle as f64
                    } else {
                        0.0
                    },
                    ns,
                }
            })
            .filter(|r| r.ns > 0)
            .collect();
        profile.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.symbol.cmp(&b.symbol)));
        let stall: u64 = m.cpu_stall.iter().sum();
        let cachelines = e
            .lines
            .lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let (b, bf) = win
                    .and_then(|w| w.lines.get(i))
                    .map_or(([0; LINE_TOTALS], &[][..]), |(b, f)| (*b, &f[..]));
                let st = &e.lines.stats(i);
                let h = line_totals(st);
                let handoffs_by_distance = [h[6] - b[6], h[7] - b[7], h[8] - b[8], h[9] - b[9]];
                let (loads, stores, atomics) =
                    (st.loads - b[0], st.stores - b[1], st.atomics - b[2]);
                let acc = loads + stores + atomics;
                (acc > 0).then(|| CacheLineRow {
                    name: l.name.clone(),
                    loads,
                    stores,
                    atomics,
                    hitm_local: st.hitm_local - b[3],
                    hitm_remote: st.hitm_remote - b[4],
                    avg_stall_ns: (st.stall_ns - b[5]) as f64 / acc as f64,
                    home_node: e.lines.home(i),
                    handoffs_by_distance,
                    cross_socket_handoffs: handoffs_by_distance[3],
                    offsets: (e.lines.fields(i).iter())
                        .enumerate()
                        .map(|(j, f)| {
                            let z = bf.get(j).copied().unwrap_or([0; 4]);
                            OffsetRow {
                                offset: f.offset,
                                field: f.field.to_string(),
                                loads: f.loads - z[0],
                                stores: f.stores - z[1],
                                atomics: f.atomics - z[2],
                                hitm: f.hitm - z[3],
                            }
                        })
                        .collect(),
                })
            })
            .collect();
        let mut events: Vec<u64> = e.task_events();
        if let Some(w) = win {
            for (x, y) in events.iter_mut().zip(&w.task_events) {
                *x -= y;
            }
        }
        let (ev_avg, ev_stddev) = mean_stddev(&events);
        let wl = e.workload();
        let counted: Vec<u64> = (0..events.len())
            .filter(|&t| wl.counts_units(t as u32))
            .map(|t| events[t])
            .collect();
        let (counted_avg, counted_stddev) = mean_stddev(&counted);
        let workload_knobs = wl
            .knobs()
            .into_iter()
            .map(|(k, v)| {
                let v = v
                    .parse::<u64>()
                    .map_or_else(|_| serde_json::Value::from(v), serde_json::Value::from);
                (k, v)
            })
            .collect();
        let h = &metrics.latency;
        let ms = |ns: u64| ns as f64 / 1e6;
        let heat = |f: &dyn Fn(usize) -> u64| -> Vec<f64> {
            (0..n)
                .map(|c| {
                    let all: u64 = m.cpu_sym[c].iter().sum();
                    if all == 0 {
                        0.0
                    } else {
                        f(c) as f64 / all as f64
                    }
                })
                .collect()
        };
        let mut r = Report {
            machine: MachineSummary {
                name: e.topo.spec.name.clone(),
                cpus: n,
                sockets: e.topo.spec.sockets,
                nodes: e.topo.nr_nodes,
                llcs: e.topo.nr_llcs,
                rmw_hold_ns: e.topo.spec.rmw_hold_ns,
                cpumask_offstack: e.topo.spec.cpumask_offstack,
                store_buffer_entries: e.topo.spec.store_buffer.entries,
            },
            workload: workload.to_string(),
            kernel: default_kernel(),
            sched: BTreeMap::new(),
            features: Vec::new(),
            patches: patches.to_vec(),
            hz: e.hz,
            seed,
            sim_seconds: secs,
            throughput_per_sec: if measured_secs > 0.0 {
                m.completions as f64 / measured_secs
            } else {
                0.0
            },
            throughput_unit: unit.to_string(),
            latency_ms: Latency {
                min: ms(h.min),
                avg: if h.count > 0 {
                    (h.sum / h.count as u128) as f64 / 1e6
                } else {
                    0.0
                },
                max: ms(h.max),
                p95: ms(h.quantile(0.95)),
            },
            wakeup_latency_us: {
                let w = &metrics.wakeup_latency;
                let us = |ns: u64| ns as f64 / 1e3;
                WakeupLatency {
                    p50: us(w.quantile(0.5)),
                    p90: us(w.quantile(0.9)),
                    p99: us(w.quantile(0.99)),
                    p999: us(w.quantile(0.999)),
                    max: us(w.max),
                    p95: us(w.quantile(0.95)),
                }
            },
            events_avg: ev_avg,
            events_stddev: ev_stddev,
            utilization: if total > 0 {
                non_idle as f64 / total as f64
            } else {
                0.0
            },
            idle_pct: if total > 0 {
                idle as f64 * 100.0 / total as f64
            } else {
                0.0
            },
            contention_pct: if non_idle > 0 {
                stall as f64 * 100.0 / non_idle as f64
            } else {
                0.0
            },
            user_transfer_pct: if non_idle > 0 {
                m.cpu_user_xfer.iter().sum::<u64>() as f64 * 100.0 / non_idle as f64
            } else {
                0.0
            },
            profile,
            cachelines,
            counters: Counter::ALL
                .iter()
                .map(|&c| (c.name().to_string(), m.counters[c as usize]))
                .collect(),
            series: SeriesOut {
                interval_ms: metrics.sample_ns as f64 / 1e6,
                t_s: metrics.series.t_s.clone(),
                throughput: metrics.series.throughput.clone(),
                contention_pct: metrics.series.contention_pct.clone(),
                utilization: metrics.series.utilization.clone(),
            },
            cpu_heat: CpuHeat {
                busy: heat(&|c| {
                    m.cpu_sym[c].iter().sum::<u64>()
                        - m.cpu_sym[c][Sym::Idle as usize]
                        - m.cpu_stall[c]
                }),
                stall: heat(&|c| m.cpu_stall[c]),
                idle: heat(&|c| m.cpu_sym[c][Sym::Idle as usize]),
            },
            events: e.events,
            report_hash: String::new(),
            workload_knobs,
            tasks: events.len(),
            counted_tasks: counted.len(),
            counted_events_avg: counted_avg,
            counted_events_stddev: counted_stddev,
            schema: REPORT_SCHEMA,
            warmup_s: start_ns as f64 / 1e9,
            not_settled: settled::not_settled(&metrics.series, metrics.sample_ns, start_ns),
            locality: LocalityReport::new(&m.loc, m.total(Sym::User), e.locality_in_flight()),
            context_switches_per_cpu_sec: if measured_secs > 0.0 {
                m.counters[Counter::ContextSwitches as usize] as f64 / measured_secs / n as f64
            } else {
                0.0
            },
            scx: None,
            network: e.net_counts().map(|(nic, c)| NetworkReport {
                queues: nic.queues(),
                irq_cpus: {
                    let mut cpus = nic.irq_cpu.clone();
                    cpus.sort_unstable();
                    cpus.dedup();
                    cpus.len()
                },
                nic_node: nic.node,
                packets: c.packets,
                interrupts: c.interrupts,
                packets_per_interrupt: c.packets as f64 / c.interrupts.max(1) as f64,
                woken_on_irq_cpu_pct: c.woken_on_irq_cpu as f64 * 100.0 / c.packets.max(1) as f64,
            }),
            account_mm_sched_callers: if e.cache_aware_on() {
                UpdateCurrCaller::ALL
                    .iter()
                    .map(|&c| (c.name().to_string(), m.mm_sched_callers[c as usize]))
                    .collect()
            } else {
                BTreeMap::new()
            },
            serve: wl.open_loop().map(|o| {
                let us = |q: f64| h.quantile(q) as f64 / 1e3;
                ServeReport {
                    offered_per_sec: o.offered_per_sec,
                    achieved_per_sec: if measured_secs > 0.0 {
                        m.completions as f64 / measured_secs
                    } else {
                        0.0
                    },
                    p50_us: us(0.5),
                    p90_us: us(0.9),
                    p99_us: us(0.99),
                    p999_us: us(0.999),
                    drops: 0,
                    outstanding: o.outstanding,
                }
            }),
        };
        r.rehash();
        r
    }

    /// The report with its `scx` section (`file`: the object's name), hash updated.
    pub fn with_scx(mut self, e: &Engine, file: &str) -> Report {
        self.scx = scx::scx_report(e, file);
        self.rehash();
        self
    }

    /// The report of a run on `kernel` (the name of a `kernels::KERNELS` entry) with the kernel
    /// knobs `sched` set, hash updated.
    pub fn on_kernel(
        mut self,
        kernel: &str,
        sched: &BTreeMap<String, u32>,
        features: &[String],
    ) -> Report {
        self.kernel = kernel.to_string();
        self.sched = sched.clone();
        self.features = features.to_vec();
        self.rehash();
        self
    }

    /// `report_hash`: FNV-1a of the JSON with the hash field empty.
    pub fn rehash(&mut self) {
        self.report_hash.clear();
        self.report_hash = fnv1a(&serde_json::to_string(&*self).unwrap_or_default());
    }

    /// What `cat /sys/kernel/debug/sched/features` printed for the run: the release's list with
    /// the side's writes applied.
    pub fn sched_features_line(&self) -> String {
        let mut f = crate::sched_features::defaults(&self.kernel);
        // the writes were checked when the run was built
        let _ = crate::sched_features::apply(&self.kernel, "features", &self.features, &mut f);
        crate::sched_features::debugfs_line(&self.kernel, &f)
    }

    /// Simulated seconds the figures cover: the run after its warm-up.
    pub fn measured_seconds(&self) -> f64 {
        self.sim_seconds - self.warmup_s
    }

    /// Kernel share of all CPU time, % (vmstat's `sy`): non-idle time outside user code.
    pub fn kernel_pct(&self) -> f64 {
        let user = self.symbol_percent("[user]");
        self.utilization * (100.0 - user)
    }

    pub fn symbol_percent(&self, sym: &str) -> f64 {
        self.profile
            .iter()
            .find(|p| p.symbol == sym)
            .map_or(0.0, |p| p.percent)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SymbolDelta {
    pub symbol: String,
    pub a: f64,
    pub b: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Delta {
    pub throughput_pct: f64,
    pub latency_min_pct: f64,
    pub latency_avg_pct: f64,
    pub latency_max_pct: f64,
    pub latency_p95_pct: f64,
    pub events_avg_pct: f64,
    pub events_stddev_pct: f64,
    pub contention_points: f64,
    pub profile: Vec<SymbolDelta>,
    /// % change of `counted_events_avg` / `counted_events_stddev`. Since schema 2.
    #[serde(default)]
    pub counted_events_avg_pct: f64,
    #[serde(default)]
    pub counted_events_stddev_pct: f64,
    /// % change of `wakeup_latency_us.p50` / `.p95` / `.p99`. Since schema 4.
    #[serde(default)]
    pub wakeup_p50_pct: f64,
    #[serde(default)]
    pub wakeup_p95_pct: f64,
    #[serde(default)]
    pub wakeup_p99_pct: f64,
}

impl Delta {
    pub fn between(a: &Report, b: &Report) -> Delta {
        let mut syms: Vec<&str> = a
            .profile
            .iter()
            .chain(&b.profile)
            .map(|p| p.symbol.as_str())
            .collect();
        syms.sort_unstable();
        syms.dedup();
        let mut profile: Vec<SymbolDelta> = syms
            .into_iter()
            .map(|s| SymbolDelta {
                symbol: s.to_string(),
                a: a.symbol_percent(s),
                b: b.symbol_percent(s),
            })
            .collect();
        profile.sort_by(|x, y| (y.a.max(y.b)).total_cmp(&x.a.max(x.b)));
        Delta {
            throughput_pct: pct(b.throughput_per_sec, a.throughput_per_sec),
            latency_min_pct: pct(b.latency_ms.min, a.latency_ms.min),
            latency_avg_pct: pct(b.latency_ms.avg, a.latency_ms.avg),
            latency_max_pct: pct(b.latency_ms.max, a.latency_ms.max),
            latency_p95_pct: pct(b.latency_ms.p95, a.latency_ms.p95),
            events_avg_pct: pct(b.events_avg, a.events_avg),
            events_stddev_pct: pct(b.events_stddev, a.events_stddev),
            contention_points: b.contention_pct - a.contention_pct,
            profile,
            counted_events_avg_pct: pct(b.counted_events_avg, a.counted_events_avg),
            counted_events_stddev_pct: pct(b.counted_events_stddev, a.counted_events_stddev),
            wakeup_p50_pct: pct(b.wakeup_latency_us.p50, a.wakeup_latency_us.p50),
            wakeup_p95_pct: pct(b.wakeup_latency_us.p95, a.wakeup_latency_us.p95),
            wakeup_p99_pct: pct(b.wakeup_latency_us.p99, a.wakeup_latency_us.p99),
        }
    }
}
