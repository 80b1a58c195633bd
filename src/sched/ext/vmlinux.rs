//! What a BPF scheduler sees of the simulated kernel: the role of vmlinux BTF for libbpf. The
//! names, members, enum values and kfunc prototypes are v6.18's (include/linux/sched.h,
//! include/linux/sched/ext.h, kernel/sched/ext_internal.h, kernel/sched/ext.c, ext_idle.c); the
//! offsets are the simulator's own layout of the objects it lends a program (CO-RE relocations
//! make programs independent of them, as they are of a real kernel's config).

use crate::bpf::cpumask::id as cm;
use crate::bpf::target::{Enum, Field, Kfunc, Struct, StructOps, Target};

/// Byte size of the simulated `struct task_struct` a program is handed.
pub const TASK_STRUCT_SIZE: u32 = 192;
/// Offset of `task_struct.scx`.
pub const TASK_SCX: u32 = 64;

/// The simulated `struct sched_ext_entity` (include/linux/sched/ext.h:160), fields programs
/// read or write (`bpf_scx_btf_struct_access` lets them write `slice`, `dsq_vtime`, `disallow`).
pub const SCHED_EXT_ENTITY: &[Field] = &[
    Field::scalar("flags", 0, 4, false),
    Field::scalar("weight", 4, 4, false),
    Field::scalar("sticky_cpu", 8, 4, true),
    Field::scalar("holding_cpu", 12, 4, true),
    Field::scalar("kf_mask", 16, 4, false),
    Field::scalar("runnable_at", 24, 8, false),
    Field::scalar("ddsp_dsq_id", 32, 8, false),
    Field::scalar("ddsp_enq_flags", 40, 8, false),
    Field::scalar("slice", 48, 8, false),
    Field::scalar("dsq_vtime", 56, 8, false),
    Field::scalar("disallow", 64, 1, false),
];

pub const TASK_STRUCT: &[Field] = &[
    Field::scalar("pid", 0, 4, true),
    Field::scalar("tgid", 4, 4, true),
    Field::scalar("flags", 8, 4, false),
    Field::scalar("prio", 12, 4, true),
    Field::scalar("static_prio", 16, 4, true),
    Field::scalar("normal_prio", 20, 4, true),
    Field::scalar("nr_cpus_allowed", 24, 4, true),
    Field::scalar("migration_disabled", 28, 2, false),
    Field::scalar("cpus_ptr", 32, 8, false),
    Field::array("comm", 40, 16, 1),
    Field::nested("scx", TASK_SCX, 72, "sched_ext_entity"),
];

/// `struct scx_exit_info` (ext_internal.h:79).
pub const SCX_EXIT_INFO: &[Field] = &[
    Field::scalar("kind", 0, 4, false),
    Field::scalar("exit_code", 8, 8, true),
    Field::scalar("flags", 16, 8, false),
    Field::scalar("reason", 24, 8, false),
    Field::scalar("bt", 32, 8, false),
    Field::scalar("bt_len", 40, 4, false),
    Field::scalar("msg", 48, 8, false),
    Field::scalar("dump", 56, 8, false),
];

const STRUCTS: &[Struct] = &[
    Struct {
        name: "task_struct",
        size: TASK_STRUCT_SIZE,
        fields: TASK_STRUCT,
    },
    Struct {
        name: "sched_ext_entity",
        size: 72,
        fields: SCHED_EXT_ENTITY,
    },
    Struct {
        name: "scx_exit_info",
        size: 64,
        fields: SCX_EXIT_INFO,
    },
    Struct {
        name: "scx_init_task_args",
        size: 16,
        fields: &[
            Field::scalar("fork", 0, 1, false),
            Field::scalar("cgroup", 8, 8, false),
        ],
    },
    Struct {
        name: "scx_exit_task_args",
        size: 1,
        fields: &[Field::scalar("cancelled", 0, 1, false)],
    },
];

const B63: i64 = i64::MIN; // 1 << 63 as the enum's 64-bit pattern

