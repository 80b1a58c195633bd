//! sched_ext (kernel/sched/ext.c) for BPF schedulers loaded from a `.bpf.o`, run by `crate::bpf`.
//! So far: `vmlinux`, the v6.18 kernel as the loader resolves a program against it (types for
//! CO-RE, enums, kfuncs with their prototypes, helpers, `struct sched_ext_ops`). The ext class
//! itself (DSQs, the ops' call sites, the watchdog) is not built yet.

pub mod core;
pub mod dsq;
pub mod idle;
pub mod internal;
pub mod kfuncs;
pub mod vmlinux;
