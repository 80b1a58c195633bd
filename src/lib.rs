//! schedplay: a simulator of Linux scheduler placement and load balancing on large multi-socket
//! machines, and of the cache-line contention inside the scheduler.

pub mod coherence;
pub mod cpuset;
pub mod domains;
pub mod error;
pub mod sim;
pub mod topology;
