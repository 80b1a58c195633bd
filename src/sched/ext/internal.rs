//! The constants and small types of kernel/sched/ext_internal.h (v6.18) that both the core
//! (`core.rs`, the ops' call sites) and the kfuncs (`kfuncs.rs`) use: exit kinds, enqueue flags,
//! the op context and where a task is. Both import them from here, so neither imports the other's
//! definitions back.

/// `SCX_SLICE_DFL` (include/linux/sched/ext.h:20).
pub const SCX_SLICE_DFL: u64 = 20_000_000;
/// `SCX_WATCHDOG_MAX_TIMEOUT` = 30 s (ext_internal.h:13), also the default.
pub const SCX_WATCHDOG_MAX_TIMEOUT_NS: u64 = 30_000_000_000;
/// `SCX_DSP_MAX_LOOPS` (ext.c): dispatch rounds per balance.
pub const SCX_DSP_MAX_LOOPS: u32 = 32;
/// `SCX_DSP_DFL_MAX_BATCH`.
pub const SCX_DSP_DFL_MAX_BATCH: u32 = 32;
/// Instructions one op call may run before it is ejected (the kernel's verifier bounds programs
/// statically; without a verifier this budget stands in for it).
pub const OP_BUDGET: u64 = 1_000_000;

// `enum scx_exit_kind` (ext_internal.h:28).
pub const SCX_EXIT_DONE: u32 = 1;
pub const SCX_EXIT_UNREG_BPF: u32 = 65;
pub const SCX_EXIT_ERROR: u32 = 1024;
pub const SCX_EXIT_ERROR_BPF: u32 = 1025;
pub const SCX_EXIT_ERROR_STALL: u32 = 1026;

// enq flags (ext_internal.h:908) and wake flags.
pub const SCX_ENQ_WAKEUP: u64 = 0x1;
pub const SCX_ENQ_HEAD: u64 = 0x10;
pub const SCX_ENQ_LAST: u64 = 1 << 41;
pub const SCX_DEQ_SLEEP: u64 = 0x1;

/// Why and when the BPF scheduler was disabled (what `scx_exit_info` and the kernel's
/// "sched_ext: BPF scheduler ... disabled" line carry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitInfo {
    pub kind: u32,
    pub exit_code: i64,
    pub reason: String,
    pub msg: String,
    pub at_ns: u64,
}

/// Which op is running: the kfunc context checks (`scx_kf_allowed`) read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpCtx {
    None,
    SelectCpu,
    Enqueue,
    Dispatch,
    /// Sleepable or unlocked ops (init, init_task, exit, ...).
    Unlocked,
    /// Any other op called with the rq lock held (running, stopping, tick, ...).
    Rest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    /// Not runnable.
    Off,
    /// Runnable, in the hands of the BPF scheduler (ops.enqueue kept it).
    Bpf,
    /// In a DSQ.
    Queued(u64),
    Running(u32),
}

// `enum scx_kick_flags` (ext_internal.h).
pub const SCX_KICK_IDLE: u64 = 1;
pub const SCX_KICK_PREEMPT: u64 = 2;

/// A shared cache line of the ext core that a call touched, for the engine to price: a DSQ's
/// lock (`scx_dispatch_q.lock`, taken with its list in the same line; a local DSQ is protected by
/// its CPU's rq lock) or the built-in idle mask (`idle_masks.cpu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// The DSQ with this id (a local one: `SCX_DSQ_LOCAL_ON | cpu`).
    Dsq(u64),
    IdleMask,
    /// A NUMA node's idle mask (`SCX_OPS_BUILTIN_IDLE_PER_NODE`).
    IdleMaskNode(u32),
}

/// How a touched line is accessed: a lock or test-and-clear (locked RMW), a read, a plain store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    Atomic,
    Load,
    Store,
}