const ENUMS: &[Enum] = &[
    Enum {
        name: "scx_public_consts",
        values: &[
            ("SCX_OPS_NAME_LEN", 128),
            ("SCX_SLICE_DFL", 20_000_000),
            ("SCX_SLICE_INF", -1),
        ],
    },
    Enum {
        name: "scx_dsq_id_flags",
        values: &[
            ("SCX_DSQ_FLAG_BUILTIN", B63),
            ("SCX_DSQ_FLAG_LOCAL_ON", 1 << 62),
            ("SCX_DSQ_INVALID", B63),
            ("SCX_DSQ_GLOBAL", B63 | 1),
            ("SCX_DSQ_LOCAL", B63 | 2),
            ("SCX_DSQ_LOCAL_ON", B63 | 1 << 62),
            ("SCX_DSQ_LOCAL_CPU_MASK", 0xffff_ffff),
        ],
    },
    Enum {
        name: "scx_enq_flags",
        values: &[
            ("SCX_ENQ_WAKEUP", 0x1),
            ("SCX_ENQ_HEAD", 0x10),
            ("SCX_ENQ_CPU_SELECTED", 0x400),
            ("SCX_ENQ_PREEMPT", 1 << 32),
            ("SCX_ENQ_REENQ", 1 << 40),
            ("SCX_ENQ_LAST", 1 << 41),
            ("SCX_ENQ_CLEAR_OPSS", 1 << 56),
            ("SCX_ENQ_DSQ_PRIQ", 1 << 57),
        ],
    },
    Enum {
        name: "scx_wake_flags",
        values: &[
            ("SCX_WAKE_FORK", 4),
            ("SCX_WAKE_TTWU", 8),
            ("SCX_WAKE_SYNC", 16),
        ],
    },
    Enum {
        name: "scx_consts",
        values: &[
            ("SCX_DSP_DFL_MAX_BATCH", 32),
            ("SCX_DSP_MAX_LOOPS", 32),
            ("SCX_EXIT_BT_LEN", 64),
            ("SCX_EXIT_MSG_LEN", 1024),
            ("SCX_EXIT_DUMP_DFL_LEN", 32768),
            ("SCX_CPUPERF_ONE", 1024),
            ("SCX_TASK_ITER_BATCH", 32),
        ],
    },
    Enum {
        name: "scx_ent_flags",
        values: &[
            ("SCX_TASK_QUEUED", 1),
            ("SCX_TASK_RESET_RUNNABLE_AT", 1 << 2),
            ("SCX_TASK_DEQD_FOR_SLEEP", 1 << 3),
            ("SCX_TASK_STATE_SHIFT", 8),
            ("SCX_TASK_STATE_BITS", 2),
            ("SCX_TASK_STATE_MASK", 3 << 8),
            ("SCX_TASK_CURSOR", 1 << 31),
        ],
    },
    Enum {
        name: "scx_task_state",
        values: &[
            ("SCX_TASK_NONE", 0),
            ("SCX_TASK_INIT", 1),
            ("SCX_TASK_READY", 2),
            ("SCX_TASK_ENABLED", 3),
            ("SCX_TASK_NR_STATES", 4),
        ],
    },
    Enum {
        name: "scx_ent_dsq_flags",
        values: &[("SCX_TASK_DSQ_ON_PRIQ", 1)],
    },
    Enum {
        name: "scx_rq_flags",
        values: &[
            ("SCX_RQ_ONLINE", 1),
            ("SCX_RQ_CAN_STOP_TICK", 1 << 1),
            ("SCX_RQ_BAL_PENDING", 1 << 2),
            ("SCX_RQ_BAL_KEEP", 1 << 3),
            ("SCX_RQ_BYPASSING", 1 << 4),
            ("SCX_RQ_CLK_VALID", 1 << 5),
            ("SCX_RQ_BAL_CB_PENDING", 1 << 6),
            ("SCX_RQ_IN_WAKEUP", 1 << 16),
            ("SCX_RQ_IN_BALANCE", 1 << 17),
        ],
    },
    Enum {
        name: "scx_deq_flags",
        values: &[("SCX_DEQ_SLEEP", 1), ("SCX_DEQ_CORE_SCHED_EXEC", 1 << 32)],
    },
    Enum {
        name: "scx_kick_flags",
        values: &[
            ("SCX_KICK_IDLE", 1),
            ("SCX_KICK_PREEMPT", 2),
            ("SCX_KICK_WAIT", 4),
        ],
    },
    Enum {
        name: "scx_pick_idle_cpu_flags",
        values: &[("SCX_PICK_IDLE_CORE", 1), ("SCX_PICK_IDLE_IN_NODE", 2)],
    },
    Enum {
        name: "scx_ops_flags",
        values: &[
            ("SCX_OPS_KEEP_BUILTIN_IDLE", 1),
            ("SCX_OPS_ENQ_LAST", 2),
            ("SCX_OPS_ENQ_EXITING", 4),
            ("SCX_OPS_SWITCH_PARTIAL", 8),
            ("SCX_OPS_ENQ_MIGRATION_DISABLED", 16),
            ("SCX_OPS_ALLOW_QUEUED_WAKEUP", 32),
            ("SCX_OPS_BUILTIN_IDLE_PER_NODE", 64),
        ],
    },
    Enum {
        name: "scx_exit_kind",
        values: &[
            ("SCX_EXIT_NONE", 0),
            ("SCX_EXIT_DONE", 1),
            ("SCX_EXIT_UNREG", 64),
            ("SCX_EXIT_UNREG_BPF", 65),
            ("SCX_EXIT_UNREG_KERN", 66),
            ("SCX_EXIT_SYSRQ", 67),
            ("SCX_EXIT_ERROR", 1024),
            ("SCX_EXIT_ERROR_BPF", 1025),
            ("SCX_EXIT_ERROR_STALL", 1026),
        ],
    },
];

