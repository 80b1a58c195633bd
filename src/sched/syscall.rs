//! A workload's system calls, run as kernel work (`Step::Kernel`): each step is a kernel job on the
//! task's CPU, compute charged to its function or an access to a kernel object's line through the
//! cache-line model (`exec.rs` `kaccess`, in arrival order with the scheduler's own accesses). The
//! task stays in the kernel; when its job is done, kernel exit asks its script for the next step
//! (`exec.rs` `kernel_exit`: a task with no burst left continues its script there).

use super::*;
use crate::workload::syscall::{KernelAccess, KernelFn, KernelLine, KernelStep};

/// The coherence-model lines of the workload's kernel objects.
#[derive(Default)]
pub(crate) struct KernelLines {
    objects: Vec<LineId>,
    /// Per CPU, its lines of `Workload::per_cpu_kernel_lines`.
    per_cpu: Vec<Vec<LineId>>,
}

impl KernelLines {
    /// Creates the workload's kernel lines (after every other line, so that no id moves); each
    /// object's line lives on the node of the CPU its `near` task starts on, each per-CPU line on
    /// its CPU's node.
    pub(super) fn new(
        lines: &mut Coherence,
        workload: &dyn Workload,
        first_cpu: impl Fn(TaskId) -> usize,
        nr_cpus: usize,
    ) -> Self {
        let objects = workload
            .kernel_lines()
            .into_iter()
            .map(|d| {
                let id = lines.add_line(d.name, &[(0, d.field)]);
                lines.set_home_near(id, first_cpu(d.near));
                id
            })
            .collect();
        let decl = workload.per_cpu_kernel_lines();
        let per_cpu = if decl.is_empty() {
            Vec::new()
        } else {
            (0..nr_cpus)
                .map(|c| {
                    decl.iter()
                        .map(|l| {
                            let id =
                                lines.add_line(format!("{} (cpu{c})", l.name), &[(0, l.field)]);
                            lines.set_home_near(id, c);
                            id
                        })
                        .collect()
                })
                .collect()
        };
        KernelLines { objects, per_cpu }
    }
}

fn sym(f: KernelFn) -> Sym {
    match f {
        KernelFn::Syscall => Sym::Syscall,
        KernelFn::UnixStreamSendmsg => Sym::UnixStreamSendmsg,
        KernelFn::UnixStreamReadGeneric => Sym::UnixStreamReadGeneric,
        KernelFn::AnonPipeWrite => Sym::AnonPipeWrite,
        KernelFn::AnonPipeRead => Sym::AnonPipeRead,
        KernelFn::SlabAlloc => Sym::SlabAlloc,
        KernelFn::SlabFree => Sym::SlabFree,
        KernelFn::WaitQueue => Sym::WaitQueue,
        KernelFn::TcpSendmsg => Sym::TcpSendmsg,
        KernelFn::TcpRecvmsg => Sym::TcpRecvmsg,
        KernelFn::TcpV4Rcv => Sym::TcpV4Rcv,
    }
}

impl Engine {
    /// One step of task `t`'s system call on CPU `c`; returns it if it must wait for its turn.
    pub(super) fn step_syscall(&mut self, c: usize, t: TaskId, step: KernelStep) -> Option<Job> {
        if self.kernel_step(c, Some(t), step) {
            return Some(Job::Syscall(t, step));
        }
        None
    }

    /// One kernel step on CPU `c` for task `current` (none: NET_RX in interrupt context); true
    /// if its access must wait for its turn (the step is to be run again).
    pub(super) fn kernel_step(
        &mut self,
        c: usize,
        current: Option<TaskId>,
        step: KernelStep,
    ) -> bool {
        match step {
            KernelStep::Compute { func, ns } => {
                self.kcharge(c, sym(func), ns);
                false
            }
            KernelStep::Access { line, op, func } => {
                let sym = sym(func);
                let op = match op {
                    KernelAccess::Load => Op::Load,
                    KernelAccess::Store => Op::Store,
                    KernelAccess::Atomic => Op::Atomic,
                };
                if op == Op::Atomic {
                    self.drain_store_buffer(c, sym);
                }
                if self.must_wait(c) {
                    return true;
                }
                let id = match line {
                    KernelLine::Object(i) => self.klines.objects[i as usize],
                    KernelLine::PerCpu { line, of } => {
                        let cpu = if Some(of) == current {
                            c
                        } else {
                            self.tasks[of as usize].last_ran_cpu as usize
                        };
                        self.klines.per_cpu[cpu][line as usize]
                    }
                    KernelLine::RxCpu { line, conn } => {
                        self.klines.per_cpu[self.net.irq_cpu_of(conn)][line as usize]
                    }
                };
                self.kaccess(c, id, op, 0, sym);
                false
            }
        }
    }
}
