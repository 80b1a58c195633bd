//! BPF maps as the interpreter's regions: arrays and per-CPU arrays (one region per element, and
//! per CPU, so a pointer to one value cannot reach the next), hash maps (a region per inserted
//! key), and the global-data maps (`.rodata`, `.data`, `.bss`, one region each). A map is named in
//! a program by its handle, an address in a region of zero bytes that can be passed to helpers
//! but never dereferenced.

use super::memory::{Fault, Memory};
use std::collections::BTreeMap;

/// `enum bpf_map_type` values the loader accepts.
pub const BPF_MAP_TYPE_HASH: u32 = 1;
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
pub const BPF_MAP_TYPE_TASK_STORAGE: u32 = 29;
/// `BPF_LOCAL_STORAGE_GET_F_CREATE`.
pub const BPF_LOCAL_STORAGE_GET_F_CREATE: u64 = 1;

/// The largest total of map memory one object may ask for (a guard against a `max_entries`
/// typo allocating gigabytes in the page), 64 MiB.
pub const MAX_MAP_BYTES: u64 = 64 << 20;
/// The most array values (each a region) one object may ask for, all CPUs counted: 1 Mi.
pub const MAX_MAP_VALUES: u64 = 1 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapKind {
    Array,
    PercpuArray,
    Hash,
    /// Task local storage (`BPF_MAP_TYPE_TASK_STORAGE`): one value per task, keyed by the
    /// task's address, made by `bpf_task_storage_get(.., F_CREATE)`.
    TaskStorage,
    /// A global-data section map (`.rodata`, `.data`, `.bss`, `.data.*`, `.rodata.*`).
    Data,
}

/// What a map is, before it has memory.
#[derive(Clone, Debug)]
pub struct MapDef {
    pub name: String,
    pub kind: MapKind,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
}

#[derive(Clone, Debug)]
pub struct Map {
    pub name: String,
    pub kind: MapKind,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub handle: u64,
    /// Array: one address per element; per-CPU array: `cpu * max_entries + index`; data: one.
    values: Vec<u64>,
    /// Hash: key bytes → value address.
    hash: BTreeMap<Vec<u8>, u64>,
}

impl Map {
    /// Allocates the map's regions in `mem`; `init` is a data map's initial bytes and whether
    /// programs may write it.
    pub fn new(mem: &mut Memory, def: MapDef, nr_cpus: u32, init: Option<(&[u8], bool)>) -> Map {
        let MapDef {
            name,
            kind,
            key_size,
            value_size,
            max_entries,
        } = def;
        let name = name.as_str();
        let handle = mem.add(format!("map {name} (handle)"), Vec::new(), false);
        let mut values = Vec::new();
        match kind {
            MapKind::Array => {
                for i in 0..max_entries {
                    values.push(mem.add(
                        format!("map {name}[{i}]"),
                        vec![0; value_size as usize],
                        true,
                    ));
                }
            }
            MapKind::PercpuArray => {
                for cpu in 0..nr_cpus {
                    for i in 0..max_entries {
                        values.push(mem.add(
                            format!("map {name}[{i}] cpu {cpu}"),
                            vec![0; value_size as usize],
                            true,
                        ));
                    }
                }
            }
            MapKind::Data => {
                let (bytes, writable) = init.unwrap_or((&[], true));
                let mut data = bytes.to_vec();
                data.resize(value_size as usize, 0);
                values.push(mem.add(name.to_string(), data, writable));
            }
            MapKind::Hash | MapKind::TaskStorage => {}
        }
        Map {
            name: name.to_string(),
            kind,
            key_size,
            value_size,
            max_entries,
            handle,
            values,
            hash: BTreeMap::new(),
        }
    }

    /// The bytes this map would allocate with `nr_cpus` CPUs (checked before allocating).
    pub fn bytes_needed(kind: &MapKind, value_size: u32, max_entries: u32, nr_cpus: u32) -> u64 {
        let per = value_size as u64 * max_entries as u64;
        match kind {
            MapKind::PercpuArray => per * nr_cpus as u64,
            MapKind::Data => value_size as u64,
            // values are made per task as tasks ask (counted as they come, not here)
            MapKind::TaskStorage => 0,
            _ => per,
        }
    }

    /// The address of a data map's bytes (`.rodata` etc.).
    pub fn data_addr(&self) -> Option<u64> {
        (self.kind == MapKind::Data).then(|| self.values[0])
    }