/// Kfunc ids: the value a resolved call carries (a kernel uses its BTF ids; these are ours).
pub mod kf {
    pub const SELECT_CPU_DFL: i32 = 1;
    pub const DSQ_INSERT: i32 = 2;
    pub const DSQ_INSERT_VTIME: i32 = 3;
    pub const DSQ_MOVE_TO_LOCAL: i32 = 4;
    pub const CREATE_DSQ: i32 = 5;
    pub const DSQ_NR_QUEUED: i32 = 6;
    pub const KICK_CPU: i32 = 7;
    pub const TASK_CPU: i32 = 8;
    pub const TASK_RUNNING: i32 = 9;
    pub const NOW: i32 = 10;
    pub const NR_CPU_IDS: i32 = 11;
    pub const NR_NODE_IDS: i32 = 12;
    pub const ERROR_BSTR: i32 = 13;
    pub const EXIT_BSTR: i32 = 14;
    pub const TEST_AND_CLEAR_CPU_IDLE: i32 = 15;
    pub const CPU_NODE: i32 = 16;
    pub const DESTROY_DSQ: i32 = 17;
    pub const RCU_READ_LOCK: i32 = 18;
    pub const RCU_READ_UNLOCK: i32 = 19;
    pub const GET_IDLE_CPUMASK: i32 = 20;
    pub const GET_IDLE_CPUMASK_NODE: i32 = 21;
    pub const GET_IDLE_SMTMASK: i32 = 22;
    pub const GET_IDLE_SMTMASK_NODE: i32 = 23;
    pub const PUT_IDLE_CPUMASK: i32 = 24;
    pub const GET_ONLINE_CPUMASK: i32 = 25;
    pub const GET_POSSIBLE_CPUMASK: i32 = 26;
    pub const PUT_CPUMASK: i32 = 27;
    pub const SELECT_CPU_AND: i32 = 28;
    pub const CPUPERF_SET: i32 = 29;
    pub const CPUPERF_CUR: i32 = 30;
    pub const CPUPERF_CAP: i32 = 31;
    pub const REENQUEUE_LOCAL: i32 = 32;
    pub const ITER_SCX_DSQ_NEW: i32 = 33;
    pub const ITER_SCX_DSQ_NEXT: i32 = 34;
    pub const ITER_SCX_DSQ_DESTROY: i32 = 35;
    pub const PICK_IDLE_CPU: i32 = 36;
    pub const PICK_IDLE_CPU_NODE: i32 = 37;
    pub const PICK_ANY_CPU: i32 = 38;
    pub const PICK_ANY_CPU_NODE: i32 = 39;
}

