//! The machine layer: what a box is, before anything runs on it. Bottom up: `limits` (the layout
//! ranges), `hardware` (vendor, latency classes and tables, the RMW hold default), `cpuset` (the
//! kernel's cpumask), `cpu_map` (an imported machine's exact map, parsed from lscpu / numactl
//! text), `spec` (`MachineSpec` and the layout overrides), `presets` (the preset table),
//! `topology` (CPU numbering, SLIT, transfer latency between CPUs), `nic` (the network card's
//! receive queues and their interrupt CPUs), `print` (a topology as lscpu /
//! numactl print it) and `domains` (the sched domains `kernel/sched/topology.c` builds). It uses
//! only `error`; nothing here knows about scheduling at run time.

pub mod arch_presets;
pub mod cpu_map;
pub mod cpuset;
pub mod domains;
pub mod hardware;
pub mod limits;
pub mod nic;
pub mod presets;
pub mod print;
pub mod spec;
pub mod topology;