    /// `bpf_map_lookup_elem` on this CPU: the value's address, or 0 (NULL).
    pub fn lookup(&self, mem: &Memory, key: u64, cpu: u32) -> Result<u64, Fault> {
        let k = mem.slice(key, self.key_size as usize)?;
        Ok(match self.kind {
            MapKind::Array | MapKind::PercpuArray | MapKind::Data => {
                let i = u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
                self.element(i, cpu)
            }
            MapKind::Hash => self.hash.get(k).copied().unwrap_or(0),
            // a task storage map is reached through bpf_task_storage_get only
            MapKind::TaskStorage => 0,
        })
    }

    /// Element `i` on `cpu` (per-CPU arrays), 0 when out of range.
    pub fn element(&self, i: u32, cpu: u32) -> u64 {
        if i >= self.max_entries {
            return 0;
        }
        let at = match self.kind {
            MapKind::PercpuArray => cpu as usize * self.max_entries as usize + i as usize,
            MapKind::Data => 0,
            _ => i as usize,
        };
        self.values.get(at).copied().unwrap_or(0)
    }

    /// `bpf_map_update_elem`: 0, or a negative errno as the kernel returns it.
    pub fn update(
        &mut self,
        mem: &mut Memory,
        key: u64,
        value: u64,
        cpu: u32,
    ) -> Result<i64, Fault> {
        let v = mem.slice(value, self.value_size as usize)?.to_vec();
        let dst = match self.kind {
            MapKind::Hash => {
                let k = mem.slice(key, self.key_size as usize)?.to_vec();
                match self.hash.get(&k) {
                    Some(&a) => a,
                    None if self.hash.len() >= self.max_entries as usize => return Ok(-7), // -E2BIG
                    None => {
                        let a = mem.add(format!("map {} value", self.name), vec![0; v.len()], true);
                        self.hash.insert(k, a);
                        a
                    }
                }
            }
            _ => match self.lookup(mem, key, cpu)? {
                0 => return Ok(-7),
                a => a,
            },
        };
        mem.slice_mut(dst, v.len())?.copy_from_slice(&v);
        Ok(0)
    }

    /// `bpf_task_storage_get(map, task, value, flags)`: `task`'s value, made (zeroed, or a copy
    /// of `init` when given) with `BPF_LOCAL_STORAGE_GET_F_CREATE`; 0 (NULL) otherwise.
    pub fn storage_get(
        &mut self,
        mem: &mut Memory,
        owner: u64,
        init: u64,
        flags: u64,
    ) -> Result<u64, Fault> {
        let k = owner.to_le_bytes().to_vec();
        if let Some(&a) = self.hash.get(&k) {
            return Ok(a);
        }
        if flags & BPF_LOCAL_STORAGE_GET_F_CREATE == 0 {
            return Ok(0);
        }
        let bytes = if init != 0 {
            mem.slice(init, self.value_size as usize)?.to_vec()
        } else {
            vec![0; self.value_size as usize]
        };
        let a = mem.add(
            format!("map {} value (task storage)", self.name),
            bytes,
            true,
        );
        self.hash.insert(k, a);
        Ok(a)
    }

    /// `bpf_task_storage_delete`: 0, or -ENOENT.
    pub fn storage_delete(&mut self, owner: u64) -> i64 {
        match self.hash.remove(owner.to_le_bytes().as_slice()) {
            Some(_) => 0,
            None => -2,
        }
    }

    /// Task storage values that exist (for reports and tests).
    pub fn storage_len(&self) -> usize {
        self.hash.len()
    }

    /// The address of `owner`'s task storage value, if it has one.
    pub fn storage_addr(&self, owner: u64) -> Option<u64> {
        self.hash.get(owner.to_le_bytes().as_slice()).copied()
    }

    /// The value (its address) that holds `addr`, with that element's key bytes: arrays and hash
    /// maps (a timer's map value).
    pub fn element_holding(&self, addr: u64) -> Option<(u64, Vec<u8>)> {
        let same = |v: u64| v >> 32 == addr >> 32;
        match self.kind {
            MapKind::Array => self
                .values
                .iter()
                .position(|&v| same(v))
                .map(|i| (self.values[i], (i as u32).to_le_bytes().to_vec())),
            MapKind::Hash => self
                .hash
                .iter()
                .find(|(_, v)| same(**v))
                .map(|(k, v)| (*v, k.clone())),
            _ => None,
        }
    }

    /// `bpf_map_delete_elem`: hash maps only (arrays answer -EINVAL, as the kernel's do).
    pub fn delete(&mut self, mem: &Memory, key: u64) -> Result<i64, Fault> {
        if self.kind != MapKind::Hash {
            return Ok(-22);
        }
        let k = mem.slice(key, self.key_size as usize)?;
        Ok(if self.hash.remove(k).is_some() { 0 } else { -2 })
    }
}