const fn k(name: &'static str, id: i32, params: u8) -> Kfunc {
    Kfunc { name, id, params }
}

/// v6.18's kfuncs that the sched_ext core here implements, with their parameter counts
/// (kernel/sched/ext.c, ext_idle.c), then the generic ones of `bpf::cpumask`
/// (kernel/bpf/cpumask.c, the numeric iterator of kernel/bpf/bpf_iter.c).
const KFUNCS: &[Kfunc] = &[
    k("scx_bpf_get_idle_cpumask", kf::GET_IDLE_CPUMASK, 0),
    k(
        "scx_bpf_get_idle_cpumask_node",
        kf::GET_IDLE_CPUMASK_NODE,
        1,
    ),
    k("scx_bpf_get_idle_smtmask", kf::GET_IDLE_SMTMASK, 0),
    k(
        "scx_bpf_get_idle_smtmask_node",
        kf::GET_IDLE_SMTMASK_NODE,
        1,
    ),
    k("scx_bpf_put_idle_cpumask", kf::PUT_IDLE_CPUMASK, 1),
    k("scx_bpf_get_online_cpumask", kf::GET_ONLINE_CPUMASK, 0),
    k("scx_bpf_get_possible_cpumask", kf::GET_POSSIBLE_CPUMASK, 0),
    k("scx_bpf_put_cpumask", kf::PUT_CPUMASK, 1),
    k("scx_bpf_select_cpu_and", kf::SELECT_CPU_AND, 5),
    k("scx_bpf_cpuperf_set", kf::CPUPERF_SET, 2),
    k("scx_bpf_cpuperf_cur", kf::CPUPERF_CUR, 1),
    k("scx_bpf_cpuperf_cap", kf::CPUPERF_CAP, 1),
    k("scx_bpf_reenqueue_local", kf::REENQUEUE_LOCAL, 0),
    k("bpf_iter_scx_dsq_new", kf::ITER_SCX_DSQ_NEW, 3),
    k("bpf_iter_scx_dsq_next", kf::ITER_SCX_DSQ_NEXT, 1),
    k("bpf_iter_scx_dsq_destroy", kf::ITER_SCX_DSQ_DESTROY, 1),
    k("scx_bpf_pick_idle_cpu", kf::PICK_IDLE_CPU, 2),
    k("scx_bpf_pick_idle_cpu_node", kf::PICK_IDLE_CPU_NODE, 3),
    k("scx_bpf_pick_any_cpu", kf::PICK_ANY_CPU, 2),
    k("scx_bpf_pick_any_cpu_node", kf::PICK_ANY_CPU_NODE, 3),
    Kfunc {
        name: "scx_bpf_select_cpu_dfl",
        id: kf::SELECT_CPU_DFL,
        params: 4,
    },
    Kfunc {
        name: "scx_bpf_dsq_insert",
        id: kf::DSQ_INSERT,
        params: 4,
    },
    Kfunc {
        name: "scx_bpf_dsq_insert_vtime",
        id: kf::DSQ_INSERT_VTIME,
        params: 5,
    },
    Kfunc {
        name: "scx_bpf_dsq_move_to_local",
        id: kf::DSQ_MOVE_TO_LOCAL,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_create_dsq",
        id: kf::CREATE_DSQ,
        params: 2,
    },
    Kfunc {
        name: "scx_bpf_destroy_dsq",
        id: kf::DESTROY_DSQ,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_dsq_nr_queued",
        id: kf::DSQ_NR_QUEUED,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_kick_cpu",
        id: kf::KICK_CPU,
        params: 2,
    },
    Kfunc {
        name: "scx_bpf_task_cpu",
        id: kf::TASK_CPU,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_task_running",
        id: kf::TASK_RUNNING,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_now",
        id: kf::NOW,
        params: 0,
    },
    Kfunc {
        name: "scx_bpf_nr_cpu_ids",
        id: kf::NR_CPU_IDS,
        params: 0,
    },
    Kfunc {
        name: "scx_bpf_nr_node_ids",
        id: kf::NR_NODE_IDS,
        params: 0,
    },
    Kfunc {
        name: "scx_bpf_error_bstr",
        id: kf::ERROR_BSTR,
        params: 3,
    },
    Kfunc {
        name: "scx_bpf_exit_bstr",
        id: kf::EXIT_BSTR,
        params: 4,
    },
    Kfunc {
        name: "scx_bpf_test_and_clear_cpu_idle",
        id: kf::TEST_AND_CLEAR_CPU_IDLE,
        params: 1,
    },
    Kfunc {
        name: "scx_bpf_cpu_node",
        id: kf::CPU_NODE,
        params: 1,
    },
    Kfunc {
        name: "bpf_rcu_read_lock",
        id: kf::RCU_READ_LOCK,
        params: 0,
    },
    Kfunc {
        name: "bpf_rcu_read_unlock",
        id: kf::RCU_READ_UNLOCK,
        params: 0,
    },
    // kernel/bpf/cpumask.c and bpf_iter.c (ids of `bpf::cpumask::id`)
    k("bpf_cpumask_create", cm::CREATE, 0),
    k("bpf_cpumask_acquire", cm::ACQUIRE, 1),
    k("bpf_cpumask_release", cm::RELEASE, 1),
    k("bpf_cpumask_first", cm::FIRST, 1),
    k("bpf_cpumask_first_zero", cm::FIRST_ZERO, 1),
    k("bpf_cpumask_first_and", cm::FIRST_AND, 2),
    k("bpf_cpumask_set_cpu", cm::SET_CPU, 2),
    k("bpf_cpumask_clear_cpu", cm::CLEAR_CPU, 2),
    k("bpf_cpumask_test_cpu", cm::TEST_CPU, 2),
    k("bpf_cpumask_test_and_set_cpu", cm::TEST_AND_SET_CPU, 2),
    k("bpf_cpumask_test_and_clear_cpu", cm::TEST_AND_CLEAR_CPU, 2),
    k("bpf_cpumask_setall", cm::SETALL, 1),
    k("bpf_cpumask_clear", cm::CLEAR, 1),
    k("bpf_cpumask_and", cm::AND, 3),
    k("bpf_cpumask_or", cm::OR, 3),
    k("bpf_cpumask_xor", cm::XOR, 3),
    k("bpf_cpumask_equal", cm::EQUAL, 2),
    k("bpf_cpumask_intersects", cm::INTERSECTS, 2),
    k("bpf_cpumask_subset", cm::SUBSET, 2),
    k("bpf_cpumask_empty", cm::EMPTY, 1),
    k("bpf_cpumask_full", cm::FULL, 1),
    k("bpf_cpumask_copy", cm::COPY, 2),
    k("bpf_cpumask_any_distribute", cm::ANY_DISTRIBUTE, 1),
    k("bpf_cpumask_any_and_distribute", cm::ANY_AND_DISTRIBUTE, 2),
    k("bpf_cpumask_weight", cm::WEIGHT, 1),
    k("bpf_iter_num_new", cm::ITER_NUM_NEW, 3),
    k("bpf_iter_num_next", cm::ITER_NUM_NEXT, 1),
    k("bpf_iter_num_destroy", cm::ITER_NUM_DESTROY, 1),
];

