//! The wake flags of kernel/sched/sched.h, in their own module because both the wakeup path
//! (wakeup.rs, which sets them) and the run queue (rq.rs, whose wakeup preemption reads them) use
//! them, and wakeup.rs reads rq.rs's lines.

/// `WF_SYNC` (kernel/sched/sched.h): the waker is about to sleep, a hint to `wake_affine`. The
/// workloads say which of their wakeups the kernel makes sync (`Step::Wake::sync`).
pub(crate) const WF_SYNC: u32 = 0x10;
/// `WF_FORK`: wake_up_new_task()'s wakeup (the engine starts its tasks without one).
pub(crate) const WF_FORK: u32 = 0x04;
/// `WF_TTWU`: a try_to_wake_up() wakeup.
pub(crate) const WF_TTWU: u32 = 0x08;
/// `WF_MIGRATED`: select_task_rq() moved the task (the wake list passes only this on).
pub(crate) const WF_MIGRATED: u32 = 0x20;
/// `WF_RQ_SELECTED`: select_task_rq() was called (the task may run on more than one CPU).
pub(crate) const WF_RQ_SELECTED: u32 = 0x80;
