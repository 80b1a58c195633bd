//! The BPF interpreter's speed, natively: instructions per second on a loop that mixes ALU,
//! stack loads and stores, a helper call and a branch. A benchmark, not a test (nothing is
//! asserted about time): `cargo test --release --test bpf_bench -- --ignored --nocapture`.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::bpf::insn::*;
use schedplay::bpf::memory::Memory;
use schedplay::bpf::vm::{CallError, Host, run};
use std::time::Instant;

struct Nop;
impl Host for Nop {
    fn helper(&mut self, _: i32, a: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Ok(a[0])
    }
    fn kfunc(&mut self, _: i32, _: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        Err(CallError::Unknown)
    }
}

#[test]
#[ignore]
fn interpreter_instructions_per_second() {
    // r6 = n; loop: *(r10-8) += r6; r1 = r6; call 1; r7 ^= r0; r6 -= 1; if r6 != 0 goto loop
    let n = 2_000_000;
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
    let mut best = 0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let o = run(&p, 0, &[], &mut mem, &mut Nop, u64::MAX).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(o.ret, (n as u64) * (n as u64 + 1) / 2);
        best = best.max(o.insns as f64 / secs);
    }
    println!(
        "bpf interpreter: {:.1} M instructions/s (best of 5)",
        best / 1e6
    );
}

mod bpf_replay;

#[test]
#[ignore]
fn fixture_callbacks_instructions_per_second() {
    // The vtime fixture's callbacks as clang compiled them (3001 calls, kfunc calls included),
    // with the object loaded once per replay: what a scheduler's ops cost in the interpreter.
    let mut best = 0f64;
    let mut calls_per_s = 0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let (insns, _, _) = bpf_replay::replay();
        let secs = t.elapsed().as_secs_f64();
        if insns as f64 / secs > best {
            best = insns as f64 / secs;
            calls_per_s = 3001.0 / secs;
        }
    }
    println!(
        "vtime fixture replay (load + 3001 callbacks): {:.1} M instructions/s, {:.2} M callbacks/s",
        best / 1e6,
        calls_per_s / 1e6
    );
}
