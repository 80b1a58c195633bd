//! schedplay: a simulator of Linux scheduler placement and load balancing on large multi-socket
//! machines, and of the cache-line contention inside the scheduler.

//!
//! The layers, bottom up; a layer uses only the layers below it (ARCHITECTURE.md, "Layers"):
//! - `error`, `sim` (event queue, RNG, deterministic maths), `stats` (means, intervals, trends),
//!   `protobuf` (the wire format Perfetto traces are written in):
//!   no knowledge of machines or scheduling;
//! - `bpf`: the BPF interpreter and `.bpf.o` loader (knows nothing of scheduling);
//! - `machine`: topology, hardware figures and presets, CPU sets and maps, sched domains;
//! - `assumptions`: the assumed figures the engine and workloads read, with their plausible ranges;
//! - `coherence`: the cache-line model, priced by the machine;
//! - `patches`: the kernel patch toggles; `kernels`: the releases and what each merged;
//!   `llc_balancing`: the merged cache-aware scheduling's build option and debugfs knobs;
//! - `sched` (the engine) and `workload` (each task's next step);
//! - `experiment`: scenarios, links, repeats, warm-up, sweeps, grids, validation, statistics;
//! - `report`: the report and its text renderers;
//! - the front doors: the CLI (`src/main.rs`, `src/cli/`) and `wasm`.

pub mod assumptions;
pub mod bpf;
pub mod coherence;
pub mod error;
pub mod experiment;
pub mod kernels;
pub mod llc_balancing;
pub mod machine;
pub mod patches;
pub mod protobuf;
pub mod report;
pub mod sched;
pub mod sched_features;
pub mod sim;
pub mod stats;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
pub mod workload;

// The crate's face: the types and calls most users need, under short names.
pub use experiment::run::{Run, run, run_ab, run_traced};
pub use experiment::scenario::{Experiment, Side};
pub use report::{Delta, Report};
