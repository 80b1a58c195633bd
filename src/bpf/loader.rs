//! The `.bpf.o` loader: what libbpf's `bpf_object__open` + `__load` do for a struct_ops object,
//! against a host description (`Target`) instead of a kernel. Sections become one instruction
//! image (programs and `.text` sub-programs), `.maps` and the global-data sections become maps,
//! `.struct_ops[.link]` variables become struct_ops maps with their callbacks, `__ksym` externs are
//! resolved to the host's kfuncs (by essential name and parameter count, so `___v1`/`___v2`
//! flavors pick as libbpf's prototype check does), weak ones that the host lacks become 0, and
//! CO-RE relocations are applied. Anything else is refused by name; nothing half-loaded is
//! returned.
//!
//! (One file past 800 lines on purpose: it is libbpf's one open-and-load pass in its order, and
//! each step reads what the one before it resolved; the section, BTF, relocation and CO-RE
//! parsers it calls are modules of their own.)

use super::btf::{Btf, Kind, core_relos};
use super::core_relo;
use super::elf::*;
use super::insn::*;
use super::maps::{
    BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_TASK_STORAGE,
    MAX_MAP_BYTES, MAX_MAP_VALUES, Map, MapDef, MapKind,
};
use super::memory::{Memory, code_addr};
use super::target::Target;
use std::collections::BTreeMap;
use std::fmt;

/// libbpf's id for a call to a weak kfunc the kernel lacks (`2002000000 + extern index`): dead
/// code if the program checked `bpf_ksym_exists`, an error if reached.
pub const WEAK_KFUNC_BASE: i32 = 2_002_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BPF object refused: {}", self.0)
    }
}

impl std::error::Error for LoadError {}

impl From<&str> for LoadError {
    fn from(s: &str) -> Self {
        LoadError(s.to_string())
    }
}

impl From<String> for LoadError {
    fn from(s: String) -> Self {
        LoadError(s)
    }
}

#[derive(Clone, Debug)]
pub struct Program {
    /// The function's name (`simple_enqueue`).
    pub name: String,
    /// Its section (`struct_ops/simple_enqueue`).
    pub section: String,
    /// Index of its first instruction in `Object::image`.
    pub entry: usize,
    /// From `struct_ops.s/`.
    pub sleepable: bool,
}

/// A struct_ops variable (`SCX_OPS_DEFINE`): callbacks by the host's member names, and the
/// non-zero data members' bytes.
#[derive(Clone, Debug)]
pub struct StructOpsMap {
    pub name: String,
    pub type_name: String,
    /// Member name → index in `Object::programs`.
    pub callbacks: BTreeMap<String, usize>,
    /// Data member name → its bytes as the object initialised them (zero ones included).
    pub data: BTreeMap<String, Vec<u8>>,
}

impl StructOpsMap {
    /// A data member as an unsigned integer (0 if absent).
    pub fn uint(&self, member: &str) -> u64 {
        self.data.get(member).map_or(0, |b| {
            let mut v = [0u8; 8];
            let n = b.len().min(8);
            v[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(v)
        })
    }

    /// A `char[]` data member up to its NUL.
    pub fn string(&self, member: &str) -> String {
        let b = self.data.get(member).map(Vec::as_slice).unwrap_or(&[]);
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..n]).into_owned()
    }
}

/// A global variable of a data section.
#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub section: String,
    pub addr: u64,
    pub size: u64,
}

#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// CPUs of the host (per-CPU maps have this many copies).
    pub nr_cpus: u32,
}

/// A loaded object, ready to run: the image, its programs and maps in `mem`.
#[derive(Clone, Debug)]
pub struct Object {
    pub image: Vec<Insn>,
    pub programs: Vec<Program>,
    pub maps: Vec<Map>,
    pub struct_ops: Vec<StructOpsMap>,
    pub globals: Vec<Global>,
    pub license: String,
    pub mem: Memory,
    /// Names of the weak kfuncs the host lacks, by `id - WEAK_KFUNC_BASE`.
    pub missing_weak: Vec<String>,
    /// The typed per-CPU ksyms the object reads, for the host to fill.
    pub ksyms: Vec<Ksym>,
}

