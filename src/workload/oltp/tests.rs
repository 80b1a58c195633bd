//! The transaction's statements and the commit's wait on the log threads, driven step by step.

use super::innodb::{ROLES, Role, THREADS};
use super::*;

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
        assert_eq!(o.next(t, 0, &mut rng), Step::Block);
    }
    assert_eq!(o.next(server, 0, &mut rng), Step::Block, "no request yet");
    for stmt in 0..20 {
        assert!(matches!(o.next(client, 0, &mut rng), Step::Run { .. }));
        assert_eq!(
            o.next(client, 0, &mut rng),
            Step::Wake {
                task: server,
                lines: REQUEST_LINES,
                sync: true
            }
        );
        assert_eq!(o.next(client, 0, &mut rng), Step::Block);
        assert!(
            matches!(o.next(server, 1, &mut rng), Step::Run { .. }),
            "{stmt}"
        );
        if stmt == 19 {
            assert_eq!(
                o.next(server, 2, &mut rng),
                Step::Wake {
                    task: writer,
                    lines: 1,
                    sync: false
                }
            );
            assert_eq!(
                o.next(server, 2, &mut rng),
                Step::Block,
                "waits for the flush"
            );
            assert!(matches!(o.next(writer, 3, &mut rng), Step::Run { .. }));
            assert_eq!(
                o.next(writer, 4, &mut rng),
                Step::Wake {
                    task: flusher,
                    lines: 1,
                    sync: false
                }
            );
            assert_eq!(o.next(writer, 4, &mut rng), Step::Block);
            assert!(matches!(o.next(flusher, 4, &mut rng), Step::Run { .. }));
            assert!(
                matches!(o.next(flusher, 5, &mut rng), Step::Sleep { .. }),
                "fsync"
            );
            assert_eq!(
                o.next(flusher, 6, &mut rng),
                Step::Wake {
                    task: notifier,
                    lines: 1,
                    sync: false
                }
            );
            assert!(matches!(o.next(notifier, 7, &mut rng), Step::Run { .. }));
            assert_eq!(
                o.next(notifier, 8, &mut rng),
                Step::Wake {
                    task: server,
                    lines: 1,
                    sync: false
                }
            );
            assert!(matches!(o.next(server, 9, &mut rng), Step::Complete { .. }));
        }
        assert_eq!(
            o.next(server, 10, &mut rng),
            Step::Wake {
                task: client,
                lines: REPLY_LINES,
                sync: true
            },
            "{stmt}"
        );
        assert_eq!(o.next(server, 10, &mut rng), Step::Block);
    }
}
