//! The CPU maps of the POWER and Arm presets (`topology::Preset::map`): layouts the regular
//! generator (threads at +cores, an LLC per group of cores) cannot make. Each is what `lscpu -p`
//! and `numactl -H` show on the machine, as `machine_file` reads it; sources in docs/MODEL.md §1c.

use crate::machine::cpu_map::CpuMap;

/// One CPU's (core, cluster, LLC, node, socket) ids.
type Place = (u32, u32, u32, u32, u32);

/// POWER10 LPAR of 4 chips x 10 SMT8 cores = 320 CPUs, a node per chip: the 320-CPU box the
/// mailing-list probes run on (node0 0-79 ... node7 240-319). Big core k holds CPUs 8k..8k+7 in
/// two SMT4 halves of alternate threads (`ibm,thread-groups`: 0,2,4,6 and 1,3,5,7), each with its
/// own L1 and L2 (thread group 2): the kernel's SMT level and its LLC are the half. Linux's
/// package is the chip (`cpu_to_chip_id`). The SLIT is a placeholder in PowerVM's FORM1 form
/// (each associativity level doubles the distance): 20 between the two chips of a module, 40
/// beyond.
pub fn power10_4n() -> CpuMap {
    let places: Vec<Place> = (0..320u32)
        .map(|cpu| {
            let half = (cpu / 8) * 2 + cpu % 2;
            let chip = cpu / 80;
            (half, half, half, chip, chip)
        })
        .collect();
    let slit = (0..4)
        .map(|i: u32| {
            (0..4)
                .map(|j: u32| match (i, j) {
                    _ if i == j => 10,
                    _ if i / 2 == j / 2 => 20,
                    _ => 40,
                })
                .collect()
        })
        .collect();
    CpuMap::from_places(&places, slit)
}

/// `sockets` x `cores` Arm cores without SMT, one node per `cores_per_node`, an LLC per node, and
/// clusters of `cluster` cores (1: none) as `cluster_cpus_list` gives them.
fn arm(sockets: u32, cores: u32, cores_per_node: u32, cluster: u32, slit: Vec<Vec<u32>>) -> CpuMap {
    let places: Vec<Place> = (0..sockets * cores)
        .map(|cpu| {
            let node = cpu / cores_per_node;
            (cpu, cpu / cluster, node, node, cpu / cores)
        })
        .collect();
    CpuMap::from_places(&places, slit)
}

/// NVIDIA Grace CPU Superchip: 2 x 72 Neoverse V2 cores over NVLink-C2C, a node and an L3 per
/// Grace. Clusters are not published: none. SLIT placeholder (ACPI REMOTE_DISTANCE 20).
pub fn grace_2s() -> CpuMap {
    arm(2, 72, 72, 1, vec![vec![10, 20], vec![20, 10]])
}

/// AWS Graviton4 (r8g metal, 2S): 2 x 96 Neoverse V2 cores, a node and a 36 MB L3 per socket.
/// Clusters are not published: none. SLIT placeholder (ACPI REMOTE_DISTANCE 20).
pub fn graviton4_2s() -> CpuMap {
    arm(2, 96, 96, 1, vec![vec![10, 20], vec![20, 10]])
}

/// Kunpeng 920 (2S, 128 cores): 2 dies per socket, a node and an L3 per die of 32 cores, 8
/// clusters (CCL) of 4 cores per die, which only `cluster_cpus_list` shows; the SLIT of
/// Kunpeng 920 firmware: 12 to the other die, 20/22/24 across sockets.
pub fn kunpeng920_2s() -> CpuMap {
    let slit = vec![
        vec![10, 12, 20, 22],
        vec![12, 10, 22, 24],
        vec![20, 22, 10, 12],
        vec![22, 24, 12, 10],
    ];
    arm(2, 64, 32, 4, slit)
}
