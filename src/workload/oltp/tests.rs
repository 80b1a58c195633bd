//! The transaction's statements and the commit's wait on the log threads, driven step by step.

use super::innodb::{ROLES, Role, THREADS};
use super::*;
use crate::workload::syscall::{KernelAccess, KernelLine};

/// The task's next step past the kernel steps of its socket calls.
fn step(o: &mut Oltp, t: TaskId, now: u64, rng: &mut SimRng) -> Step {
    loop {
        match o.next(t, now, rng) {
            Step::Kernel(_) => continue,
            s => return s,
        }
    }
}

/// The kernel steps before the task's next other step.
fn kernel_steps(o: &mut Oltp, t: TaskId, rng: &mut SimRng) -> (Vec<KernelStep>, Step) {
    let mut k = Vec::new();
    loop {
        match o.next(t, 0, rng) {
            Step::Kernel(s) => k.push(s),
            s => return (k, s),
        }
    }
}

fn touches(k: &[KernelStep], line: KernelLine, op: KernelAccess) -> bool {
    k.iter()
        .any(|s| matches!(s, KernelStep::Access { line: l, op: o, .. } if *l == line && *o == op))
}

/// Loopback: sysbench's send() receives the request into mysqld's socket on sysbench's CPU (its
/// lock and receive queue) before the wakeup; from the second statement on, its ACK drops the
/// reply mysqld allocated (the fclone of mysqld's CPU); mysqld's recv() defers the clone to
/// sysbench's CPU.
#[test]
fn loopback_messages_touch_both_sockets_and_the_other_sides_skbs() {
    let mut o = Oltp::new(1, true, &Assumptions::default());
    let mut rng = SimRng::new(1);
    let (server, client) = (0, 1);
    let server_lock = KernelLine::Object(0);
    let fclone_of = |of| KernelLine::PerCpu { line: 0, of };
    let defer_of = |of| KernelLine::PerCpu { line: 5, of };
    assert_eq!(step(&mut o, server, 0, &mut rng), Step::Block);
    for stmt in 0..2 {
        assert!(matches!(
            step(&mut o, client, 0, &mut rng),
            Step::Run { .. }
        ));
        let (k, wake) = kernel_steps(&mut o, client, &mut rng);
        assert!(matches!(wake, Step::Wake { task: 0, .. }));
        assert!(touches(&k, server_lock, KernelAccess::Atomic));
        assert_eq!(
            touches(&k, fclone_of(server), KernelAccess::Atomic),
            stmt > 0,
            "the ACK of mysqld's reply"
        );
        assert_eq!(step(&mut o, client, 0, &mut rng), Step::Block);
        let (k, run) = kernel_steps(&mut o, server, &mut rng);
        assert!(matches!(run, Step::Run { .. }));
        assert!(touches(&k, fclone_of(client), KernelAccess::Load));
        assert!(touches(&k, defer_of(client), KernelAccess::Atomic));
        let (k, wake) = kernel_steps(&mut o, server, &mut rng);
        assert!(matches!(wake, Step::Wake { task: 1, .. }));
        assert!(touches(&k, fclone_of(client), KernelAccess::Atomic));
        assert_eq!(step(&mut o, server, 0, &mut rng), Step::Block);
    }
}

/// From another host: NET_RX on the interrupt CPU queues the request on mysqld's socket and,
/// once mysqld has replied, frees the reply to the slabs of mysqld's CPU (`__slab_free`);
/// mysqld's recv() reads the skb of the interrupt CPU and defers it there.
#[test]
fn a_cards_request_frees_the_last_reply_remotely_and_is_read_from_the_irq_cpus_skb() {
    let mut o = Oltp::new(1, false, &Assumptions::default());
    let mut rng = SimRng::new(1);
    let slab_of_server = KernelLine::PerCpu { line: 1, of: 0 };
    assert!(!touches(
        &o.rx_script(0, 0),
        slab_of_server,
        KernelAccess::Atomic
    ));
    assert!(matches!(step(&mut o, 0, 0, &mut rng), Step::Run { .. }));
    let (k, wait) = kernel_steps(&mut o, 0, &mut rng);
    assert!(matches!(wait, Step::AwaitRequest { .. }));
    assert!(touches(&k, KernelLine::Object(0), KernelAccess::Atomic));
    assert!(touches(
        &o.rx_script(0, 0),
        slab_of_server,
        KernelAccess::Atomic
    ));
    o.delivered(0, 0, 1);
    let (k, run) = kernel_steps(&mut o, 0, &mut rng);
    assert!(matches!(run, Step::Run { .. }));
    let nic_skb = KernelLine::RxCpu { line: 4, conn: 0 };
    assert!(touches(&k, nic_skb, KernelAccess::Load));
    assert!(touches(
        &k,
        KernelLine::RxCpu { line: 5, conn: 0 },
        KernelAccess::Atomic
    ));
}