/// A typed per-CPU ksym (`extern int sd_llc_id __ksym`): the address the program holds
/// (`&sd_llc_id`, a handle of zero bytes) and one read-only region per CPU that
/// `bpf_per_cpu_ptr(&sd_llc_id, cpu)` answers.
#[derive(Clone, Debug)]
pub struct Ksym {
    pub name: String,
    pub handle: u64,
    pub size: u32,
    pub per_cpu: Vec<u64>,
}

impl Ksym {
    fn new(mem: &mut Memory, name: &str, size: u32, nr_cpus: u32) -> Ksym {
        let handle = mem.add(format!("ksym {name} (handle)"), Vec::new(), false);
        let per_cpu = (0..nr_cpus)
            .map(|c| {
                mem.add(
                    format!("ksym {name} cpu {c}"),
                    vec![0; size as usize],
                    false,
                )
            })
            .collect();
        Ksym {
            name: name.to_string(),
            handle,
            size,
            per_cpu,
        }
    }
}

impl Object {
    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }
    pub fn map(&self, name: &str) -> Option<&Map> {
        self.maps.iter().find(|m| m.name == name)
    }
    /// The map a handle (the address a program passes to map helpers) names.
    pub fn map_by_handle(&mut self, handle: u64) -> Option<&mut Map> {
        self.maps.iter_mut().find(|m| m.handle == handle)
    }
    pub fn global(&self, name: &str) -> Option<&Global> {
        self.globals.iter().find(|g| g.name == name)
    }
    /// Writes a global before the programs run (what a skeleton's `rodata->x = ...` does; the
    /// only way to set `.rodata`, which programs cannot write).
    pub fn set_global(&mut self, name: &str, value: &[u8]) -> Result<(), String> {
        let g = self
            .global(name)
            .ok_or_else(|| format!("no global variable '{name}'"))?;
        if value.len() as u64 > g.size {
            return Err(format!(
                "global '{name}' has {} bytes, {} given",
                g.size,
                value.len()
            ));
        }
        let addr = g.addr;
        self.mem
            .poke(addr, value)
            .map_err(|f| format!("global '{name}': {f}"))
    }
    /// Reads a global's bytes (a host reading `.bss` back).
    pub fn read_global(&self, name: &str) -> Option<&[u8]> {
        let g = self.global(name)?;
        self.mem.slice(g.addr, g.size as usize).ok()
    }
    /// Sets CPU `cpu`'s value of typed ksym `name` (the host's per-CPU variable).
    pub fn set_ksym(&mut self, name: &str, cpu: u32, value: i64) {
        if let Some(k) = self.ksyms.iter().find(|k| k.name == name)
            && let Some(&a) = k.per_cpu.get(cpu as usize)
        {
            let b = value.to_le_bytes();
            let _ = self.mem.poke(a, &b[..(k.size as usize).min(8)]);
        }
    }
    /// The name of a kfunc id this object calls (for messages), if it is a missing weak one.
    pub fn missing_weak_name(&self, id: i32) -> Option<&str> {
        let i = id.checked_sub(WEAK_KFUNC_BASE)?;
        self.missing_weak
            .get(usize::try_from(i).ok()?)
            .map(String::as_str)
    }
}

fn map_type_name(t: u32) -> &'static str {
    match t {
        1 => "hash",
        2 => "array",
        3 => "prog_array",
        4 => "perf_event_array",
        5 => "percpu_hash",
        6 => "percpu_array",
        9 => "lru_hash",
        12 => "array_of_maps",
        13 => "hash_of_maps",
        21 => "queue",
        27 => "ringbuf",
        28 => "inode_storage",
        29 => "task_storage",
        30 => "bloom_filter",
        31 => "user_ringbuf",
        32 => "cgrp_storage",
        33 => "arena",
        _ => "unknown",
    }
}

fn is_data_section(name: &str) -> bool {
    [".rodata", ".data", ".bss"]
        .iter()
        .any(|p| name == *p || name.starts_with(&format!("{p}.")))
}

