//! The interpreter's speed benchmark workload, in the library so that the native benchmark
//! (tests/bpf_bench.rs) and the wasm one (scripts/bench-wasm.mjs, through `wasm::bpf_bench`) run
//! the same instructions. Nothing here is timed: the callers time it.

use crate::bpf::insn::*;
use crate::bpf::memory::Memory;
use crate::bpf::vm::{CallError, Host, run};

/// A host whose helper 1 returns its first argument (a call's cost without a map behind it).
struct Echo;
impl Host for Echo {
    fn helper(&mut self, _: i32, a: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Ok(a[0])
    }
    fn kfunc(&mut self, _: i32, _: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Err(CallError::Unknown)
    }
}

/// Runs `n` rounds of a loop that mixes ALU, stack loads and stores, a helper call and a branch
/// (8 instructions a round) and returns the instructions run, or why the result is wrong.
pub fn synthetic_loop(n: i32) -> Result<u64, String> {
    // r6 = n; loop: *(r10-8) += r6; r1 = r6; call 1; r7 ^= r0; r6 -= 1; if r6 != 0 goto loop
    let p = [
        Insn::new(ALU64 | MOV | K, 6, 0, 0, n),
        Insn::new(ST | MEM | DW, 10, 0, -8, 0),
        Insn::new(LDX | MEM | DW, 2, 10, -8, 0),
        Insn::new(ALU64 | ADD | X, 2, 6, 0, 0),
        Insn::new(STX | MEM | DW, 10, 2, -8, 0),
        Insn::new(ALU64 | MOV | X, 1, 6, 0, 0),
        Insn::new(JMP | CALL, 0, 0, 0, 1),
        Insn::new(ALU64 | XOR | X, 7, 0, 0, 0),
        Insn::new(ALU64 | SUB | K, 6, 0, 0, 1),
        Insn::new(JMP | JNE | K, 6, 0, -8, 0),
        Insn::new(LDX | MEM | DW, 0, 10, -8, 0),
        Insn::new(JMP | EXIT, 0, 0, 0, 0),
    ];
    let mut mem = Memory::new();
    let o = run(&p, 0, &[], &mut mem, &mut Echo, u64::MAX).map_err(|e| format!("{e:?}"))?;
    let want = (n as u64) * (n as u64 + 1) / 2;
    if o.ret != want {
        return Err(format!("the loop returned {}, not {want}", o.ret));
    }
    Ok(o.insns)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_loop_sums_and_counts_eight_instructions_a_round() {
        // two before the loop, eight a round (load, add, store, move, call, xor, sub, branch),
        // the final load and exit
        assert_eq!(super::synthetic_loop(1000), Ok(2 + 8 * 1000 + 2));
    }
}
