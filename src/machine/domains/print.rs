//! The domains as the kernel prints them: the `sched_verbose` boot dmesg (`sched_domain_debug`),
//! the v6.18 debugfs files (`register_sd`) and the `--json` domain list.

use super::*;
use serde::Serialize;

impl SchedDomains {
    /// A span in the kernel's CPU numbers.
    fn list(&self, s: &CpuSet) -> String {
        crate::machine::cpuset::cpulist(s.iter().map(|i| self.cpu_id[i]))
    }

    fn no(&self, cpu: u32) -> u32 {
        self.cpu_id[cpu as usize]
    }

    /// The kernel's sched_verbose dmesg for one CPU, plus each domain's debugfs values.
    pub fn sched_verbose(&self, cpu: usize) -> String {
        let mut s = format!("CPU{} attaching sched-domain(s):\n", self.cpu_id[cpu]);
        for (k, d) in self.of(cpu).enumerate() {
            let indent = " ".repeat(k + 1);
            s += &format!(
                "{indent}domain-{k}: span={} level={}\n",
                self.list(&d.span),
                d.name
            );
            let groups: Vec<String> = d
                .groups
                .iter()
                .take(8)
                .map(|g| format!("{}:{{ span={} }}", self.no(g.cpus[0]), self.list(&g.span)))
                .collect();
            let more = if d.groups.len() > 8 {
                format!(", ... ({} groups)", d.groups.len())
            } else {
                String::new()
            };
            s += &format!("{indent} groups: {}{more}\n", groups.join(", "));
            s += &format!(
                "{indent} debugfs: name={} flags={} min_interval={} max_interval={} busy_factor={} imbalance_pct={} cache_nice_tries={}\n",
                d.name,
                flag_names(d.flags).join(" "),
                d.min_interval,
                d.max_interval,
                d.busy_factor,
                d.imbalance_pct,
                d.cache_nice_tries
            );
        }
        s
    }

    /// What `sched_domain_debug` prints for one CPU at boot with `sched_verbose`
    /// (kernel/sched/topology.c): the domains bottom-up, each group as `id:{ span=... }` with the
    /// balance mask of an overlapping group that differs from its span and the group capacity
    /// when it is not SCHED_CAPACITY_SCALE. The capacity is 1024 per CPU (no RT/IRQ pressure in
    /// the model); the id is the first CPU of the group (of its balance mask when overlapping).
    pub fn dmesg(&self, cpu: usize) -> String {
        let no = self.cpu_id[cpu];
        if self.per_cpu[cpu].is_empty() {
            return format!("CPU{no} attaching NULL sched-domain.\n");
        }
        let mut s = format!("CPU{no} attaching sched-domain(s):\n");
        let n = self.per_cpu.len();
        for (k, d) in self.of(cpu).enumerate() {
            s += &format!(
                "{:k$} domain-{k}: span={} level={}\n",
                "",
                self.list(&d.span),
                d.name
            );
            s += &format!("{:w$} groups:", "", w = k + 1);
            for (i, g) in d.groups.iter().enumerate() {
                let overlap = d.has(SD_OVERLAP);
                let id = if overlap {
                    g.balance_cpus.first().copied().unwrap_or(g.cpus[0])
                } else {
                    g.cpus[0]
                };
                s += &format!(" {}:{{ span={}", self.no(id), self.list(&g.span));
                if overlap && g.balance_cpus != g.cpus {
                    let mut m = CpuSet::new(n);
                    g.balance_cpus.iter().for_each(|&c| m.set(c as usize));
                    s += &format!(" mask={}", self.list(&m));
                }
                let cap = SCHED_CAPACITY_SCALE * g.cpus.len() as u64;
                if cap != SCHED_CAPACITY_SCALE {
                    s += &format!(" cap={cap}");
                }
                s += " }";
                if i + 1 < d.groups.len() {
                    s += ",";
                }
            }
            s += "\n";
        }
        s
    }

    /// The files of /sys/kernel/debug/sched/domains/cpuN/domainM/ (v6.18 `register_sd`) as
    /// `grep . cpuN/domain*/*` lists them: name, flags and groups_flags (`sd_flags_show`: the
    /// names, each followed by a space), the sd_init intervals, `level` and
    /// `max_newidle_lb_cost` (0 at boot: no newidle balance has run).
    pub fn debugfs(&self, cpu: usize) -> String {
        let mut s = String::new();
        let doms: Vec<&Domain> = self.of(cpu).collect();
        for (k, d) in doms.iter().enumerate() {
            let dir = format!(
                "/sys/kernel/debug/sched/domains/cpu{}/domain{k}",
                self.cpu_id[cpu]
            );
            let names = |f: u32| {
                flag_names(f)
                    .iter()
                    .map(|n| format!("{n} "))
                    .collect::<String>()
            };
            // sched groups carry their child domain's flags; none for the lowest domain
            let groups_flags = d.groups[0].flags; // sd->groups->flags
            for (file, v) in [
                ("busy_factor", d.busy_factor.to_string()),
                ("cache_nice_tries", d.cache_nice_tries.to_string()),
                ("flags", names(d.flags)),
                ("groups_flags", names(groups_flags)),
                ("imbalance_pct", d.imbalance_pct.to_string()),
                ("level", d.level.to_string()),
                ("max_interval", d.max_interval.to_string()),
                ("max_newidle_lb_cost", "0".to_string()),
                ("min_interval", d.min_interval.to_string()),
                ("name", d.name.to_string()),
            ] {
                s += &format!("{dir}/{file}:{v}\n");
            }
        }
        s
    }

    pub fn to_json(&self, cpu: usize) -> Vec<DomainJson> {
        self.of(cpu)
            .enumerate()
            .map(|(k, d)| DomainJson {
                level: k as u32,
                sd_level: d.level,
                name: d.name,
                span: self.list(&d.span),
                span_weight: d.weight(),
                flags: flag_names(d.flags),
                min_interval: d.min_interval,
                max_interval: d.max_interval,
                busy_factor: d.busy_factor,
                imbalance_pct: d.imbalance_pct,
                cache_nice_tries: d.cache_nice_tries,
                groups: d.groups.iter().map(|g| self.list(&g.span)).collect(),
            })
            .collect()
    }
}

#[derive(Serialize, Debug)]
pub struct DomainJson {
    /// The attach index: `domain-<level>` in sched_verbose and `domain<level>` in debugfs paths.
    pub level: u32,
    /// The kernel's `sd->level` (debugfs `level`): counts the levels built, before degenerate
    /// ones were removed, so it can be larger than `level`.
    pub sd_level: u32,
    pub name: &'static str,
    pub span: String,
    pub span_weight: u32,
    pub flags: Vec<&'static str>,
    pub min_interval: u32,
    pub max_interval: u32,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub groups: Vec<String>,
}
