//! The event core: the event queue (time order, ties in insertion order), the simulation's one
//! random number generator and the deterministic maths that keep native and wasm runs
//! bit-identical. It knows nothing of machines or scheduling and uses nothing of the crate.

pub mod detmath;
pub mod events;
pub mod rng;
