//! A fixed sequence of fixture callbacks (vtime: enable, then 1000 rounds of enqueue, running and
//! stopping with varying weights and used slices, `sched::ext::bench::vtime_replay`) whose outcome
//! is checked to be the same natively and in wasm: the interpreter and loader are bit-identical on
//! both.

pub const VTIME: &[u8] = include_bytes!("../bpf/vtime.bpf.o");

/// (instructions run, final dsq_vtime, final vtime_now), pinned by the native test.
#[allow(dead_code)] // the benchmark uses only `replay`
pub const EXPECTED: (u64, u64, u64) = (45_003, 3_328_159_955, 3_327_986_364);

pub fn replay() -> (u64, u64, u64) {
    schedplay::sched::ext::bench::vtime_replay(VTIME).expect("the vtime replay runs")
}
