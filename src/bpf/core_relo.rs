//! CO-RE relocations (`.BTF.ext`) resolved against the host's types (`target.rs`) and patched
//! into the instructions, as libbpf's relo_core.c does: member indices of the object's BTF are
//! turned into names, the names looked up in the host's structs, and the host's offsets, sizes
//! and enum values written into the instruction. A relocation that cannot be resolved poisons its
//! instruction (reaching it is an error), except the `*_EXISTS` kinds, which answer 0.

use super::btf::{Btf, CoreRelo, Kind};
use super::insn::*;
use super::target::{Field, Target};

// `enum bpf_core_relo_kind` (uapi bpf.h).
pub const FIELD_BYTE_OFFSET: u32 = 0;
pub const FIELD_BYTE_SIZE: u32 = 1;
pub const FIELD_EXISTS: u32 = 2;
pub const FIELD_SIGNED: u32 = 3;
pub const FIELD_LSHIFT_U64: u32 = 4;
pub const FIELD_RSHIFT_U64: u32 = 5;
pub const TYPE_ID_LOCAL: u32 = 6;
pub const TYPE_ID_TARGET: u32 = 7;
pub const TYPE_EXISTS: u32 = 8;
pub const TYPE_SIZE: u32 = 9;
pub const ENUMVAL_EXISTS: u32 = 10;
pub const ENUMVAL_VALUE: u32 = 11;
pub const TYPE_MATCHES: u32 = 12;

/// What a relocation resolves to: the value, and for a field its host size (loads are resized).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub value: u64,
    pub field_size: Option<u32>,
}

fn spec(access: &str) -> Result<Vec<usize>, String> {
    access
        .split(':')
        .map(|s| {
            s.parse()
                .map_err(|_| format!("CO-RE: bad access string '{access}'"))
        })
        .collect()
}

/// The host field an access string reaches, with its total offset; None if the host lacks it.
fn field(
    btf: &Btf,
    target: &Target,
    root: u32,
    sp: &[usize],
) -> Result<Option<(u32, Field)>, String> {
    let t = btf.get(root)?;
    let Some(mut host) = target.find_struct(&t.name) else {
        return Ok(None);
    };
    let mut off = (sp[0] as u32).saturating_mul(host.size);
    let mut local = root;
    let mut found: Option<Field> = None;
    for &idx in &sp[1..] {
        let lt = btf.get(btf.skip_mods(local)?)?;
        match lt.kind {
            Kind::Struct | Kind::Union => {
                let m = lt
                    .members
                    .get(idx)
                    .ok_or_else(|| format!("CO-RE: {} has no member #{idx}", lt.name))?;
                if m.name.is_empty() {
                    return Err(format!(
                        "CO-RE: anonymous member #{idx} of {} is not supported",
                        lt.name
                    ));
                }
                let Some(f) = host
                    .fields
                    .iter()
                    .find(|f| f.name == super::target::essential(&m.name))
                else {
                    return Ok(None);
                };
                off = off.saturating_add(f.offset);
                found = Some(*f);
                local = m.ty;
                if let Some(n) = f.ty {
                    host = target.find_struct(n).ok_or_else(|| {
                        format!("host type {n} (field {}) is not described", f.name)
                    })?;
                }
            }
            Kind::Array => {
                let Some(f) = found.filter(|f| f.elem > 0) else {
                    return Ok(None);
                };
                if idx as u32 >= f.size / f.elem {
                    return Ok(None);
                }
                off = off.saturating_add((idx as u32).saturating_mul(f.elem));
                found = Some(Field::scalar(f.name, 0, f.elem, false));
                local = lt.elem;
            }
            k => return Err(format!("CO-RE: cannot index into a {k:?}")),
        }
    }
    Ok(found.map(|f| (off, f)))
}

