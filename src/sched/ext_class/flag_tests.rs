//! The `sched_ext_ops.flags` that change what the core asks the BPF scheduler, seen through the
//! project's `last` fixture (tests/bpf/last.bpf.c), which counts what its ops.enqueue gets:
//! `SCX_OPS_ENQ_LAST` (a lone task whose slice ends comes back with `SCX_ENQ_LAST`; without the
//! flag it keeps its CPU and ops.enqueue never hears of it).

use super::tests::{engine_with, run_checked};
use super::*;
use crate::sched::ext::core::SCX_OPS_ENQ_LAST;

const LAST: &[u8] = include_bytes!("../../../tests/bpf/last.bpf.o");

fn bss_u64(x: &ExtClass, name: &str) -> u64 {
    let b = x.sched.obj.read_global(name).expect(name);
    let mut v = [0u8; 8];
    v[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    u64::from_le_bytes(v)
}

/// Two CPU hogs on an 8-CPU machine, each alone on its CPU, for 20 ms under `last` (1 ms
/// slices) with `ops.flags` = `flags`.
fn two_hogs(flags: u64) -> Engine {
    let knobs = [("threads", "2")];
    let mut e = engine_with(1, "spin", &knobs, LAST, &[("ops.flags", flags)]);
    run_checked(&mut e, 20_000_000);
    e
}

#[test]
fn enq_last_hands_a_lone_task_whose_slice_ends_to_ops_enqueue_with_scx_enq_last() {
    let e = two_hogs(SCX_OPS_ENQ_LAST);
    let x = e.ext_class().unwrap();
    assert!(x.sched.enabled(), "{:?}", x.sched.k.exit);
    let (total, last) = (bss_u64(x, "enq_total"), bss_u64(x, "enq_last"));
    // each hog's 1 ms slice ends about 20 times with nothing else on its CPU
    assert!(last >= 10, "SCX_ENQ_LAST enqueues: {last} of {total}");
    // the fixture puts such a task back on its local DSQ and kicks the CPU: the hogs keep running
    let ran: u64 = e.tasks.iter().map(|t| t.sum_exec).sum();
    assert!(ran > 30_000_000, "the hogs ran {ran} ns of 40 ms");
}

#[test]
fn without_enq_last_a_lone_task_keeps_its_cpu_and_ops_enqueue_never_sees_it() {
    let e = two_hogs(0);
    let x = e.ext_class().unwrap();
    assert!(x.sched.enabled(), "{:?}", x.sched.k.exit);
    assert_eq!(x.sched.ops.uint("flags"), 0);
    assert_eq!(bss_u64(x, "enq_last"), 0);
    // only the enqueues at enable: balance_one keeps prev (SCX_RQ_BAL_KEEP) and refills its slice
    assert!(
        bss_u64(x, "enq_total") <= 2,
        "enqueues: {}",
        bss_u64(x, "enq_total")
    );
    let ran: u64 = e.tasks.iter().map(|t| t.sum_exec).sum();
    assert!(ran > 30_000_000, "the hogs ran {ran} ns of 40 ms");
}

#[test]
fn enq_last_without_ops_enqueue_ends_the_scheduler_at_enable() {
    let fifo = include_bytes!("../../../tests/bpf/fifo.bpf.o");
    let mut s = ScxSched::open(fifo, Config { nr_cpus: 2 }).unwrap();
    s.ops.callbacks.remove("enqueue");
    s.set_option("ops.flags", SCX_OPS_ENQ_LAST).unwrap();
    s.attach();
    let ei = s.k.exit.as_ref().expect("validate_ops refuses it");
    assert!(
        ei.msg.contains("SCX_OPS_ENQ_LAST requires ops.enqueue()"),
        "{ei:?}"
    );
}
