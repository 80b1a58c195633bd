//! The core driven by hand with the project's fixtures (tests/bpf): the dispatch paths, and each
//! way a scheduler ends (error, fault, endless loop, missing kfunc, stall) with its reason.

use super::*;

const FIFO: &[u8] = include_bytes!("../../../../tests/bpf/fifo.bpf.o");
const VTIME: &[u8] = include_bytes!("../../../../tests/bpf/vtime.bpf.o");
const LLC: &[u8] = include_bytes!("../../../../tests/bpf/llc.bpf.o");
const BAD: &[u8] = include_bytes!("../../../../tests/bpf/bad.bpf.o");

fn attached(bytes: &[u8], nr_cpus: u32, setup: impl FnOnce(&mut Object)) -> ScxSched {
    let mut s = ScxSched::open(bytes, Config { nr_cpus }).unwrap();
    setup(&mut s.obj);
    s.attach();
    s
}

fn bad(mode: u32) -> ScxSched {
    let mut s = attached(BAD, 2, |o| {
        o.set_global("mode", &mode.to_le_bytes()).unwrap()
    });
    assert!(s.enabled(), "{:?}", s.k.exit);
    let t = s.add_task(42, 100, 0);
    s.enqueue_task(t, 0, SCX_ENQ_WAKEUP);
    s
}

fn exit_of(s: &ScxSched) -> &ExitInfo {
    s.k.exit.as_ref().expect("the scheduler should have exited")
}

#[test]
fn fifo_direct_dispatches_to_idle_cpus_then_queues_in_arrival_order() {
    let mut s = attached(FIFO, 2, |_| {});
    assert!(s.enabled());
    assert!(s.k.user.contains_key(&0), "ops.init created the shared DSQ");
    let tasks: Vec<usize> = (0..5).map(|i| s.add_task(100 + i, 100, 0)).collect();
    // Two wakeups find the two idle CPUs: direct dispatch to their local DSQs.
    for &t in &tasks[..2] {
        let cpu = s.select_task_rq(t, 0, 0x8);
        s.enqueue_task(t, cpu, SCX_ENQ_WAKEUP);
    }
    assert_eq!((s.k.local[0].nr(), s.k.local[1].nr()), (1, 1));
    // Three more find none: ops.enqueue puts them on the shared DSQ.
    for &t in &tasks[2..] {
        let cpu = s.select_task_rq(t, 1, 0x8);
        s.enqueue_task(t, cpu, SCX_ENQ_WAKEUP);
    }
    assert_eq!(s.k.user[&0].nr(), 3);
    assert_eq!(s.pick_task(0, None), Some(tasks[0]));
    assert_eq!(
        s.slice(tasks[0]),
        SCX_SLICE_DFL,
        "the .rodata default slice"
    );
    // CPU 0's task sleeps; the next pick runs ops.dispatch, which moves the FIFO head.
    s.dequeue_task(tasks[0]);
    let order: Vec<_> = (0..3)
        .map(|_| {
            let t = s.pick_task(0, None).unwrap();
            s.dequeue_task(t);
            t
        })
        .collect();
    assert_eq!(order, tasks[2..]);
    assert_eq!(s.pick_task(0, None), None);
    assert_eq!(s.k.op_calls["enqueue"], 3);
    assert_eq!(s.k.op_calls["select_cpu"], 5);
    assert!(s.k.insns > 0);
    // The per-CPU stats map counted 2 direct dispatches and 3 enqueues, across the CPUs.
    let stats = s.obj.map("stats").unwrap();
    let sum = |i| {
        (0..2)
            .map(|c| s.obj.mem.load(stats.element(i, c), 8).unwrap())
            .sum::<u64>()
    };
    assert_eq!((sum(0), sum(1)), (2, 3));
}

#[test]
fn a_running_task_keeps_the_cpu_while_its_slice_lasts_then_queues_behind_others() {
    let mut s = attached(FIFO, 1, |_| {});
    let a = s.add_task(1, 100, 0);
    let b = s.add_task(2, 100, 0);
    s.enqueue_task(a, 0, SCX_ENQ_WAKEUP);
    s.enqueue_task(b, 0, SCX_ENQ_WAKEUP);
    assert_eq!(s.pick_task(0, None), Some(a));
    assert!(!s.charge(a, 1_000_000));
    let stops = s.k.op_calls.get("stopping").copied().unwrap_or(0);
    assert_eq!(
        s.pick_task(0, Some(a)),
        Some(a),
        "slice left: a keeps the CPU"
    );
    assert_eq!(
        s.k.op_calls.get("stopping").copied().unwrap_or(0),
        stops,
        "no put_prev"
    );
    assert!(s.charge(a, SCX_SLICE_DFL), "slice spent");
    assert_eq!(
        s.pick_task(0, Some(a)),
        Some(b),
        "b was queued: a goes behind it"
    );
    assert_eq!(
        s.k.tasks[a].wh,
        Where::Queued(0),
        "a went through ops.enqueue"
    );
}

#[test]
fn vtime_runs_the_lowest_vtime_first() {
    let mut s = attached(VTIME, 1, |o| {
        o.set_global("vtime_now", &1_000_000_000u64.to_le_bytes())
            .unwrap()
    });
    let ts: Vec<usize> = (0..3).map(|i| s.add_task(i, 100, 0)).collect();
    // Occupy the CPU so wakeups queue instead of direct dispatching.
    s.k.idle[0] = false;
    for (t, v) in ts
        .iter()
        .zip([1_000_300_000u64, 1_000_100_000, 1_000_200_000])
    {
        s.set_vtime(*t, v);
        let cpu = s.select_task_rq(*t, 0, 0);
        s.enqueue_task(*t, cpu, SCX_ENQ_WAKEUP);
    }
    let order: Vec<_> = (0..3)
        .map(|_| {
            let t = s.pick_task(0, None).unwrap();
            s.dequeue_task(t);
            t
        })
        .collect();
    assert_eq!(order, [ts[1], ts[2], ts[0]]);
}

