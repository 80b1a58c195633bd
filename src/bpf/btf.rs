//! BTF (Documentation/bpf/btf.rst, include/uapi/linux/btf.h) as far as the loader needs it: every
//! kind is parsed (so an object from any clang reads), names and sizes are resolved, and
//! `.BTF.ext`'s CO-RE relocation records are read (`struct bpf_core_relo`, uapi bpf.h).

use super::elf::c_name;

pub const BTF_MAGIC: u16 = 0xeb9f;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Void,
    Int,
    Ptr,
    Array,
    Struct,
    Union,
    Enum,
    Fwd,
    Typedef,
    Volatile,
    Const,
    Restrict,
    Func,
    FuncProto,
    Var,
    Datasec,
    Float,
    DeclTag,
    TypeTag,
    Enum64,
}

/// A member of a struct or union, a parameter, an enumerator or a DATASEC entry.
#[derive(Clone, Debug, Default)]
pub struct Member {
    pub name: String,
    /// The member's, parameter's or variable's type.
    pub ty: u32,
    /// Bit offset of a struct member; byte offset of a DATASEC entry.
    pub offset: u32,
    /// Bitfield size of a struct member (0: not a bitfield); byte size of a DATASEC entry.
    pub size: u32,
    /// An enumerator's value.
    pub value: i64,
}

#[derive(Clone, Debug)]
pub struct Type {
    pub kind: Kind,
    pub name: String,
    /// Size for INT/STRUCT/UNION/ENUM/DATASEC/FLOAT; otherwise the referenced type.
    pub size_or_type: u32,
    /// INT: signed; ENUM/ENUM64: signed values; FUNC: linkage in `vlen`.
    pub signed: bool,
    pub vlen: u16,
    pub members: Vec<Member>,
    /// ARRAY: element type and count.
    pub elem: u32,
    pub nelems: u32,
    /// VAR: linkage (0 static, 1 global, 2 extern).
    pub linkage: u32,
}

#[derive(Clone, Debug)]
pub struct Btf {
    /// Index = type id; 0 is void.
    pub types: Vec<Type>,
    /// The string section (names, and `.BTF.ext`'s section names and access strings).
    pub strings: Vec<u8>,
}

fn u32le(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("BTF: truncated at byte {at}"))
}

impl Btf {
    pub fn parse(b: &[u8]) -> Result<Btf, String> {
        if b.len() < 24 || u16::from_le_bytes([b[0], b[1]]) != BTF_MAGIC {
            return Err("BTF: bad magic (only little-endian BTF is supported)".into());
        }
        let hdr = u32le(b, 4)? as usize;
        let (type_off, type_len) = (u32le(b, 8)? as usize, u32le(b, 12)? as usize);
        let (str_off, str_len) = (u32le(b, 16)? as usize, u32le(b, 20)? as usize);
        let tys = b
            .get(hdr + type_off..hdr + type_off + type_len)
            .ok_or("BTF: type section outside the data")?;
        let strs = b
            .get(hdr + str_off..hdr + str_off + str_len)
            .ok_or("BTF: string section outside the data")?;
        let name = |off: u32| c_name(strs, off as usize);
        let mut types = vec![Type {
            kind: Kind::Void,
            name: String::new(),
            size_or_type: 0,
            signed: false,
            vlen: 0,
            members: Vec::new(),
            elem: 0,
            nelems: 0,
            linkage: 0,
        }];
        let mut at = 0;
        while at < tys.len() {
            let (name_off, info, st) = (u32le(tys, at)?, u32le(tys, at + 4)?, u32le(tys, at + 8)?);
            at += 12;
            let vlen = (info & 0xffff) as u16;
            let kflag = info >> 31 != 0;
            let kind = match (info >> 24) & 0x1f {
                1 => Kind::Int,
                2 => Kind::Ptr,
                3 => Kind::Array,
                4 => Kind::Struct,
                5 => Kind::Union,
                6 => Kind::Enum,
                7 => Kind::Fwd,
                8 => Kind::Typedef,
                9 => Kind::Volatile,
                10 => Kind::Const,
                11 => Kind::Restrict,
                12 => Kind::Func,
                13 => Kind::FuncProto,
                14 => Kind::Var,
                15 => Kind::Datasec,
                16 => Kind::Float,
                17 => Kind::DeclTag,
                18 => Kind::TypeTag,
                19 => Kind::Enum64,
                k => return Err(format!("BTF: unknown kind {k} (type {})", types.len())),
            };
            let mut t = Type {
                kind,
                name: name(name_off)?,
                size_or_type: st,
                signed: kflag,
                vlen,
                members: Vec::new(),
                elem: 0,
                nelems: 0,
                linkage: 0,
            };
            let n = vlen as usize;
            match kind {
                Kind::Int => {
                    t.signed = u32le(tys, at)? >> 24 & 1 != 0;
                    at += 4;
                }
                Kind::Array => {
                    t.elem = u32le(tys, at)?;
                    t.nelems = u32le(tys, at + 8)?;
                    at += 12;
                }
                Kind::Struct | Kind::Union => {
                    for _ in 0..n {
                        let off = u32le(tys, at + 8)?;
                        let (offset, size) = if kflag {
                            (off & 0xff_ffff, off >> 24)
                        } else {
                            (off, 0)
                        };
                        t.members.push(Member {
                            name: name(u32le(tys, at)?)?,
                            ty: u32le(tys, at + 4)?,
                            offset,
                            size,
                            value: 0,
                        });
                        at += 12;
                    }
                }
                Kind::Enum => {
                    for _ in 0..n {
                        let v = u32le(tys, at + 4)?;
                        t.members.push(Member {
                            name: name(u32le(tys, at)?)?,
                            value: if kflag { v as i32 as i64 } else { v as i64 },
                            ..Member::default()
                        });
                        at += 8;
                    }
                }
                Kind::Enum64 => {
                    for _ in 0..n {
                        let v = u32le(tys, at + 4)? as u64 | (u32le(tys, at + 8)? as u64) << 32;
                        t.members.push(Member {
                            name: name(u32le(tys, at)?)?,
                            value: v as i64,
                            ..Member::default()
                        });
                        at += 12;
                    }
                }
                Kind::FuncProto => {
                    for _ in 0..n {
                        t.members.push(Member {
                            name: name(u32le(tys, at)?)?,
                            ty: u32le(tys, at + 4)?,
                            ..Member::default()
                        });
                        at += 8;
                    }
                }
                Kind::Var => {
                    t.linkage = u32le(tys, at)?;
                    at += 4;
                }
                Kind::Datasec => {
                    for _ in 0..n {
                        t.members.push(Member {
                            ty: u32le(tys, at)?,
                            offset: u32le(tys, at + 4)?,
                            size: u32le(tys, at + 8)?,
                            ..Member::default()
                        });
                        at += 12;
                    }
                }
                Kind::DeclTag => at += 4,
                _ => {}
            }
            types.push(t);
        }
        Ok(Btf {
            types,
            strings: strs.to_vec(),
        })
    }

