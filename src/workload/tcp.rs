//! One small TCP message (a statement, a reply) as v6.18 runs it, as kernel steps on the cache
//! lines the sockets, SLUB and the skb defer lists share (`Step::Kernel`; the steps and their
//! file:line are in docs/MODEL.md §18d):
//! - `tcp_sendmsg` (sender's CPU): `lock_sock`; `tcp_stream_alloc_skb` takes an fclone pair
//!   (`skbuff_fclone_cache`) and a `MAX_TCP_HEADER` head (`skb_small_head_cache`) from the CPU's
//!   slabs (`slab.rs`); `sk_wmem_queued` and, for the clone `__tcp_transmit_skb` sends,
//!   `skb_set_owner_w`'s `refcount_add` on `sk_wmem_alloc`; `release_sock` after the send.
//! - the receive (`tcp_v4_rcv` in NET_RX: on loopback the sender's own CPU at its
//!   `local_bh_enable`, from a card the receive queue's interrupt CPU): first
//!   `skb_defer_free_flush` of the skbs readers deferred to this CPU; `bh_lock_sock`; the
//!   segment's ACK frees the message the other side sent last (`tcp_clean_rtx_queue` →
//!   `__kfree_skb`: the fclone and head of the other side's CPU); `tcp_queue_rcv` with
//!   `skb_set_owner_r`'s `atomic_add` on `sk_rmem_alloc`; `sock_def_readable`'s
//!   `skwq_has_sleeper`, and the wait queue's lock when the reader sleeps.
//! - `tcp_recvmsg` (reader's CPU): `finish_wait` after a sleep, `lock_sock`, the peek, the copy
//!   from the skb, the unlink and `sock_rfree`, then `skb_attempt_defer_free`: an skb allocated on
//!   another CPU (`skb->alloc_cpu`) goes on that CPU's `skb_defer_node` (`atomic_long_inc_return`
//!   + `llist_add`), to be freed there.
//!
//! Where each skb is freed follows: a NIC's skb (from the NAPI cache of the interrupt CPU) goes
//! back to that CPU's cache at its flush; a loopback clone is deferred to its sender's CPU, whose
//! flush frees the pair there once the ACK has dropped the original; an skb sent to a card is
//! freed by the ACK on the interrupt CPU: a remote `__slab_free` to the sender's slabs.
//!
//! The path's own compute is not added here: the workloads' CPU figures it runs in were measured
//! (or assumed) as whole round trips that hold it (docs/MODEL.md §18d); these steps add what
//! those figures cannot hold, the lines' transfers between the CPUs involved. Objects are lines,
//! as in `hackbench/msgpath.rs` [A]; unlocks are stores to a held line, not priced apart.

use super::slab::{self, Cache};
use super::syscall::{KernelAccess, KernelFn, KernelLine, KernelLineDecl, KernelStep};
use super::{TaskId, UserLine};

/// The per-CPU lines (`Workload::per_cpu_kernel_lines`).
pub const PER_CPU_LINES: &[UserLine] = &[
    UserLine {
        name: "sk_buff (skbuff_fclone_cache)",
        field: "fclone_ref",
    },
    UserLine {
        name: "struct slab (skbuff_fclone_cache)",
        field: "freelist",
    },
    UserLine {
        name: "skb->head (skb_small_head_cache)",
        field: "dataref",
    },
    UserLine {
        name: "struct slab (skb_small_head_cache)",
        field: "freelist",
    },
    UserLine {
        name: "sk_buff (napi_alloc_cache)",
        field: "ll_node",
    },
    UserLine {
        name: "skb_defer_node",
        field: "defer_list",
    },
];
const FCLONE: Cache = Cache { object: 0, slab: 1 };
const SMALL_HEAD: Cache = Cache { object: 2, slab: 3 };
/// The next skb the interrupt CPU's NAPI cache hands out (`napi_skb_cache_get`).
const NAPI_SKB: u32 = 4;
const DEFER: u32 = 5;

