//! A request from another host, on its way to the server thread (v6.18; NETWORK.md A1-A3,
//! docs/MODEL.md §18b):
//! - the packet lands on the receive queue RSS picks for its connection (`rss_queue`: the
//!   Toeplitz hash of the TCP 4-tuple through the default indirection table);
//! - the queue's interrupt fires once the card's moderation delay has passed since the first
//!   packet it holds (`NIC_RX_USECS_NS`), or at once when `RX_FRAMES` have gathered;
//! - on the queue's interrupt CPU (`machine::nic`), the hard IRQ schedules NAPI and the NET_RX
//!   softirq runs at its exit, in the context of whatever it interrupted: the driver poll, GRO,
//!   IP and `tcp_v4_rcv` per packet, then `sock_def_readable` wakes the server thread with
//!   WF_SYNC (`Waker::Irq`: wake_affine sees the interrupted task, or the idle task, as current);
//! - packets that arrive while the poll runs are taken by the same poll; when it finds the ring
//!   empty, `napi_complete_done` re-arms the interrupt.
//!
//! A CPU runs its kernel work in order, so a tick that lands during NET_RX raises SCHED_SOFTIRQ
//! behind it, as `handle_softirqs` runs the pending bits lowest first (NET_RX 3 before SCHED 7).

use super::wakeup::Waker;
use super::*;
use crate::machine::nic::Nic;
use crate::workload::syscall::KernelStep;

/// mlx5's start moderation frame count (en.h:136-141): the interrupt fires at once when this
/// many packets wait.
pub const RX_FRAMES: usize = 32;
/// A request's payload the server thread reads first: the skb and its data, written on the
/// interrupt CPU, cache lines [A] (a statement of a few hundred bytes, as the loopback request).
pub const REQUEST_LINES: u32 = 4;
/// The RSS indirection table's size: mlx5's `max(256, roundup_pow_of_two(2 x channels))`
/// (en/rqt.c, `MLX5E_UNIFORM_SPREAD_RQT_FACTOR` 2), filled `i % queues`
/// (`ethtool_rxfh_indir_default`).
fn indirection_size(queues: usize) -> usize {
    (2 * queues).next_power_of_two().max(256)
}

/// One receive queue: the packets its ring holds, and its interrupt and NAPI state.
#[derive(Clone, Debug, Default)]
struct RxQueue {
    /// Arrived packets not yet polled, oldest first: the server task and its connection.
    ring: VecDeque<(TaskId, u32)>,
    /// The moderation timer is running (the interrupt is armed and a packet is waiting).
    timer: bool,
    /// Bumped when the interrupt fires, so a pending moderation timer becomes a no-op.
    generation: u32,
    /// NAPI is scheduled or polling: the interrupt is masked until `napi_complete_done`.
    napi: bool,
    /// The rest of the kernel steps of the packet being received (`Workload::rx_script`).
    script: VecDeque<KernelStep>,
}

/// What the receive path counted (the report's `network` block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetCounts {
    pub packets: u64,
    pub interrupts: u64,
    /// NAPI polls that found more than one packet.
    pub batched_polls: u64,
    /// Wakeups placed on the interrupt CPU itself.
    pub woken_on_irq_cpu: u64,
}

/// The card and its queues' state.
pub(crate) struct NetState {
    pub nic: Nic,
    queues: Vec<RxQueue>,
    /// RSS: each connection's queue (connection i is task i's, unless the workload has more
    /// connections than tasks: `Workload::connections`).
    conn_queue: Vec<u32>,
    pub counts: NetCounts,
}

impl NetState {
    /// The interrupt CPU of the receive queue RSS gives connection `conn`.
    pub(super) fn irq_cpu_of(&self, conn: u32) -> usize {
        self.nic.irq_cpu[self.conn_queue[conn as usize] as usize] as usize
    }

    /// The card of `topo` for `conns` connections; `seed` draws the RSS key (the hash of each
    /// connection's 4-tuple: the client's ephemeral port makes it uniform), on a stream of its
    /// own so that nothing else the run draws changes.
    pub(super) fn new(topo: &Topology, conns: usize, seed: u64) -> NetState {
        let nic = Nic::new(topo, topo.spec.nic_queues, topo.spec.nic_node);
        let n = nic.queues();
        let indir = indirection_size(n);
        let mut key = SimRng::new(seed ^ 0x7273_735f_6b65_7900); // "rss_key"
        let conn_queue = (0..conns)
            .map(|_| ((key.below(indir as u64) as usize) % n) as u32)
            .collect();
        NetState {
            queues: vec![RxQueue::default(); n],
            nic,
            conn_queue,
            counts: NetCounts::default(),
        }
    }
}

/// The NET_RX job on a queue's interrupt CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetRxStep {
    /// The hard IRQ: the driver's handler schedules NAPI on this CPU.
    HardIrq(u32),
    /// net_rx_action → the driver poll: the next packet of the ring (`polled` so far).
    Poll { queue: u32, polled: u32 },
    /// tcp_v4_rcv's line accesses for the packet (`Workload::rx_script`), one per step.
    Script {
        queue: u32,
        polled: u32,
        task: TaskId,
        conn: u32,
    },
    /// sock_def_readable → wake_up_interruptible_sync_poll: wake the packet's server thread.
    Wake {
        queue: u32,
        polled: u32,
        task: TaskId,
        conn: u32,
    },
}

