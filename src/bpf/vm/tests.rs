//! Hand-assembled programs, one group per instruction class, and the ways a run is refused.

use super::*;
use crate::bpf::memory::{STACK_SIZE, addr};

// A tiny assembler: each function is one instruction as the ISA document writes it.
fn alu64k(op: u8, d: u8, imm: i32) -> Insn {
    Insn::new(ALU64 | K | op, d, 0, 0, imm)
}
fn alu64x(op: u8, d: u8, s: u8) -> Insn {
    Insn::new(ALU64 | X | op, d, s, 0, 0)
}
fn alu32k(op: u8, d: u8, imm: i32) -> Insn {
    Insn::new(ALU | K | op, d, 0, 0, imm)
}
fn alu32x(op: u8, d: u8, s: u8) -> Insn {
    Insn::new(ALU | X | op, d, s, 0, 0)
}
fn mov(d: u8, imm: i32) -> Insn {
    alu64k(MOV, d, imm)
}
fn movx(d: u8, s: u8) -> Insn {
    alu64x(MOV, d, s)
}
fn ld64(d: u8, v: u64) -> [Insn; 2] {
    [
        Insn::new(LD | IMM | DW, d, 0, 0, v as u32 as i32),
        Insn::new(0, 0, 0, 0, (v >> 32) as u32 as i32),
    ]
}
fn jk(op: u8, d: u8, imm: i32, off: i16) -> Insn {
    Insn::new(JMP | K | op, d, 0, off, imm)
}
fn jx(op: u8, d: u8, s: u8, off: i16) -> Insn {
    Insn::new(JMP | X | op, d, s, off, 0)
}
fn j32k(op: u8, d: u8, imm: i32, off: i16) -> Insn {
    Insn::new(JMP32 | K | op, d, 0, off, imm)
}
fn ldx(size: u8, d: u8, s: u8, off: i16) -> Insn {
    Insn::new(LDX | MEM | size, d, s, off, 0)
}
fn ldxsx(size: u8, d: u8, s: u8, off: i16) -> Insn {
    Insn::new(LDX | MEMSX | size, d, s, off, 0)
}
fn stx(size: u8, d: u8, s: u8, off: i16) -> Insn {
    Insn::new(STX | MEM | size, d, s, off, 0)
}
fn st(size: u8, d: u8, off: i16, imm: i32) -> Insn {
    Insn::new(ST | MEM | size, d, 0, off, imm)
}
fn atomic(size: u8, d: u8, s: u8, off: i16, op: i32) -> Insn {
    Insn::new(STX | ATOMIC | size, d, s, off, op)
}
fn call(src: u8, imm: i32) -> Insn {
    Insn::new(JMP | CALL, 0, src, 0, imm)
}
fn exit() -> Insn {
    Insn::new(JMP | EXIT, 0, 0, 0, 0)
}

/// Helper 1 returns the sum of its arguments; kfunc 7 doubles r1 and stores it at r2 if r2 != 0.
struct TestHost;
impl Host for TestHost {
    fn helper(&mut self, id: i32, a: [u64; 5], _: &mut Memory) -> Result<u64, CallError> {
        match id {
            1 => Ok(a.iter().fold(0u64, |s, x| s.wrapping_add(*x))),
            2 => Err(CallError::Failed("helper 2 refused its arguments".into())),
            _ => Err(CallError::Unknown),
        }
    }
    fn kfunc(&mut self, id: i32, a: [u64; 5], mem: &mut Memory) -> Result<u64, CallError> {
        if id != 7 {
            return Err(CallError::Unknown);
        }
        if a[1] != 0 {
            mem.store(a[1], 8, a[0] * 2)?;
        }
        Ok(a[0] * 2)
    }
}

fn run_with(prog: &[Insn], mem: &mut Memory, args: &[u64]) -> Result<u64, VmError> {
    run(prog, 0, args, mem, &mut TestHost, 10_000).map(|o| o.ret)
}

fn exec(prog: &[Insn]) -> Result<u64, VmError> {
    run_with(prog, &mut Memory::new(), &[])
}