    pub fn get(&self, id: u32) -> Result<&Type, String> {
        self.types
            .get(id as usize)
            .ok_or_else(|| format!("BTF: type id {id} does not exist"))
    }

    /// `id` with typedefs and qualifiers (const, volatile, restrict, type tags) peeled off.
    pub fn skip_mods(&self, mut id: u32) -> Result<u32, String> {
        for _ in 0..64 {
            let t = self.get(id)?;
            match t.kind {
                Kind::Typedef | Kind::Volatile | Kind::Const | Kind::Restrict | Kind::TypeTag => {
                    id = t.size_or_type
                }
                _ => return Ok(id),
            }
        }
        Err(format!("BTF: type chain at {id} too long or circular"))
    }

    /// The size in bytes of a type (btf__resolve_size).
    pub fn size_of(&self, id: u32) -> Result<u64, String> {
        self.size_at_depth(id, 0)
    }

    fn size_at_depth(&self, id: u32, depth: u32) -> Result<u64, String> {
        if depth > 32 {
            return Err(format!("BTF: type {id} nests too deep or is circular"));
        }
        let id = self.skip_mods(id)?;
        let t = self.get(id)?;
        Ok(match t.kind {
            Kind::Int
            | Kind::Struct
            | Kind::Union
            | Kind::Enum
            | Kind::Enum64
            | Kind::Float
            | Kind::Datasec => t.size_or_type as u64,
            Kind::Ptr => 8,
            Kind::Array => self
                .size_at_depth(t.elem, depth + 1)?
                .saturating_mul(t.nelems as u64),
            Kind::Var => self.size_at_depth(t.size_or_type, depth + 1)?,
            _ => {
                return Err(format!(
                    "BTF: type {id} ({:?} '{}') has no size",
                    t.kind, t.name
                ));
            }
        })
    }

    /// The first type of `kind` named `name`.
    pub fn find(&self, kind: Kind, name: &str) -> Option<u32> {
        self.types
            .iter()
            .position(|t| t.kind == kind && t.name == name)
            .map(|i| i as u32)
    }
}

/// One CO-RE relocation (`struct bpf_core_relo`) with its section's name.
#[derive(Clone, Debug)]
pub struct CoreRelo {
    pub section: String,
    /// Byte offset of the instruction in its section.
    pub insn_off: u32,
    pub type_id: u32,
    pub access: String,
    pub kind: u32,
}

/// The CO-RE relocations of `.BTF.ext` (func and line info are not needed to run). Names and
/// access strings are offsets into the `.BTF` string section.
pub fn core_relos(ext: &[u8], btf: &Btf) -> Result<Vec<CoreRelo>, String> {
    if ext.len() < 8 || u16::from_le_bytes([ext[0], ext[1]]) != BTF_MAGIC {
        return Err(".BTF.ext: bad magic (only little-endian is supported)".into());
    }
    let hdr = u32le(ext, 4)? as usize;
    if hdr < 32 {
        return Ok(Vec::new()); // a header without the CO-RE fields
    }
    let (off, len) = (u32le(ext, 24)? as usize, u32le(ext, 28)? as usize);
    let blk = ext
        .get(hdr + off..hdr + off + len)
        .ok_or(".BTF.ext: CO-RE block outside the section")?;
    let mut out = Vec::new();
    if blk.is_empty() {
        return Ok(out);
    }
    let rec = u32le(blk, 0)? as usize;
    if rec < 16 {
        return Err(format!(".BTF.ext: CO-RE record size {rec} < 16"));
    }
    let mut at = 4;
    while at < blk.len() {
        let section = c_name(&btf.strings, u32le(blk, at)? as usize)?;
        let n = u32le(blk, at + 4)? as usize;
        at += 8;
        for _ in 0..n {
            out.push(CoreRelo {
                section: section.clone(),
                insn_off: u32le(blk, at)?,
                type_id: u32le(blk, at + 4)?,
                access: c_name(&btf.strings, u32le(blk, at + 8)? as usize)?,
                kind: u32le(blk, at + 12)?,
            });
            at += rec;
        }
    }
    Ok(out)
}
