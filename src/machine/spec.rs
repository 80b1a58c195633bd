//! `MachineSpec`: everything a preset or a custom machine is made from, the layout overrides of the
//! page and links (`LayoutOverrides`), and the check of a spec against the layout limits.

use crate::error::{FieldError, Invalid};
use crate::machine::cpu_map::CpuMap;
use crate::machine::hardware::{CoreStoreBuffer, LatencyTable, Vendor};
use crate::machine::limits::*;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::Arc;

/// Everything a preset or a custom machine is made from.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub name: String,
    pub description: &'static str,
    pub vendor: Vendor,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub smt: u32,
    pub nodes_per_socket: u32,
    pub cores_per_llc: u32,
    /// Cores sharing one L2 (an E-core module): the CLS level; 1 = no cluster above the core.
    pub cores_per_cluster: u32,
    /// Raw firmware SLIT when the preset has a measured one (else the vendor's regular form).
    pub slit: Option<Vec<Vec<u32>>>,
    /// LLC size in MiB (per LLC), for the cache-aware capacity checks.
    pub llc_mib: u32,
    pub latency: LatencyTable,
    /// How long a core keeps a line after a locked RMW before the next request is served, ns
    /// (a stated assumption, the same for every preset: see `hardware::DEFAULT_RMW_HOLD_NS`).
    pub rmw_hold_ns: u32,
    /// The core's store buffer (entries per CPU, from the preset's core: docs/MODEL.md §5c).
    pub store_buffer: CoreStoreBuffer,
    /// CONFIG_CPUMASK_OFFSTACK: `nohz.idle_cpus_mask` is a pointer to separately allocated bits
    /// (distribution kernels for big machines), else the bits sit inline (NR_CPUS = 8192 either way).
    pub cpumask_offstack: bool,
    /// The network card's receive queues (None: the driver's default, `nic::default_queues`) and
    /// the node it is attached to (`nic::Nic`).
    pub nic_queues: Option<u32>,
    pub nic_node: u32,
    /// An imported machine (`machine_file`): the exact CPU map and SLIT. The layout fields above
    /// then hold its maxima (`Shape`), and the hardware figures are the preset's.
    pub map: Option<Arc<CpuMap>>,
}

/// Optional overrides of a preset's layout (the page's machine knobs, the link's keys).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayoutOverrides {
    pub sockets: Option<u32>,
    pub cores_per_socket: Option<u32>,
    /// `"on"` / `"off"` or the thread count (`SMT_WORDS`); serialized as the count.
    #[serde(default, deserialize_with = "smt_value")]
    pub smt: Option<u32>,
    pub nodes_per_socket: Option<u32>,
    pub cores_per_llc: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmw_hold_ns: Option<u32>,
    /// 1: CONFIG_CPUMASK_OFFSTACK=y, 0: n (`OFF_ON_WORDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpumask_offstack: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_per_cluster: Option<u32>,
    /// The core's store-buffer entries (default: the preset's core, docs/MODEL.md §5c).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_buffer_entries: Option<u32>,
    /// The network card's receive queues (`limits::NIC_QUEUES`; empty: the driver's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_queues: Option<u32>,
    /// The node the network card is attached to (empty: node 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_node: Option<u32>,
}

/// A kernel option given as a word: its value.
pub const OFF_ON_WORDS: &[(&str, u32)] = &[("off", 0), ("on", 1)];

/// SMT given as a word, everywhere (JSON, links, CLI, page): the word and its thread count.
pub const SMT_WORDS: &[(&str, u32)] = &[("off", 1), ("on", 2)];

/// `smt` in JSON: a thread count (range-checked by validation like every override) or a word of
/// `SMT_WORDS` (also as a numeric string, as links and form fields carry it).
fn smt_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::{Error, Visitor};
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("\"on\", \"off\" or a thread count 1..=8")
        }
        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(V)
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
            u32::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is out of range: allowed {SMT:?}")))
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("{v} is out of range: allowed {SMT:?}")))
                .and_then(|v| self.visit_u64(v))
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
            if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                Ok(Some(v as u32))
            } else {
                Err(E::custom(format!("{v} is not allowed: on, off or 1..=8")))
            }
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
            parse_smt(v).map(Some).map_err(E::custom)
        }
    }
    d.deserialize_option(V)
}

