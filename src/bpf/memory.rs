//! The interpreter's address space: a table of regions (stack frames, map values, objects the host
//! lends), each addressed as `region id << 32 | (2^31 + offset)`. A pointer is a plain 64-bit
//! number that means the same natively and in wasm32; every load and store checks its region and
//! bounds. Offsets start at 2^31 so that a pointer moved below its region's start (`r10 - 520`)
//! stays in its region's id and is reported as a negative offset there.

use std::fmt;

/// The kernel's `MAX_BPF_STACK`: each frame has 512 bytes.
pub const STACK_SIZE: usize = 512;
/// The kernel's `MAX_CALL_FRAMES`: the entry program and 7 nested bpf-to-bpf calls.
pub const MAX_FRAMES: usize = 8;

/// One contiguous block of memory a program may reach.
#[derive(Clone, Debug)]
pub struct Region {
    /// What it is, for error messages ("stack frame 0", "map stats value", "task_struct").
    pub name: String,
    pub data: Vec<u8>,
    pub writable: bool,
}

/// A refused access, with what was asked and what exists there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub addr: u64,
    pub size: usize,
    pub write: bool,
    pub why: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} bytes at {:#x}: {}",
            if self.write { "store" } else { "load" },
            self.size,
            self.addr,
            self.why
        )
    }
}

/// The regions. Ids 1..=MAX_FRAMES are the stack frames; the host adds the rest.
#[derive(Clone, Debug)]
pub struct Memory {
    regions: Vec<Region>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

const BASE_OFF: u64 = 1 << 31;

/// The region id that code addresses use: a function pointer (`ld_imm64` of a `.text` function,
/// what `bpf_loop` and `bpf_timer_set_callback` take) is `addr(CODE_REGION, insn index)`. No
/// region has this id, so a program can pass such a pointer but never load or store through it.
pub const CODE_REGION: u32 = u32::MAX;

/// The function pointer of the instruction at `index` of the image.
pub const fn code_addr(index: u32) -> u64 {
    addr(CODE_REGION, index)
}

/// The instruction index a function pointer names, if it is one.
pub fn code_index(a: u64) -> Option<usize> {
    ((a >> 32) as u32 == CODE_REGION)
        .then(|| usize::try_from(offset_of(a)).ok())
        .flatten()
}

/// The address of `offset` in region `id`.
pub const fn addr(id: u32, offset: u32) -> u64 {
    ((id as u64) << 32) + BASE_OFF + offset as u64
}

/// The offset of `addr` in its region (negative below its start).
fn offset_of(addr: u64) -> i64 {
    (addr & 0xffff_ffff) as i64 - BASE_OFF as i64
}

/// `offset .. offset + size` as indices if it lies inside `len` bytes.
fn span(addr: u64, size: usize, len: usize) -> Option<(usize, usize)> {
    let off = usize::try_from(offset_of(addr)).ok()?;
    let end = off.checked_add(size)?;
    (end <= len).then_some((off, end))
}

impl Memory {
    pub fn new() -> Self {
        let regions = (0..MAX_FRAMES)
            .map(|f| Region {
                name: format!("stack frame {f}"),
                data: vec![0; STACK_SIZE],
                writable: true,
            })
            .collect();
        Memory { regions }
    }

    /// Adds a region and returns its base address.
    pub fn add(&mut self, name: impl Into<String>, data: Vec<u8>, writable: bool) -> u64 {
        self.regions.push(Region {
            name: name.into(),
            data,
            writable,
        });
        addr(self.regions.len() as u32, 0)
    }

    /// The address one past the top of stack frame `f` (what r10 holds in that frame).
    pub fn frame_top(f: usize) -> u64 {
        addr(f as u32 + 1, STACK_SIZE as u32)
    }

    pub fn region(&self, base: u64) -> Option<&Region> {
        let id = (base >> 32) as usize;
        id.checked_sub(1).and_then(|i| self.regions.get(i))
    }