/// r0 = `a`, then `op`, then exit: the value in r0.
fn r0_after(a: u64, ops: &[Insn]) -> u64 {
    let mut p = ld64(0, a).to_vec();
    p.extend_from_slice(ops);
    p.push(exit());
    exec(&p).unwrap()
}

#[test]
fn encode_decode_round_trip() {
    let i = Insn::new(STX | MEM | DW, 10, 3, -8, 0x1234_5678);
    assert_eq!(Insn::decode(&i.encode()), i);
    // clang's `r1 = *(u64 *)(r6 + 16)` as llvm-objdump prints it: 79 61 10 00 00 00 00 00
    assert_eq!(
        Insn::decode(&[0x79, 0x61, 0x10, 0, 0, 0, 0, 0]),
        ldx(DW, 1, 6, 16)
    );
}

#[test]
fn alu64_arithmetic_and_logic() {
    assert_eq!(r0_after(40, &[alu64k(ADD, 0, 2)]), 42);
    assert_eq!(r0_after(0, &[alu64k(SUB, 0, 1)]), u64::MAX);
    assert_eq!(r0_after(1 << 40, &[alu64k(MUL, 0, 4)]), 1 << 42);
    assert_eq!(r0_after(u64::MAX, &[alu64k(DIV, 0, 2)]), u64::MAX / 2);
    assert_eq!(r0_after(17, &[alu64k(MOD, 0, 5)]), 2);
    assert_eq!(r0_after(0xf0, &[alu64k(OR, 0, 0x0f)]), 0xff);
    assert_eq!(r0_after(0xff, &[alu64k(AND, 0, 0x0f)]), 0x0f);
    assert_eq!(r0_after(0xff, &[alu64k(XOR, 0, 0x0f)]), 0xf0);
    assert_eq!(r0_after(1, &[alu64k(LSH, 0, 63)]), 1 << 63);
    assert_eq!(r0_after(1 << 63, &[alu64k(RSH, 0, 63)]), 1);
    assert_eq!(r0_after(1 << 63, &[alu64k(ARSH, 0, 63)]), u64::MAX);
    assert_eq!(r0_after(5, &[alu64k(NEG, 0, 0)]), (-5i64) as u64);
    // A negative immediate is sign-extended to 64 bits.
    assert_eq!(r0_after(0, &[alu64k(MOV, 0, -1)]), u64::MAX);
    // Shift counts are taken modulo 64.
    assert_eq!(r0_after(1, &[mov(1, 65), alu64x(LSH, 0, 1)]), 2);
    // Division by zero gives 0, modulo by zero leaves the dividend (kernel semantics).
    assert_eq!(r0_after(9, &[mov(1, 0), alu64x(DIV, 0, 1)]), 0);
    assert_eq!(r0_after(9, &[mov(1, 0), alu64x(MOD, 0, 1)]), 9);
}

#[test]
fn alu32_zero_extends_and_wraps() {
    assert_eq!(r0_after(u64::MAX, &[alu32k(MOV, 0, -1)]), 0xffff_ffff);
    assert_eq!(r0_after(0xffff_ffff, &[alu32k(ADD, 0, 1)]), 0);
    assert_eq!(r0_after(0x1_0000_0005, &[alu32k(ADD, 0, 1)]), 6);
    assert_eq!(r0_after(1, &[alu32k(LSH, 0, 33)]), 2, "count modulo 32");
    assert_eq!(r0_after(0x8000_0000, &[alu32k(ARSH, 0, 31)]), 0xffff_ffff);
    assert_eq!(r0_after(7, &[alu32k(NEG, 0, 0)]), (-7i32) as u32 as u64);
    assert_eq!(r0_after(7, &[mov(1, 0), alu32x(MOD, 0, 1)]), 7);
    assert_eq!(r0_after(0x1_0000_0007, &[mov(1, 0), alu32x(MOD, 0, 1)]), 7);
    assert_eq!(r0_after(7, &[mov(1, 0), alu32x(DIV, 0, 1)]), 0);
    assert_eq!(r0_after(100, &[alu32k(DIV, 0, 7)]), 14);
}

