//! What the host offers a BPF object, the way a kernel's BTF does for libbpf: the kernel types a
//! program may read through CO-RE (with the host's own layout), enums, kfuncs with their
//! prototypes, helpers, typed ksyms and the struct_ops types it can attach. The caller builds
//! one (the sched_ext core describes v6.18); this layer only resolves names against it.

/// A field of a host struct. `ty` names a host struct when the field is one (for nested access
/// such as `p->scx.dsq_vtime`); `elem` is the element size when the field is an array.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub ty: Option<&'static str>,
    pub elem: u32,
}

impl Field {
    /// A scalar field.
    pub const fn scalar(name: &'static str, offset: u32, size: u32, signed: bool) -> Self {
        Field {
            name,
            offset,
            size,
            signed,
            ty: None,
            elem: 0,
        }
    }
    /// A field that is itself a host struct (embedded, not a pointer).
    pub const fn nested(name: &'static str, offset: u32, size: u32, ty: &'static str) -> Self {
        Field {
            name,
            offset,
            size,
            signed: false,
            ty: Some(ty),
            elem: 0,
        }
    }
    /// An array of `size / elem` elements of `elem` bytes.
    pub const fn array(name: &'static str, offset: u32, size: u32, elem: u32) -> Self {
        Field {
            name,
            offset,
            size,
            signed: false,
            ty: None,
            elem,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Struct {
    pub name: &'static str,
    pub size: u32,
    pub fields: &'static [Field],
}

#[derive(Clone, Copy, Debug)]
pub struct Enum {
    pub name: &'static str,
    pub values: &'static [(&'static str, i64)],
}

/// A kfunc the host implements: `id` is what the program's call carries, `params` its number of
/// arguments (what libbpf's prototype check tells `___v1` from `___v2` by).
#[derive(Clone, Copy, Debug)]
pub struct Kfunc {
    pub name: &'static str,
    pub id: i32,
    pub params: u8,
}

/// A struct_ops type the host can attach, with its member names in the host's order.
#[derive(Clone, Copy, Debug)]
pub struct StructOps {
    pub name: &'static str,
    pub members: &'static [&'static str],
}

#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub structs: &'static [Struct],
    pub enums: &'static [Enum],
    pub kfuncs: &'static [Kfunc],
    /// Helper numbers (`enum bpf_func_id`) with their names, for load-time checks and messages.
    pub helpers: &'static [(i32, &'static str)],
    pub struct_ops: &'static [StructOps],
    /// `.kconfig` values (`extern ... __kconfig`): `LINUX_KERNEL_VERSION`, `CONFIG_*`.
    pub kconfig: &'static [(&'static str, u64)],
    /// Typed per-CPU ksyms (`extern int sd_llc_id __ksym`, read through `bpf_per_cpu_ptr`), with
    /// their size in bytes; the host fills each CPU's value after load.
    pub percpu_vars: &'static [(&'static str, u32)],
}

/// libbpf's essential name: everything before the last `___` (`bpf_core_essential_name_len`).
pub fn essential(name: &str) -> &str {
    match name.rfind("___") {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

impl Target {
    pub fn find_struct(&self, name: &str) -> Option<&Struct> {
        self.structs.iter().find(|s| s.name == essential(name))
    }
    pub fn find_enum(&self, name: &str) -> Option<&Enum> {
        self.enums.iter().find(|e| e.name == essential(name))
    }
    /// The kfunc with this essential name and `params` parameters.
    pub fn find_kfunc(&self, name: &str, params: usize) -> Option<&Kfunc> {
        self.kfuncs
            .iter()
            .find(|k| k.name == essential(name) && k.params as usize == params)
    }
    pub fn kconfig(&self, name: &str) -> Option<u64> {
        self.kconfig.iter().find(|k| k.0 == name).map(|k| k.1)
    }
    pub fn percpu_var(&self, name: &str) -> Option<u32> {
        self.percpu_vars
            .iter()
            .find(|k| k.0 == essential(name))
            .map(|k| k.1)
    }
    pub fn helper_name(&self, id: i32) -> Option<&'static str> {
        self.helpers.iter().find(|h| h.0 == id).map(|h| h.1)
    }
}
