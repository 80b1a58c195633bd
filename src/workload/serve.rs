//! `serve`: a request-serving daemon driven open-loop from another host, memcached by default
//! (how newidle and wakeup changes are judged: the highest rate whose p99 stays under a bound).
//!
//! - `threads` worker threads (memcached `-t`, default 4), each in its libevent loop: it sleeps
//!   in epoll_wait until NET_RX makes one of its connections readable, then serves what its
//!   sockets hold, one request after another (read, look up, reply with sendmsg).
//! - `connections` connections from the driver host, handed to the workers round-robin as
//!   memcached's `dispatch_conn_new` does (connection i to worker i % threads); RSS spreads them
//!   over the card's queues by their 4-tuples (`sched/net_rx.rs`).
//! - Requests leave the driver host as a Poisson process at `rate` requests/s on a connection
//!   drawn uniformly (mutilate's and Lancet's `exp` inter-arrivals), on a random stream of their
//!   own, so that the arrivals never depend on what the server does. The driver sends on
//!   schedule whatever is outstanding: the model never drops a request (TCP holds a backlog in
//!   the socket); `outstanding` in the report counts what is still unanswered at the end.
//! - A request is a GET or, `set_pct` % of the time, a SET, with its own CPU on the worker.
//! - Latency: from the request's arrival at the card to its reply leaving the worker
//!   (sendmsg returned), plus the link's round trip outside the server (`NET_LINK_RTT_NS`), as
//!   the driver host measures it. Constants and their sources: docs/MODEL.md §18c.

use super::{
    Arrival, KnobDefault, KnobInfo, Knobs, OpenLoop, Step, TaskId, TaskSpec, Workload, WorkloadInfo,
};
use crate::sim::rng::SimRng;
use std::collections::VecDeque;

pub(super) const INFO: WorkloadInfo = WorkloadInfo {
    name: "serve",
    description: "memcached driven open-loop from another host: worker threads in epoll, connections round-robin over them, Poisson arrivals at a rate, each request a NET_RX wakeup; reports p50/p90/p99/p99.9",
    unit: "requests",
    knobs: &[
        KnobInfo {
            name: "threads",
            what: "worker threads (memcached -t)",
            unit: "threads",
            min: 1,
            max: 4096,
            // memcached.c settings_init(): settings.num_threads = 4
            default: KnobDefault::Fixed(4),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "connections",
            what: "connections from the driver host, round-robin over the workers",
            unit: "connections",
            min: 1,
            // memcached -c: 1024 connections at most by default
            max: 1024,
            // mutilate's guidance: about 100 connections per memcached thread, at 4 threads
            default: KnobDefault::Fixed(400),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "rate",
            what: "requests per second the driver host sends (Poisson arrivals)",
            unit: "requests/s",
            min: 1,
            max: 100_000_000,
            default: KnobDefault::Fixed(100_000),
            ..KnobInfo::INT
        },
        KnobInfo {
            name: "set_pct",
            what: "share of requests that are SETs (mutilate -u), the rest GETs",
            unit: "%",
            min: 0,
            max: 100,
            // mutilate: -u 0.0, every request a GET
            default: KnobDefault::Fixed(0),
            ..KnobInfo::INT
        },
        // a worker's hot set: its stack, libevent base, connection structs and the items it
        // touches [A: 64 KiB]
        super::ws_knob(64),
        super::mem_knob(10),
    ],
    build: |k| {
        Box::new(Serve::new(
            k.int("threads") as usize,
            k.int("connections") as usize,
            k.int("rate"),
            k.int("set_pct"),
            k.assume.net_link_rtt_ns,
        ))
    },
    tasks: |k| k.int("threads"),
};

