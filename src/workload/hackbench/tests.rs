//! The channels' kernel rules, driven step by step: one sender, one receiver.

use super::channel::{Channel, MSG_TRUESIZE, PIPE_MSGS_PER_PAGE, Transport, WMEM_DEFAULT};
use super::*;
use crate::assumptions::Assumptions;
use crate::workload::syscall::{KernelAccess, KernelFn, KernelLine};

fn path(t: Transport) -> MsgPath {
    MsgPath::new(t, &Assumptions::default())
}

fn pair(t: Transport) -> (Hackbench, SimRng) {
    (
        Hackbench::new(1, 1, 1_000_000, false, path(t), 0),
        SimRng::new(1),
    )
}

/// The task's next step that is not a piece of kernel work inside its system call.
fn next_visible(h: &mut Hackbench, task: TaskId, now: u64, rng: &mut SimRng) -> Step {
    loop {
        match h.next(task, now, rng) {
            Step::Kernel(_) => {}
            s => return s,
        }
    }
}

/// The kernel steps of task `task` until its next step that is not one.
fn kernel_steps(
    h: &mut Hackbench,
    task: TaskId,
    now: u64,
    rng: &mut SimRng,
) -> (Vec<KernelStep>, Step) {
    let mut v = Vec::new();
    loop {
        match h.next(task, now, rng) {
            Step::Kernel(k) => v.push(k),
            s => return (v, s),
        }
    }
}

/// Steps task 0 (the sender) until it blocks: (messages written, wakeups issued).
fn write_until_block(h: &mut Hackbench, rng: &mut SimRng) -> (u32, Vec<Step>) {
    let (mut writes, mut wakes) = (0, Vec::new());
    loop {
        match h.next(0, 10, rng) {
            Step::Run { .. } => writes += 1,
            w @ Step::Wake { .. } => wakes.push(w),
            Step::Block => return (writes, wakes),
            Step::Kernel(_) => {}
            s => panic!("sender step {s:?}"),
        }
    }
}

/// Steps task 1 (the receiver) until it wakes someone: messages read before.
fn read_until_wake(h: &mut Hackbench, rng: &mut SimRng) -> (u32, Step) {
    let mut reads = 0;
    loop {
        match h.next(1, 20, rng) {
            Step::Complete { .. } => reads += 1,
            w @ Step::Wake { .. } => return (reads, w),
            Step::Block => panic!("receiver blocked after {reads} reads, no wakeup"),
            _ => {}
        }
    }
}

#[test]
fn a_unix_socket_sender_blocks_at_wmem_default_and_wakes_at_a_quarter() {
    let (mut h, mut rng) = pair(Transport::Socket);
    let (written, wakes) = write_until_block(&mut h, &mut rng);
    // sock_alloc_send_pskb: a send goes while sk_wmem_alloc < sk_sndbuf
    assert_eq!(written, WMEM_DEFAULT.div_ceil(MSG_TRUESIZE));
    assert_eq!(written, Channel::capacity(Transport::Socket));
    assert!(wakes.is_empty(), "the reader was not asleep: {wakes:?}");
    // unix_write_space: the writer wakes once (wmem << 2) <= sndbuf, with WF_SYNC
    let (reads, w) = read_until_wake(&mut h, &mut rng);
    let left = written - reads;
    assert!((left * MSG_TRUESIZE) << 2 <= WMEM_DEFAULT);
    assert!(((left + 1) * MSG_TRUESIZE) << 2 > WMEM_DEFAULT);
    assert_eq!(
        w,
        Step::Wake {
            task: 0,
            lines: 0,
            sync: true
        }
    );
}

#[test]
fn a_pipe_holds_sixteen_merged_pages_and_a_freed_page_wakes_one_writer() {
    let (mut h, mut rng) = pair(Transport::Pipe);
    let (written, _) = write_until_block(&mut h, &mut rng);
    assert_eq!(written, 16 * PIPE_MSGS_PER_PAGE);
    let (reads, w) = read_until_wake(&mut h, &mut rng);
    assert_eq!(reads, PIPE_MSGS_PER_PAGE, "one page emptied");
    assert_eq!(
        w,
        Step::Wake {
            task: 0,
            lines: 0,
            sync: true
        }
    );
}

#[test]
fn a_write_to_an_empty_channel_wakes_its_sleeping_reader_with_wf_sync() {
    for t in [Transport::Socket, Transport::Pipe] {
        let (mut h, mut rng) = pair(t);
        assert_eq!(
            next_visible(&mut h, 1, 0, &mut rng),
            Step::Block,
            "{t:?}: nothing to read"
        );
        assert!(matches!(h.next(0, 0, &mut rng), Step::Run { .. }));
        assert_eq!(
            next_visible(&mut h, 0, 5, &mut rng),
            Step::Wake {
                task: 1,
                lines: 0,
                sync: true
            },
            "{t:?}"
        );
        // the reader is awake now: the next write wakes nobody
        assert!(matches!(
            next_visible(&mut h, 0, 5, &mut rng),
            Step::Run { .. }
        ));
        assert!(
            matches!(next_visible(&mut h, 0, 6, &mut rng), Step::Run { .. }),
            "{t:?}"
        );
    }
}