    pub fn region_mut(&mut self, base: u64) -> Option<&mut Region> {
        let id = (base >> 32) as usize;
        id.checked_sub(1).and_then(|i| self.regions.get_mut(i))
    }

    /// Grows or shrinks a region the host made (a data map user space resizes before load,
    /// such as `.data.uei_dump`); new bytes are zero.
    pub fn resize(&mut self, base: u64, len: usize) -> bool {
        match self.region_mut(base) {
            Some(r) => {
                r.data.resize(len, 0);
                true
            }
            None => false,
        }
    }

    /// Zeroes stack frame `f` (each call starts on a clean frame, so a run never depends on what
    /// an earlier one left there).
    pub fn clear_frame(&mut self, f: usize) {
        self.regions[f].data.fill(0);
    }

    fn fault(&self, addr: u64, size: usize, write: bool) -> Fault {
        let why = match self.region(addr) {
            None if addr >> 32 == 0 => "null or scalar pointer".to_string(),
            None => "no such region".to_string(),
            Some(r) if write && !r.writable => format!("{} is read-only", r.name),
            Some(r) => format!(
                "offset {} outside {} ({} bytes)",
                offset_of(addr),
                r.name,
                r.data.len()
            ),
        };
        Fault {
            addr,
            size,
            write,
            why,
        }
    }

    /// The bytes `[addr, addr + size)`, all inside one region.
    pub fn slice(&self, addr: u64, size: usize) -> Result<&[u8], Fault> {
        match self.region(addr) {
            Some(r) => match span(addr, size, r.data.len()) {
                Some((a, b)) => Ok(&r.data[a..b]),
                None => Err(self.fault(addr, size, false)),
            },
            None => Err(self.fault(addr, size, false)),
        }
    }

    pub fn slice_mut(&mut self, addr: u64, size: usize) -> Result<&mut [u8], Fault> {
        let ok = match self.region(addr) {
            Some(r) if r.writable => span(addr, size, r.data.len()),
            _ => None,
        };
        match ok {
            // `region` found it, so the id is 1..=len.
            Some((a, b)) => Ok(&mut self.regions[(addr >> 32) as usize - 1].data[a..b]),
            None => Err(self.fault(addr, size, true)),
        }
    }

    /// A little-endian load of 1, 2, 4 or 8 bytes, zero-extended.
    pub fn load(&self, addr: u64, size: usize) -> Result<u64, Fault> {
        let b = self.slice(addr, size)?;
        let mut v = [0u8; 8];
        v[..size].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    /// A little-endian store of the low `size` bytes of `value`.
    pub fn store(&mut self, addr: u64, size: usize, value: u64) -> Result<(), Fault> {
        let b = self.slice_mut(addr, size)?;
        b.copy_from_slice(&value.to_le_bytes()[..size]);
        Ok(())
    }

    /// A store by the host, which may write read-only regions (it fills `.rodata` and the
    /// arguments it lends a program).
    pub fn poke(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        let ok = self
            .region(addr)
            .and_then(|r| span(addr, bytes.len(), r.data.len()));
        match ok {
            Some((a, b)) => {
                self.regions[(addr >> 32) as usize - 1].data[a..b].copy_from_slice(bytes);
                Ok(())
            }
            None => Err(self.fault(addr, bytes.len(), true)),
        }
    }

    /// A NUL-terminated string of at most `max` bytes (for helpers such as
    /// `bpf_probe_read_kernel_str`'s source or an error format).
    pub fn c_str(&self, addr: u64, max: usize) -> Result<String, Fault> {
        let r = self
            .region(addr)
            .ok_or_else(|| self.fault(addr, 1, false))?;
        let (off, _) = span(addr, 1, r.data.len()).ok_or_else(|| self.fault(addr, 1, false))?;
        let end = r.data.len().min(off.saturating_add(max));
        let s = &r.data[off..end];
        let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        Ok(String::from_utf8_lossy(&s[..n]).into_owned())
    }
}
