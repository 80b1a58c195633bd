//! A BPF virtual machine and `.bpf.o` loader, below the engine and knowing nothing of scheduling:
//! the interpreter (`vm`) over a checked address space (`memory`), the ELF reader (`elf`), BTF and
//! its CO-RE relocations (`btf`, `btf_ext`, `core_relo`), maps (`maps`) and the loader that puts
//! them together (`loader`), the generic kfuncs (`cpumask`: cpumasks and the numeric iterator)
//! and BPF timers (`timer`), against a description of the host's kernel types and kfuncs
//! (`target`), which the caller supplies; `bench`: the interpreter's speed benchmark workload.
//!
//! Uses nothing of the crate.

pub mod bench;
pub mod btf;
pub mod core_relo;
pub mod cpumask;
pub mod elf;
pub mod helpers;
pub mod insn;
pub mod loader;
pub mod maps;
pub mod memory;
pub mod target;
pub mod timer;
pub mod vm;