fn is_ignored_section(s: &Section) -> bool {
    s.kind == 0
        || s.kind == SHT_SYMTAB
        || s.kind == SHT_REL
        || matches!(
            s.name.as_str(),
            ".strtab"
                | ".shstrtab"
                | ".BTF"
                | ".BTF.ext"
                | ".llvm_addrsig"
                | ".eh_frame"
                | ".comment"
        )
        || s.name.starts_with(".debug")
        || s.name.starts_with(".note")
}

/// Loads a `.bpf.o` against `target`.
pub fn load(bytes: &[u8], target: &Target, opts: &LoadOptions) -> Result<Object, LoadError> {
    if opts.nr_cpus == 0 {
        return Err("nr_cpus must be at least 1".into());
    }
    let elf = Elf::parse(bytes)?;
    let btf = Btf::parse(
        &elf.section(".BTF")
            .ok_or(
                "no .BTF section (compile with -g: BTF-defined maps, struct_ops and CO-RE need it)",
            )?
            .data,
    )?;
    let mut mem = Memory::new();
    let mut license = String::new();

    // 1. Code: every executable section, concatenated.
    let mut code_base: BTreeMap<usize, usize> = BTreeMap::new();
    let mut image: Vec<Insn> = Vec::new();
    let mut programs = Vec::new();
    for (si, s) in elf.sections.iter().enumerate() {
        if s.flags & SHF_EXECINSTR == 0 || s.kind != SHT_PROGBITS {
            continue;
        }
        let sleepable = s.name.starts_with("struct_ops.s/");
        // `syscall` programs (run by user space, e.g. to set up topology) and `fentry/` probes
        // are loaded; the host decides which it runs and refuses the others by name.
        if s.name != ".text"
            && !s.name.starts_with("struct_ops/")
            && !sleepable
            && s.name != "syscall"
            && !s.name.starts_with("fentry/")
        {
            return Err(LoadError(format!(
                "program section '{}' is not supported (struct_ops, syscall and fentry programs and .text sub-programs only)",
                s.name
            )));
        }
        if s.data.len() % INSN_SIZE != 0 {
            return Err(LoadError(format!(
                "section {}: size is not a multiple of 8",
                s.name
            )));
        }
        code_base.insert(si, image.len());
        let base = image.len();
        image.extend(
            s.data
                .chunks_exact(8)
                .map(|c| Insn::decode(c.try_into().expect("8 bytes"))),
        );
        if s.name != ".text" {
            for sym in elf
                .symbols
                .iter()
                .filter(|y| y.shndx as usize == si && y.kind == STT_FUNC)
            {
                programs.push(Program {
                    name: sym.name.clone(),
                    section: s.name.clone(),
                    entry: base + sym.value as usize / INSN_SIZE,
                    sleepable,
                });
            }
        }
    }

    // 2. Maps: BTF-defined ones in `.maps`, then one per global-data section.
    let mut maps: Vec<Map> = Vec::new();
    let mut bytes_total = 0u64;
    let mut values_total = 0u64;
    let mut reserve = |kind: &MapKind, name: &str, vs: u32, n: u32| -> Result<(), LoadError> {
        bytes_total += Map::bytes_needed(kind, vs, n, opts.nr_cpus);
        values_total += match kind {
            MapKind::PercpuArray => n as u64 * opts.nr_cpus as u64,
            MapKind::Array => n as u64,
            _ => 1,
        };
        if values_total > MAX_MAP_VALUES {
            return Err(LoadError(format!(
                "map {name}: the object's arrays hold more than {MAX_MAP_VALUES} values"
            )));
        }
        if bytes_total > MAX_MAP_BYTES {
            return Err(LoadError(format!(
                "map {name}: the object's maps need more than {} MiB",
                MAX_MAP_BYTES >> 20
            )));
        }
        Ok(())
    };
    if let Some(ds) = btf.find(Kind::Datasec, ".maps") {
        for v in btf.get(ds)?.members.clone() {
            let var = btf.get(v.ty)?;
            let name = var.name.clone();
            let def = btf.get(btf.skip_mods(var.size_or_type)?)?;
            let (mut ty, mut ks, mut vs, mut n) = (0u32, 0u32, 0u32, 0u32);
            for m in &def.members {
                let pointee = match btf.get(btf.skip_mods(m.ty)?)? {
                    t if t.kind == Kind::Ptr => t.size_or_type,
                    _ => {
                        return Err(LoadError(format!(
                            "map {name}: attribute '{}' is not a pointer",
                            m.name
                        )));
                    }
                };
                // `__uint(x, v)` is `int (*x)[v]`; `__type(x, T)` is `T *x`.
                let uint = || -> Result<u32, String> {
                    let a = btf.get(pointee)?;
                    if a.kind != Kind::Array {
                        return Err(format!("map {name}: '{}' is not __uint()", m.name));
                    }
                    Ok(a.nelems)
                };
                match m.name.as_str() {
                    "type" => ty = uint()?,
                    "max_entries" => n = uint()?,
                    "key_size" => ks = uint()?,
                    "value_size" => vs = uint()?,
                    "map_flags" => {
                        let _ = uint()?; // BPF_F_NO_PREALLOC and friends change nothing here
                    }
                    "key" => ks = btf.size_of(pointee)? as u32,
                    "value" => vs = btf.size_of(pointee)? as u32,
                    other => {
                        return Err(LoadError(format!(
                            "map {name}: attribute '{other}' is not supported"
                        )));
                    }
                }
            }
            let kind = match ty {
                BPF_MAP_TYPE_ARRAY => MapKind::Array,
                BPF_MAP_TYPE_PERCPU_ARRAY => MapKind::PercpuArray,
                BPF_MAP_TYPE_HASH => MapKind::Hash,
                BPF_MAP_TYPE_TASK_STORAGE => MapKind::TaskStorage,
                t => {
                    return Err(LoadError(format!(
                        "map {name}: type {t} ({}) is not supported (array, percpu_array, hash, task_storage)",
                        map_type_name(t)
                    )));
                }
            };
            if kind != MapKind::Hash && ks != 4 {
                return Err(LoadError(format!(
                    "map {name}: an array's key must be 4 bytes, not {ks}"
                )));
            }
            if vs == 0 || (n == 0 && kind != MapKind::TaskStorage) {
                return Err(LoadError(format!(
                    "map {name}: value size and max_entries must be non-zero"
                )));
            }
            reserve(&kind, &name, vs, n)?;
            let def = MapDef {
                name,
                kind,
                key_size: ks,
                value_size: vs,
                max_entries: n,
            };
            maps.push(Map::new(&mut mem, def, opts.nr_cpus, None));
        }
    }
    let mut data_map: BTreeMap<usize, usize> = BTreeMap::new(); // section → map index
    let mut globals = Vec::new();
    let mut struct_ops_secs = Vec::new();
    for (si, s) in elf.sections.iter().enumerate() {
        if s.flags & SHF_EXECINSTR != 0 || is_ignored_section(s) || s.name == ".maps" {
            continue;
        }
        if is_data_section(&s.name) {
            let size = u32::try_from(s.size)
                .map_err(|_| LoadError(format!("section {} too large", s.name)))?;
            reserve(&MapKind::Data, &s.name, size, 1)?;
            let writable = !s.name.starts_with(".rodata");
            let def = MapDef {
                name: s.name.clone(),
                kind: MapKind::Data,
                key_size: 4,
                value_size: size,
                max_entries: 1,
            };
            let m = Map::new(&mut mem, def, opts.nr_cpus, Some((&s.data, writable)));
            let base = m.data_addr().expect("a data map");
            for y in elf
                .symbols
                .iter()
                .filter(|y| y.shndx as usize == si && y.kind == STT_OBJECT)
            {
                globals.push(Global {
                    name: y.name.clone(),
                    section: s.name.clone(),
                    addr: base + y.value,
                    size: y.size,
                });
            }
            data_map.insert(si, maps.len());
            maps.push(m);
        } else if s.name == ".struct_ops" || s.name == ".struct_ops.link" {
            struct_ops_secs.push(si);
        } else if s.name == "license" {
            license = c_name(&s.data, 0)?;
        } else if s.name == "version" {
        } else {
            return Err(LoadError(format!("section '{}' is not supported", s.name)));
        }
    }

    // 3. Relocations of the code.
    let mut missing_weak: Vec<String> = Vec::new();
    let mut kconfig: Vec<(String, u64)> = Vec::new();
    let mut ksyms: Vec<Ksym> = Vec::new();
    for (&si, &base) in &code_base {
        let sec = &elf.sections[si];
        for rel in elf.rels_for(si)? {
            let i = base + rel.offset as usize / INSN_SIZE;
            let sym = &elf.symbols[rel.sym];
            let insn = *image.get(i).ok_or_else(|| {
                LoadError(format!("{}: relocation past the section's end", sec.name))
            })?;
            let here =
                |what: String| LoadError(format!("{} (in {}, insn {})", what, sec.name, i - base));
            if insn.is_call() {
                if sym.shndx == SHN_UNDEF {
                    let params = extern_params(&btf, &sym.name).map_err(here)?;
                    match target.find_kfunc(&sym.name, params) {
                        Some(k) => {
                            image[i].src = PSEUDO_KFUNC_CALL;
                            image[i].imm = k.id;
                        }
                        None if sym.bind == STB_WEAK => {
                            image[i].src = PSEUDO_KFUNC_CALL;
                            image[i].imm =
                                WEAK_KFUNC_BASE + weak_index(&mut missing_weak, &sym.name);
                        }
                        None => {
                            return Err(here(format!(
                                "kfunc {}({} args) is not provided by the host",
                                sym.name, params
                            )));
                        }
                    }
                } else {
                    let Some(&tb) = code_base.get(&(sym.shndx as usize)) else {
                        return Err(here(format!("call to {} outside the code", sym.name)));
                    };
                    let callee = tb as i64 + sym.value as i64 / 8 + insn.imm as i64 + 1;
                    image[i].src = PSEUDO_CALL;
                    image[i].imm = (callee - i as i64 - 1) as i32;
                }
            } else if insn.is_ld_imm64() && rel.kind == R_BPF_64_64 {
                let value = if sym.shndx == SHN_UNDEF {
                    let weak = sym.bind == STB_WEAK;
                    match (
                        btf_extern_kind(&btf, &sym.name),
                        extern_datasec(&btf, &sym.name),
                    ) {
                        (Some(Kind::Func), _) => {
                            let params = extern_params(&btf, &sym.name).map_err(here)?;
                            target.find_kfunc(&sym.name, params).is_some() as u64
                        }
                        (Some(Kind::Var), Some(".kconfig")) => {
                            let size = extern_var_size(&btf, &sym.name).map_err(here)?;
                            let v = match target.kconfig(&sym.name) {
                                Some(v) => v,
                                None if weak => 0,
                                None => {
                                    return Err(here(format!(
                                        "kconfig value {} is not provided by the host",
                                        sym.name
                                    )));
                                }
                            };
                            match kconfig.iter().find(|k: &&(String, u64)| k.0 == sym.name) {
                                Some(k) => k.1,
                                None => {
                                    let mut b = v.to_le_bytes().to_vec();
                                    b.resize(size.max(1), 0);
                                    let a = mem.add(format!("kconfig {}", sym.name), b, false);
                                    kconfig.push((sym.name.clone(), a));
                                    a
                                }
                            }
                        }
                        (Some(Kind::Var), Some(".ksyms")) => match target.percpu_var(&sym.name) {
                            Some(size) => match ksyms.iter().find(|k| k.name == sym.name) {
                                Some(k) => k.handle,
                                None => {
                                    let k = Ksym::new(&mut mem, &sym.name, size, opts.nr_cpus);
                                    let h = k.handle;
                                    ksyms.push(k);
                                    h
                                }
                            },
                            None if weak => 0,
                            None => {
                                return Err(here(format!(
                                    "typed ksym {} is not provided by the host",
                                    sym.name
                                )));
                            }
                        },
                        _ if weak => 0,
                        _ => {
                            return Err(here(format!(
                                "extern {} is neither a kfunc, a typed __ksym nor a .kconfig value",
                                sym.name
                            )));
                        }
                    }
                } else if let Some(m) = maps.iter().find(|m| {
                    m.name == sym.name
                        && elf
                            .sections
                            .get(sym.shndx as usize)
                            .map(|s| s.name.as_str())
                            == Some(".maps")
                }) {
                    m.handle
                } else if let Some(&mi) = data_map.get(&(sym.shndx as usize)) {
                    let off = insn.imm as u32 as u64
                        + if sym.kind == STT_SECTION {
                            0
                        } else {
                            sym.value
                        };
                    maps[mi].data_addr().expect("a data map") + off
                } else if let Some(&tb) = code_base.get(&(sym.shndx as usize)) {
                    // BPF_PSEUDO_FUNC: a callback's address (bpf_loop, bpf_timer_set_callback)
                    let off = insn.imm as u32 as u64
                        + if sym.kind == STT_SECTION {
                            0
                        } else {
                            sym.value
                        };
                    code_addr((tb as u64 + off / INSN_SIZE as u64) as u32)
                } else {
                    return Err(here(format!(
                        "ld_imm64 against {} in an unsupported section",
                        sym.name
                    )));
                };
                if i + 1 >= image.len() {
                    return Err(here("ld_imm64 without its second half".to_string()));
                }
                image[i].imm = value as u32 as i32;
                image[i + 1].imm = (value >> 32) as u32 as i32;
                image[i].src = 0;
            } else {
                return Err(here(format!(
                    "relocation type {} against {} is not supported",
                    rel.kind, sym.name
                )));
            }
        }
    }

    // 4. CO-RE.
    if let Some(ext) = elf.section(".BTF.ext") {
        for r in core_relos(&ext.data, &btf)? {
            let Some((&si, &base)) = code_base
                .iter()
                .find(|(si, _)| elf.sections[**si].name == r.section)
            else {
                return Err(LoadError(format!(
                    "CO-RE relocation for unknown section {}",
                    r.section
                )));
            };
            let _ = si;
            let res = core_relo::resolve(&btf, target, &r)?;
            let end = base + elf.sections[si].data.len() / INSN_SIZE;
            core_relo::patch(
                &mut image[..end],
                base + r.insn_off as usize / INSN_SIZE,
                &r,
                res,
            )?;
        }
    }

    // 5. Helpers: every one the code calls must be the host's.
    for (i, insn) in image.iter().enumerate() {
        if insn.is_call() && insn.src == PSEUDO_HELPER && target.helper_name(insn.imm).is_none() {
            let (sec, _) = section_of(&elf, &code_base, i);
            return Err(LoadError(format!(
                "helper #{} is not provided by the host (in {sec})",
                insn.imm
            )));
        }
        if insn.is_ld_imm64() && insn.src != 0 {
            return Err(LoadError(format!(
                "ld_imm64 at insn {i} has an unresolved pseudo source {}",
                insn.src
            )));
        }
    }

    // 6. struct_ops maps.
    let mut struct_ops = Vec::new();
    for si in struct_ops_secs {
        let sec = &elf.sections[si];
        let rels = elf.rels_for(si)?;
        for y in elf
            .symbols
            .iter()
            .filter(|y| y.shndx as usize == si && y.kind == STT_OBJECT)
        {
            let var_ty = btf
                .types
                .iter()
                .find(|t| t.kind == Kind::Var && t.name == y.name)
                .ok_or_else(|| {
                    LoadError(format!("struct_ops {}: no BTF for the variable", y.name))
                })?;
            let st = btf.get(btf.skip_mods(var_ty.size_or_type)?)?;
            let host = target
                .struct_ops
                .iter()
                .find(|h| h.name == st.name)
                .ok_or_else(|| {
                    LoadError(format!(
                        "struct_ops {}: type {} is not one the host can attach",
                        y.name, st.name
                    ))
                })?;
            let mut so = StructOpsMap {
                name: y.name.clone(),
                type_name: st.name.clone(),
                callbacks: BTreeMap::new(),
                data: BTreeMap::new(),
            };
            for m in &st.members {
                let off = y.value + m.offset as u64 / 8;
                let size = btf.size_of(m.ty)?;
                let known = host.members.contains(&m.name.as_str());
                let is_fn = matches!(btf.get(btf.skip_mods(m.ty)?)?.kind, Kind::Ptr);
                if is_fn {
                    let Some(rel) = rels.iter().find(|r| r.offset == off) else {
                        continue;
                    };
                    let fname = &elf.symbols[rel.sym].name;
                    if !known {
                        return Err(LoadError(format!(
                            "struct_ops {}: member {} is unknown to the host",
                            y.name, m.name
                        )));
                    }
                    let p = programs
                        .iter()
                        .position(|p| &p.name == fname)
                        .ok_or_else(|| {
                            LoadError(format!(
                                "struct_ops {}: {} points to {fname}, not a struct_ops program",
                                y.name, m.name
                            ))
                        })?;
                    so.callbacks.insert(m.name.clone(), p);
                } else {
                    let b = sec
                        .data
                        .get(off as usize..(off + size) as usize)
                        .ok_or_else(|| {
                            LoadError(format!(
                                "struct_ops {}: member {} outside its section",
                                y.name, m.name
                            ))
                        })?;
                    if !known && b.iter().any(|&c| c != 0) {
                        return Err(LoadError(format!(
                            "struct_ops {}: member {} is set but unknown to the host",
                            y.name, m.name
                        )));
                    }
                    if known {
                        so.data.insert(m.name.clone(), b.to_vec());
                    }
                }
            }
            struct_ops.push(so);
        }
    }

    Ok(Object {
        image,
        programs,
        maps,
        struct_ops,
        globals,
        license,
        mem,
        missing_weak,
        ksyms,
    })
}