/// `on`, `off` or a thread count (unchecked range: validation reports it with the field name).
pub fn parse_smt(v: &str) -> Result<u32, String> {
    let t = v.trim();
    SMT_WORDS
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(t))
        .map(|&(_, n)| n)
        .or_else(|| t.parse().ok())
        .ok_or_else(|| format!("{v:?} is not allowed: on, off or 1..=8"))
}

impl MachineSpec {
    /// Applies layout overrides; a raw SLIT only survives if the node layout is unchanged.
    pub fn with_overrides(mut self, o: &LayoutOverrides) -> Result<MachineSpec, Invalid> {
        if self.map.is_some() {
            // a preset with its own CPU map: only the non-layout knobs apply
            let layout = [
                ("sockets", o.sockets),
                ("cores_per_socket", o.cores_per_socket),
                ("smt", o.smt),
                ("nodes_per_socket", o.nodes_per_socket),
                ("cores_per_llc", o.cores_per_llc),
                ("cores_per_cluster", o.cores_per_cluster),
            ];
            let errs: Vec<FieldError> = layout
                .iter()
                .filter(|(_, v)| v.is_some())
                .map(|(k, _)| {
                    FieldError::new(
                        k,
                        format!(
                            "{k} does not apply to the {} preset: its layout is its CPU map (import a machine file for another)",
                            self.name
                        ),
                    )
                })
                .collect();
            if !errs.is_empty() {
                return Err(Invalid(errs));
            }
        }
        let before = (self.sockets, self.nodes_per_socket);
        if let Some(v) = o.sockets {
            self.sockets = v;
        }
        if let Some(v) = o.cores_per_socket {
            self.cores_per_socket = v;
        }
        if let Some(v) = o.smt {
            self.smt = v;
        }
        if let Some(v) = o.nodes_per_socket {
            self.nodes_per_socket = v;
        }
        if let Some(v) = o.rmw_hold_ns {
            self.rmw_hold_ns = v;
        }
        if let Some(v) = o.store_buffer_entries {
            self.store_buffer.entries = v;
        }
        if let Some(v) = o.nic_queues {
            self.nic_queues = Some(v);
        }
        if let Some(v) = o.nic_node {
            self.nic_node = v;
        }
        if let Some(v) = o.cpumask_offstack {
            if v > 1 {
                return Err(Invalid(vec![FieldError::new(
                    "cpumask_offstack",
                    format!("{v} is not allowed: off (0) or on (1)"),
                )]));
            }
            self.cpumask_offstack = v == 1;
        }
        if self.map.is_some() {
            // the layout is the map's
        } else if let Some(v) = o.cores_per_llc {
            self.cores_per_llc = v;
        } else if self.vendor == Vendor::Intel {
            // Intel: the LLC is the socket, split per SNC node for the scheduler (match_llc).
            self.cores_per_llc = self.cores_per_socket.div_ceil(self.nodes_per_socket.max(1));
        } else {
            self.cores_per_llc = self.cores_per_llc.min(self.cores_per_socket);
        }
        if self.map.is_some() {
        } else if let Some(v) = o.cores_per_cluster {
            self.cores_per_cluster = v;
        } else {
            self.cores_per_cluster = self.cores_per_cluster.min(self.cores_per_llc);
        }
        if (self.sockets, self.nodes_per_socket) != before {
            self.slit = None;
        }
        self.validate()?;
        Ok(self)
    }

    /// A preset with its own CPU map (`Preset::map`): the map's layout.
    pub(crate) fn with_preset_map(self, map: Option<fn() -> CpuMap>) -> MachineSpec {
        match map {
            Some(f) => self.with_map(f()),
            None => self,
        }
    }

