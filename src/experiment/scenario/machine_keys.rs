//! The machine override keys: one row per field of `LayoutOverrides`, with its link key, range
//! and description, read by validation, the link codec, the CLI and the page.

use super::*;

/// One machine layout override: a field of `LayoutOverrides` (the experiment's `machine` object),
/// its share-link key and its range. The CLI flag is `--` + `key` with `-` for `_` (tests/cli.rs
/// checks that the binary accepts every one). Validation, the link codec and the page's machine
/// fields all read this table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MachineKey {
    /// Field name in the experiment's `machine` object (JSON) and in `LayoutOverrides`.
    pub key: &'static str,
    /// Share-link key.
    pub link: &'static str,
    pub min: u32,
    pub max: u32,
    /// Words accepted for values (and written in links), e.g. `on` / `off` for SMT; empty for
    /// plain numbers.
    pub words: &'static [(&'static str, u32)],
    pub description: &'static str,
    #[serde(skip)]
    pub get: fn(&LayoutOverrides) -> Option<u32>,
    #[serde(skip)]
    pub set: fn(&mut LayoutOverrides, Option<u32>),
}

impl MachineKey {
    /// A value as text (link, CLI, form): a word of `words` or an integer, range-checked. The one
    /// rule every input path uses.
    pub fn parse(&self, raw: &str) -> Result<u32, FieldError> {
        let t = raw.trim();
        let word = self
            .words
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(t))
            .map(|&(_, v)| v);
        match word.or_else(|| t.parse::<u32>().ok()) {
            Some(v) => self.check(v),
            None => Err(FieldError::new(
                self.key,
                range_or_nan(raw, self.allowed(&format!("{raw:?}"))),
            )),
        }
    }

    /// The value as a link writes it: its word if it has one.
    pub fn format(&self, v: u32) -> String {
        match self.words.iter().find(|&&(_, x)| x == v) {
            Some((w, _)) => w.to_string(),
            None => v.to_string(),
        }
    }

    fn allowed(&self, given: &str) -> String {
        let words: Vec<String> = self.words.iter().map(|(w, _)| w.to_string()).collect();
        if words.is_empty() {
            format!(
                "{given} is out of range: allowed {}..={} ({})",
                self.min, self.max, self.description
            )
        } else {
            format!(
                "{given} is not allowed: {}, or the count {}..={}",
                words.join(" or "),
                self.min,
                self.max
            )
        }
    }

    pub(super) fn check(&self, v: u32) -> Result<u32, FieldError> {
        if (self.min..=self.max).contains(&v) {
            Ok(v)
        } else {
            Err(FieldError::new(self.key, self.allowed(&v.to_string())))
        }
    }
}

/// Every machine override key (append-only: links and the CLI use them). The ranges are
/// `topology`'s layout limits, which every machine is checked against.
pub const MACHINE_KEYS: &[MachineKey] = &[
    MachineKey {
        key: "sockets",
        link: "sockets",
        min: *limits::SOCKETS.start(),
        max: *limits::SOCKETS.end(),
        words: &[],
        description: "sockets (packages)",
        get: |o| o.sockets,
        set: |o, v| o.sockets = v,
    },
    MachineKey {
        key: "cores_per_socket",
        link: "cores_per_socket",
        min: *limits::CORES_PER_SOCKET.start(),
        max: *limits::CORES_PER_SOCKET.end(),
        words: &[],
        description: "physical cores per socket",
        get: |o| o.cores_per_socket,
        set: |o, v| o.cores_per_socket = v,
    },
    MachineKey {
        key: "smt",
        link: "smt",
        min: *limits::SMT.start(),
        max: *limits::SMT.end(),
        words: spec::SMT_WORDS,
        description: "SMT: on or off (hardware threads per core: 2 or 1), or the count 1..=8 (POWER SMT4/SMT8)",
        get: |o| o.smt,
        set: |o, v| o.smt = v,
    },
    MachineKey {
        key: "nodes_per_socket",
        link: "nodes_per_socket",
        min: *limits::NODES_PER_SOCKET.start(),
        max: *limits::NODES_PER_SOCKET.end(),
        words: &[],
        description: "NUMA nodes per socket (Intel SNC / AMD NPS)",
        get: |o| o.nodes_per_socket,
        set: |o, v| o.nodes_per_socket = v,
    },
    MachineKey {
        key: "cores_per_llc",
        link: "cores_per_llc",
        min: *limits::CORES_PER_LLC.start(),
        max: *limits::CORES_PER_LLC.end(),
        words: &[],
        description: "cores sharing one last-level cache (empty: the preset's)",
        get: |o| o.cores_per_llc,
        set: |o, v| o.cores_per_llc = v,
    },
    MachineKey {
        key: "rmw_hold_ns",
        link: "rmw_hold_ns",
        min: *limits::RMW_HOLD_NS.start(),
        max: *limits::RMW_HOLD_NS.end(),
        words: &[],
        description: "ns a core keeps a line after a locked RMW before the next request is served (no direct measurement; default 0, bounded by the CAS ping-pong tables)",
        get: |o| o.rmw_hold_ns,
        set: |o, v| o.rmw_hold_ns = v,
    },
    MachineKey {
        key: "cpumask_offstack",
        link: "cpumask_offstack",
        min: 0,
        max: 1,
        words: spec::OFF_ON_WORDS,
        description: "kernel CONFIG_CPUMASK_OFFSTACK: on (distribution kernels: nohz.idle_cpus_mask's bits in their own lines, reached through a pointer in the nohz struct) or off (bits inline)",
        get: |o| o.cpumask_offstack,
        set: |o, v| o.cpumask_offstack = v,
    },
    MachineKey {
        key: "cores_per_cluster",
        link: "cores_per_cluster",
        min: 1,
        max: 2048,
        words: &[],
        description: "cores sharing one L2, the CLS level (1: none; empty: the preset's)",
        get: |o| o.cores_per_cluster,
        set: |o, v| o.cores_per_cluster = v,
    },
    MachineKey {
        key: "store_buffer_entries",
        link: "store_buffer_entries",
        min: *limits::STORE_BUFFER_ENTRIES.start(),
        max: *limits::STORE_BUFFER_ENTRIES.end(),
        words: &[],
        description: "store-buffer entries per CPU (x86-TSO: stores commit in order, a full buffer stalls; empty: the preset's core figure)",
        get: |o| o.store_buffer_entries,
        set: |o, v| o.store_buffer_entries = v,
    },
    MachineKey {
        key: "nic_queues",
        link: "nic_queues",
        min: *crate::machine::limits::NIC_QUEUES.start(),
        max: *crate::machine::limits::NIC_QUEUES.end(),
        words: &[],
        description: "the network card's receive queues, each with its interrupt on one CPU, the card's node first (empty: the mlx5 default, one per CPU up to 63)",
        get: |o| o.nic_queues,
        set: |o, v| o.nic_queues = v,
    },
    MachineKey {
        key: "nic_node",
        link: "nic_node",
        min: 0,
        max: 1023,
        words: &[],
        description: "the NUMA node the network card is attached to (empty: node 0)",
        get: |o| o.nic_node,
        set: |o, v| o.nic_node = v,
    },
];
