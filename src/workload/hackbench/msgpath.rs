//! The kernel side of one hackbench `write()` and `read()` as v6.18 runs them, as a script of
//! compute and cache-line accesses (`Step::Kernel`; the steps and their file:line are in
//! docs/MODEL.md §18, "What a message costs the kernel"):
//! - AF_UNIX stream: `unix_stream_sendmsg` charges the skb to the write end's `sk_wmem_alloc`,
//!   allocates the `sk_buff` (skbuff_cache) and its 100-byte head (kmalloc-cg-512) from the
//!   writer's CPU's SLUB freelist, copies the message, queues it under the receiver's
//!   `unix_sock.lock` and `sk_receive_queue.lock`, and checks the receiver's `socket_wq`
//!   (`sock_def_readable`). `unix_stream_read_generic` peeks under the state lock, copies the
//!   message out of the writer's lines, unlinks it, uncharges `sk_wmem_alloc` (`sock_wfree`) and
//!   frees both objects to the writer's CPU's slabs (`__slab_free`: a cmpxchg on `struct slab`,
//!   a locked hit when reader and writer share the CPU).
//! - pipe: `anon_pipe_write` and `anon_pipe_read` under `pipe->mutex` (whose line also holds
//!   `rd_wait`), reading `head`/`tail`, the `pipe_buffer` and the page's data line.
//!
//! Objects are lines: an object's lines move together (the reader fetches them in parallel), so
//! each is priced as one line [A]. Unlocks are stores to a line the CPU holds: not priced apart.

use super::channel::Transport;
use crate::assumptions::Assumptions;
use crate::workload::slab::{self, Cache, SLAB_OP_NS};
use crate::workload::syscall::{KernelAccess, KernelFn, KernelLine, KernelLineDecl, KernelStep};
use crate::workload::{TaskId, UserLine};

/// User time of hackbench's loop around one `write()` or `read()`: the Ice Lake LKP run's user
/// time per message, 900.5 s / 6.144e9 messages = 146 ns, half per side [D: LK1].
pub const USER_NS: u64 = 73;
/// Lines of one channel's kernel objects (`Workload::kernel_lines`).
pub const CHAN_LINES: u32 = 4;
// socket: the write end's sock, the receiver's unix_sock lock, its receive queue, its wait queue
const WMEM: u32 = 0;
const STATE_LOCK: u32 = 1;
const RECV_QUEUE: u32 = 2;
const SOCKET_WQ: u32 = 3;
// pipe: the mutex line (with rd_wait), head/tail, the current pipe_buffer, the page's data line
const MUTEX: u32 = 0;
const HEAD_TAIL: u32 = 1;
const PIPE_BUF: u32 = 2;
const PAGE: u32 = 3;

/// Per-CPU lines (`Workload::per_cpu_kernel_lines`): the next objects each CPU's slabs hand out,
/// and those slabs' `struct slab`.
pub const PER_CPU_LINES: &[UserLine] = &[
    UserLine {
        name: "sk_buff (skbuff_cache)",
        field: "next",
    },
    UserLine {
        name: "skb->head (kmalloc-cg-512)",
        field: "data",
    },
    UserLine {
        name: "struct slab (skbuff_cache)",
        field: "freelist",
    },
    UserLine {
        name: "struct slab (kmalloc-cg-512)",
        field: "freelist",
    },
];
const SKB: u32 = 0;
const HEAD: u32 = 1;
const SKBUFF_CACHE: Cache = Cache {
    object: SKB,
    slab: 2,
};
const KMALLOC_CG_512: Cache = Cache {
    object: HEAD,
    slab: 3,
};

