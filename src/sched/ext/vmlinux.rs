//! What a BPF scheduler sees of the simulated kernel: the role of vmlinux BTF for libbpf. The
//! names, members, enum values and kfunc prototypes are v6.18's (include/linux/sched.h,
//! include/linux/sched/ext.h, kernel/sched/ext_internal.h, kernel/sched/ext.c, ext_idle.c); the
//! offsets are the simulator's own layout of the objects it lends a program (CO-RE relocations
//! make programs independent of them, as they are of a real kernel's config).

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
}

/// v6.18's kfuncs that the sched_ext core here implements, with their parameter counts.
const KFUNCS: &[Kfunc] = &[
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
];

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
};
