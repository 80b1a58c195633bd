//! Where a cache line's requests are serialized, and how long a request takes to get there.
//!
//! A directory protocol serializes conflicting requests for a line at the line's home agent (the
//! CHA of the address on Intel, the coherent station holding the probe filter on AMD;
//! HARDWARE-2.md §4), in the order the requests arrive there. A request for a line held in the
//! requester's own domain (Intel: its socket, whose snoop filter covers every core; AMD and the
//! others: its LLC, whose shadow tags cover its cores) is ordered there instead. docs/MODEL.md §5b:
//! - a request's leg to the serialization point is a one-way message: half of the measured
//!   transfer figure between the two places (a transfer is a request there and data back);
//! - a request for a line held outside the requester's domain goes to the home node (half the
//!   figure between the requester's LLC and a CPU of the home node), and the home forwards it to
//!   the holder's domain when the home is not in it (half the figure between them);
//! - the leg decides the order only: what a served request costs is the measured figure, as
//!   before (from its issue, or from the previous request's completion when it queued), and at
//!   least the data's half after its arrival. So the uncontended latencies and the ping-pong
//!   tables are unchanged, and a storm drains the requesters nearest the line first.
//!
//! Homes: kernel statics on node 0 (the kernel image, no text replication on x86), per-CPU data
//! and run queues on their CPU's node, slab objects on the node that allocated them.

use super::{Coherence, Groups, Held, Hot, Line, LineId, Op};
use crate::machine::hardware::{LatencyClass, Vendor};
use crate::machine::topology::Topology;

/// Where each CPU group's requests to each node's home agent arrive: `leg[g * nr_nodes + h]`.
pub(super) struct HomeLegs {
    nr_nodes: usize,
    leg: Vec<u32>,
    /// Per CPU, the agent that keeps its caches coherent (`same_domain`): its socket's (Intel) or
    /// its LLC's.
    pub(super) domain_of: Vec<u32>,
    /// Whose caches one agent keeps coherent without the home: Intel's snoop filter covers every
    /// core of its socket (its CHAs); AMD's L3 shadow tags (and the other vendors' LLC tags) cover
    /// one LLC, and a miss there goes to the home (HARDWARE-2.md §4, HARDWARE.md §2).
    socket_wide: bool,
}

impl HomeLegs {
    pub(super) fn new(topo: &Topology, groups: &Groups) -> HomeLegs {
        let nr_nodes = topo.nr_nodes;
        // the home agent of node h: one place of h (its first CPU stands for it)
        let first: Vec<usize> = (0..nr_nodes)
            .map(|h| topo.node_cpus[h].iter().next().unwrap_or(0))
            .collect();
        let llc = topo.class_ns(LatencyClass::Llc);
        let leg = (0..groups.rep.len() * nr_nodes)
            .map(|i| {
                let (g, h) = (i / nr_nodes, i % nr_nodes);
                let (rep, home) = (groups.rep[g] as usize, first[h]);
                let ns = if topo.cpus[rep].llc == topo.cpus[home].llc {
                    llc
                } else {
                    topo.xfer_ns(rep, home)
                };
                (ns / 2).max(1)
            })
            .collect();
        let socket_wide = topo.spec.vendor == Vendor::Intel;
        let domain_of = topo
            .cpus
            .iter()
            .map(|c| if socket_wide { c.socket } else { c.llc })
            .collect();
        HomeLegs {
            nr_nodes,
            leg,
            domain_of,
            socket_wide,
        }
    }

    /// Whether `a`'s caches are kept coherent by the agent that serves `b`'s requests.
    pub(super) fn same_domain(&self, topo: &Topology, a: usize, b: usize) -> bool {
        if self.socket_wide {
            topo.cpus[a].socket == topo.cpus[b].socket
        } else {
            topo.cpus[a].llc == topo.cpus[b].llc
        }
    }

    /// Whether the domain of CPU `a` contains node `node`'s home agent.
    pub(super) fn domain_holds_node(&self, topo: &Topology, a: usize, node: u32) -> bool {
        self.socket_wide && topo.socket_of_node[node as usize] == topo.cpus[a].socket
    }