#[test]
fn v4_signed_division_sign_extending_moves_and_byte_swaps() {
    let sdiv64 = |imm| Insn::new(ALU64 | K | DIV, 0, 0, 1, imm);
    let smod64 = |imm| Insn::new(ALU64 | K | MOD, 0, 0, 1, imm);
    assert_eq!(r0_after((-7i64) as u64, &[sdiv64(2)]), (-3i64) as u64);
    assert_eq!(r0_after((-7i64) as u64, &[smod64(2)]), (-1i64) as u64);
    assert_eq!(r0_after(i64::MIN as u64, &[sdiv64(-1)]), i64::MIN as u64);
    assert_eq!(r0_after(i64::MIN as u64, &[smod64(-1)]), 0);
    assert_eq!(r0_after(5, &[sdiv64(0)]), 0);
    assert_eq!(r0_after(5, &[smod64(0)]), 5);
    let sdiv32 = Insn::new(ALU | K | DIV, 0, 0, 1, -2);
    assert_eq!(r0_after(7, &[sdiv32]), (-3i32) as u32 as u64);
    // MOVSX: 64-bit from 8/16/32 bits, 32-bit from 8/16 bits (then zero-extended).
    let movsx64 = |bits| Insn::new(ALU64 | X | MOV, 0, 1, bits, 0);
    assert_eq!(r0_after(0, &[mov(1, 0x80), movsx64(8)]), (-128i64) as u64);
    assert_eq!(
        r0_after(0, &[mov(1, 0x8000), movsx64(16)]),
        (-32768i64) as u64
    );
    let m = ld64(1, 0x8000_0000);
    assert_eq!(
        r0_after(0, &[m[0], m[1], movsx64(32)]),
        0xffff_ffff_8000_0000
    );
    let movsx32 = Insn::new(ALU | X | MOV, 0, 1, 8, 0);
    assert_eq!(r0_after(0, &[mov(1, 0xff), movsx32]), 0xffff_ffff);
    // Byte swaps: ALU64 END always swaps; ALU END to-le truncates, to-be swaps.
    assert_eq!(
        r0_after(
            0x1122_3344_5566_7788,
            &[Insn::new(ALU64 | END, 0, 0, 0, 64)]
        ),
        0x8877_6655_4433_2211
    );
    assert_eq!(
        r0_after(
            0x1122_3344_5566_7788,
            &[Insn::new(ALU64 | END, 0, 0, 0, 16)]
        ),
        0x8877
    );
    assert_eq!(
        r0_after(
            0x1122_3344_5566_7788,
            &[Insn::new(ALU | K | END, 0, 0, 0, 32)]
        ),
        0x5566_7788
    );
    assert_eq!(
        r0_after(
            0x1122_3344_5566_7788,
            &[Insn::new(ALU | X | END, 0, 0, 0, 32)]
        ),
        0x8877_6655
    );
}