/// Lines of one socket (`Workload::kernel_lines`), struct sock's cache-line groups (v6.18
/// include/net/sock.h): `sock_write_rxtx` (`sk_lock`, `sk_forward_alloc`), `sock_write_rx`
/// (`sk_receive_queue`, `sk_rmem_alloc`), `sock_write_tx` (`sk_wmem_queued`, `sk_wmem_alloc`), and
/// the socket's `socket_wq`.
pub const SOCK_LINES: u32 = 4;
const SK_LOCK: u32 = 0;
const RX: u32 = 1;
const TX: u32 = 2;
const WQ: u32 = 3;

/// A socket: the index of its first line in `Workload::kernel_lines`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sock(pub u32);

impl Sock {
    fn line(self, i: u32) -> KernelLine {
        KernelLine::Object(self.0 + i)
    }
}

/// The lines of socket `name` (e.g. `mysqld conn3`), on the node of `near`'s first CPU.
pub fn socket_lines(name: &str, near: TaskId) -> Vec<KernelLineDecl> {
    [
        ("sock.sk_lock", "sk_lock.slock"),
        ("sock.sk_receive_queue", "sk_rmem_alloc"),
        ("sock.sk_wmem_alloc", "sk_wmem_alloc"),
        ("socket_wq", "wait.lock"),
    ]
    .iter()
    .map(|&(n, field)| KernelLineDecl {
        name: format!("{n} ({name})"),
        field,
        near,
    })
    .collect()
}

/// Where the skb a reader takes was allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkbFrom {
    /// A loopback clone: the fclone of the sending task's CPU.
    Loopback(TaskId),
    /// A packet from a card: the NAPI cache of the interrupt CPU of connection `conn`'s queue.
    Nic { conn: u32 },
}

/// The receiving half of a segment's trip, as the receive path on the CPU running it sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The socket it is queued on.
    pub to: Sock,
    /// The task whose last message on this connection the segment's ACK frees (none before the
    /// first one).
    pub acks: Option<TaskId>,
    /// The reader sleeps on the socket: `sock_def_readable` takes the wait queue's lock.
    pub reader_sleeps: bool,
}

/// The start of `tcp_sendmsg` on socket `from` by task `me`, up to the transmit: `refill`, its
/// CPU's freelists ran dry (`slab::Freelist`).
pub fn send(out: &mut Vec<KernelStep>, from: Sock, me: TaskId, refill: bool) {
    let f = KernelFn::TcpSendmsg;
    let mine = |line| KernelLine::PerCpu { line, of: me };
    out.push(access(from.line(SK_LOCK), KernelAccess::Atomic, f));
    slab::alloc(out, &[FCLONE, SMALL_HEAD], mine, refill, 0);
    // __alloc_skb's initialisation of the fclone pair and the head's skb_shared_info
    out.push(access(mine(FCLONE.object), KernelAccess::Store, f));
    out.push(access(mine(SMALL_HEAD.object), KernelAccess::Store, f));
    // tcp_skb_entail: sk_wmem_queued; __tcp_transmit_skb: skb_set_owner_w on the clone
    out.push(access(from.line(TX), KernelAccess::Store, f));
    out.push(access(from.line(TX), KernelAccess::Atomic, f));
}

/// The end of `tcp_sendmsg`: `release_sock` (after the device took the clone; on loopback the
/// receive has run inside it, at `local_bh_enable`).
pub fn send_done(out: &mut Vec<KernelStep>, from: Sock) {
    out.push(access(
        from.line(SK_LOCK),
        KernelAccess::Atomic,
        KernelFn::TcpSendmsg,
    ));
}