/// A GET's CPU on its worker: epoll_wait's return, read(), parsing, the hash lookup under the
/// item lock, the reply through sendmsg and the TCP transmit path [A: 5 µs, range 2-10 µs;
/// memcached does over 50 M keys/s on 48 cores batched, ≈1 µs per key per core (NETWORK.md A5),
/// and one request per event adds two system calls and a transmit].
pub const GET_NS: u64 = 5_000;
/// A SET's CPU: a GET's plus the item's allocation, the value's copy and the LRU link
/// [A: 6 µs, range 2.5-12 µs].
pub const SET_NS: u64 = 6_000;
/// memcached's resident set with mutilate's default 10,000 records (30-byte keys, 200-byte
/// values: ≈300-byte items in their slab class) and the starting 2^16-bucket hash table [D: about
/// 4 MiB].
pub const MEMCACHED_RSS_BYTES: u64 = 4 << 20;

/// A request on its way: when it reached the card, and whether it is a SET.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    arrived: u64,
    set: bool,
}

#[derive(Clone, Debug, Default)]
struct Worker {
    /// Requests NET_RX queued on this worker's sockets, oldest first.
    ready: VecDeque<Request>,
    /// The request being served (its CPU burst is running).
    serving: Option<Request>,
    /// The served request's completion was counted: its reply goes out next.
    counted: bool,
}

pub struct Serve {
    tasks: Vec<TaskSpec>,
    procs: Vec<String>,
    workers: Vec<Worker>,
    /// Per connection, requests sent and not yet taken off the card by NET_RX.
    in_flight: Vec<VecDeque<Request>>,
    rate: u64,
    set_pct: u64,
    link_rtt_ns: u64,
    /// When the driver host's next request reaches the card.
    next_at: Option<u64>,
}

impl Serve {
    pub fn new(threads: usize, connections: usize, rate: u64, set_pct: u64, rtt: u64) -> Self {
        Serve {
            tasks: vec![TaskSpec { process: 0 }; threads],
            procs: vec!["memcached".to_string()],
            workers: vec![Worker::default(); threads],
            in_flight: vec![VecDeque::new(); connections],
            rate,
            set_pct,
            link_rtt_ns: rtt,
            next_at: None,
        }
    }

    /// memcached's dispatch_conn_new(): connections go to the workers round-robin.
    fn worker_of(&self, conn: usize) -> TaskId {
        (conn % self.workers.len()) as TaskId
    }

    fn mean_gap_ns(&self) -> u64 {
        (1_000_000_000 / self.rate.max(1)).max(1)
    }
}