/// Helpers (`enum bpf_func_id`, include/uapi/linux/bpf.h) the core provides.
const HELPERS: &[(i32, &str)] = &[
    (1, "bpf_map_lookup_elem"),
    (2, "bpf_map_update_elem"),
    (3, "bpf_map_delete_elem"),
    (5, "bpf_ktime_get_ns"),
    (8, "bpf_get_smp_processor_id"),
    (113, "bpf_probe_read_kernel"),
    (115, "bpf_probe_read_kernel_str"),
    (195, "bpf_map_lookup_percpu_elem"),
    (6, "bpf_trace_printk"),
    (153, "bpf_per_cpu_ptr"),
    (154, "bpf_this_cpu_ptr"),
    (156, "bpf_task_storage_get"),
    (157, "bpf_task_storage_delete"),
    (158, "bpf_get_current_task_btf"),
    (169, "bpf_timer_init"),
    (170, "bpf_timer_set_callback"),
    (171, "bpf_timer_start"),
    (172, "bpf_timer_cancel"),
    (181, "bpf_loop"),
    (194, "bpf_kptr_xchg"),
];

/// `KERNEL_VERSION(6, 18, 0)` (include/generated/uapi/linux/version.h).
pub const LINUX_KERNEL_VERSION: u64 = (6 << 16) | (18 << 8);

