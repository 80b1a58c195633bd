//! The store buffer under x86-TSO (docs/MODEL.md §5c): stores become visible in program order,
//! one line obtained after the other; a full buffer stalls the CPU.

use super::tests::engine;
use super::*;
use crate::coherence::HIT_NS;

/// CPU `c` (in the kernel) stores to field 0 of `line` at its own time; returns when the store
/// becomes visible. Time moves to the CPU's cursor first (a test drives the CPU by hand).
fn store(e: &mut Engine, c: usize, line: LineId) -> u64 {
    e.now = e.now.max(e.cpus[c].exec.cursor);
    e.enter_kernel(c);
    e.kstore(c, line, 0, Sym::SchedBalanceDomains)
}

/// CPUs of the second socket, the first `n`.
fn remote_cpus(e: &Engine, n: usize) -> Vec<usize> {
    (0..e.topo.nr_cpus())
        .filter(|&c| e.topo.cpus[c].socket == 1)
        .take(n)
        .collect()
}

/// A CPU of the first socket stores to a line the other socket holds (a read for ownership
/// across the socket), then releases `sched_balance_running`, which it holds itself: the release
/// hits in its cache, but becomes visible only after the earlier store.
#[test]
fn a_release_never_becomes_visible_before_an_earlier_store() {
    let mut e = engine();
    let local = 5;
    let remote = remote_cpus(&e, 1)[0];
    let far = e.rq_lines[remote].rq();
    e.now += 100;
    store(&mut e, remote, far);
    let sbr = e.line_sbr;
    store(&mut e, local, sbr);
    e.now += 10_000; // both committed
    let t = e.now;
    let first = store(&mut e, local, far);
    let release = store(&mut e, local, sbr);
    assert!(first >= t + e.topo.xfer_ns(remote, local) as u64);
    assert!(
        release > first,
        "release {release} before the store at {first}"
    );
    // the CPU did not wait for either (they sit in its store buffer)
    assert!(e.cpus[local].exec.cursor <= t + 2 * HIT_NS);
    // with no store ahead of it, the same release is visible at once
    e.now += 10_000;
    let t = e.now;
    assert_eq!(store(&mut e, local, sbr), t + HIT_NS);
}

/// Two stores to lines held on the other socket: the second's line is requested only once the
/// first store has committed, so it is visible a whole transfer after the first.
#[test]
fn a_stores_line_is_not_obtained_before_an_earlier_stores() {
    let mut e = engine();
    let local = 5;
    let r = remote_cpus(&e, 2);
    let (a, b) = (e.rq_lines[r[0]].rq(), e.rq_lines[r[1]].rq());
    e.now += 100;
    store(&mut e, r[0], a);
    store(&mut e, r[1], b);
    e.now += 10_000;
    let va = store(&mut e, local, a);
    let vb = store(&mut e, local, b);
    let xfer_b = e.topo.xfer_ns(r[1], local) as u64;
    assert!(vb >= va + xfer_b, "{vb} < {va} + {xfer_b}");
    assert_eq!(e.lines.owner(b), Some(local as u32));
}

/// Three stores to lines held on the other socket, issued back to back. With a two-entry buffer
/// the third finds it full and the CPU stalls until the first commits (a store-buffer wait,
/// charged to the storing function); with the machine's buffer (114 entries) it does not stall.
#[test]
fn a_full_store_buffer_stalls_the_cpu_and_a_large_one_does_not() {
    let mut stalled = Vec::new();
    for entries in [2, 114] {
        let mut e = engine();
        assert_eq!(e.topo.spec.store_buffer.entries, 114);
        let local = 5;
        e.cpus[local].exec.sb = StoreBuffer::new(entries);
        let r = remote_cpus(&e, 3);
        let lines: Vec<LineId> = r.iter().map(|&c| e.rq_lines[c].rq()).collect();
        e.now += 100;
        for (&c, &l) in r.iter().zip(&lines) {
            store(&mut e, c, l);
        }
        e.now += 10_000;
        let t = e.now;
        let charged = e.metrics.cpu_sym[local][Sym::SchedBalanceDomains as usize];
        let visible: Vec<u64> = lines.iter().map(|&l| store(&mut e, local, l)).collect();
        let wait = e.metrics.cpu_sym[local][Sym::SchedBalanceDomains as usize] - charged;
        if entries == 2 {
            // the third store got its entry when the first committed
            assert!(visible[0] > t + 400, "{visible:?}");
            assert_eq!(e.cpus[local].exec.cursor, visible[0] + HIT_NS);
            assert_eq!(wait, visible[0] - t + HIT_NS, "two hits, the stall, a hit");
        } else {
            assert_eq!(e.cpus[local].exec.cursor, t + 3 * HIT_NS);
            assert_eq!(wait, 3 * HIT_NS);
        }
        stalled.push(visible);
    }
    // the stores become visible at the same times either way: the buffer's size moves the CPU only
    assert_eq!(stalled[0], stalled[1]);
}

/// A remote rq lock (`rq_lock_remote`, a locked RMW issued outside a job step) waits for the
/// taker's store buffer to drain: after a store whose line is on the other socket, the lock's
/// stall covers that store's commit; with an empty buffer it is the lock's transfer alone.
#[test]
fn a_remote_rq_lock_waits_for_the_store_buffer_to_drain() {
    let mut stalls = Vec::new();
    for store_first in [false, true] {
        let mut e = engine();
        let local = 5;
        let r = remote_cpus(&e, 2);
        let far = e.rq_lines[r[0]].rq();
        e.now += 100;
        store(&mut e, r[0], far);
        e.now += 10_000;
        let t = e.now;
        let committed = if store_first {
            store(&mut e, local, far)
        } else {
            t
        };
        let stall = e.rq_lock_remote(local, r[1]);
        assert!(
            t + stall >= committed,
            "the lock left before the store committed"
        );
        stalls.push(stall);
    }
    assert!(
        stalls[1] >= stalls[0] + e_xfer_floor(),
        "the drain adds a transfer: {stalls:?}"
    );
}

/// The smallest cross-socket transfer of the test machine: what a store's read for ownership
/// from the other socket costs at least.
fn e_xfer_floor() -> u64 {
    let e = engine();
    let r = remote_cpus(&e, 1)[0];
    e.topo.xfer_ns(r, 5) as u64
}

/// `buffered_store` (the stores priced by their caller: `ttwu_pending`, the `sd_llc_shared`
/// hints) goes through the store buffer like `kstore`: with two entries, a third store to lines
/// held on the other socket waits for the first to commit, and a large buffer does not wait.
#[test]
fn a_callers_store_goes_through_the_store_buffer() {
    for entries in [2, 114] {
        let mut e = engine();
        let local = 5;
        e.cpus[local].exec.sb = StoreBuffer::new(entries);
        let r = remote_cpus(&e, 3);
        let lines: Vec<LineId> = r.iter().map(|&c| e.rq_lines[c].rq()).collect();
        e.now += 100;
        for (&c, &l) in r.iter().zip(&lines) {
            store(&mut e, c, l);
        }
        e.now += 10_000;
        let waits: Vec<u64> = lines
            .iter()
            .map(|&l| e.buffered_store(local, l, 0, Sym::TryToWakeUp))
            .collect();
        if entries == 2 {
            assert_eq!(waits[..2], [0, 0]);
            assert!(waits[2] >= e_xfer_floor(), "{waits:?}");
        } else {
            assert_eq!(waits, [0, 0, 0]);
        }
        // in program order: the last store commits a transfer after the first
        assert!(e.cpus[local].exec.sb.drained_at() >= e.now + 3 * e_xfer_floor());
    }
}