/// loopback_xmit: `skb_orphan` drops the clone's `sk_wmem_alloc` charge on the sender's CPU;
/// then NET_RX runs there (`enqueue_to_backlog` on this CPU, `process_backlog`), flushing the
/// clones deferred to it (whose ACKs have come: the fclone pairs go back to its slabs) and
/// receiving `seg` from task `me`.
pub fn loopback(out: &mut Vec<KernelStep>, from: Sock, me: TaskId, seg: Segment) {
    let f = KernelFn::TcpV4Rcv;
    let mine = |line| KernelLine::PerCpu { line, of: me };
    out.push(access(
        from.line(TX),
        KernelAccess::Atomic,
        KernelFn::TcpSendmsg,
    ));
    // skb_defer_free_flush: llist_empty, llist_del_all, napi_consume_skb → kfree_skbmem
    out.push(access(mine(DEFER), KernelAccess::Load, f));
    out.push(access(mine(DEFER), KernelAccess::Atomic, f));
    slab::free(out, &[SMALL_HEAD, FCLONE], mine, 0);
    receive(out, seg, |acked, o| {
        // the ACK drops the original's references; the clone still waits on the defer list of
        // its CPU, whose flush frees the pair: skb_release_data's dataref, kfree_skbmem's
        // fclone_ref
        let theirs = |line| KernelLine::PerCpu { line, of: acked };
        o.push(access(theirs(SMALL_HEAD.object), KernelAccess::Atomic, f));
        o.push(access(theirs(FCLONE.object), KernelAccess::Atomic, f));
    });
}

/// NET_RX on the interrupt CPU of connection `conn`'s receive queue (after the driver poll the
/// flat `NET_RX_PKT_NS` prices): the flush of the skbs readers deferred to it, the skb from its
/// NAPI cache, and `seg`'s receive.
pub fn nic_receive(conn: u32, seg: Segment) -> Vec<KernelStep> {
    let f = KernelFn::TcpV4Rcv;
    let irq = |line| KernelLine::RxCpu { line, conn };
    let mut out = Vec::with_capacity(16);
    // skb_defer_free_flush (the skbs go back to the NAPI cache: this CPU's lines)
    out.push(access(irq(DEFER), KernelAccess::Load, f));
    out.push(access(irq(DEFER), KernelAccess::Atomic, f));
    // napi_build_skb: the skb from the NAPI cache, initialised
    out.push(access(irq(NAPI_SKB), KernelAccess::Store, f));
    receive(&mut out, seg, |acked, o| {
        // the clone left at the TX completion; the ACK frees the pair and the head to the slabs
        // of the CPU that sent the reply: __slab_free
        let theirs = |line| KernelLine::PerCpu { line, of: acked };
        slab::free(o, &[SMALL_HEAD, FCLONE], theirs, 0);
    });
    out
}

/// `tcp_v4_rcv` of `seg`: `bh_lock_sock`, the ACK's frees (`ack`), the queueing and the reader's
/// wakeup check.
fn receive(
    out: &mut Vec<KernelStep>,
    seg: Segment,
    ack: impl FnOnce(TaskId, &mut Vec<KernelStep>),
) {
    let f = KernelFn::TcpV4Rcv;
    let to = seg.to;
    out.push(access(to.line(SK_LOCK), KernelAccess::Atomic, f));
    if let Some(acked) = seg.acks {
        // tcp_clean_rtx_queue → tcp_wmem_free_skb: sk_wmem_queued, then the skb
        out.push(access(to.line(TX), KernelAccess::Store, f));
        ack(acked, out);
    }
    // tcp_queue_rcv: __skb_queue_tail, skb_set_owner_r
    out.push(access(to.line(RX), KernelAccess::Store, f));
    out.push(access(to.line(RX), KernelAccess::Atomic, f));
    // sock_def_readable: skwq_has_sleeper, then __wake_up_sync_key's lock if the reader sleeps
    out.push(access(to.line(WQ), KernelAccess::Load, f));
    if seg.reader_sleeps {
        out.push(access(
            to.line(WQ),
            KernelAccess::Atomic,
            KernelFn::WaitQueue,
        ));
    }
}