/// Resolves one relocation; `Ok(None)` means the host lacks what it names (poison it).
pub fn resolve(btf: &Btf, target: &Target, r: &CoreRelo) -> Result<Option<Resolved>, String> {
    let sp = spec(&r.access)?;
    let root = btf.skip_mods(r.type_id)?;
    let t = btf.get(root)?;
    let plain = |v: u64| {
        Ok(Some(Resolved {
            value: v,
            field_size: None,
        }))
    };
    match r.kind {
        FIELD_BYTE_OFFSET..=FIELD_RSHIFT_U64 => {
            let f = field(btf, target, root, &sp)?;
            if r.kind == FIELD_EXISTS {
                return plain(f.is_some() as u64);
            }
            let Some((off, f)) = f else { return Ok(None) };
            let v = match r.kind {
                FIELD_BYTE_OFFSET => off as u64,
                FIELD_BYTE_SIZE => f.size as u64,
                FIELD_SIGNED => f.signed as u64,
                _ => 64 - 8 * f.size.min(8) as u64, // L/RSHIFT_U64 of a whole (non-bitfield) field
            };
            Ok(Some(Resolved {
                value: v,
                field_size: Some(f.size),
            }))
        }
        TYPE_EXISTS | TYPE_MATCHES | TYPE_SIZE => {
            let size = match t.kind {
                Kind::Enum | Kind::Enum64 => target.find_enum(&t.name).map(|_| t.size_or_type),
                _ => target.find_struct(&t.name).map(|s| s.size),
            };
            match (r.kind, size) {
                (TYPE_SIZE, None) => Ok(None),
                (TYPE_SIZE, Some(s)) => plain(s as u64),
                (_, s) => plain(s.is_some() as u64),
            }
        }
        ENUMVAL_EXISTS | ENUMVAL_VALUE => {
            let e = t
                .members
                .get(sp[0])
                .ok_or_else(|| format!("CO-RE: enum {} has no enumerator #{}", t.name, sp[0]))?;
            let v = target
                .find_enum(&t.name)
                .and_then(|h| {
                    h.values
                        .iter()
                        .find(|(n, _)| *n == super::target::essential(&e.name))
                })
                .map(|(_, v)| *v as u64);
            match (r.kind, v) {
                (ENUMVAL_EXISTS, v) => plain(v.is_some() as u64),
                (_, None) => Ok(None),
                (_, Some(v)) => plain(v),
            }
        }
        TYPE_ID_LOCAL => plain(r.type_id as u64),
        TYPE_ID_TARGET => Ok(None),
        k => Err(format!("CO-RE relocation kind {k} is not supported")),
    }
}

/// Writes a resolved value into instruction `i` of `code` (bpf_core_patch_insn), or poisons it.
pub fn patch(
    code: &mut [Insn],
    i: usize,
    r: &CoreRelo,
    res: Option<Resolved>,
) -> Result<(), String> {
    let at = |what: &str| format!("CO-RE relocation at insn {} of {} ({what})", i, r.section);
    let insn = code
        .get(i)
        .copied()
        .ok_or_else(|| at("past the section's end"))?;
    let Some(res) = res else {
        code[i] = Insn::new(JMP | CALL, 0, PSEUDO_KFUNC_CALL, 0, POISON_CORE);
        return Ok(());
    };
    match insn.class() {
        ALU | ALU64 if insn.code & X == 0 => {
            code[i].imm = i32::try_from(res.value as i64)
                .map_err(|_| at("value does not fit an immediate"))?;
        }
        LDX | ST | STX if r.kind == FIELD_BYTE_OFFSET => {
            code[i].off =
                i16::try_from(res.value).map_err(|_| at("offset does not fit 16 bits"))?;
            let want = match res.field_size {
                Some(1) => B,
                Some(2) => H,
                Some(4) => W,
                Some(8) => DW,
                _ => insn.code & 0x18,
            };
            if want != insn.code & 0x18 {
                if insn.class() != LDX {
                    return Err(at("the host's field has another size than the store"));
                }
                code[i].code = (insn.code & !0x18) | want;
            }
        }
        LD if insn.is_ld_imm64() && i + 1 < code.len() => {
            code[i].imm = res.value as u32 as i32;
            code[i + 1].imm = (res.value >> 32) as u32 as i32;
        }
        _ => {
            return Err(at(&format!(
                "opcode {:#04x} cannot take a relocated value",
                insn.code
            )));
        }
    }
    Ok(())
}
