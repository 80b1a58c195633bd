//! Requests from another host: the network card's receive queues, their interrupt CPUs and the
//! NET_RX wakeups (src/sched/net_rx.rs, docs/MODEL.md §18b).
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::sched::Sym;
use schedplay::{Run, run};

/// OLTP driven from another host on a 64-CPU, 4-node box.
fn remote(clients: u32, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(16);
    e.machine.overrides.nodes_per_socket = Some(2);
    e.workload.name = "oltp".into();
    e.workload.knobs.insert("client".into(), "remote".into());
    e.workload.knobs.insert("clients".into(), clients.into());
    e.seconds = seconds;
    e
}

#[test]
fn packets_are_received_only_on_the_interrupt_cpus_of_the_cards_node() {
    let mut e = remote(128, 0.05);
    e.machine.overrides.nic_queues = Some(8);
    e.machine.overrides.nic_node = Some(1);
    let mut r = Run::new(&e, Side::A).unwrap();
    while !r.step(50_000) {
        r.engine().check_invariants().unwrap();
    }
    r.flush();
    r.engine().check_cpu_time().unwrap();
    let eng = r.engine();
    let rx: Vec<usize> = (0..eng.topo.nr_cpus())
        .filter(|&c| eng.metrics.cpu_sym[c][Sym::NetRxAction as usize] > 0)
        .collect();
    assert!(!rx.is_empty() && rx.len() <= 8, "{rx:?}");
    assert!(rx.iter().all(|&c| eng.topo.cpus[c].node == 1), "{rx:?}");
    let rep = r.report();
    let net = rep.network.expect("a network block");
    assert_eq!((net.queues, net.irq_cpus, net.nic_node), (8, 8, 1));
    // every statement of every transaction is one request
    assert!(net.packets > 20 * rep.counters["wakeups"] / 100, "{net:?}");
    // from softirq context, wake_affine pulls some server threads onto the interrupt CPU
    assert!(net.woken_on_irq_cpu_pct > 0.0, "{net:?}");
}

#[test]
fn a_longer_moderation_delay_batches_more_packets_per_interrupt() {
    let per_irq = |ns: u64| {
        let mut e = remote(256, 0.03);
        e.assume.insert("NIC_RX_USECS_NS".into(), ns);
        run(&e, Side::A)
            .unwrap()
            .network
            .unwrap()
            .packets_per_interrupt
    };
    let (short, long) = (per_irq(3_000), per_irq(50_000));
    assert!(long > short * 1.5, "3 µs: {short:.2}, 50 µs: {long:.2}");
}

#[test]
fn a_local_client_uses_no_network_and_a_remote_run_is_deterministic() {
    let mut local = remote(64, 0.01);
    local.workload.knobs.insert("client".into(), "local".into());
    assert!(run(&local, Side::A).unwrap().network.is_none());
    let e = remote(64, 0.02);
    assert_eq!(
        run(&e, Side::A).unwrap().report_hash,
        run(&e, Side::A).unwrap().report_hash
    );
    let mut other = e.clone();
    other.seed = 2;
    // the RSS key and the run's draws follow the seed
    assert_ne!(
        run(&e, Side::A).unwrap().report_hash,
        run(&other, Side::A).unwrap().report_hash
    );
}

#[test]
fn card_fields_out_of_range_are_named() {
    let mut e = remote(64, 0.01);
    e.machine.overrides.nic_node = Some(4);
    let err = e.validate().unwrap_err().to_string();
    assert!(err.contains("nic_node") && err.contains("0..=3"), "{err}");
    e.machine.overrides.nic_node = None;
    e.machine.overrides.nic_queues = Some(0);
    let err = e.validate().unwrap_err().to_string();
    assert!(
        err.contains("nic_queues") && err.contains("1..=4096"),
        "{err}"
    );
}