/// `tcp_recvmsg` of one message on socket `sock`. `woke`: the reader comes back from sleeping
/// in it (`finish_wait`).
pub fn recv(out: &mut Vec<KernelStep>, sock: Sock, skb: SkbFrom, woke: bool) {
    let f = KernelFn::TcpRecvmsg;
    let (skb_line, defer) = match skb {
        SkbFrom::Loopback(t) => (
            KernelLine::PerCpu {
                line: FCLONE.object,
                of: t,
            },
            KernelLine::PerCpu { line: DEFER, of: t },
        ),
        SkbFrom::Nic { conn } => (
            KernelLine::RxCpu {
                line: NAPI_SKB,
                conn,
            },
            KernelLine::RxCpu { line: DEFER, conn },
        ),
    };
    if woke {
        out.push(access(
            sock.line(WQ),
            KernelAccess::Atomic,
            KernelFn::WaitQueue,
        ));
    }
    out.push(access(sock.line(SK_LOCK), KernelAccess::Atomic, f));
    // skb_peek, then the copy out of the skb
    out.push(access(sock.line(RX), KernelAccess::Load, f));
    out.push(access(skb_line, KernelAccess::Load, f));
    // tcp_eat_recv_skb: __skb_unlink, sock_rfree
    out.push(access(sock.line(RX), KernelAccess::Store, f));
    out.push(access(sock.line(RX), KernelAccess::Atomic, f));
    // skb_attempt_defer_free: onto the allocating CPU's skb_defer_node (a locked hit when it
    // is this CPU, where the kernel frees at once)
    out.push(access(defer, KernelAccess::Atomic, f));
    out.push(access(skb_line, KernelAccess::Store, f));
    out.push(access(sock.line(SK_LOCK), KernelAccess::Atomic, f));
}

fn access(line: KernelLine, op: KernelAccess, func: KernelFn) -> KernelStep {
    KernelStep::Access { line, op, func }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &[KernelStep]) -> Vec<(KernelLine, KernelAccess)> {
        s.iter()
            .filter_map(|k| match k {
                KernelStep::Access { line, op, .. } => Some((*line, *op)),
                KernelStep::Compute { .. } => None,
            })
            .collect()
    }

    #[test]
    fn a_cards_ack_frees_the_reply_to_the_slabs_of_the_cpu_that_sent_it() {
        let seg = Segment {
            to: Sock(0),
            acks: Some(9),
            reader_sleeps: true,
        };
        let l = lines(&nic_receive(3, seg));
        for slab in [FCLONE.slab, SMALL_HEAD.slab] {
            assert!(l.contains(&(
                KernelLine::PerCpu { line: slab, of: 9 },
                KernelAccess::Atomic
            )));
        }
        // the first segment acks nothing: no free
        let first = lines(&nic_receive(3, Segment { acks: None, ..seg }));
        assert!(
            !first
                .iter()
                .any(|(l, _)| matches!(l, KernelLine::PerCpu { .. }))
        );
    }

    #[test]
    fn a_reader_defers_the_skb_to_the_cpu_that_allocated_it() {
        let mut s = Vec::new();
        recv(&mut s, Sock(4), SkbFrom::Nic { conn: 7 }, false);
        assert!(lines(&s).contains(&(
            KernelLine::RxCpu {
                line: DEFER,
                conn: 7
            },
            KernelAccess::Atomic
        )));
        let mut s = Vec::new();
        recv(&mut s, Sock(4), SkbFrom::Loopback(2), true);
        let l = lines(&s);
        assert!(l.contains(&(
            KernelLine::PerCpu { line: DEFER, of: 2 },
            KernelAccess::Atomic
        )));
        // back from the sleep: finish_wait takes the socket's wait-queue lock first
        assert_eq!(l[0], (Sock(4).line(WQ), KernelAccess::Atomic));
    }

    #[test]
    fn the_wait_queue_lock_is_taken_only_when_the_reader_sleeps() {
        let wq_atomics = |sleeps| {
            let mut s = Vec::new();
            let seg = Segment {
                to: Sock(8),
                acks: None,
                reader_sleeps: sleeps,
            };
            loopback(&mut s, Sock(0), 1, seg);
            lines(&s)
                .iter()
                .filter(|&&x| x == (Sock(8).line(WQ), KernelAccess::Atomic))
                .count()
        };
        assert_eq!((wq_atomics(false), wq_atomics(true)), (0, 1));
    }
}