#[test]
fn a_transaction_is_oltp_read_write_s_twenty_statements() {
    let n = |s: Stmt| TXN.iter().filter(|&&x| x == s).count();
    assert_eq!(TXN.len(), 20);
    assert_eq!((TXN[0], TXN[19]), (Stmt::Begin, Stmt::Commit));
    assert_eq!(n(Stmt::PointSelect), 10);
    for s in [
        Stmt::SimpleRange,
        Stmt::SumRange,
        Stmt::OrderRange,
        Stmt::DistinctRange,
        Stmt::IndexUpdate,
        Stmt::NonIndexUpdate,
        Stmt::Delete,
        Stmt::Insert,
    ] {
        assert_eq!(n(s), 1, "{s:?}");
    }
}

/// One connection, sysbench local: every request and reply is a sync wakeup; COMMIT wakes the log
/// writer (not sync) and blocks until the flush notifier wakes it (not sync), then the transaction
/// completes and the reply goes out.
#[test]
fn commit_waits_for_the_log_threads_and_loopback_wakeups_are_sync() {
    let mut o = Oltp::new(1, true, &Assumptions::default());
    let mut rng = SimRng::new(3);
    let (server, client, writer, flusher, notifier) = (0, 1, 2, 3, 4);
    assert_eq!(o.tasks().len(), 2 + THREADS);
    assert_eq!(ROLES[0], Role::LogWriter);
    // the log threads go to sleep on their events
    for t in [writer, flusher, notifier] {
        assert_eq!(step(&mut o, t, 0, &mut rng), Step::Block);
    }
    assert_eq!(
        step(&mut o, server, 0, &mut rng),
        Step::Block,
        "no request yet"
    );
    for stmt in 0..20 {
        assert!(matches!(
            step(&mut o, client, 0, &mut rng),
            Step::Run { .. }
        ));
        assert_eq!(
            step(&mut o, client, 0, &mut rng),
            Step::Wake {
                task: server,
                lines: REQUEST_LINES,
                sync: true
            }
        );
        assert_eq!(step(&mut o, client, 0, &mut rng), Step::Block);
        assert!(
            matches!(step(&mut o, server, 1, &mut rng), Step::Run { .. }),
            "{stmt}"
        );
        if stmt == 19 {
            assert_eq!(
                step(&mut o, server, 2, &mut rng),
                Step::Wake {
                    task: writer,
                    lines: 1,
                    sync: false
                }
            );
            assert_eq!(
                step(&mut o, server, 2, &mut rng),
                Step::Block,
                "waits for the flush"
            );
            assert!(matches!(
                step(&mut o, writer, 3, &mut rng),
                Step::Run { .. }
            ));
            assert_eq!(
                step(&mut o, writer, 4, &mut rng),
                Step::Wake {
                    task: flusher,
                    lines: 1,
                    sync: false
                }
            );
            assert_eq!(step(&mut o, writer, 4, &mut rng), Step::Block);
            assert!(matches!(
                step(&mut o, flusher, 4, &mut rng),
                Step::Run { .. }
            ));
            assert!(
                matches!(step(&mut o, flusher, 5, &mut rng), Step::Sleep { .. }),
                "fsync"
            );
            assert_eq!(
                step(&mut o, flusher, 6, &mut rng),
                Step::Wake {
                    task: notifier,
                    lines: 1,
                    sync: false
                }
            );
            assert!(matches!(
                step(&mut o, notifier, 7, &mut rng),
                Step::Run { .. }
            ));
            assert_eq!(
                step(&mut o, notifier, 8, &mut rng),
                Step::Wake {
                    task: server,
                    lines: 1,
                    sync: false
                }
            );
            assert!(matches!(
                step(&mut o, server, 9, &mut rng),
                Step::Complete { .. }
            ));
        }
        assert_eq!(
            step(&mut o, server, 10, &mut rng),
            Step::Wake {
                task: client,
                lines: REPLY_LINES,
                sync: true
            },
            "{stmt}"
        );
        assert_eq!(step(&mut o, server, 10, &mut rng), Step::Block);
    }
}
