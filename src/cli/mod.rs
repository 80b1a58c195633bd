//! The `schedplay` CLI, one module per subcommand: each owns its flags (`XArgs`) and its `main`;
//! `args` holds what they share. Front door only: everything it runs is the library's.

mod args;
mod bench;
mod compare;
mod curve;
mod link;
mod maxload;
mod merge;
mod precompute;
mod presets;
mod run;
mod sensitivity;
mod stories;
mod sweep;
mod topology;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

const TOP_EXAMPLES: &str = "\
Examples:
  schedplay presets
  schedplay topology --machine gnr-2s-snc3 --cpu 0
  schedplay run --machine milan-2s --workload hackbench --seconds 0.5
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due
  schedplay link --machine milan-2s --b cache-aware
  schedplay sweep --cpus 64,128,256 --b skip-not-due --seconds 0.2
  schedplay bench --seconds 0.5

Invalid input is reported field by field (`error: field: message`) with exit code 2.";

#[derive(Parser)]
#[command(
    name = "schedplay",
    version,
    about = "Simulate Linux scheduler balancing and its cache-line contention on big machines",
    after_help = TOP_EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Machines, workloads and patches, one line each.
    #[command(after_help = "Examples:\n  schedplay presets")]
    Presets,
    /// numactl -H style summary and a CPU's sched domains (sched_verbose + debugfs values).
    #[command(after_help = "\
Examples:
  schedplay topology --machine gnr-2s-snc3
  schedplay topology --machine gnr-2s-96c-snc3 --patch snc3-distance-fix --cpu 100
  schedplay topology --machine custom --sockets 4 --cores-per-socket 32 --json
  schedplay topology --machine gnr-2s-96c-snc3 --format sched-verbose --cpu 0
  schedplay topology --machine milan-2s --format lscpu > box.txt; schedplay topology --machine milan-2s --format numactl >> box.txt
  schedplay topology --machine-file box.txt --format debugfs --cpu 0")]
    Topology(topology::TopologyArgs),
    /// Run one scenario.
    #[command(after_help = "\
Examples:
  schedplay run
  schedplay run --machine milan-2s --workload hackbench --set groups=4 --seconds 0.5
  schedplay run --machine gnr-2s-snc3 --patch skip-not-due,skew-tick --json
  schedplay run --link 'http://127.0.0.1:8080/?v=1&machine=milan-2s&b=cache-aware'
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --trace run.json --trace-from 0.01 --trace-to 0.02
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --trace run.pftrace
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --schedstat
  schedplay run --machine milan-2s --workload-file rt-app.json --seconds 2

Without --link the scenario runs unpatched unless --patch is given; with --link it runs the link's
side B (the change under test). --trace writes Perfetto protobuf for FILE.pftrace, else Chrome JSON trace events (docs/TRACE.md).")]
    Run(run::RunArgs),
    /// Run A and B and show the change.
    #[command(after_help = "\
Examples:
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due
  schedplay compare --machine milan-2s --a cache-aware --b cache-aware,cas-write-if-changed
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due --seconds 0.2 --schedstat
  schedplay compare --link 'http://127.0.0.1:8080/?v=1&machine=milan-2s&b=cache-aware' --json")]
    Compare(compare::CompareArgs),
    /// Print the share link of a scenario.
    #[command(after_help = "\
Examples:
  schedplay link --machine milan-2s --workload hackbench --b cache-aware
  schedplay link --machine custom --sockets 2 --cores-per-socket 16 --base https://example.org/schedplay/")]
    Link(link::LinkArgs),
    /// The same experiment on 2-socket machines of growing CPU count: throughput and contention of A and B.
    #[command(after_help = "\
Examples:
  schedplay sweep --b skip-not-due --seconds 0.2
  schedplay sweep --cpus 64,256,1024 --workload hackbench --b cache-aware --json
  schedplay sweep --grid grid.json --shard 0/4 > shard-0.jsonl

With --grid the points come from a JSON grid file (machines x patch_sets x workloads x hz x cpus,
each repeated; README) and print as JSON lines; --shard I/N runs the points i with i mod N == I,
and `schedplay merge` joins the shards.")]
    Sweep(sweep::SweepArgs),
    /// Join the JSON lines of grid shards (sweep --grid --shard) into one table.
    #[command(after_help = "\
Examples:
  schedplay merge shard-*.jsonl > all.jsonl
  schedplay merge shard-*.jsonl --csv > all.csv

Refuses lines of different grids, a point given twice (overlapping shards) and missing points,
naming each; the merged JSON lines are the bytes of the unsharded sweep.")]
    Merge(merge::MergeArgs),
    /// How sure is each number: the experiment over the plausible ranges of the assumed figures, one at a time; each headline's band and the assumptions that move it most.
    #[command(after_help = "\
Examples:
  schedplay sensitivity --machine gnr-2s-96c-snc3 --b skip-not-due --seconds 0.3 --jobs 2
  schedplay sensitivity --machine milan-2s --a cache-aware --b cache-aware,cas-write-if-changed --only STATS_MLP,XFER_PCT --json
  schedplay sensitivity --machine milan-2s --b skew-tick --shard 0/4 > s0.jsonl   # ... 3/4
  schedplay sensitivity --merge s0.jsonl s1.jsonl s2.jsonl s3.jsonl