#[test]
fn jumps_signed_unsigned_and_32_bit() {
    // r0 = 1 if the jump is taken, else 0.
    let taken = |a: u64, j: Insn| {
        let mut p = ld64(1, a).to_vec();
        p.extend([mov(0, 0), j, exit(), mov(0, 1), exit()]);
        exec(&p).unwrap() == 1
    };
    let jump = |op, imm| jk(op, 1, imm, 1);
    assert!(taken(5, jump(JEQ, 5)) && !taken(5, jump(JNE, 5)));
    assert!(taken(u64::MAX, jump(JGT, 1)), "unsigned: -1 > 1");
    assert!(!taken(u64::MAX, jump(JSGT, 1)), "signed: -1 < 1");
    assert!(taken(u64::MAX, jump(JSLT, 0)) && taken(1, jump(JSLE, 1)) && taken(2, jump(JSGE, 2)));
    assert!(taken(1, jump(JLT, 2)) && taken(2, jump(JLE, 2)) && taken(2, jump(JGE, 2)));
    assert!(taken(0b1010, jump(JSET, 0b0010)) && !taken(0b1010, jump(JSET, 0b0101)));
    // JMP32 compares the low halves only.
    assert!(taken(0x1_0000_0005, j32k(JEQ, 1, 5, 1)));
    assert!(!taken(0x1_0000_0005, jk(JEQ, 1, 5, 1)));
    assert!(taken(0xffff_ffff, j32k(JSLT, 1, 0, 1)), "low half is -1");
    // Register operands.
    let mut p = vec![
        mov(1, 3),
        mov(2, 4),
        mov(0, 0),
        jx(JLT, 1, 2, 1),
        exit(),
        mov(0, 1),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 1);
    // JA, backwards loops and v4's gotol (JMP32 | JA, offset in imm).
    p = vec![mov(0, 0), alu64k(ADD, 0, 1), jk(JLT, 0, 10, -2), exit()];
    assert_eq!(exec(&p).unwrap(), 10);
    p = vec![
        mov(0, 1),
        Insn::new(JMP32 | JA, 0, 0, 0, 1),
        mov(0, 2),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 1);
    p = vec![
        mov(0, 1),
        Insn::new(JMP | JA, 0, 0, 1, 0),
        mov(0, 2),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 1);
}

#[test]
fn loads_and_stores_of_every_size_on_the_stack() {
    let p = [
        st(DW, 10, -8, -2), // *(u64 *)(r10 - 8) = -2 (sign-extended imm)
        mov(1, 0x1234),
        stx(H, 10, 1, -10),
        st(B, 10, -11, 0x80),
        st(W, 10, -16, 0x7fff_ffff),
        ldx(DW, 2, 10, -8),
        ldx(H, 3, 10, -10),
        ldx(B, 4, 10, -11),
        ldxsx(B, 5, 10, -11),
        ldx(W, 6, 10, -16),
        ldxsx(H, 7, 10, -8), // low half of -2: 0xfffe → -2
        // r0 = r2 + r3 + r4 + r5 + r6 + r7
        movx(0, 2),
        alu64x(ADD, 0, 3),
        alu64x(ADD, 0, 4),
        alu64x(ADD, 0, 5),
        alu64x(ADD, 0, 6),
        alu64x(ADD, 0, 7),
        exit(),
    ];
    let want = (-2i64 + 0x1234 + 0x80 - 128 + 0x7fff_ffff - 2) as u64;
    assert_eq!(exec(&p).unwrap(), want);
}

