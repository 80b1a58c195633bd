//! The server's network card as the kernel sets it up: how many receive queues it has, and which
//! CPU each queue's interrupt is affine to. A connection's packets all land on one queue (RSS:
//! a Toeplitz hash of the TCP 4-tuple), so on one CPU, which runs the hard IRQ and the NET_RX
//! softirq that wakes the server thread (`sched/net_rx.rs`). Sources: docs/MODEL.md §18b.

use super::topology::Topology;

/// The default queue count of the modelled card, a ConnectX (mlx5) on its driver defaults:
/// one completion vector per online CPU plus one, capped by the card's MSI-X table, one of which
/// is the control vector; channels = min(128, vectors) (en_main.c:5332). With the 64-entry MSI-X
/// table that large hosts report ("63 channels"), that is 63 queues on any box with 63 or more
/// CPUs [A: the firmware figure was not found], one per CPU below.
pub const MLX5_DEFAULT_CHANNELS: u32 = 63;

/// The default receive-queue count on a machine of `nr_cpus` CPUs.
pub fn default_queues(nr_cpus: usize) -> u32 {
    (nr_cpus as u32).min(MLX5_DEFAULT_CHANNELS)
}

/// The receive queues and their interrupt CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic {
    /// Queue i's interrupt CPU (dense engine index).
    pub irq_cpu: Vec<u32>,
    /// The node the card is attached to.
    pub node: u32,
}

impl Nic {
    /// The card of `topo` with `queues` receive queues (None: the driver's default) on `node`:
    /// queue i's interrupt goes to `cpumask_local_spread(i, node)`, as mlx5 (eq.c:823-849) and ice
    /// (`netif_set_affinity_auto`) place them.
    pub fn new(topo: &Topology, queues: Option<u32>, node: u32) -> Nic {
        let n = queues.unwrap_or_else(|| default_queues(topo.nr_cpus()));
        let order = local_spread_order(topo, node as usize);
        Nic {
            irq_cpu: (0..n as usize).map(|i| order[i % order.len()]).collect(),
            node,
        }
    }

    pub fn queues(&self) -> usize {
        self.irq_cpu.len()
    }
}

/// `cpumask_local_spread(i, node)` for every i: `sched_numa_find_nth_cpu` counts the node's own
/// CPUs first, then the CPUs one NUMA hop further, and so on (hops by the SLIT the scheduler
/// sees), each hop's CPUs in CPU-number order; i wraps at the number of online CPUs.
pub fn local_spread_order(topo: &Topology, node: usize) -> Vec<u32> {
    let dist = &topo.slit[node];
    let mut hops: Vec<u32> = dist.clone();
    hops.sort_unstable();
    hops.dedup();
    let mut order = Vec::with_capacity(topo.nr_cpus());
    for d in hops {
        for (c, info) in topo.cpus.iter().enumerate() {
            if dist[info.node as usize] == d {
                order.push(c as u32);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets;

    fn topo(name: &str) -> Topology {
        Topology::new(presets::preset(name).unwrap()).unwrap()
    }

    #[test]
    fn queues_spread_over_the_cards_node_first_in_cpu_order() {
        let t = topo("gnr-2s-96c-snc3");
        let nic = Nic::new(&t, None, 0);
        assert_eq!(nic.queues(), 63);
        // every interrupt CPU is on node 0, and none twice
        let mut cpus = nic.irq_cpu.clone();
        assert!(cpus.iter().all(|&c| t.cpus[c as usize].node == 0));
        cpus.sort_unstable();
        cpus.dedup();
        assert_eq!(cpus.len(), 63);
        // the node's CPUs in number order: its cores, then their SMT siblings
        let node0: Vec<u32> = t.node_cpus[0].iter().map(|c| c as u32).collect();
        assert_eq!(nic.irq_cpu, node0[..63].to_vec());
    }

    #[test]
    fn more_queues_than_the_node_has_cpus_go_to_the_nearest_nodes_next() {
        let t = topo("gnr-2s-96c-snc3");
        let per_node = t.node_cpus[0].weight();
        let nic = Nic::new(&t, Some(per_node as u32 + 4), 0);
        let next = &nic.irq_cpu[per_node..];
        // the nearest other nodes are node 0's SNC siblings on the same socket
        let d = |c: u32| t.slit[0][t.cpus[c as usize].node as usize];
        let nearest = (1..t.nr_nodes).map(|n| t.slit[0][n]).min().unwrap();
        assert!(next.iter().all(|&c| d(c) == nearest), "{next:?}");
    }

    #[test]
    fn a_small_box_gets_a_queue_per_cpu_and_queues_wrap_past_the_cpus() {
        let t = topo("milan-2s");
        assert_eq!(default_queues(8), 8);
        let nic = Nic::new(&t, Some(t.nr_cpus() as u32 + 1), 1);
        assert_eq!(nic.irq_cpu[t.nr_cpus()], nic.irq_cpu[0]);
        assert_eq!(t.cpus[nic.irq_cpu[0] as usize].node, 1);
    }
}