/// The kernel lines of channel `chan` (receiver task `reader`).
pub fn channel_lines(t: Transport, chan: usize, reader: TaskId) -> Vec<KernelLineDecl> {
    let names: [(&str, &'static str); 4] = match t {
        Transport::Socket => [
            ("sock.sk_wmem_alloc", "sk_wmem_alloc"),
            ("unix_sock.lock", "lock"),
            ("sk_receive_queue", "lock"),
            ("socket_wq", "wait.lock"),
        ],
        Transport::Pipe => [
            ("pipe_inode_info.mutex", "mutex"),
            ("pipe_inode_info.head_tail", "head_tail"),
            ("pipe_buffer", "len"),
            ("pipe page", "data"),
        ],
    };
    names
        .iter()
        .map(|&(n, field)| KernelLineDecl {
            name: format!("{n} (rx{chan})"),
            field,
            near: reader,
        })
        .collect()
}

/// Builds the kernel scripts of one workload instance.
pub struct MsgPath {
    pub transport: Transport,
    syscall_ns: u64,
    path_ns: u64,
}

impl MsgPath {
    pub fn new(transport: Transport, a: &Assumptions) -> Self {
        let path_ns = match transport {
            Transport::Socket => a.unix_path_ns,
            Transport::Pipe => a.pipe_path_ns,
        };
        MsgPath {
            transport,
            syscall_ns: a.syscall_ns,
            path_ns,
        }
    }

    fn func(&self, write: bool) -> KernelFn {
        match (self.transport, write) {
            (Transport::Socket, true) => KernelFn::UnixStreamSendmsg,
            (Transport::Socket, false) => KernelFn::UnixStreamReadGeneric,
            (Transport::Pipe, true) => KernelFn::AnonPipeWrite,
            (Transport::Pipe, false) => KernelFn::AnonPipeRead,
        }
    }

    /// The start of a system call: entry and the first half of the path's own compute.
    fn enter(&self, out: &mut Vec<KernelStep>, write: bool) {
        out.push(compute(KernelFn::Syscall, self.syscall_ns));
        out.push(compute(self.func(write), self.path_ns / 2));
    }

    fn leave(&self, out: &mut Vec<KernelStep>, write: bool) {
        out.push(compute(self.func(write), self.path_ns - self.path_ns / 2));
    }

    /// One `write()` of `writer` into channel `chan` up to the reader's wakeup check.
    /// `refill`: its CPU's freelists ran dry (socket); `new_page`: the write takes a new pipe
    /// buffer (pipe).
    pub fn write(
        &self,
        chan: usize,
        writer: TaskId,
        refill: bool,
        new_page: bool,
    ) -> Vec<KernelStep> {
        let mut s = Vec::with_capacity(12);
        let f = self.func(true);
        let obj = |i| obj(chan, i);
        self.enter(&mut s, true);
        match self.transport {
            Transport::Socket => {
                let mine = |line| KernelLine::PerCpu { line, of: writer };
                // sock_alloc_send_pskb reads sk_wmem_alloc, skb_set_owner_w adds the truesize
                s.push(access(obj(WMEM), KernelAccess::Atomic, f));
                // ___slab_alloc → get_freelist when dry: take back what readers freed to the slabs
                slab::alloc(
                    &mut s,
                    &[SKBUFF_CACHE, KMALLOC_CG_512],
                    mine,
                    refill,
                    SLAB_OP_NS,
                );
                // __alloc_skb's memset of the header; the copy of the 100 bytes into the head
                s.push(access(mine(SKB), KernelAccess::Store, f));
                s.push(access(mine(HEAD), KernelAccess::Store, f));
                // unix_state_lock(other); sk_receive_queue.lock; __skb_queue_tail
                s.push(access(obj(STATE_LOCK), KernelAccess::Atomic, f));
                s.push(access(obj(RECV_QUEUE), KernelAccess::Atomic, f));
                self.leave(&mut s, true);
                // sock_def_readable: skwq_has_sleeper
                s.push(access(obj(SOCKET_WQ), KernelAccess::Load, f));
            }
            Transport::Pipe => {
                s.push(access(obj(MUTEX), KernelAccess::Atomic, f));
                s.push(access(obj(HEAD_TAIL), KernelAccess::Load, f));
                s.push(access(obj(PIPE_BUF), KernelAccess::Store, f));
                s.push(access(obj(PAGE), KernelAccess::Store, f));
                if new_page {
                    s.push(access(obj(HEAD_TAIL), KernelAccess::Store, f));
                }
                // mutex_unlock's cmpxchg
                s.push(access(obj(MUTEX), KernelAccess::Atomic, f));
                self.leave(&mut s, true);
            }
        }
        s
    }

    /// The waker's side of the reader's wakeup: the wait queue's spinlock (`__wake_up_sync_key`;
    /// a pipe's `rd_wait` shares the mutex's line).
    pub fn wake_reader(&self, chan: usize) -> KernelStep {
        let line = match self.transport {
            Transport::Socket => SOCKET_WQ,
            Transport::Pipe => MUTEX,
        };
        access(obj(chan, line), KernelAccess::Atomic, KernelFn::WaitQueue)
    }

    /// A `read()` that finds the channel empty: the peek under the lock, then `prepare_to_wait`.
    pub fn read_empty(&self, chan: usize) -> Vec<KernelStep> {
        let mut s = Vec::with_capacity(5);
        let f = self.func(false);
        self.enter(&mut s, false);
        match self.transport {
            Transport::Socket => {
                s.push(access(obj(chan, STATE_LOCK), KernelAccess::Atomic, f));
                s.push(access(obj(chan, RECV_QUEUE), KernelAccess::Load, f));
            }
            Transport::Pipe => {
                s.push(access(obj(chan, MUTEX), KernelAccess::Atomic, f));
                s.push(access(obj(chan, HEAD_TAIL), KernelAccess::Load, f));
            }
        }
        s.push(self.wake_reader(chan)); // prepare_to_wait takes the same wait-queue lock
        s
    }

    /// One `read()` of a message `writer` wrote into channel `chan`. `woke`: the reader comes back
    /// from sleeping in it (`finish_wait`); `drains`: the read empties a pipe buffer.
    pub fn read(&self, chan: usize, writer: TaskId, woke: bool, drains: bool) -> Vec<KernelStep> {
        let mut s = Vec::with_capacity(16);
        let f = self.func(false);
        let obj = |i| obj(chan, i);
        if woke {
            s.push(self.wake_reader(chan));
        } else {
            self.enter(&mut s, false);
        }
        match self.transport {
            Transport::Socket => {
                let theirs = |line| KernelLine::PerCpu { line, of: writer };
                s.push(access(obj(STATE_LOCK), KernelAccess::Atomic, f));
                s.push(access(obj(RECV_QUEUE), KernelAccess::Load, f));
                // skb_copy_datagram_msg: the writer's header and data
                s.push(access(theirs(SKB), KernelAccess::Load, f));
                s.push(access(theirs(HEAD), KernelAccess::Load, f));
                s.push(access(obj(RECV_QUEUE), KernelAccess::Atomic, f));
                // consume_skb → sock_wfree: sk_wmem_alloc (two RMWs, the second a hit)
                s.push(access(obj(WMEM), KernelAccess::Atomic, f));
                // kfree(head), kmem_cache_free(skb): __slab_free to the writer's CPU's slabs
                slab::free(&mut s, &[KMALLOC_CG_512, SKBUFF_CACHE], theirs, SLAB_OP_NS);
            }
            Transport::Pipe => {
                s.push(access(obj(MUTEX), KernelAccess::Atomic, f));
                s.push(access(obj(HEAD_TAIL), KernelAccess::Load, f));
                s.push(access(obj(PIPE_BUF), KernelAccess::Load, f));
                s.push(access(obj(PAGE), KernelAccess::Load, f));
                s.push(access(obj(PIPE_BUF), KernelAccess::Store, f));
                if drains {
                    s.push(access(obj(HEAD_TAIL), KernelAccess::Store, f));
                }
                s.push(access(obj(MUTEX), KernelAccess::Atomic, f));
            }
        }
        self.leave(&mut s, false);
        s
    }
}

fn obj(chan: usize, i: u32) -> KernelLine {
    KernelLine::Object(chan as u32 * CHAN_LINES + i)
}

fn compute(func: KernelFn, ns: u64) -> KernelStep {
    KernelStep::Compute { func, ns }
}

fn access(line: KernelLine, op: KernelAccess, func: KernelFn) -> KernelStep {
    KernelStep::Access { line, op, func }
}