impl Workload for Serve {
    fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }
    fn processes(&self) -> &[String] {
        &self.procs
    }
    fn rss_bytes(&self, _process: u32) -> u64 {
        MEMCACHED_RSS_BYTES
    }
    fn knobs(&self) -> Knobs {
        [
            ("threads", self.workers.len() as u64),
            ("connections", self.in_flight.len() as u64),
            ("rate", self.rate),
            ("set_pct", self.set_pct),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
    fn connections(&self) -> usize {
        self.in_flight.len()
    }

    fn next_arrival(&mut self, now: u64, rng: &mut SimRng) -> Option<Arrival> {
        // the first request goes out one gap after the start, each next one a gap after it
        let at = self.next_at.unwrap_or(now) + rng.exp_ns(self.mean_gap_ns());
        self.next_at = Some(at);
        let conn = rng.below(self.in_flight.len() as u64) as usize;
        let set = rng.below(100) < self.set_pct;
        self.in_flight[conn].push_back(Request { arrived: at, set });
        Some(Arrival {
            at_ns: at,
            conn: conn as u32,
            task: self.worker_of(conn),
        })
    }

    fn delivered(&mut self, task: TaskId, conn: u32, _now: u64) {
        // one connection's packets share a queue and its ring is FIFO: the oldest one is taken
        if let Some(r) = self.in_flight[conn as usize].pop_front() {
            self.workers[task as usize].ready.push_back(r);
        }
    }

    fn open_loop(&self) -> Option<OpenLoop> {
        let queued: usize = self.in_flight.iter().map(VecDeque::len).sum::<usize>()
            + self
                .workers
                .iter()
                .map(|w| w.ready.len() + usize::from(w.serving.is_some() && !w.counted))
                .sum::<usize>();
        Some(OpenLoop {
            offered_per_sec: self.rate as f64,
            outstanding: queued as u64,
        })
    }

    fn next(&mut self, task: TaskId, now: u64, _rng: &mut SimRng) -> Step {
        let link = self.link_rtt_ns;
        let w = &mut self.workers[task as usize];
        if let Some(r) = w.serving {
            if !w.counted {
                // sendmsg returned: the reply has left; the driver sees it one link trip later
                w.counted = true;
                return Step::Complete {
                    latency_ns: now.saturating_sub(r.arrived) + link,
                };
            }
            w.serving = None;
            w.counted = false;
        }
        match w.ready.pop_front() {
            Some(r) => {
                w.serving = Some(r);
                Step::Run {
                    ns: if r.set { SET_NS } else { GET_NS },
                    shared_lines: 0,
                }
            }
            // nothing readable: back to epoll_wait until NET_RX wakes the worker
            None => Step::Block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(threads: usize, conns: usize, rate: u64, set_pct: u64) -> Serve {
        Serve::new(threads, conns, rate, set_pct, 20_000)
    }

    #[test]
    fn connections_go_to_the_workers_round_robin() {
        let s = serve(4, 10, 1000, 0);
        let workers: Vec<TaskId> = (0..10).map(|c| s.worker_of(c)).collect();
        assert_eq!(workers, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    }

    #[test]
    fn arrivals_are_poisson_at_the_rate_over_every_connection() {
        let mut s = serve(4, 8, 200_000, 0);
        let mut rng = SimRng::new(7);
        let n = 200_000;
        let mut last = 0;
        let mut per_conn = [0u32; 8];
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let a = s.next_arrival(last, &mut rng).unwrap();
            assert!(a.at_ns > last || last == 0, "arrivals move forward");
            assert_eq!(a.task, s.worker_of(a.conn as usize));
            gaps.push((a.at_ns - last) as f64);
            last = a.at_ns;
            per_conn[a.conn as usize] += 1;
        }
        let mean = crate::stats::mean(&gaps);
        assert!((mean - 5000.0).abs() < 50.0, "mean gap {mean} ns at 200k/s");
        // exponential: the standard deviation equals the mean
        let sd = crate::stats::variance(&gaps).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.02, "cv {}", sd / mean);
        for c in per_conn {
            assert!(
                (c as f64 - n as f64 / 8.0).abs() < 0.02 * n as f64,
                "{per_conn:?}"
            );
        }
    }

    #[test]
    fn the_set_share_follows_set_pct() {
        for pct in [0, 30, 100] {
            let mut s = serve(2, 4, 1000, pct);
            let mut rng = SimRng::new(1);
            for _ in 0..10_000 {
                s.next_arrival(0, &mut rng);
            }
            let sets = s.in_flight.iter().flatten().filter(|r| r.set).count();
            assert!(
                (sets as f64 / 100.0 - pct as f64).abs() < 2.0,
                "{pct}%: {sets} of 10000"
            );
        }
    }

    #[test]
    fn a_worker_serves_what_net_rx_delivered_in_order_and_measures_from_the_card() {
        let mut s = serve(2, 4, 1000, 0);
        let mut rng = SimRng::new(1);
        // nothing delivered: the worker sleeps in epoll_wait
        assert_eq!(s.next(0, 0, &mut rng), Step::Block);
        let a = s.next_arrival(0, &mut rng).unwrap();
        let b = s.next_arrival(a.at_ns, &mut rng).unwrap();
        // arrived at the card but not yet through NET_RX: still nothing to read
        assert_eq!(s.next(a.task, b.at_ns, &mut rng), Step::Block);
        s.delivered(a.task, a.conn, a.at_ns + 20_000);
        let t = a.at_ns + 30_000;
        assert!(matches!(
            s.next(a.task, t, &mut rng),
            Step::Run { ns: GET_NS, .. }
        ));
        let done = t + GET_NS;
        assert_eq!(
            s.next(a.task, done, &mut rng),
            Step::Complete {
                latency_ns: done - a.at_ns + 20_000
            }
        );
        assert_eq!(
            s.open_loop().unwrap().outstanding,
            1,
            "b is still on its way"
        );
        assert_eq!(s.next(a.task, done, &mut rng), Step::Block);
        assert_eq!(s.open_loop().unwrap().outstanding, 1);
    }
}