impl Engine {
    /// `Step::AwaitRequest`: the next request of `t`'s connection reaches the card `ns` from now.
    pub(super) fn await_request(&mut self, t: TaskId, ns: u64) {
        self.q.push(self.now + ns, Ev::Packet(t, t));
    }

    /// The driver host's next open-loop request (`Workload::next_arrival`), on its own stream.
    pub(super) fn schedule_arrival(&mut self) {
        if let Some(a) = self.workload.next_arrival(self.now, &mut self.arrivals) {
            self.q
                .push(a.at_ns.max(self.now), Ev::Packet(a.task, a.conn));
            self.open_loop = true;
        }
    }

    /// A packet reaches the card: it goes on its connection's queue, whose interrupt fires after
    /// the moderation delay (or at once past `RX_FRAMES`) unless NAPI is already polling.
    pub(super) fn on_packet(&mut self, t: TaskId, conn: u32) {
        let net = &mut self.net;
        net.counts.packets += 1;
        let qi = net.conn_queue[conn as usize] as usize;
        let q = &mut net.queues[qi];
        q.ring.push_back((t, conn));
        if q.napi {
            return; // the running poll takes it
        }
        let delay = self.assume.nic_rx_usecs_ns;
        if q.ring.len() >= RX_FRAMES || delay == 0 {
            self.nic_interrupt(qi);
        } else if !q.timer {
            q.timer = true;
            let g = q.generation;
            self.q.push(self.now + delay, Ev::NicIrq(qi as u32, g));
        }
    }

    /// The moderation timer of queue `qi` expired.
    pub(super) fn on_nic_timer(&mut self, qi: u32, generation: u32) {
        let q = &self.net.queues[qi as usize];
        if q.generation == generation && q.timer && !q.napi {
            self.nic_interrupt(qi as usize);
        }
    }

    /// The queue's MSI-X interrupt: NAPI is scheduled on its CPU (`____napi_schedule`), the
    /// interrupt masked until the poll completes.
    fn nic_interrupt(&mut self, qi: usize) {
        let q = &mut self.net.queues[qi];
        q.timer = false;
        q.napi = true;
        q.generation = q.generation.wrapping_add(1);
        self.net.counts.interrupts += 1;
        let c = self.net.nic.irq_cpu[qi] as usize;
        self.trace_instant(c, "irq: NIC rx");
        self.push_job(c, Job::NetRx(NetRxStep::HardIrq(qi as u32)));
    }

    pub(super) fn step_net_rx(&mut self, c: usize, step: NetRxStep) -> Option<NetRxStep> {
        match step {
            NetRxStep::HardIrq(queue) => {
                self.kcharge(c, Sym::NetRxIrq, self.assume.net_hardirq_ns);
                Some(NetRxStep::Poll { queue, polled: 0 })
            }
            NetRxStep::Poll { queue, polled } => {
                if self.must_wait(c) {
                    return Some(step);
                }
                let q = &mut self.net.queues[queue as usize];
                let Some((task, conn)) = q.ring.pop_front() else {
                    // napi_complete_done: the ring is empty, the interrupt is armed again
                    q.napi = false;
                    if polled > 1 {
                        self.net.counts.batched_polls += 1;
                    }
                    return None;
                };
                self.kcharge(c, Sym::NetRxAction, self.assume.net_rx_pkt_ns);
                let script = self.workload.rx_script(task, conn);
                let polled = polled + 1;
                if script.is_empty() {
                    return Some(NetRxStep::Wake {
                        queue,
                        polled,
                        task,
                        conn,
                    });
                }
                self.net.queues[queue as usize].script.extend(script);
                Some(NetRxStep::Script {
                    queue,
                    polled,
                    task,
                    conn,
                })
            }
            NetRxStep::Script {
                queue,
                polled,
                task,
                conn,
            } => {
                let q = queue as usize;
                let Some(&k) = self.net.queues[q].script.front() else {
                    return Some(NetRxStep::Wake {
                        queue,
                        polled,
                        task,
                        conn,
                    });
                };
                if !self.kernel_step(c, None, k) {
                    self.net.queues[q].script.pop_front();
                }
                Some(step)
            }
            NetRxStep::Wake {
                queue,
                polled,
                task,
                conn,
            } => {
                if self.must_wait(c) {
                    return Some(step);
                }
                // tcp_v4_rcv queued the data on the socket: the thread finds it when it runs
                self.workload.delivered(task, conn, self.now);
                self.try_to_wake_up(task, c, Waker::Irq(REQUEST_LINES), wakeup::WF_SYNC);
                let t = &self.tasks[task as usize];
                if t.cpu as usize == c && t.state != TaskState::Sleeping {
                    self.net.counts.woken_on_irq_cpu += 1;
                }
                Some(NetRxStep::Poll { queue, polled })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_indirection_table_is_at_least_256_entries_and_twice_the_queues() {
        assert_eq!(indirection_size(63), 256);
        assert_eq!(indirection_size(200), 512);
        assert_eq!(indirection_size(1), 256);
    }
}