#[test]
fn atomics_fetch_add_and_or_xor_xchg_cmpxchg() {
    let mut mem = Memory::new();
    let cell = mem.add("cell", vec![0; 16], true);
    let run1 = |mem: &mut Memory, ops: &[Insn]| {
        let mut p = ld64(1, cell).to_vec();
        p.extend_from_slice(ops);
        p.push(exit());
        run_with(&p, mem, &[]).unwrap()
    };
    // lock add (no fetch): memory changes, r2 stays.
    run1(
        &mut mem,
        &[st(DW, 1, 0, 40), mov(2, 2), atomic(DW, 1, 2, 0, ADD as i32)],
    );
    assert_eq!(mem.load(cell, 8).unwrap(), 42);
    // fetch_add returns the old value in src.
    let r = run1(
        &mut mem,
        &[
            mov(2, 8),
            atomic(DW, 1, 2, 0, ADD as i32 | FETCH),
            movx(0, 2),
        ],
    );
    assert_eq!((r, mem.load(cell, 8).unwrap()), (42, 50));
    // 32-bit: the neighbouring word is untouched, the old value is zero-extended.
    let r = run1(
        &mut mem,
        &[
            st(W, 1, 8, -1),
            st(W, 1, 12, 7),
            mov(2, 1),
            atomic(W, 1, 2, 8, ADD as i32 | FETCH),
            movx(0, 2),
        ],
    );
    assert_eq!(
        (
            r,
            mem.load(cell + 8, 4).unwrap(),
            mem.load(cell + 12, 4).unwrap()
        ),
        (0xffff_ffff, 0, 7)
    );
    run1(
        &mut mem,
        &[
            st(DW, 1, 0, 0b1100),
            mov(2, 0b1010),
            atomic(DW, 1, 2, 0, OR as i32),
        ],
    );
    assert_eq!(mem.load(cell, 8).unwrap(), 0b1110);
    run1(&mut mem, &[mov(2, 0b0110), atomic(DW, 1, 2, 0, AND as i32)]);
    assert_eq!(mem.load(cell, 8).unwrap(), 0b0110);
    let r = run1(
        &mut mem,
        &[
            mov(2, 0b0011),
            atomic(DW, 1, 2, 0, XOR as i32 | FETCH),
            movx(0, 2),
        ],
    );
    assert_eq!((r, mem.load(cell, 8).unwrap()), (0b0110, 0b0101));
    let r = run1(
        &mut mem,
        &[mov(2, 99), atomic(DW, 1, 2, 0, XCHG), movx(0, 2)],
    );
    assert_eq!((r, mem.load(cell, 8).unwrap()), (0b0101, 99));
    // cmpxchg: r0 holds the expected value and receives the old one.
    let r = run1(
        &mut mem,
        &[mov(0, 98), mov(2, 1), atomic(DW, 1, 2, 0, CMPXCHG)],
    );
    assert_eq!(
        (r, mem.load(cell, 8).unwrap()),
        (99, 99),
        "mismatch: no store"
    );
    let r = run1(
        &mut mem,
        &[mov(0, 99), mov(2, 1), atomic(DW, 1, 2, 0, CMPXCHG)],
    );
    assert_eq!((r, mem.load(cell, 8).unwrap()), (99, 1), "match: stored");
    // cmpxchg32 (UEI_RECORD's) compares the low 32 bits of r0.
    let r = run1(
        &mut mem,
        &[
            st(W, 1, 8, 0),
            ld64(0, 1 << 32)[0],
            ld64(0, 1 << 32)[1],
            mov(2, 5),
            atomic(W, 1, 2, 8, CMPXCHG),
        ],
    );
    assert_eq!((r, mem.load(cell + 8, 4).unwrap()), (0, 5));
    // v4 load-acquire / store-release.
    let r = run1(
        &mut mem,
        &[
            mov(2, 77),
            atomic(DW, 1, 2, 0, STORE_REL),
            atomic(DW, 0, 1, 0, LOAD_ACQ),
        ],
    );
    assert_eq!(r, 77);
}

#[test]
fn bpf_to_bpf_calls_keep_callee_saved_registers_and_frames() {
    // main: r6 = 5; *(r10-8) = 1; r1 = 10; call f; r0 += r6 + *(r10-8); exit
    // f:    r6 = 100; *(r10-8) = 1000; r0 = r1 * 2; exit  (its own frame and r6)
    let p = [
        mov(6, 5),
        st(DW, 10, -8, 1),
        mov(1, 10),
        call(PSEUDO_CALL, 4),
        alu64x(ADD, 0, 6),
        ldx(DW, 2, 10, -8),
        alu64x(ADD, 0, 2),
        exit(),
        mov(6, 100),
        st(DW, 10, -8, 1000),
        movx(0, 1),
        alu64k(MUL, 0, 2),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 20 + 5 + 1);
    // Unbounded recursion stops at MAX_FRAMES.
    let p = [call(PSEUDO_CALL, -1), exit()];
    assert!(matches!(exec(&p), Err(VmError::CallDepth { pc: 0 })));
}

#[test]
fn helper_and_kfunc_calls_reach_the_host() {
    let p = [
        mov(1, 1),
        mov(2, 2),
        mov(3, 3),
        mov(4, 4),
        mov(5, 5),
        call(PSEUDO_HELPER, 1),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 15);
    // kfunc 7 writes through a stack pointer it was given.
    let p = [
        mov(1, 21),
        movx(2, 10),
        alu64k(ADD, 2, -8),
        call(PSEUDO_KFUNC_CALL, 7),
        ldx(DW, 0, 10, -8),
        exit(),
    ];
    assert_eq!(exec(&p).unwrap(), 42);
}

