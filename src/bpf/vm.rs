//! The eBPF interpreter: every instruction clang emits for `-mcpu=v3`, plus the v4 additions
//! (sign-extending loads and moves, signed division, byte swap, `gotol`, load-acquire /
//! store-release). No JIT, no verifier: instead every memory access is checked against the region
//! table (`memory.rs`), each call has an instruction budget, and an unknown call is an error.
//! Semantics follow the kernel's interpreter (`___bpf_prog_run`, kernel/bpf/core.c) and
//! Documentation/bpf/standardization/instruction-set.rst.

use super::insn::*;
use super::memory::{Fault, MAX_FRAMES, Memory, code_index};
use std::fmt;

/// What the program's host answers for a helper or kfunc call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The host has no helper or kfunc with that id.
    Unknown,
    /// The call itself failed; the run stops with this message.
    Failed(String),
}

impl From<Fault> for CallError {
    fn from(f: Fault) -> Self {
        CallError::Failed(f.to_string())
    }
}

/// The program's environment: helpers by their uapi number (`enum bpf_func_id`), kfuncs by the id
/// the loader gave them. Arguments are r1..r5; the result goes to r0.
pub trait Host {
    fn helper(&mut self, id: i32, args: [u64; 5], mem: &mut Memory) -> Result<u64, CallError>;
    fn kfunc(&mut self, id: i32, args: [u64; 5], mem: &mut Memory) -> Result<u64, CallError>;
}

/// Why a run stopped before its `exit`. `pc` is the instruction index in the image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VmError {
    Fault {
        pc: usize,
        fault: Fault,
    },
    Budget {
        limit: u64,
    },
    UnknownHelper {
        pc: usize,
        id: i32,
    },
    UnknownKfunc {
        pc: usize,
        id: i32,
    },
    CallFailed {
        pc: usize,
        message: String,
    },
    BadInsn {
        pc: usize,
        code: u8,
        why: &'static str,
    },
    CallDepth {
        pc: usize,
    },
    PcOutOfRange {
        pc: usize,
    },
    Poisoned {
        pc: usize,
    },
}

impl fmt::Display for VmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VmError::Fault { pc, fault } => write!(f, "insn {pc}: invalid memory access: {fault}"),
            VmError::Budget { limit } => {
                write!(f, "instruction budget of {limit} exhausted (endless loop?)")
            }
            VmError::UnknownHelper { pc, id } => write!(f, "insn {pc}: unknown helper #{id}"),
            VmError::UnknownKfunc { pc, id } => write!(f, "insn {pc}: unknown kfunc id {id}"),
            VmError::CallFailed { pc, message } => write!(f, "insn {pc}: {message}"),
            VmError::BadInsn { pc, code, why } => {
                write!(f, "insn {pc}: opcode {code:#04x}: {why}")
            }
            VmError::CallDepth { pc } => write!(
                f,
                "insn {pc}: bpf-to-bpf call deeper than {MAX_FRAMES} frames"
            ),
            VmError::PcOutOfRange { pc } => {
                write!(f, "jump or fall-through to insn {pc}, outside the program")
            }
            VmError::Poisoned { pc } => write!(
                f,
                "insn {pc}: reached an instruction whose CO-RE relocation failed"
            ),
        }
    }
}

impl std::error::Error for VmError {}

/// A finished run: r0 and how many instructions it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub ret: u64,
    pub insns: u64,
}

struct Frame {
    ret_pc: usize,
    saved: [u64; 4],
}