/// `.kconfig` values: the version, and the config of the simulated kernel that schedulers test
/// (a distribution's PREEMPT_DYNAMIC build has CONFIG_PREEMPT_RCU=y; stated assumption).
const KCONFIG: &[(&str, u64)] = &[
    ("LINUX_KERNEL_VERSION", LINUX_KERNEL_VERSION),
    ("CONFIG_PREEMPT_RCU", 1),
    ("CONFIG_SMP", 1),
    ("CONFIG_NUMA", 1),
    ("CONFIG_SCHED_SMT", 1),
    ("CONFIG_SCHED_MC", 1),
    ("CONFIG_EXT_GROUP_SCHED", 0),
];

/// Per-CPU variables a program may read through `bpf_per_cpu_ptr` (kernel/sched/topology.c:
/// `DEFINE_PER_CPU(int, sd_llc_size)`, `sd_llc_id`); the core fills them from the topology.
const PERCPU_VARS: &[(&str, u32)] = &[("sd_llc_size", 4), ("sd_llc_id", 4)];

/// `struct sched_ext_ops` (ext_internal.h:267), members in v6.18's order.
pub const SCHED_EXT_OPS_MEMBERS: &[&str] = &[
    "select_cpu",
    "enqueue",
    "dequeue",
    "dispatch",
    "tick",
    "runnable",
    "running",
    "stopping",
    "quiescent",
    "yield",
    "core_sched_before",
    "set_weight",
    "set_cpumask",
    "update_idle",
    "cpu_acquire",
    "cpu_release",
    "init_task",
    "exit_task",
    "enable",
    "disable",
    "dump",
    "dump_cpu",
    "dump_task",
    "cgroup_init",
    "cgroup_exit",
    "cgroup_prep_move",
    "cgroup_move",
    "cgroup_cancel_move",
    "cgroup_set_weight",
    "cgroup_set_bandwidth",
    "cpu_online",
    "cpu_offline",
    "init",
    "exit",
    "dispatch_max_batch",
    "flags",
    "timeout_ms",
    "exit_dump_len",
    "hotplug_seq",
    "name",
    "priv",
];

/// The simulated v6.18 kernel as a loader target.
pub const V6_18: Target = Target {
    structs: STRUCTS,
    enums: ENUMS,
    kfuncs: KFUNCS,
    helpers: HELPERS,
    struct_ops: &[StructOps {
        name: "sched_ext_ops",
        members: SCHED_EXT_OPS_MEMBERS,
    }],
    kconfig: KCONFIG,
    percpu_vars: PERCPU_VARS,
};