#[test]
fn ld_imm64_loads_both_halves() {
    assert_eq!(r0_after(0xdead_beef_0123_4567, &[]), 0xdead_beef_0123_4567);
}

#[test]
fn out_of_bounds_accesses_are_refused_with_their_address() {
    // Below the frame: r10 - 520.
    let e = exec(&[ldx(DW, 0, 10, -520), exit()]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, VmError::Fault { pc: 0, .. }), "{e}");
    assert!(
        msg.contains("load of 8 bytes") && msg.contains("stack frame 0"),
        "{msg}"
    );
    // At r10 itself (one past the frame).
    assert!(matches!(
        exec(&[st(B, 10, 0, 1), exit()]),
        Err(VmError::Fault { .. })
    ));
    // Straddling the end of a region.
    let mut mem = Memory::new();
    let v = mem.add("map value", vec![0; 8], true);
    let mut p = ld64(1, v + 4).to_vec();
    p.extend([ldx(DW, 0, 1, 0), exit()]);
    let e = run_with(&p, &mut mem, &[]).unwrap_err();
    assert!(e.to_string().contains("outside map value (8 bytes)"), "{e}");
    // A null pointer and a scalar used as a pointer.
    let e = exec(&[mov(1, 0), ldx(W, 0, 1, 0), exit()]).unwrap_err();
    assert!(e.to_string().contains("null or scalar pointer"), "{e}");
    // A read-only region (.rodata) refuses stores, atomics included.
    let ro = mem.add(".rodata", vec![0; 8], false);
    let mut p = ld64(1, ro).to_vec();
    p.extend([mov(2, 1), atomic(DW, 1, 2, 0, ADD as i32), exit()]);
    let e = run_with(&p, &mut mem, &[]).unwrap_err();
    assert!(e.to_string().contains(".rodata is read-only"), "{e}");
    // A stack pointer of a frame that no longer exists is still only 512 bytes: no way into
    // another region by overflowing the offset.
    let e = exec(&[
        movx(1, 10),
        alu64k(ADD, 1, STACK_SIZE as i32 * 4),
        ldx(B, 0, 1, 0),
        exit(),
    ])
    .unwrap_err();
    assert!(matches!(e, VmError::Fault { .. }), "{e}");
    assert_eq!(addr(1, 0) + STACK_SIZE as u64, Memory::frame_top(0));
}

#[test]
fn an_endless_loop_runs_out_of_budget() {
    let p = [Insn::new(JMP | JA, 0, 0, -1, 0), exit()];
    let e = run(&p, 0, &[], &mut Memory::new(), &mut TestHost, 1000).unwrap_err();
    assert_eq!(e, VmError::Budget { limit: 1000 });
    assert!(e.to_string().contains("budget of 1000"));
    // Exactly enough budget succeeds: 2 instructions.
    let o = run(
        &[mov(0, 3), exit()],
        0,
        &[],
        &mut Memory::new(),
        &mut TestHost,
        2,
    )
    .unwrap();
    assert_eq!(o, Outcome { ret: 3, insns: 2 });
}

