//! The parts of a 64-bit little-endian ELF relocatable object a `.bpf.o` uses: section headers,
//! the symbol table and `SHT_REL` relocations. Every offset and size is checked against the file;
//! a malformed file is an error naming what is wrong, never a panic.

pub const EM_BPF: u16 = 247;
pub const SHT_PROGBITS: u32 = 1;
pub const SHT_SYMTAB: u32 = 2;
pub const SHT_NOBITS: u32 = 8;
pub const SHT_REL: u32 = 9;
pub const SHF_WRITE: u64 = 0x1;
pub const SHF_EXECINSTR: u64 = 0x4;
pub const SHN_UNDEF: u16 = 0;
pub const STB_GLOBAL: u8 = 1;
pub const STB_WEAK: u8 = 2;
pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;
pub const STT_SECTION: u8 = 3;
/// Relocation types (llvm's ELFRelocs/BPF.def).
pub const R_BPF_64_64: u32 = 1;
pub const R_BPF_64_ABS64: u32 = 2;
pub const R_BPF_64_32: u32 = 10;

#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub kind: u32,
    pub flags: u64,
    /// The bytes in the file (empty for `SHT_NOBITS`).
    pub data: Vec<u8>,
    /// `sh_size` (for `.bss`, the size of the zero-filled data).
    pub size: u64,
    pub link: u32,
    pub info: u32,
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    pub shndx: u16,
    pub bind: u8,
    pub kind: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Rel {
    pub offset: u64,
    pub sym: usize,
    pub kind: u32,
}

#[derive(Clone, Debug)]
pub struct Elf {
    pub sections: Vec<Section>,
    pub symbols: Vec<Symbol>,
}

fn rd<const N: usize>(b: &[u8], at: usize, what: &str) -> Result<[u8; N], String> {
    b.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| format!("ELF: {what} at byte {at} is past the end of the file"))
}
fn u16_at(b: &[u8], at: usize, what: &str) -> Result<u16, String> {
    Ok(u16::from_le_bytes(rd(b, at, what)?))
}
fn u32_at(b: &[u8], at: usize, what: &str) -> Result<u32, String> {
    Ok(u32::from_le_bytes(rd(b, at, what)?))
}
fn u64_at(b: &[u8], at: usize, what: &str) -> Result<u64, String> {
    Ok(u64::from_le_bytes(rd(b, at, what)?))
}

/// The NUL-terminated name at `off` of a string table.
pub fn c_name(table: &[u8], off: usize) -> Result<String, String> {
    let s = table
        .get(off..)
        .ok_or_else(|| format!("ELF: name offset {off} outside its string table"))?;
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    Ok(String::from_utf8_lossy(&s[..n]).into_owned())
}

impl Elf {
    pub fn parse(b: &[u8]) -> Result<Elf, String> {
        if b.get(..4) != Some(b"\x7fELF") {
            return Err("not an ELF file (no \\x7fELF magic)".into());
        }
        if b[4] != 2 || b[5] != 1 {
            return Err("only 64-bit little-endian ELF objects (clang -target bpfel / bpf on x86) are supported".into());
        }
        let machine = u16_at(b, 18, "e_machine")?;
        if machine != EM_BPF {
            return Err(format!(
                "e_machine is {machine}, not EM_BPF (247): not a BPF object"
            ));
        }
        let shoff = u64_at(b, 0x28, "e_shoff")? as usize;
        let shentsize = u16_at(b, 0x3a, "e_shentsize")? as usize;
        let shnum = u16_at(b, 0x3c, "e_shnum")? as usize;
        let shstrndx = u16_at(b, 0x3e, "e_shstrndx")? as usize;
        if shentsize != 64 {
            return Err(format!("ELF: section header size {shentsize}, expected 64"));
        }
        let mut raw = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let h = shoff + i * 64;
            let name = u32_at(b, h, "sh_name")?;
            let kind = u32_at(b, h + 4, "sh_type")?;
            let flags = u64_at(b, h + 8, "sh_flags")?;
            let off = u64_at(b, h + 0x18, "sh_offset")? as usize;
            let size = u64_at(b, h + 0x20, "sh_size")?;
            let link = u32_at(b, h + 0x28, "sh_link")?;
            let info = u32_at(b, h + 0x2c, "sh_info")?;
            let data = if kind == SHT_NOBITS || kind == 0 {
                Vec::new()
            } else {
                b.get(off..off.saturating_add(size as usize))
                    .ok_or_else(|| format!("ELF: section {i} data past the end of the file"))?
                    .to_vec()
            };
            raw.push((name, kind, flags, data, size, link, info));
        }
        let shstr = raw
            .get(shstrndx)
            .map(|r| r.3.clone())
            .ok_or("ELF: no section name table")?;
        let mut sections = Vec::with_capacity(shnum);
        for (name, kind, flags, data, size, link, info) in raw {
            sections.push(Section {
                name: c_name(&shstr, name as usize)?,
                kind,
                flags,
                data,
                size,
                link,
                info,
            });
        }
        let mut symbols = Vec::new();
        if let Some(st) = sections.iter().find(|s| s.kind == SHT_SYMTAB) {
            let strtab = &sections
                .get(st.link as usize)
                .ok_or("ELF: symbol table names a missing string table")?
                .data;
            for e in st.data.chunks_exact(24) {
                symbols.push(Symbol {
                    name: c_name(strtab, u32_at(e, 0, "st_name")? as usize)?,
                    bind: e[4] >> 4,
                    kind: e[4] & 0xf,
                    shndx: u16_at(e, 6, "st_shndx")?,
                    value: u64_at(e, 8, "st_value")?,
                    size: u64_at(e, 16, "st_size")?,
                });
            }
        }
        Ok(Elf { sections, symbols })
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The relocations that apply to section `target` (its `SHT_REL` section), in file order.
    pub fn rels_for(&self, target: usize) -> Result<Vec<Rel>, String> {
        let mut out = Vec::new();
        for s in self
            .sections
            .iter()
            .filter(|s| s.kind == SHT_REL && s.info as usize == target)
        {
            for e in s.data.chunks_exact(16) {
                let info = u64_at(e, 8, "r_info")?;
                let sym = (info >> 32) as usize;
                if sym >= self.symbols.len() {
                    return Err(format!(
                        "ELF: {} names symbol {sym}, which does not exist",
                        s.name
                    ));
                }
                out.push(Rel {
                    offset: u64_at(e, 0, "r_offset")?,
                    sym,
                    kind: info as u32,
                });
            }
        }
        Ok(out)
    }
}