Point 0 runs the table's values (docs/MODEL.md §19a); then each assumption at the low and the high
end of its range with the others at their values, same seeds: 2k+1 compares. The band of a
headline is its lowest and highest value over these points (interactions are not explored); the
tornado ranks the assumptions by the larger distance of either end from the base. --shard I/N
prints the points i with i mod N == I as JSON lines; --merge joins them (refusing overlaps, gaps
and other screens' lines) and prints the screen.")]
    Sensitivity(sensitivity::SensitivityArgs),
    /// How close is the model? Every published figure it is calibrated or checked against, next to the model's.
    #[command(after_help = "\
Examples:
  schedplay validate
  schedplay validate --seconds 0.05 --repeat 2 --json
  schedplay validate --markdown

A row holds when the model's figure (mean over the repeats) lies in its tolerance band. Rows that
miss are listed as MISSES and the exit code stays 0: the model is known to overshoot seed 000 and
undershoot seed 002 (docs/MODEL.md), and CI must keep running while that is so. With --strict any
miss exits 1.")]
    Validate(validate::ValidateArgs),
    /// The seed stories the page's buttons run: their claims, scenarios, curves and validation rows.
    #[command(
        after_help = "Examples:\n  schedplay stories\n  schedplay compare --story sched-balance-running --seconds 1 --warmup auto"
    )]
    Stories,
    /// The load curve: an A/B at steady state over a workload knob (clients, threads, ...), with
    /// the figures that set the size of a balancing storm at each point.
    #[command(after_help = "\
Examples:
  schedplay curve --story sched-balance-running
  schedplay curve --machine gnr-2s-96c-snc3 --workload oltp --set client=remote --b skip-not-due --knob clients --values 768,1536,3072 --seconds 0.5 --warmup auto
  schedplay curve --story sched-balance-running --shard 0/4 > c0.jsonl   # ... 3/4
  schedplay curve --merge c0.jsonl c1.jsonl c2.jsonl c3.jsonl

Each point is the experiment with the knob at that value (A and B, its repeats and warm-up; with
--warmup auto each point finds its own). Per point: throughput of A and B and the change, the
watched symbol's share (--symbol, default the story's), idle %, idle entries per CPU per second,
SCHED_SOFTIRQs per tick (f) and sched_balance_running cmpxchgs per second. --shard I/N prints the
points i with i mod N == I as JSON lines; --merge joins them (the bytes of the unsharded curve's
lines) and prints the curve.")]
    Curve(curve::CurveArgs),
    /// The highest request rate whose latency percentile stays under a bound (Lancet's search),
    /// for an open-loop workload (`serve`, the default here).
    #[command(after_help = "\
Examples:
  schedplay maxload --machine genoa-vm-16 --percentile 99 --bound-us 1000 --seconds 0.2 --repeat 3
  schedplay maxload --machine genoa-vm-16 --kernel 6.19 --features NO_NI_RANDOM --repeat 3
  schedplay maxload --machine genoa-vm-16 --repeat 4 --shard 0/2 > m0.jsonl   # ... 1/2
  schedplay maxload --merge m0.jsonl m1.jsonl

Each probe is a whole run at one rate, warm-up auto (steady state). From --from the rate doubles
while the probe is under the bound (halves while over), then bisects the bracket to --precision-pct.
A probe is under the bound when the percentile is at most the bound and the replies kept up (at
least 95% of the offered rate). The bisection is sequential, so the repeats shard: each repeat is a
whole search with its own seed, the rate at the bound is their mean with its 95% interval.
--shard I/N runs the repeats i with i mod N == I as JSON lines; --merge joins them (the bytes of
the unsharded lines) and prints the table.")]
    Maxload(maxload::MaxLoadArgs),
    /// The stories' results the page ships (www/precomputed/stories.json): each story's A/B as its
    /// Run computes it and its curve's points, run by this build.
    #[command(after_help = "\
Examples:
  schedplay precompute > www/precomputed/stories.json
  schedplay precompute --shard 0/2 > p0.jsonl   # ... 1/2
  schedplay precompute --merge p0.jsonl p1.jsonl > www/precomputed/stories.json

Every distinct run (experiment, side) of the stories' points and curves runs once; a report keeps
its 200 cache lines with most HITMs (every other figure whole). --shard I/N prints the runs i with
i mod N == I as JSON lines (full reports); --merge joins them (refusing overlaps, gaps and another
build's plan) and prints the file: the bytes of the unsharded command. Rerun it whenever a story or
a report hash changes (tests/precomputed.rs says so).")]
    Precompute(precompute::PrecomputeArgs),
    /// Simulation speed and memory of the reference scenarios (each in its own process).
    #[command(after_help = "\
Examples:
  schedplay bench
  schedplay bench --seconds 2")]
    Bench(bench::BenchArgs),
}

pub fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Presets => presets::main(),
        Cmd::Topology(a) => topology::main(a),
        Cmd::Run(a) => run::main(a),
        Cmd::Compare(a) => compare::main(a),
        Cmd::Link(a) => link::main(a),
        Cmd::Sweep(a) => sweep::main(a),
        Cmd::Merge(a) => merge::main(a),
        Cmd::Sensitivity(a) => sensitivity::main(a),
        Cmd::Validate(a) => validate::main(a),
        Cmd::Bench(a) => bench::main(a),
        Cmd::Stories => stories::main(),
        Cmd::Curve(a) => curve::main(a),
        Cmd::Maxload(a) => maxload::main(a),
        Cmd::Precompute(a) => precompute::main(a),
    }
}