#[test]
fn unknown_calls_and_bad_encodings_are_errors() {
    let e = exec(&[call(PSEUDO_HELPER, 999), exit()]).unwrap_err();
    assert_eq!(e, VmError::UnknownHelper { pc: 0, id: 999 });
    let e = exec(&[mov(0, 0), call(PSEUDO_KFUNC_CALL, 3), exit()]).unwrap_err();
    assert_eq!(e, VmError::UnknownKfunc { pc: 1, id: 3 });
    let e = exec(&[call(PSEUDO_HELPER, 2), exit()]).unwrap_err();
    assert!(e.to_string().contains("helper 2 refused"), "{e}");
    let e = exec(&[call(PSEUDO_KFUNC_CALL, POISON_CORE), exit()]).unwrap_err();
    assert_eq!(e, VmError::Poisoned { pc: 0 });
    assert!(matches!(
        exec(&[mov(0, 1)]),
        Err(VmError::PcOutOfRange { pc: 1 })
    ));
    assert!(
        matches!(
            exec(&[Insn::new(0x20, 0, 0, 0, 0), exit()]),
            Err(VmError::BadInsn { .. })
        ),
        "LD_ABS"
    );
    assert!(matches!(
        exec(&[Insn::new(ALU64 | 0xe0, 0, 0, 0, 0), exit()]),
        Err(VmError::BadInsn { .. })
    ));
    assert!(matches!(
        exec(&[Insn::new(ALU64 | MOV, 11, 0, 0, 0), exit()]),
        Err(VmError::BadInsn { .. })
    ));
    assert!(matches!(
        exec(&[atomic(B, 10, 1, -8, ADD as i32), exit()]),
        Err(VmError::BadInsn { .. })
    ));
    assert!(matches!(
        exec(&[atomic(DW, 10, 1, -8, 0x33), exit()]),
        Err(VmError::BadInsn { .. })
    ));
    // A pseudo ld_imm64 the loader left unresolved is refused, not read as a number.
    assert!(matches!(
        exec(&[
            Insn::new(LD | IMM | DW, 0, 1, 0, 0),
            Insn::default(),
            exit()
        ]),
        Err(VmError::BadInsn { .. })
    ));
}

/// main: r1 = n; r2 = &callback; r3 = r10 - 8 (a counter on main's stack); r4 = 0; bpf_loop;
/// exit with r0. callback(i, ctx): *ctx += i; return i == stop (stop < 0: never).
fn loop_prog(n: i32, stop: i32, flags: i32) -> Vec<Insn> {
    let cb = 9u32; // index of the callback's first instruction
    let mut p = vec![st(DW, 10, -8, 0), mov(1, n)];
    p.extend(ld64(2, crate::bpf::memory::code_addr(cb)));
    p.extend([
        movx(3, 10),
        alu64k(ADD, 3, -8),
        mov(4, flags),
        call(0, BPF_FUNC_LOOP),
        exit(),
    ]);
    assert_eq!(p.len(), cb as usize);
    p.extend([
        ldx(DW, 3, 2, 0),
        alu64x(ADD, 3, 1),
        stx(DW, 2, 3, 0),
        mov(0, 0),
        jk(JNE, 1, stop, 1),
        mov(0, 1),
        exit(),
    ]);
    p
}

#[test]
fn bpf_loop_calls_back_until_the_callback_returns_non_zero() {
    // all 5 iterations: r0 = 5, and the callback's frame wrote main's counter 0+1+2+3+4
    let mut mem = Memory::new();
    let p = loop_prog(5, -1, 0);
    assert_eq!(run_with(&p, &mut mem, &[]), Ok(5));
    assert_eq!(mem.load(Memory::frame_top(0) - 8, 8), Ok(10));
    // stopped by the callback at i == 2: three calls
    assert_eq!(exec(&loop_prog(5, 2, 0)), Ok(3));
    // flags are reserved: -EINVAL without a call; more than BPF_MAX_LOOPS: -E2BIG
    assert_eq!(exec(&loop_prog(5, -1, 1)), Ok(-22i64 as u64));
    assert_eq!(exec(&loop_prog(1 << 24, -1, 0)), Ok(-7i64 as u64));
}

#[test]
fn bpf_loop_callbacks_share_the_callers_instruction_budget() {
    // 8 M iterations of a 7-instruction callback cannot fit a 10 000-instruction budget
    let r = exec(&loop_prog(8 * 1024 * 1024, -1, 0));
    assert_eq!(r, Err(VmError::Budget { limit: 10_000 }));
}

#[test]
fn bpf_loop_refuses_a_callback_that_is_not_code() {
    let mut p = loop_prog(1, -1, 0);
    // r2 = a stack address instead of a function
    p[2..4].copy_from_slice(&ld64(2, Memory::frame_top(0) - 8));
    assert!(
        matches!(exec(&p), Err(VmError::CallFailed { .. })),
        "{:?}",
        exec(&p)
    );
}