/// The start: every task first sleeps until the parent's "GO" reaches it; the wakeups are one
/// `TTWU_NS` apart in an order drawn from the seed (a permutation: one task per slot), and another
/// seed draws another order.
#[test]
fn tasks_start_one_wakeup_apart_in_an_order_the_seed_draws() {
    let starts = |seed: u64| {
        let mut h = Hackbench::new(2, 3, 10, false, path(Transport::Socket), 600);
        let mut rng = SimRng::new(seed);
        let mut at: Vec<u64> = (0..12)
            .map(|t| match h.next(t, 0, &mut rng) {
                Step::Sleep { ns } => ns,
                s => panic!("task {t} started with {s:?}"),
            })
            .collect();
        // asked again, a task goes on with its first write or read
        assert!(!matches!(h.next(0, at[0], &mut rng), Step::Sleep { .. }));
        let order = at.clone();
        at.sort_unstable();
        assert_eq!(at, (1..=12).map(|k| k * 600).collect::<Vec<u64>>());
        order
    };
    assert_eq!(starts(1), starts(1));
    assert_ne!(starts(1), starts(2));
}

/// A socket message: the writer allocates the skb and its head from its own CPU's slabs and
/// charges the write end's sk_wmem_alloc; the reader reads those objects from the writer's CPU,
/// uncharges sk_wmem_alloc and frees both to the writer's CPU's slabs (cmpxchg on struct slab).
#[test]
fn a_socket_message_is_allocated_on_the_writers_cpu_and_freed_there_by_the_reader() {
    let (mut h, mut rng) = pair(Transport::Socket);
    assert!(matches!(h.next(0, 0, &mut rng), Step::Run { .. }));
    let (w, _) = kernel_steps(&mut h, 0, 1, &mut rng);
    let writer_skb = KernelStep::Access {
        line: KernelLine::PerCpu { line: 0, of: 0 },
        op: KernelAccess::Store,
        func: KernelFn::UnixStreamSendmsg,
    };
    assert!(w.contains(&writer_skb), "{w:?}");
    let wmem = |s: &KernelStep| {
        matches!(
            s,
            KernelStep::Access {
                line: KernelLine::Object(0),
                op: KernelAccess::Atomic,
                ..
            }
        )
    };
    assert_eq!(w.iter().filter(|s| wmem(s)).count(), 1);
    assert!(matches!(h.next(1, 2, &mut rng), Step::Run { .. }));
    let (r, after) = kernel_steps(&mut h, 1, 3, &mut rng);
    assert!(matches!(after, Step::Complete { .. }));
    assert_eq!(r.iter().filter(|s| wmem(s)).count(), 1);
    for (line, op) in [
        (0, KernelAccess::Load),
        (2, KernelAccess::Atomic),
        (3, KernelAccess::Atomic),
    ] {
        assert!(
            r.iter().any(|s| matches!(s, KernelStep::Access { line: KernelLine::PerCpu { line: l, of: 0 }, op: o, .. } if *l == line && *o == op)),
            "reader's script lacks per-CPU line {line} {op:?} of the writer: {r:?}"
        );
    }
}

/// A pipe message has no slab objects: both sides take pipe->mutex (twice: lock and unlock) and
/// the writer of a new page buffer moves head, the reader that drains one moves tail.
#[test]
fn a_pipe_message_goes_through_the_mutex_and_no_slab() {
    let (mut h, mut rng) = pair(Transport::Pipe);
    assert!(h.per_cpu_kernel_lines().is_empty());
    assert!(matches!(h.next(0, 0, &mut rng), Step::Run { .. }));
    let (w, _) = kernel_steps(&mut h, 0, 1, &mut rng);
    let mutex = |v: &[KernelStep]| {
        v.iter()
            .filter(|s| {
                matches!(
                    s,
                    KernelStep::Access {
                        line: KernelLine::Object(0),
                        op: KernelAccess::Atomic,
                        ..
                    }
                )
            })
            .count()
    };
    let head_store = |v: &[KernelStep]| {
        v.iter().any(|s| {
            matches!(
                s,
                KernelStep::Access {
                    line: KernelLine::Object(1),
                    op: KernelAccess::Store,
                    ..
                }
            )
        })
    };
    assert_eq!(mutex(&w), 2);
    assert!(head_store(&w), "the first write takes a page: {w:?}");
    assert!(w.iter().all(|s| !matches!(
        s,
        KernelStep::Access {
            line: KernelLine::PerCpu { .. },
            ..
        }
    )));
    // a second write merges into the page: head stays
    assert!(matches!(
        next_visible(&mut h, 0, 2, &mut rng),
        Step::Run { .. }
    ));
    let (w2, _) = kernel_steps(&mut h, 0, 3, &mut rng);
    assert!(!head_store(&w2), "{w2:?}");
}

/// A writer's kernel work is costed ahead of the clock on its CPU, so a message can be committed at
/// a time later than the reader's now: its latency is 0, never a wrapped negative.
#[test]
fn a_message_committed_after_the_readers_now_has_no_negative_latency() {
    let (mut h, mut rng) = pair(Transport::Socket);
    assert!(matches!(h.next(0, 0, &mut rng), Step::Run { .. }));
    let _ = kernel_steps(&mut h, 0, 1_000, &mut rng); // committed at 1,000
    assert!(matches!(h.next(1, 500, &mut rng), Step::Run { .. }));
    let (_, done) = kernel_steps(&mut h, 1, 500, &mut rng);
    assert_eq!(done, Step::Complete { latency_ns: 0 });
}
