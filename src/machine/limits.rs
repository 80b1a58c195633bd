//! The limits every machine is checked against (`MachineSpec::validate`, `CpuMap::check`). They are
//! the one source of these ranges: `experiment::scenario::MACHINE_KEYS` gives them to validation,
//! links and the page. Nothing here depends on anything else.

use std::ops::RangeInclusive;

pub const MAX_CPUS: usize = 4096;

// The layout limits every machine is checked against (`MachineSpec::validate`). They are the one
// source of these ranges: `scenario::MACHINE_KEYS` gives them to validation, links and the page.
/// Sockets of a generated layout: up to 32 (HPE Superdome Flex; 16-socket POWER10 E1080 and
/// Xeon boxes); an imported machine has no socket limit of its own.
pub const SOCKETS: RangeInclusive<u32> = 1..=32;
pub const CORES_PER_SOCKET: RangeInclusive<u32> = 1..=2048;
/// Threads per core: x86 has 2, POWER8-POWER11 up to 8 (SMT8), SPARC M7/M8 8.
pub const SMT: RangeInclusive<u32> = 1..=8;
pub const NODES_PER_SOCKET: RangeInclusive<u32> = 1..=4;
/// At most the machine's cores per socket; this is the bound over all machines.
pub const CORES_PER_LLC: RangeInclusive<u32> = 1..=*CORES_PER_SOCKET.end();
/// The RMW hold window in ns (`hardware::DEFAULT_RMW_HOLD_NS` is the default).
pub const RMW_HOLD_NS: RangeInclusive<u32> = 0..=1000;
/// Store-buffer entries per CPU (the preset's core figure is the default, docs/MODEL.md §5c): from
/// one (every store waits for the one before it) to well above any core built (Golden Cove: 114).
pub const STORE_BUFFER_ENTRIES: RangeInclusive<u32> = 1..=512;

/// The network card's receive queues a scenario may ask for (`nic_queues`, `machine::nic`).
pub const NIC_QUEUES: RangeInclusive<u32> = 1..=MAX_CPUS as u32;
