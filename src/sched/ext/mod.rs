//! sched_ext (kernel/sched/ext.c, ext_idle.c, v6.18) for BPF schedulers loaded from a `.bpf.o`,
//! run by `crate::bpf`: `vmlinux` (the kernel as the loader resolves a program against it: types
//! for CO-RE, enums, kfuncs with their prototypes, helpers, kconfig, per-CPU ksyms,
//! `struct sched_ext_ops`), `core` (one attached scheduler and the ops' call sites), `kfuncs` and
//! `idle` (the kfuncs and the kernel state they change), `dsq` (dispatch queues), `internal`
//! (ext_internal.h's constants), `bench` (a fixture's callbacks replayed: the interpreter's speed). The engine
//! drives it through `sched::ext_class`.

pub mod bench;
pub mod core;
pub mod dsq;
pub mod idle;
pub mod internal;
pub mod kfuncs;
pub mod vmlinux;