    /// This preset's hardware with an imported machine's layout.
    pub fn with_map(mut self, map: CpuMap) -> MachineSpec {
        let s = map.shape();
        self.sockets = s.sockets;
        self.cores_per_socket = s.cores_per_socket;
        self.smt = s.smt;
        self.nodes_per_socket = s.nodes_per_socket;
        self.cores_per_llc = s.cores_per_llc;
        self.cores_per_cluster = s.cores_per_cluster;
        self.slit = Some(map.slit.clone());
        self.map = Some(Arc::new(map));
        self
    }

    /// Logical CPUs of the machine.
    pub fn nr_cpus(&self) -> u64 {
        match &self.map {
            Some(m) => m.nr_cpus() as u64,
            None => self.sockets as u64 * self.cores_per_socket as u64 * self.smt as u64,
        }
    }

    /// The hold window outside its range (checked for presets and imported machines alike).
    fn rmw_hold_error(&self) -> Option<FieldError> {
        (!RMW_HOLD_NS.contains(&self.rmw_hold_ns)).then(|| {
            FieldError::new(
                "rmw_hold_ns",
                format!(
                    "{} is out of range: allowed {RMW_HOLD_NS:?} ns",
                    self.rmw_hold_ns
                ),
            )
        })
    }

    /// The store-buffer entries outside their range (presets and imported machines alike).
    fn store_buffer_error(&self) -> Option<FieldError> {
        let n = self.store_buffer.entries;
        (!STORE_BUFFER_ENTRIES.contains(&n)).then(|| {
            FieldError::new(
                "store_buffer_entries",
                format!("{n} is out of range: allowed {STORE_BUFFER_ENTRIES:?} entries per CPU"),
            )
        })
    }