    pub(super) fn to_node(&self, group: u32, node: u32) -> u64 {
        self.leg[group as usize * self.nr_nodes + node as usize] as u64
    }
}

/// When a transfer of `cost` ns completes whose service starts at `start` (the later of its issue
/// and the previous request's completion) and whose request reached the serialization point at
/// `arrival`: the measured figure after the start, and at least the data's half after the arrival.
pub(super) fn served_at(start: u64, arrival: u64, cost: u64) -> u64 {
    (start + cost.max(1)).max(arrival + cost.div_ceil(2))
}

/// Hand-off distance classes, nearest first: the previous holder in the requester's LLC, in its
/// node, in its socket, on another socket (perf c2c's local/remote split, refined).
pub const HANDOFF_DISTANCES: [&str; 4] = ["llc", "node", "socket", "remote"];

pub(super) fn handoff_distance(topo: &Topology, from: usize, to: usize) -> usize {
    let (a, b) = (&topo.cpus[from], &topo.cpus[to]);
    if a.llc == b.llc {
        0
    } else if a.node == b.node {
        1
    } else if a.socket == b.socket {
        2
    } else {
        3
    }
}

impl Hot {
    /// Whether an access by `cpu` to this line (`id`, the rest of it `lines[id]`, read only with
    /// a hand-off pending) is served from its own cache, with no request leaving the core (after
    /// `forget_handoffs_before`).
    pub(super) fn is_hit(&self, lines: &[Line], held: &Held, id: LineId, cpu: u32, op: Op) -> bool {
        let still_held = self.nr_handoffs > 0 && lines[id].is_handing_off(cpu as usize);
        match op {
            // the owner or a sharer
            Op::Load => still_held || held.has(id, cpu),
            Op::Store | Op::Atomic => self.owner == Some(cpu) || still_held,
        }
    }
}

impl Coherence {
    /// Places `line`'s home agent on `node` (every line starts on node 0: a kernel static).
    pub fn set_home(&mut self, id: LineId, node: u32) {
        self.hot[id].home = node;
    }

    /// Places `line`'s home on `cpu`'s node: per-CPU data, and what a CPU allocates for itself.
    pub fn set_home_near(&mut self, id: LineId, cpu: usize) {
        self.hot[id].home = self.node_of_cpu[cpu];
    }

    /// The CPU holding `line` Modified, if one does.
    pub fn owner(&self, id: LineId) -> Option<u32> {
        self.hot[id].owner
    }

    pub fn home(&self, id: LineId) -> u32 {
        self.hot[id].home
    }

    /// The request leg of an access by `cpu` at `now`: 0 for a hit, else the time its request takes
    /// to reach the point that serializes the line's requests (see the module comment).
    pub fn request_leg(
        &mut self,
        topo: &Topology,
        id: LineId,
        cpu: usize,
        op: Op,
        now: u64,
    ) -> u64 {
        let group = self.groups.of_cpu[cpu];
        let hot = &mut self.hot[id];
        if hot.nr_handoffs > 0 {
            self.lines[id].forget_handoffs_before(hot, now);
        }
        if hot.is_hit(&self.lines, &self.held, id, cpu as u32, op) {
            return 0;
        }
        let holder = hot.owner.unwrap_or(hot.last) as usize;
        let local = |a: usize| self.homes.same_domain(topo, a, cpu);
        // held in the requester's own domain (its LLC or socket): ordered there
        let held_here = match hot.owner {
            Some(o) => local(o as usize).then(|| topo.xfer_ns(o as usize, cpu)),
            None => (self.held.in_group(id, group as usize) > 0
                || hot.nr_sharers > 0 && local(holder))
            .then(|| topo.class_ns(LatencyClass::Llc)),
        };
        if let Some(ns) = held_here {
            return (ns as u64 / 2).max(1);
        }
        // else to the home agent, which forwards it to the holder's domain if that is elsewhere
        let home = hot.home;
        let to_home = self.homes.to_node(group, home);
        let holder_home =
            topo.cpus[holder].node == home || self.homes.domain_holds_node(topo, holder, home);
        let forward = if hot.nr_sharers == 0 && hot.owner.is_none() || holder_home {
            0
        } else {
            self.homes.to_node(self.groups.of_cpu[holder], home)
        };
        to_home + forward
    }
}