/// Runs `image` from instruction `entry` with r1..r5 = `args` (missing ones 0) and at most
/// `budget` instructions. Stack frame 0 is cleared first.
pub fn run(
    image: &[Insn],
    entry: usize,
    args: &[u64],
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Result<Outcome, VmError> {
    let mut left = budget;
    let ret = exec(image, entry, args, mem, host, &mut left, budget, 0)?;
    Ok(Outcome {
        ret,
        insns: budget - left,
    })
}

/// `bpf_loop` (`enum bpf_func_id` 181), run by the interpreter itself since it calls back into
/// the program: `BPF_MAX_LOOPS` = 8 M iterations (kernel/bpf/bpf_iter.c).
pub const BPF_FUNC_LOOP: i32 = 181;
pub const BPF_MAX_LOOPS: u64 = 8 * 1024 * 1024;

/// `bpf_loop(nr_loops, callback_fn, callback_ctx, flags)` (kernel/bpf/bpf_iter.c): calls the
/// callback with (i, ctx) until it returns non-zero; returns the number of calls. The callback
/// runs in the next stack frame, on the caller's instruction budget.
#[allow(clippy::too_many_arguments)]
fn bpf_loop(
    image: &[Insn],
    a: [u64; 5],
    mem: &mut Memory,
    host: &mut dyn Host,
    left: &mut u64,
    budget: u64,
    frame: usize,
    pc: usize,
) -> Result<u64, VmError> {
    if a[3] != 0 {
        return Ok(-22i64 as u64); // -EINVAL: no flags are defined
    }
    let n = a[0] as u32 as u64;
    if n > BPF_MAX_LOOPS {
        return Ok(-7i64 as u64); // -E2BIG
    }
    let Some(entry) = code_index(a[1]) else {
        return Err(VmError::CallFailed {
            pc,
            message: format!("bpf_loop: callback {:#x} is not a function", a[1]),
        });
    };
    if frame + 1 >= MAX_FRAMES {
        return Err(VmError::CallDepth { pc });
    }
    for i in 0..n {
        if exec(image, entry, &[i, a[2]], mem, host, left, budget, frame + 1)? != 0 {
            return Ok(i + 1);
        }
    }
    Ok(n)
}

/// Runs from `entry` in stack frame `base` (0 for an op; a `bpf_loop` callback runs one frame
/// below its caller) until the matching `exit`, spending `left`.
#[allow(clippy::too_many_arguments)]
fn exec(
    image: &[Insn],
    entry: usize,
    args: &[u64],
    mem: &mut Memory,
    host: &mut dyn Host,
    left: &mut u64,
    budget: u64,
    base: usize,
) -> Result<u64, VmError> {
    let mut r = [0u64; 11];
    for (i, a) in args.iter().take(5).enumerate() {
        r[i + 1] = *a;
    }
    mem.clear_frame(base);
    r[10] = Memory::frame_top(base);
    let mut frames: Vec<Frame> = Vec::new();
    let mut pc = entry;
    loop {
        if *left == 0 {
            return Err(VmError::Budget { limit: budget });
        }
        *left -= 1;
        let Some(&i) = image.get(pc) else {
            return Err(VmError::PcOutOfRange { pc });
        };
        let (d, s) = (i.dst as usize, i.src as usize);
        if d > 10 || s > 10 {
            return Err(VmError::BadInsn {
                pc,
                code: i.code,
                why: "register number above r10",
            });
        }
        let at = pc;
        let bad = move |why| VmError::BadInsn {
            pc: at,
            code: i.code,
            why,
        };
        let fault = move |fault| VmError::Fault { pc: at, fault };
        pc += 1;
        match i.class() {
            ALU64 => {
                let src = if i.code & X != 0 {
                    r[s]
                } else {
                    i.imm as i64 as u64
                };
                r[d] = alu64(i.code & 0xf0, r[d], src, i.off, i.imm)
                    .ok_or_else(|| bad("invalid ALU64 operation"))?;
            }
            ALU => {
                let src = if i.code & X != 0 {
                    r[s]
                } else {
                    i.imm as u32 as u64
                };
                r[d] = alu32(i.code & 0xf0, i.code & X != 0, r[d], src, i.off, i.imm)
                    .ok_or_else(|| bad("invalid ALU operation"))?;
            }
            JMP | JMP32 => {
                let op = i.code & 0xf0;
                let wide = i.class() == JMP;
                match op {
                    CALL if wide => {
                        let args = [r[1], r[2], r[3], r[4], r[5]];
                        let call_pc = pc - 1;
                        match i.src {
                            PSEUDO_HELPER if i.imm == BPF_FUNC_LOOP => {
                                let depth = base + frames.len();
                                r[0] =
                                    bpf_loop(image, args, mem, host, left, budget, depth, call_pc)?;
                            }
                            PSEUDO_HELPER => {
                                r[0] = host.helper(i.imm, args, mem).map_err(|e| match e {
                                    CallError::Unknown => VmError::UnknownHelper {
                                        pc: call_pc,
                                        id: i.imm,
                                    },
                                    CallError::Failed(message) => VmError::CallFailed {
                                        pc: call_pc,
                                        message,
                                    },
                                })?;
                            }
                            PSEUDO_KFUNC_CALL => {
                                if i.imm == POISON_CORE {
                                    return Err(VmError::Poisoned { pc: call_pc });
                                }
                                r[0] = host.kfunc(i.imm, args, mem).map_err(|e| match e {
                                    CallError::Unknown => VmError::UnknownKfunc {
                                        pc: call_pc,
                                        id: i.imm,
                                    },
                                    CallError::Failed(message) => VmError::CallFailed {
                                        pc: call_pc,
                                        message,
                                    },
                                })?;
                            }
                            PSEUDO_CALL => {
                                if base + frames.len() + 1 >= MAX_FRAMES {
                                    return Err(VmError::CallDepth { pc: call_pc });
                                }
                                frames.push(Frame {
                                    ret_pc: pc,
                                    saved: [r[6], r[7], r[8], r[9]],
                                });
                                mem.clear_frame(base + frames.len());
                                r[10] = Memory::frame_top(base + frames.len());
                                pc = jump(pc, i.imm as i64)
                                    .ok_or(VmError::PcOutOfRange { pc: call_pc })?;
                            }
                            _ => return Err(bad("unknown call kind (src register)")),
                        }
                    }
                    EXIT if wide => match frames.pop() {
                        None => return Ok(r[0]),
                        Some(f) => {
                            r[6..10].copy_from_slice(&f.saved);
                            r[10] = Memory::frame_top(base + frames.len());
                            pc = f.ret_pc;
                        }
                    },
                    JA => {
                        // JMP uses `off`; JMP32's JA is v4's `gotol`, with the offset in `imm`.
                        let o = if wide { i.off as i64 } else { i.imm as i64 };
                        pc = jump(pc, o).ok_or(VmError::PcOutOfRange { pc })?;
                    }
                    _ => {
                        let src = if i.code & X != 0 {
                            r[s]
                        } else {
                            i.imm as i64 as u64
                        };
                        let (a, b) = if wide {
                            (r[d], src)
                        } else {
                            (r[d] as u32 as u64, src as u32 as u64)
                        };
                        let (sa, sb) = if wide {
                            (a as i64, b as i64)
                        } else {
                            (a as u32 as i32 as i64, b as u32 as i32 as i64)
                        };
                        let taken = match op {
                            JEQ => a == b,
                            JNE => a != b,
                            JGT => a > b,
                            JGE => a >= b,
                            JLT => a < b,
                            JLE => a <= b,
                            JSET => a & b != 0,
                            JSGT => sa > sb,
                            JSGE => sa >= sb,
                            JSLT => sa < sb,
                            JSLE => sa <= sb,
                            _ => return Err(bad("invalid jump operation")),
                        };
                        if taken {
                            pc = jump(pc, i.off as i64).ok_or(VmError::PcOutOfRange { pc })?;
                        }
                    }
                }
            }
            LDX => {
                let size = size_of(i.code);
                let a = r[s].wrapping_add(i.off as i64 as u64);
                let v = mem.load(a, size).map_err(fault)?;
                r[d] = match i.code & 0xe0 {
                    MEM => v,
                    MEMSX if size < 8 => sign_extend(v, size * 8),
                    _ => return Err(bad("invalid load mode")),
                };
            }
            ST => {
                if i.code & 0xe0 != MEM {
                    return Err(bad("invalid store mode"));
                }
                let a = r[d].wrapping_add(i.off as i64 as u64);
                mem.store(a, size_of(i.code), i.imm as i64 as u64)
                    .map_err(fault)?;
            }
            STX => {
                let size = size_of(i.code);
                let a = r[d].wrapping_add(i.off as i64 as u64);
                match i.code & 0xe0 {
                    MEM => mem.store(a, size, r[s]).map_err(fault)?,
                    ATOMIC if i.imm == LOAD_ACQ => {
                        // v4 load-acquire: dst = *(src + off), a plain load in one thread.
                        let a = r[s].wrapping_add(i.off as i64 as u64);
                        r[d] = mem.load(a, size).map_err(fault)?;
                    }
                    ATOMIC => {
                        if size < 4 && i.imm != STORE_REL {
                            return Err(bad("atomic read-modify-write needs a 32- or 64-bit size"));
                        }
                        atomic(&mut r, s, a, size, i.imm, mem).map_err(|e| {
                            e.map_or_else(|| bad("invalid atomic operation"), fault)
                        })?;
                    }
                    _ => return Err(bad("invalid store mode")),
                }
            }
            LD => {
                if !i.is_ld_imm64() {
                    return Err(bad("legacy packet loads (LD_ABS/LD_IND) are not supported"));
                }
                if i.src != 0 {
                    return Err(bad(
                        "ld_imm64 with a pseudo source the loader did not resolve",
                    ));
                }
                let Some(hi) = image.get(pc) else {
                    return Err(VmError::PcOutOfRange { pc });
                };
                r[d] = (i.imm as u32 as u64) | ((hi.imm as u32 as u64) << 32);
                pc += 1;
            }
            _ => unreachable!("class is 3 bits"),
        }
    }
}

fn jump(pc: usize, off: i64) -> Option<usize> {
    usize::try_from(pc as i64 + off).ok()
}

fn size_of(code: u8) -> usize {
    match code & 0x18 {
        W => 4,
        H => 2,
        B => 1,
        _ => 8,
    }
}

fn sign_extend(v: u64, bits: usize) -> u64 {
    let sh = 64 - bits;
    (((v << sh) as i64) >> sh) as u64
}

/// One 64-bit ALU operation; None for an encoding that does not exist.
fn alu64(op: u8, dst: u64, src: u64, off: i16, imm: i32) -> Option<u64> {
    Some(match (op, off) {
        (ADD, 0) => dst.wrapping_add(src),
        (SUB, 0) => dst.wrapping_sub(src),
        (MUL, 0) => dst.wrapping_mul(src),
        (DIV, 0) => dst.checked_div(src).unwrap_or(0),
        (DIV, 1) => sdiv(dst as i64, src as i64) as u64,
        (MOD, 0) => dst.checked_rem(src).unwrap_or(dst),
        (MOD, 1) => smod(dst as i64, src as i64) as u64,
        (OR, 0) => dst | src,
        (AND, 0) => dst & src,
        (XOR, 0) => dst ^ src,
        (LSH, 0) => dst << (src & 63),
        (RSH, 0) => dst >> (src & 63),
        (ARSH, 0) => ((dst as i64) >> (src & 63)) as u64,
        (NEG, 0) => dst.wrapping_neg(),
        (MOV, 0) => src,
        (MOV, 8 | 16 | 32) => sign_extend(src, off as usize),
        // BPF_ALU64 | BPF_END is v4's unconditional byte swap (`bswap16/32/64`).
        (END, 0) => match imm {
            16 => (dst as u16).swap_bytes() as u64,
            32 => (dst as u32).swap_bytes() as u64,
            64 => dst.swap_bytes(),
            _ => return None,
        },
        _ => return None,
    })
}

/// One 32-bit ALU operation: the result is zero-extended to 64 bits (MOVSX and `END` as stated).
fn alu32(op: u8, reg_src: bool, dst: u64, src: u64, off: i16, imm: i32) -> Option<u64> {
    let (a, b) = (dst as u32, src as u32);
    let v: u32 = match (op, off) {
        (ADD, 0) => a.wrapping_add(b),
        (SUB, 0) => a.wrapping_sub(b),
        (MUL, 0) => a.wrapping_mul(b),
        (DIV, 0) => a.checked_div(b).unwrap_or(0),
        (DIV, 1) => sdiv(a as i32 as i64, b as i32 as i64) as i32 as u32,
        (MOD, 0) => a.checked_rem(b).unwrap_or(a),
        (MOD, 1) => smod(a as i32 as i64, b as i32 as i64) as i32 as u32,
        (OR, 0) => a | b,
        (AND, 0) => a & b,
        (XOR, 0) => a ^ b,
        (LSH, 0) => a << (b & 31),
        (RSH, 0) => a >> (b & 31),
        (ARSH, 0) => ((a as i32) >> (b & 31)) as u32,
        (NEG, 0) => a.wrapping_neg(),
        (MOV, 0) => b,
        (MOV, 8 | 16) => sign_extend(b as u64, off as usize) as u32,
        // BPF_ALU | BPF_END: to little endian (source bit clear) keeps the low `imm` bits, to big
        // endian swaps them; both zero-extend (this interpreter runs little-endian BPF only).
        (END, 0) => {
            return Some(match (reg_src, imm) {
                (false, 16) => dst as u16 as u64,
                (false, 32) => dst as u32 as u64,
                (false, 64) => dst,
                (true, 16) => (dst as u16).swap_bytes() as u64,
                (true, 32) => (dst as u32).swap_bytes() as u64,
                (true, 64) => dst.swap_bytes(),
                _ => return None,
            });
        }
        _ => return None,
    };
    Some(v as u64)
}

/// Signed division as the kernel defines it: by zero gives 0, and MIN / -1 wraps to MIN.
fn sdiv(a: i64, b: i64) -> i64 {
    if b == 0 { 0 } else { a.wrapping_div(b) }
}

/// Signed modulo: by zero leaves the dividend, MIN % -1 is 0; the sign follows the dividend.
fn smod(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { a.wrapping_rem(b) }
}

/// `BPF_STX | BPF_ATOMIC`. `Err(None)` is an invalid operation, `Err(Some(f))` a memory fault.
fn atomic(
    r: &mut [u64; 11],
    s: usize,
    a: u64,
    size: usize,
    imm: i32,
    mem: &mut Memory,
) -> Result<(), Option<Fault>> {
    let trunc = |v: u64| if size == 4 { v as u32 as u64 } else { v };
    if imm == STORE_REL {
        // v4 store-release: a plain store in one thread.
        mem.store(a, size, r[s]).map_err(Some)?;
        return Ok(());
    }
    let old = mem.load(a, size).map_err(Some)?;
    let (new, fetch_to) = match imm & !FETCH {
        0x00 => (old.wrapping_add(r[s]), s),
        0x40 => (old | r[s], s),
        0x50 => (old & r[s], s),
        0xa0 => (old ^ r[s], s),
        0xe0 if imm == XCHG => (r[s], s),
        0xf0 if imm == CMPXCHG => {
            let new = if trunc(r[0]) == old { r[s] } else { old };
            (new, 0)
        }
        _ => return Err(None),
    };
    mem.store(a, size, new).map_err(Some)?;
    if imm & FETCH != 0 {
        r[fetch_to] = old;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