    /// The network card's fields against their ranges and this machine's `nodes`.
    fn nic_errors(&self, nodes: u32) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(q) = self
            .nic_queues
            .filter(|q| !super::limits::NIC_QUEUES.contains(q))
        {
            errs.push(FieldError::new(
                "nic_queues",
                format!(
                    "{q} is out of range: allowed {:?} receive queues",
                    super::limits::NIC_QUEUES
                ),
            ));
        }
        if self.nic_node >= nodes {
            errs.push(FieldError::new(
                "nic_node",
                format!(
                    "node {} does not exist: this machine has nodes 0..={}",
                    self.nic_node,
                    nodes.saturating_sub(1)
                ),
            ));
        }
        errs
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(m) = &self.map {
            let mut errs: Vec<FieldError> = m
                .check(&|_| (0, 0), &|_| (0, 0))
                .into_iter()
                .map(|e| FieldError::new("cpu_map", e.to_string()))
                .collect();
            errs.extend(self.rmw_hold_error());
            errs.extend(self.store_buffer_error());
            errs.extend(self.nic_errors(m.slit.len() as u32));
            return if errs.is_empty() {
                Ok(())
            } else {
                Err(Invalid(errs))
            };
        }
        let mut errs = Vec::new();
        if !SOCKETS.contains(&self.sockets) {
            errs.push(FieldError::new(
                "sockets",
                format!("{} is out of range: allowed {SOCKETS:?}", self.sockets),
            ));
        }
        if !CORES_PER_SOCKET.contains(&self.cores_per_socket) {
            errs.push(FieldError::new(
                "cores_per_socket",
                format!(
                    "{} is out of range: allowed {CORES_PER_SOCKET:?}",
                    self.cores_per_socket
                ),
            ));
        }
        if !SMT.contains(&self.smt) {
            errs.push(FieldError::new(
                "smt",
                format!(
                    "{} is not allowed: on (2), off (1) or a thread count {SMT:?}",
                    self.smt
                ),
            ));
        }
        if !NODES_PER_SOCKET.contains(&self.nodes_per_socket) {
            errs.push(FieldError::new(
                "nodes_per_socket",
                format!(
                    "{} is out of range: allowed {NODES_PER_SOCKET:?} (1: SNC off / NPS1)",
                    self.nodes_per_socket
                ),
            ));
        } else if self.cores_per_socket < self.nodes_per_socket * 2 {
            errs.push(FieldError::new(
                "nodes_per_socket",
                format!(
                    "{} nodes per socket need at least {} cores per socket (2 per node), got {}",
                    self.nodes_per_socket,
                    self.nodes_per_socket * 2,
                    self.cores_per_socket
                ),
            ));
        }
        if !(*CORES_PER_LLC.start()..=self.cores_per_socket.max(1)).contains(&self.cores_per_llc) {
            errs.push(FieldError::new(
                "cores_per_llc",
                format!(
                    "{} is out of range: allowed 1..={}",
                    self.cores_per_llc, self.cores_per_socket
                ),
            ));
        }
        errs.extend(self.rmw_hold_error());
        errs.extend(self.store_buffer_error());
        errs.extend(self.nic_errors(self.sockets.saturating_mul(self.nodes_per_socket)));
        if self.cores_per_cluster == 0 || self.cores_per_cluster > self.cores_per_llc.max(1) {
            errs.push(FieldError::new(
                "cores_per_cluster",
                format!(
                    "{} is out of range: allowed 1..={} (cores per LLC; 1: no cluster level)",
                    self.cores_per_cluster, self.cores_per_llc
                ),
            ));
        }
        let cpus = self.sockets as u64 * self.cores_per_socket as u64 * self.smt as u64;
        if errs.is_empty() && cpus > MAX_CPUS as u64 {
            errs.push(FieldError::new(
                "cores_per_socket",
                format!("{cpus} CPUs (sockets x cores x SMT) exceed the limit of {MAX_CPUS}"),
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Invalid(errs))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;

    #[test]
    fn impossible_layouts_name_the_field() {
        let spec = preset("custom").unwrap();
        let e = spec
            .clone()
            .with_overrides(&LayoutOverrides {
                cores_per_socket: Some(2),
                nodes_per_socket: Some(3),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0[0].field, "nodes_per_socket");
        let e = spec
            .with_overrides(&LayoutOverrides {
                sockets: Some(8),
                cores_per_socket: Some(512),
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.0[0].message.contains("4096"), "{e}");
    }

    #[test]
    fn cluster_size_is_checked_against_the_llc() {
        let e = preset("custom")
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_llc: Some(8),
                cores_per_cluster: Some(9),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0[0].field, "cores_per_cluster");
        assert!(e.0[0].message.contains("1..=8"), "{e}");
        // a preset's cluster shrinks with an LLC override below it, like the AMD LLC does
        let s = preset("custom")
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_cluster: Some(4),
                ..Default::default()
            })
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_llc: Some(2),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(s.cores_per_cluster, 2);
    }

    #[test]
    fn smt_is_a_word_or_a_thread_count() {
        for (raw, n) in [
            ("on", 2),
            ("off", 1),
            ("OFF", 1),
            ("1", 1),
            ("2", 2),
            (" on ", 2),
        ] {
            assert_eq!(parse_smt(raw), Ok(n), "{raw}");
        }
        assert!(parse_smt("maybe").unwrap_err().contains("on, off or 1..=8"));
        for (json, want) in [
            (r#"{"smt":"off"}"#, Some(1)),
            (r#"{"smt":"on"}"#, Some(2)),
            (r#"{"smt":1}"#, Some(1)),
            (r#"{"smt":"2"}"#, Some(2)),
            (r#"{"smt":null}"#, None),
            (r#"{}"#, None),
        ] {
            let o: LayoutOverrides = serde_json::from_str(json).unwrap();
            assert_eq!(o.smt, want, "{json}");
        }
        assert!(serde_json::from_str::<LayoutOverrides>(r#"{"smt":"maybe"}"#).is_err());
        assert!(serde_json::from_str::<LayoutOverrides>(r#"{"smt":-1}"#).is_err());
        // written as the count: JSON of existing scenarios is unchanged
        let o = LayoutOverrides {
            smt: Some(1),
            ..Default::default()
        };
        assert_eq!(serde_json::to_value(&o).unwrap()["smt"], 1);
    }
}