/// The DATASEC (`.ksyms`, `.kconfig`) an extern variable is declared in.
fn extern_datasec<'a>(btf: &'a Btf, name: &str) -> Option<&'a str> {
    let var = btf
        .types
        .iter()
        .position(|t| t.kind == Kind::Var && t.name == name)? as u32;
    btf.types
        .iter()
        .find(|t| t.kind == Kind::Datasec && t.members.iter().any(|m| m.ty == var))
        .map(|t| t.name.as_str())
}

/// The byte size of an extern variable's type.
fn extern_var_size(btf: &Btf, name: &str) -> Result<usize, String> {
    let v = btf
        .types
        .iter()
        .find(|t| t.kind == Kind::Var && t.name == name)
        .ok_or_else(|| format!("no BTF for extern {name}"))?;
    Ok(btf.size_of(v.size_or_type)? as usize)
}

fn weak_index(list: &mut Vec<String>, name: &str) -> i32 {
    match list.iter().position(|n| n == name) {
        Some(i) => i as i32,
        None => {
            list.push(name.to_string());
            (list.len() - 1) as i32
        }
    }
}

/// The kind of an extern in the object's BTF (a FUNC or a VAR of DATASEC `.ksyms`/`.kconfig`).
fn btf_extern_kind(btf: &Btf, name: &str) -> Option<Kind> {
    btf.types
        .iter()
        .find(|t| (t.kind == Kind::Func || t.kind == Kind::Var) && t.name == name)
        .map(|t| t.kind)
}

/// The parameter count of an extern function, from its BTF prototype.
fn extern_params(btf: &Btf, name: &str) -> Result<usize, String> {
    let f = btf
        .types
        .iter()
        .find(|t| t.kind == Kind::Func && t.name == name)
        .ok_or_else(|| format!("no BTF for extern {name}"))?;
    let proto = btf.get(f.size_or_type)?;
    Ok(proto.members.len())
}

fn section_of<'a>(elf: &'a Elf, code_base: &BTreeMap<usize, usize>, i: usize) -> (&'a str, usize) {
    code_base
        .iter()
        .filter(|(_, b)| **b <= i)
        .max_by_key(|(_, b)| **b)
        .map_or(("?", 0), |(s, b)| (elf.sections[*s].name.as_str(), i - b))
}
