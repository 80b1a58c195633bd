//! Kernel work a workload's task does inside a system call, step by step (`Step::Kernel`): compute
//! charged to a kernel function, and accesses to the kernel objects' cache lines (a socket's lock,
//! a slab page's `struct slab`), priced by the engine's cache-line model like the scheduler's own
//! lines, so that c2c shows them by name with their HITMs. The workload declares its objects'
//! lines (`Workload::kernel_lines`) and the per-CPU lines of the allocator
//! (`Workload::per_cpu_kernel_lines`); the engine creates them.

use super::TaskId;

/// The kernel function a piece of kernel work is charged to, as perf names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelFn {
    /// The system call's entry and exit and the VFS layers above the file's own method
    /// (`entry_SYSCALL_64`, `ksys_write`/`ksys_read`, `sock_write_iter`, ...).
    Syscall,
    UnixStreamSendmsg,
    UnixStreamReadGeneric,
    AnonPipeWrite,
    AnonPipeRead,
    /// `kmem_cache_alloc_node` / `__kmalloc_node_track_caller`: SLUB's per-CPU freelist pop.
    SlabAlloc,
    /// `kmem_cache_free` / `kfree`: the local push or the remote `__slab_free`.
    SlabFree,
    /// `__wake_up_sync_key` / `prepare_to_wait`: a wait queue's spinlock.
    WaitQueue,
    /// `tcp_sendmsg` down to the device (`loopback_xmit` or the driver's doorbell).
    TcpSendmsg,
    /// `tcp_recvmsg` and its skb's free (`skb_attempt_defer_free`).
    TcpRecvmsg,
    /// NET_RX's receive of one TCP segment: `tcp_v4_rcv` up to `sock_def_readable`, with the
    /// deferred skbs' flush (`skb_defer_free_flush`) and the ACK's frees (`tcp_ack`).
    TcpV4Rcv,
}

/// What kernel code does to a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelAccess {
    Load,
    /// A plain store (through the store buffer).
    Store,
    /// A locked read-modify-write: a spinlock, a `refcount_add`, a `cmpxchg`.
    Atomic,
}

/// Which line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelLine {
    /// Line `i` of `Workload::kernel_lines`.
    Object(u32),
    /// Line `line` of `Workload::per_cpu_kernel_lines` of the CPU task `of` runs on (the running
    /// task) or last ran on (another task: the writer of a message being read).
    PerCpu { line: u32, of: TaskId },
    /// Line `line` of `Workload::per_cpu_kernel_lines` of the interrupt CPU of the receive queue
    /// RSS gives connection `conn` (where NET_RX allocates its packets' skbs).
    RxCpu { line: u32, conn: u32 },
}

/// One step of a system call's kernel work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelStep {
    Compute {
        func: KernelFn,
        ns: u64,
    },
    Access {
        line: KernelLine,
        op: KernelAccess,
        func: KernelFn,
    },
}

/// A line of a kernel object the workload's tasks share (a socket's, a pipe's): its c2c name, its
/// field, and the task whose first CPU's node holds its memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLineDecl {
    pub name: String,
    pub field: &'static str,
    pub near: TaskId,
}
