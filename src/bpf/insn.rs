//! One eBPF instruction as the kernel encodes it (`struct bpf_insn`, include/uapi/linux/bpf.h) and
//! the opcode fields the interpreter and the loader read (Documentation/bpf/standardization/
//! instruction-set.rst).

/// `struct bpf_insn`: 8 bytes, little-endian: `code`, `dst_reg:4 | src_reg:4`, `off`, `imm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

pub const INSN_SIZE: usize = 8;

impl Insn {
    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Self {
        Insn {
            code,
            dst,
            src,
            off,
            imm,
        }
    }

    /// Decodes one little-endian instruction (the only byte order the loader accepts).
    pub fn decode(b: &[u8; 8]) -> Self {
        Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn encode(&self) -> [u8; 8] {
        let off = self.off.to_le_bytes();
        let imm = self.imm.to_le_bytes();
        [
            self.code,
            (self.src << 4) | (self.dst & 0x0f),
            off[0],
            off[1],
            imm[0],
            imm[1],
            imm[2],
            imm[3],
        ]
    }

    pub fn class(&self) -> u8 {
        self.code & 0x07
    }

    /// `BPF_LD | BPF_IMM | BPF_DW`: the first half of a two-slot 64-bit immediate load.
    pub fn is_ld_imm64(&self) -> bool {
        self.code == LD | IMM | DW
    }

    /// A call (`BPF_JMP | BPF_CALL`), whatever its kind (`src`: helper 0, bpf-to-bpf 1, kfunc 2).
    pub fn is_call(&self) -> bool {
        self.code == JMP | CALL
    }
}

// Classes (code & 0x07).
pub const LD: u8 = 0x00;
pub const LDX: u8 = 0x01;
pub const ST: u8 = 0x02;
pub const STX: u8 = 0x03;
pub const ALU: u8 = 0x04;
pub const JMP: u8 = 0x05;
pub const JMP32: u8 = 0x06;
pub const ALU64: u8 = 0x07;

// Source operand (code & 0x08) of ALU and JMP.
pub const K: u8 = 0x00;
pub const X: u8 = 0x08;

// Load/store sizes (code & 0x18) and modes (code & 0xe0).
pub const W: u8 = 0x00;
pub const H: u8 = 0x08;
pub const B: u8 = 0x10;
pub const DW: u8 = 0x18;
pub const IMM: u8 = 0x00;
pub const MEM: u8 = 0x60;
/// v4: sign-extending load (`LDX` only).
pub const MEMSX: u8 = 0x80;
pub const ATOMIC: u8 = 0xc0;

// ALU operations (code & 0xf0).
pub const ADD: u8 = 0x00;
pub const SUB: u8 = 0x10;
pub const MUL: u8 = 0x20;
pub const DIV: u8 = 0x30;
pub const OR: u8 = 0x40;
pub const AND: u8 = 0x50;
pub const LSH: u8 = 0x60;
pub const RSH: u8 = 0x70;
pub const NEG: u8 = 0x80;
pub const MOD: u8 = 0x90;
pub const XOR: u8 = 0xa0;
pub const MOV: u8 = 0xb0;
pub const ARSH: u8 = 0xc0;
pub const END: u8 = 0xd0;

// Jump operations (code & 0xf0).
pub const JA: u8 = 0x00;
pub const JEQ: u8 = 0x10;
pub const JGT: u8 = 0x20;
pub const JGE: u8 = 0x30;
pub const JSET: u8 = 0x40;
pub const JNE: u8 = 0x50;
pub const JSGT: u8 = 0x60;
pub const JSGE: u8 = 0x70;
pub const CALL: u8 = 0x80;
pub const EXIT: u8 = 0x90;
pub const JLT: u8 = 0xa0;
pub const JLE: u8 = 0xb0;
pub const JSLT: u8 = 0xc0;
pub const JSLE: u8 = 0xd0;

// Atomic operations (imm of `STX | ATOMIC`).
pub const FETCH: i32 = 0x01;
pub const XCHG: i32 = 0xe0 | FETCH;
pub const CMPXCHG: i32 = 0xf0 | FETCH;
/// v4 (kernel 6.15): load-acquire and store-release.
pub const LOAD_ACQ: i32 = 0x100;
pub const STORE_REL: i32 = 0x110;

// `src` of a call.
pub const PSEUDO_HELPER: u8 = 0;
pub const PSEUDO_CALL: u8 = 1;
pub const PSEUDO_KFUNC_CALL: u8 = 2;

/// The immediate libbpf gives a call whose CO-RE relocation failed (`POISON_CALL_KFUNC_BASE` is
/// different; this is relo_core.c's `0xbad2310`): reaching one is an error, never a call.
pub const POISON_CORE: i32 = 0xbad2310;