#[test]
fn llc_queues_per_llc_and_a_cpu_steals_from_another() {
    let mut s = attached(LLC, 4, |o| {
        o.set_global("nr_llcs", &2u32.to_le_bytes()).unwrap();
        let map: Vec<u8> = [0u32, 0, 1, 1]
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .collect();
        o.set_global("cpu_llc", &map).unwrap();
    });
    assert!(s.enabled(), "{:?}", s.k.exit);
    assert_eq!(s.k.user.keys().copied().collect::<Vec<_>>(), [0, 1]);
    s.k.idle.iter_mut().for_each(|i| *i = false);
    let t = s.add_task(7, 100, 3);
    let cpu = s.select_task_rq(t, 3, 0);
    s.enqueue_task(t, cpu, SCX_ENQ_WAKEUP);
    assert_eq!(s.k.user[&1].nr(), 1, "LLC 1 (CPU 3)");
    assert_eq!(s.pick_task(0, None), Some(t), "CPU 0 (LLC 0) steals it");
    // Its slice is __SCX_SLICE_DFL, which open() filled as SCX_ENUM_INIT does.
    assert_eq!(
        s.obj.read_global("__SCX_SLICE_DFL").unwrap(),
        SCX_SLICE_DFL.to_le_bytes()
    );
    assert_eq!(s.slice(t), SCX_SLICE_DFL);
    assert_eq!(s.obj.read_global("nr_steals").unwrap(), 1u64.to_le_bytes());
}

#[test]
fn a_failing_init_ends_the_scheduler_with_its_message() {
    let s = attached(LLC, 2, |o| {
        o.set_global("nr_llcs", &0u32.to_le_bytes()).unwrap()
    });
    let e = exit_of(&s);
    assert_eq!(
        (e.kind, e.msg.as_str()),
        (SCX_EXIT_ERROR_BPF, "nr_llcs out of range")
    );
}

#[test]
fn scx_bpf_error_ejects_with_its_message() {
    let s = bad(4);
    let e = exit_of(&s);
    assert_eq!(
        (e.kind, e.msg.as_str()),
        (SCX_EXIT_ERROR_BPF, "bad: mode 4 asked for an error")
    );
}

#[test]
fn an_endless_loop_an_out_of_bounds_read_and_a_missing_kfunc_eject_with_reasons() {
    let e = exit_of(&bad(1)).clone();
    assert_eq!(e.kind, SCX_EXIT_ERROR);
    assert!(
        e.msg.contains("ops.enqueue") && e.msg.contains("budget of 1000000"),
        "{}",
        e.msg
    );
    let s = bad(2);
    let e = exit_of(&s);
    assert!(
        e.msg.contains("invalid memory access") && e.msg.contains("task_struct 42"),
        "{}",
        e.msg
    );
    let s = bad(3);
    let e = exit_of(&s);
    assert!(
        e.msg
            .contains("called kfunc scx_bpf_no_such_kfunc, which this kernel lacks"),
        "{}",
        e.msg
    );
    // A disabled scheduler's ops are not called again: the task went to no DSQ.
    let before = s.k.op_calls["enqueue"];
    let mut s = s;
    let t = s.add_task(43, 100, 0);
    s.enqueue_task(t, 0, SCX_ENQ_WAKEUP);
    assert_eq!(s.k.op_calls["enqueue"], before);
}

#[test]
fn the_watchdog_ends_a_scheduler_that_leaves_a_task_waiting() {
    let mut s = bad(5);
    assert!(s.enabled());
    assert_eq!(s.k.timeout_ns, 5_000_000_000, "ops.timeout_ms = 5000");
    s.k.now_ns = 5_000_000_000;
    s.watchdog();
    assert!(s.enabled(), "not past the timeout yet");
    assert_eq!(s.pick_task(0, None), None, "dispatch never serves DSQ 1");
    s.k.now_ns = 5_000_000_001;
    s.watchdog();
    let e = exit_of(&s);
    assert_eq!(
        (e.kind, e.msg.as_str(), e.at_ns),
        (
            SCX_EXIT_ERROR_STALL,
            "task[42] failed to run for 5.000s",
            5_000_000_001
        )
    );
}

#[test]
fn kfuncs_from_the_wrong_op_and_bad_ops_fields_are_errors() {
    // fifo_dispatch called as if it were another op: move_to_local is dispatch-only.
    let mut s = attached(FIFO, 1, |_| {});
    s.call("dispatch", OpCtx::Rest, &[0, 0]);
    assert!(
        exit_of(&s)
            .msg
            .contains("scx_bpf_dsq_move_to_local called from a context")
    );
    // ops.exit ran once with the exit kind (fifo records it in .bss), and not again.
    let kind = |s: &ScxSched| s.obj.read_global("exit_kind").unwrap().to_vec();
    assert_eq!(kind(&s), SCX_EXIT_ERROR.to_le_bytes());
    assert_eq!(s.k.op_calls["exit"], 1);
    s.k.exit(SCX_EXIT_DONE, 0, String::new());
    s.watchdog();
    assert_eq!(s.k.op_calls["exit"], 1);
    // 64-bit bstr formatting.
    assert_eq!(
        super::super::kfuncs::tests_bstr("cpu %d of %u: %llx", &[u64::MAX, 4, 255]),
        "cpu -1 of 4: ff"
    );
}
