//! Fuzzing inside `cargo test --release` (issue "No panic is reachable from input").
//!
//! Inputs come from the crate's own seeded generator (`SimRng`) with fixed base seeds, so every
//! failure reproduces. Three targets:
//!   1. the share-link decoder (`decode_link`): random bytes, random UTF-8 built from the known keys
//!      and nasty values, and mutations of valid links;
//!   2. the JSON scenario decoder (`serde_json` -> `validate` -> `Run::new`, construction only), with
//!      every allocation of the construction watched by a counting global allocator;
//!   3. short simulations of random valid scenarios, checked slice by slice;
//!   4. the machine-file parser (`cpu_map::parse`): lscpu/numactl texts of small machines (also
//!      as odd dumps show them: offline rows, CPUs without an L3 id, split L2 columns, a VM's
//!      sockets, no distances, the RISC-V / LoongArch / s390 / SPARC summaries) and the corpus's
//!      `machine-seed-*` dumps, mutated line by line and character by character, and random
//!      text; a parsed machine must encode, decode and build its domains.
//!
//! `SCHEDPLAY_FUZZ_ITERS=<n>` multiplies every iteration count (a campaign), e.g.
//!     SCHEDPLAY_FUZZ_ITERS=20 cargo test --release --test fuzz -- --nocapture
//! Findings are saved to `tests/fuzz_corpus/` (`link-*` decoded as a link, `json-*` as a JSON
//! scenario, `machine-*` parsed as a machine file) and `replay_corpus` re-checks every file there on every `cargo test`.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::Run;
use schedplay::error::Invalid;
use schedplay::experiment::link::{decode_link, encode_link};
use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::machine::cpu_map;
use schedplay::machine::cpu_map::CpuMap;
use schedplay::machine::domains::SchedDomains;
use schedplay::machine::presets::{PRESETS, preset};
use schedplay::machine::print;
use schedplay::machine::spec::LayoutOverrides;
use schedplay::machine::topology::Topology;
use schedplay::patches::PATCHES;
use schedplay::sim::rng::SimRng;
use schedplay::workload::WORKLOADS;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Once;
use std::time::Instant;

// ---- allocation watch ------------------------------------------------------------------------

/// A single allocation above this during a guarded construction is a finding.
const ALLOC_FINDING_BYTES: usize = 64 << 20;
/// Above this we cannot let the allocation through (it would take the machine down): the input
/// is printed and saved, then the allocation fails (the process aborts).
const ALLOC_HARD_BYTES: usize = 2 << 30;

struct Watch;

thread_local! {
    static GUARD: Cell<bool> = const { Cell::new(false) };
    static MAX_REQ: Cell<usize> = const { Cell::new(0) };
    static TOTAL_REQ: Cell<usize> = const { Cell::new(0) };
    static CURRENT_INPUT: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records a request; false when it must be refused.
fn note_alloc(size: usize) -> bool {
    let guarded = GUARD.try_with(|g| g.get()).unwrap_or(false);
    if !guarded {
        return true;
    }
    let _ = MAX_REQ.try_with(|m| m.set(m.get().max(size)));
    let _ = TOTAL_REQ.try_with(|t| t.set(t.get().saturating_add(size)));
    if size > ALLOC_HARD_BYTES {
        let _ = GUARD.try_with(|g| g.set(false));
        let _ = CURRENT_INPUT.try_with(|c| {
            if let Some((prefix, input)) = c.borrow().as_ref() {
                eprintln!("FUZZ FINDING: allocation of {size} bytes while constructing {prefix} input {input:?}");
                save_corpus(prefix, input);
            }
        });
        return false;
    }
    true
}

unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !note_alloc(l.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if !note_alloc(l.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if !note_alloc(new_size) {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(p, l, new_size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Watch = Watch;

/// Runs `f` with allocations watched; returns (result, largest single request, total requested).
fn watched<T>(prefix: &str, input: &str, f: impl FnOnce() -> T) -> (T, usize, usize) {
    CURRENT_INPUT.with(|c| *c.borrow_mut() = Some((prefix.to_string(), input.to_string())));
    MAX_REQ.with(|m| m.set(0));
    TOTAL_REQ.with(|t| t.set(0));
    GUARD.with(|g| g.set(true));
    let r = f();
    GUARD.with(|g| g.set(false));
    CURRENT_INPUT.with(|c| *c.borrow_mut() = None);
    (r, MAX_REQ.with(|m| m.get()), TOTAL_REQ.with(|t| t.get()))
}

// ---- panics ----------------------------------------------------------------------------------

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let loc = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(format!("{loc}: {msg}")));
            if !QUIET.try_with(|q| q.get()).unwrap_or(false) {
                prev(info);
            }
        }));
    });
}

/// A finding: what kind (deduplication key) and what happened.
#[derive(Clone, Debug)]
struct Finding {
    kind: String,
    detail: String,
}

fn finding(kind: impl Into<String>, detail: impl Into<String>) -> Option<Finding> {
    Some(Finding {
        kind: kind.into(),
        detail: detail.into(),
    })
}

/// Runs a check, turning a panic into a finding named by its location.
fn guarded(f: impl FnOnce() -> Option<Finding>) -> Option<Finding> {
    install_hook();
    QUIET.with(|q| q.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    GUARD.with(|g| g.set(false));
    match r {
        Ok(f) => f,
        Err(_) => {
            let what = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "unknown panic".into());
            let loc = what.split(": ").next().unwrap_or("").to_string();
            finding(format!("panic at {loc}"), what)
        }
    }
}

// ---- corpus ----------------------------------------------------------------------------------

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus")
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn save_corpus(prefix: &str, input: &str) -> PathBuf {
    let dir = corpus_dir();
    let _ = std::fs::create_dir_all(&dir);
    let p = dir.join(format!("{prefix}-{:016x}.txt", fnv(input)));
    let _ = std::fs::write(&p, input);
    p
}

/// Per kind: occurrences and the shortest input seen.
#[derive(Default)]
struct Findings {
    prefix: &'static str,
    by_kind: BTreeMap<String, (u64, String, String)>,
}

impl Findings {
    fn new(prefix: &'static str) -> Self {
        Findings {
            prefix,
            by_kind: BTreeMap::new(),
        }
    }
    fn add(&mut self, input: &str, f: Finding) {
        let e = self
            .by_kind
            .entry(f.kind)
            .or_insert((0, input.to_string(), f.detail.clone()));
        e.0 += 1;
        if input.len() < e.1.len() {
            e.1 = input.to_string();
            e.2 = f.detail;
        }
    }
    /// Saves one (minimized) input per kind and fails with all of them.
    fn finish(
        mut self,
        what: &str,
        minimize: impl Fn(&str, &str) -> String,
        recheck: impl Fn(&str) -> Option<Finding>,
    ) {
        if self.by_kind.is_empty() {
            return;
        }
        let mut msg = format!("{what}: {} kind(s) of finding\n", self.by_kind.len());
        for (kind, (n, input, detail)) in std::mem::take(&mut self.by_kind) {
            let small = minimize(&kind, &input);
            let detail = recheck(&small).map(|f| f.detail).unwrap_or(detail);
            let p = save_corpus(self.prefix, &small);
            msg += &format!(
                "- [{n}x] {kind}\n    input: {small:?}\n    what: {detail}\n    saved: {}\n",
                p.display()
            );
        }
        panic!("{msg}");
    }
}

fn multiplier() -> u64 {
    std::env::var("SCHEDPLAY_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&m| m > 0)
        .unwrap_or(1)
}

// ---- key names and nasty values ---------------------------------------------------------------

/// Every patch `Patches::parse` takes: the `PATCHES` table lists them all.
fn all_patch_names() -> Vec<&'static str> {
    PATCHES.iter().map(|p| p.name).collect()
}

fn link_keys_of(q: &str) -> Vec<String> {
    q.split('&')
        .filter_map(|p| p.split_once('=').map(|(k, _)| k.to_string()))
        .collect()
}

/// Every key a link may carry: from `encode_link` (default, and with every machine override set)
/// and from the workload knob table.
fn known_keys() -> &'static BTreeSet<String> {
    static KEYS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys: BTreeSet<String> = link_keys_of(&encode_link(&Experiment::default()))
            .into_iter()
            .collect();
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        let o = &mut e.machine.overrides;
        o.sockets = Some(1);
        o.cores_per_socket = Some(8);
        o.smt = Some(1);
        o.nodes_per_socket = Some(1);
        o.cores_per_llc = Some(4);
        // keys written only when not default
        e.repeats = 2;
        e.warmup = 0.1;
        e.machine.cpu_map = Some("0_0_0_0_0_10".into());
        keys.extend(link_keys_of(&encode_link(&e)));
        for w in WORKLOADS {
            for k in w.knobs {
                keys.insert(k.name.to_string());
            }
        }
        assert!(
            keys.contains("cores_per_llc") && keys.contains("clients"),
            "{keys:?}"
        );
        keys
    })
}

const NASTY: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "5",
    "8",
    "9",
    "16",
    "64",
    "100",
    "128",
    "250",
    "256",
    "300",
    "512",
    "513",
    "1000",
    "1024",
    "4096",
    "16384",
    "16385",
    "65536",
    "1000000",
    "1000001",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999",
    "-0",
    "+1",
    " 1",
    "1 ",
    "01",
    "0x10",
    "1e3",
    "1.0",
    "1.5",
    "0.5",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "infinity",
    "1e309",
    "-1e309",
    "1e-309",
    "5e-324",
    "1e300",
    "1e12",
    "0.001",
    "0.000999",
    "0.0009999999999999999",
    "60",
    "60.0",
    "60.0000001",
    "0.002",
    "0.01",
    "%",
    "%%",
    "%4",
    "%zz",
    "%E2%82",
    "%C3%A9",
    "%FF",
    "%00",
    "%2B",
    "%26",
    "%3D",
    "+",
    "&",
    "=",
    "==",
    "?",
    "#",
    "é",
    "😀",
    "\u{0}",
    "\u{FFFD}",
    "\u{10FFFF}",
    "\u{202E}",
    ",",
    ",,",
    " , ",
    "process",
    "thread",
    "Thread",
    "custom",
    "gnr-2s-snc3",
    "milan-2s",
    "oltp",
    "spin",
    "hackbench",
    "schbench",
    "skip-not-due,skip-not-due",
    " skip-not-due ",
    "skip-not-due,bogus",
    "cache-aware,cas-write-if-changed",
    "true",
    "null",
    "[]",
    "{}",
];

fn pick<'a, T>(rng: &mut SimRng, v: &'a [T]) -> &'a T {
    &v[rng.below(v.len() as u64) as usize]
}

fn rand_char(rng: &mut SimRng) -> char {
    loop {
        let c = match rng.below(10) {
            0..=3 => (0x20 + rng.below(0x5f)) as u32,
            4 => *pick(rng, &['%', '&', '=', '+', '?', '#', ',', ' ', '\n', '\0']) as u32,
            5 => rng.below(0x80) as u32,
            6 => 0x80 + rng.below(0x780) as u32,
            7 => 0x800 + rng.below(0xF800) as u32,
            8 => 0x10000 + rng.below(0x100000) as u32,
            _ => *pick(rng, &['0', '1', '9', '-', '.', 'e', 'a', 'F']) as u32,
        };
        if let Some(c) = char::from_u32(c) {
            return c;
        }
    }
}

fn rand_text(rng: &mut SimRng, max: u64) -> String {
    let n = rng.below(max + 1);
    (0..n).map(|_| rand_char(rng)).collect()
}

fn rand_number_text(rng: &mut SimRng) -> String {
    match rng.below(6) {
        0 => rng.next_u64().to_string(),
        1 => {
            let bits = rng.below(20);
            rng.below(1 << bits).to_string()
        }
        2 => format!("-{}", rng.below(1000)),
        3 => {
            let n = 1 + rng.below(45);
            (0..n)
                .map(|_| (b'0' + rng.below(10) as u8) as char)
                .collect()
        }
        4 => format!("{}", f64::from_bits(rng.next_u64())),
        _ => format!("{:e}", rng.unit() * 10f64.powi(rng.below(700) as i32 - 350)),
    }
}

fn pct_all(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

fn rand_value(rng: &mut SimRng) -> String {
    let v = match rng.below(8) {
        0..=2 => pick(rng, NASTY).to_string(),
        3 => rand_number_text(rng),
        4 => rand_text(rng, 12),
        5 => format!("{}{}", pick(rng, NASTY), pick(rng, NASTY)),
        6 => pick(rng, &all_patch_names()).to_string(),
        _ => pick(rng, PRESETS).to_string(),
    };
    match rng.below(10) {
        0 => pct_all(&v),
        1 => v.replace(' ', "+"),
        _ => v,
    }
}

fn rand_key(rng: &mut SimRng) -> String {
    let keys: Vec<&String> = known_keys().iter().collect();
    let k = match rng.below(10) {
        0..=6 => pick(rng, &keys).to_string(),
        7 => String::new(),
        8 => rand_text(rng, 6),
        _ => format!(
            "{}{}",
            pick(rng, &keys),
            pick(rng, &["%20", " ", "+", "\u{0}", "%00", "="])
        ),
    };
    if rng.below(12) == 0 { pct_all(&k) } else { k }
}

/// A random (usually valid) experiment: every preset, overrides, knobs, patches.
fn rand_experiment(rng: &mut SimRng) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = pick(rng, PRESETS).to_string();
    let o = &mut e.machine.overrides;
    let opt = |rng: &mut SimRng, lo: u64, hi: u64| -> Option<u32> {
        (rng.below(3) == 0).then(|| (lo + rng.below(hi - lo + 1)) as u32)
    };
    o.sockets = opt(rng, 1, 8);
    o.cores_per_socket = opt(rng, 1, 512);
    o.smt = opt(rng, 1, 2);
    o.nodes_per_socket = opt(rng, 1, 4);
    o.cores_per_llc = opt(rng, 1, 128);
    e.hz = *pick(rng, &[100, 250, 300, 1000]);
    let w = pick(rng, WORKLOADS);
    e.workload.name = w.name.to_string();
    for k in w.knobs {
        if rng.below(2) == 0 {
            let v = if k.kind == "enum" {
                serde_json::Value::from(*pick(rng, k.values))
            } else {
                let span = (k.max - k.min).max(1);
                let r = rng.below(span.min(300));
                let x = k.min + rng.below(1 + r);
                serde_json::Value::from(x.min(k.max))
            };
            e.workload.knobs.insert(k.name.to_string(), v);
        }
    }
    e.seconds = match rng.below(4) {
        0 => 0.001 + rng.unit() * 59.999,
        1 => *pick(rng, &[0.001, 0.01, 0.25, 1.0, 60.0]),
        _ => (1 + rng.below(1000)) as f64 / 1000.0,
    };
    e.seed = if rng.below(2) == 0 {
        rng.next_u64()
    } else {
        rng.below(100)
    };
    if rng.below(6) == 0 {
        // an imported machine: its map, sometimes mangled, and no layout overrides
        let m = small_map(rng).encode();
        e.machine.cpu_map = Some(if rng.below(2) == 0 {
            m
        } else {
            mutate_bytes(rng, &m, "0x4294967295n9_,_")
        });
        e.machine.overrides = Default::default();
    }
    let names = all_patch_names();
    for side in [&mut e.a, &mut e.b] {
        for n in &names {
            if rng.below(4) == 0 {
                side.push(n.to_string());
            }
        }
    }
    e
}

// ---- mutations -------------------------------------------------------------------------------

fn mutate_bytes(rng: &mut SimRng, s: &str, other: &str) -> String {
    let mut b = s.as_bytes().to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = b.len() as u64;
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len) as usize;
                b[i] ^= 1 << rng.below(8);
            }
            1 => b.truncate(rng.below(len + 1) as usize),
            2 => {
                let o = other.as_bytes();
                let i = rng.below(len + 1) as usize;
                let j = rng.below(o.len() as u64 + 1) as usize;
                b.truncate(i);
                b.extend_from_slice(&o[j..]);
            }
            3 => {
                let i = rng.below(len + 1) as usize;
                let ins = rand_value(rng);
                b.splice(i..i, ins.bytes());
            }
            4 if len > 0 => {
                let i = rng.below(len) as usize;
                let j = (i + 1 + rng.below(8) as usize).min(b.len());
                b.drain(i..j);
            }
            5 if len > 0 => {
                let i = rng.below(len) as usize;
                b[i] = *pick(rng, b"%&=+,.-09aeE\x00\xff\xc3");
            }
            _ if len > 0 => {
                // duplicate a chunk
                let i = rng.below(len) as usize;
                let j = (i + 1 + rng.below(16) as usize).min(b.len());
                let chunk = b[i..j].to_vec();
                let k = rng.below(b.len() as u64 + 1) as usize;
                b.splice(k..k, chunk);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Structured mutation of a link: drop / duplicate / replace pairs, replace values.
fn mutate_pairs(rng: &mut SimRng, q: &str) -> String {
    let mut pairs: Vec<String> = q.split('&').map(str::to_string).collect();
    for _ in 0..1 + rng.below(3) {
        let n = pairs.len() as u64;
        match rng.below(5) {
            0 if n > 0 => {
                pairs.remove(rng.below(n) as usize);
            }
            1 if n > 0 => {
                let p = pairs[rng.below(n) as usize].clone();
                pairs.insert(rng.below(n + 1) as usize, p);
            }
            2 if n > 0 => {
                let i = rng.below(n) as usize;
                let k = pairs[i].split('=').next().unwrap_or("").to_string();
                pairs[i] = format!("{k}={}", rand_value(rng));
            }
            3 => {
                let p = format!("{}={}", rand_key(rng), rand_value(rng));
                pairs.insert(rng.below(n + 1) as usize, p);
            }
            _ if n > 1 => {
                let i = rng.below(n) as usize;
                let j = rng.below(n) as usize;
                pairs.swap(i, j);
            }
            _ => {}
        }
    }
    pairs.join("&")
}

fn rand_link(rng: &mut SimRng) -> String {
    match rng.below(10) {
        0 => {
            let n = rng.below(64);
            let b: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            String::from_utf8_lossy(&b).into_owned()
        }
        1 => rand_text(rng, 64),
        2 | 3 => {
            let n = rng.below(10);
            let mut s = if rng.below(4) == 0 {
                "?".to_string()
            } else {
                String::new()
            };
            for i in 0..n {
                if i > 0 {
                    let sep = *pick(rng, &["&", "&", "&", "&&", "=", "&=&"]);
                    s.push_str(sep);
                }
                s.push_str(&rand_key(rng));
                if rng.below(8) != 0 {
                    s.push('=');
                    s.push_str(&rand_value(rng));
                }
            }
            s
        }
        4 => encode_link(&rand_experiment(rng)),
        5 | 6 => {
            let q = encode_link(&rand_experiment(rng));
            mutate_pairs(rng, &q)
        }
        _ => {
            let q = encode_link(&rand_experiment(rng));
            let o = encode_link(&rand_experiment(rng));
            mutate_bytes(rng, &q, &o)
        }
    }
}

// ---- target 1: links -------------------------------------------------------------------------

fn field_diff(a: &Experiment, b: &Experiment) -> Vec<&'static str> {
    let mut d = vec![];
    if a.v != b.v {
        d.push("v");
    }
    if a.machine.preset != b.machine.preset {
        d.push("machine");
    }
    if a.machine.overrides != b.machine.overrides {
        d.push("machine overrides");
    }
    if a.machine.cpu_map != b.machine.cpu_map {
        d.push("cpu_map");
    }
    if a.hz != b.hz {
        d.push("hz");
    }
    if a.workload.name != b.workload.name {
        d.push("workload");
    }
    if a.workload.knobs != b.workload.knobs {
        d.push("knobs");
    }
    if a.seconds.to_bits() != b.seconds.to_bits() {
        d.push("seconds");
    }
    if a.seed != b.seed {
        d.push("seed");
    }
    if a.a != b.a {
        d.push("a");
    }
    if a.b != b.b {
        d.push("b");
    }
    d
}

fn fields(errs: &[schedplay::error::FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.field.clone()).collect()
}

fn check_link(q: &str) -> Option<Finding> {
    guarded(|| {
        let (d, errs) = decode_link(q);
        // validate must not panic, whatever was decoded
        let v = d.validate();
        let q2 = encode_link(&d);
        let (d2, errs2) = decode_link(&q2);
        if errs.is_empty() {
            if !errs2.is_empty() {
                return finding(
                    format!("link round trip: re-decode reports {:?}", fields(&errs2)),
                    format!("re-encoded {q2:?}: {errs2:?}"),
                );
            }
            if d2 != d {
                let diff = field_diff(&d, &d2);
                let same_machine = match (d.machine_spec(), d2.machine_spec()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                };
                let kind = if diff == ["machine overrides"] {
                    if same_machine {
                        "link round trip: overrides change, same machine".to_string()
                    } else {
                        "link round trip: the machine changes".to_string()
                    }
                } else {
                    format!("link round trip: {diff:?} change")
                };
                return finding(
                    kind,
                    format!(
                        "decoded {:?}\n      re-encoded {q2:?}\n      decodes to {:?}",
                        d.machine.overrides, d2.machine.overrides
                    ) + &if diff == ["machine overrides"] {
                        String::new()
                    } else {
                        format!("\n      first {d:?}\n      second {d2:?}")
                    },
                );
            }
            let q3 = encode_link(&d2);
            if q3 != q2 {
                return finding(
                    "link round trip: encoding is not canonical",
                    format!("{q2:?} then {q3:?}"),
                );
            }
            if let Err(Invalid(ve)) = &v {
                let keys = known_keys();
                let bad: Vec<&str> = ve
                    .iter()
                    .filter(|e| !keys.contains(&e.field))
                    .map(|e| e.field.as_str())
                    .collect();
                if !bad.is_empty() {
                    return finding(
                        format!("validate after link decode names unknown fields {bad:?}"),
                        format!("{ve:?}"),
                    );
                }
                if ve.is_empty() {
                    return finding("validate: Err with no field errors", "");
                }
            }
        } else {
            // "the rest still loads": what was kept is itself a clean link, but for a patch list
            // the release refuses (an unknown name, a toggle asked off, one the kernel does not
            // take), which is kept as typed (never dropped) so that the experiment does not
            // validate: the same refusal again is no finding.
            let errs2: Vec<_> = errs2
                .into_iter()
                .filter(|e| {
                    !((e.field == "a" || e.field == "b")
                        && (e.message.starts_with("unknown patch") || errs.contains(e)))
                })
                .collect();
            if !errs2.is_empty() {
                return finding(
                    format!(
                        "partial link: kept values re-decode with errors {:?}",
                        fields(&errs2)
                    ),
                    format!("first errors {errs:?}\n      re-encoded {q2:?}: {errs2:?}"),
                );
            }
            if d2 != d && field_diff(&d, &d2) != ["machine overrides"] {
                return finding(
                    format!(
                        "partial link: kept {:?} change on re-decode",
                        field_diff(&d, &d2)
                    ),
                    format!("re-encoded {q2:?}\n      first {d:?}\n      second {d2:?}"),
                );
            }
        }
        None
    })
}

/// Greedy: drop `&`-pairs, then shorten values, while the same kind of finding reproduces.
fn minimize_link(kind: &str, q: &str) -> String {
    let same = |s: &str| check_link(s).is_some_and(|f| f.kind == kind);
    let mut pairs: Vec<String> = q.split('&').map(str::to_string).collect();
    let mut i = 0;
    while i < pairs.len() && pairs.len() > 1 {
        let mut t = pairs.clone();
        t.remove(i);
        if same(&t.join("&")) {
            pairs = t;
        } else {
            i += 1;
        }
    }
    let mut s = pairs.join("&");
    // try dropping single characters from the end of values
    let mut j = s.len();
    while j > 0 {
        j -= 1;
        if !s.is_char_boundary(j) || s.is_char_boundary(j + 1) && matches!(&s[j..j + 1], "&" | "=")
        {
            continue;
        }
        let mut t = s.clone();
        t.remove(j);
        if same(&t) {
            s = t;
            j = j.min(s.len());
        }
    }
    s
}

#[test]
fn fuzz_link_decoder() {
    let t0 = Instant::now();
    let n = 60_000 * multiplier();
    let mut rng = SimRng::new(0x5eed_0001);
    let mut found = Findings::new("link");
    // the key list itself must be complete
    for k in [
        "v", "machine", "hz", "workload", "a", "b", "seconds", "seed", "sockets", "smt",
    ] {
        assert!(
            known_keys().contains(k),
            "{k} missing from {:?}",
            known_keys()
        );
    }
    for i in 0..n {
        let q = rand_link(&mut rng);
        if let Some(f) = check_link(&q) {
            found.add(&q, f);
        }
        // every known key with a mutated value, alone
        if i % 8 == 0 {
            let k = pick(&mut rng, &known_keys().iter().cloned().collect::<Vec<_>>()).clone();
            let q = format!("{k}={}", rand_value(&mut rng));
            if let Some(f) = check_link(&q) {
                found.add(&q, f);
            }
        }
    }
    let extra = n / 8;
    eprintln!(
        "fuzz_link_decoder: {} link decodes (x2 with the round trip) in {:.1} s",
        n + extra,
        t0.elapsed().as_secs_f64()
    );
    found.finish("link decoder", minimize_link, check_link);
}

// ---- target 2: JSON scenarios ----------------------------------------------------------------

const ABSURD_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e12",
    "1000000000000",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e300",
    "-1e300",
    "1e309",
    "1e-300",
    "5e-324",
    "0.0",
    "1.5",
    "2.0",
    "65536",
    "65537",
    "4096",
    "4097",
    "513",
    "9",
    "3",
    "NaN",
    "Infinity",
    "\"1\"",
    "null",
    "true",
    "[]",
    "{}",
    "1e999999",
];

fn rand_json_value(rng: &mut SimRng, depth: u32) -> serde_json::Value {
    use serde_json::Value;
    let keys: Vec<String> = known_keys()
        .iter()
        .cloned()
        .chain(["preset", "name", "knobs", "overrides", "zzz"].map(String::from))
        .collect();
    match rng.below(if depth > 3 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => {
            let t = rand_number_text(rng);
            serde_json::from_str(&t).unwrap_or(Value::from(rng.next_u64()))
        }
        3 => Value::from(rand_value(rng)),
        4 => Value::from((rng.next_u64() as i64).wrapping_neg()),
        5 => Value::Array(
            (0..rng.below(4))
                .map(|_| rand_json_value(rng, depth + 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(6))
                .map(|_| (pick(rng, &keys).clone(), rand_json_value(rng, depth + 1)))
                .collect(),
        ),
    }
}

/// Sets `obj[outer][key]` when `obj[outer]` is an object (a mutation may have replaced or removed it).
fn set_in(
    obj: &mut serde_json::Map<String, serde_json::Value>,
    outer: &str,
    key: &str,
    v: serde_json::Value,
) {
    if let Some(serde_json::Value::Object(m)) = obj.get_mut(outer) {
        m.insert(key.to_string(), v);
    }
}

/// Mutates the value tree of a valid scenario at known places.
fn mutate_json_tree(rng: &mut SimRng, e: &Experiment) -> String {
    use serde_json::Value;
    let mut v = serde_json::to_value(e).unwrap();
    for _ in 0..1 + rng.below(3) {
        let absurd = || -> Value { Value::Null };
        let _ = absurd;
        let num: Value = {
            let t = *pick(rng, ABSURD_NUMBERS);
            serde_json::from_str(t).unwrap_or(Value::from(t))
        };
        let new = match rng.below(4) {
            0 => rand_json_value(rng, 2),
            _ => num,
        };
        let obj = v.as_object_mut().unwrap();
        match rng.below(9) {
            0 | 1 => {
                let k = *pick(
                    rng,
                    &[
                        "sockets",
                        "cores_per_socket",
                        "smt",
                        "nodes_per_socket",
                        "cores_per_llc",
                        "preset",
                    ],
                );
                set_in(obj, "machine", k, new);
            }
            2 => {
                let k = *pick(rng, &["v", "hz", "seconds", "seed"]);
                obj.insert(k.to_string(), new);
            }
            3 => {
                let w = pick(rng, WORKLOADS);
                let k = if rng.below(5) == 0 {
                    rand_key(rng)
                } else {
                    pick(rng, w.knobs).name.to_string()
                };
                set_in(obj, "workload", &k, new);
            }
            4 => {
                let k = *pick(rng, &["a", "b"]);
                obj.insert(
                    k.into(),
                    if rng.below(2) == 0 {
                        new
                    } else {
                        Value::Array(
                            (0..rng.below(4))
                                .map(|_| Value::from(rand_value(rng)))
                                .collect(),
                        )
                    },
                );
            }
            5 => {
                let k = *pick(
                    rng,
                    &[
                        "v", "machine", "hz", "workload", "seconds", "seed", "a", "b",
                    ],
                );
                obj.remove(k);
            }
            6 => {
                obj.insert(rand_key(rng), new);
            }
            7 => {
                set_in(obj, "workload", "name", Value::from(rand_value(rng)));
            }
            _ => {
                let k = rand_key(rng);
                set_in(obj, "machine", &k, new);
            }
        }
    }
    serde_json::to_string(&v).unwrap()
}

/// Replaces one number token of the text with an absurd one.
fn mutate_json_number(rng: &mut SimRng, s: &str) -> String {
    let b = s.as_bytes();
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| {
            (b[i].is_ascii_digit() || b[i] == b'-') && (i == 0 || b":[,".contains(&b[i - 1]))
        })
        .collect();
    if starts.is_empty() {
        return s.to_string();
    }
    let i = *pick(rng, &starts);
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_digit() || b".eE+-".contains(&b[j])) {
        j += 1;
    }
    format!("{}{}{}", &s[..i], pick(rng, ABSURD_NUMBERS), &s[j..])
}

fn rand_json(rng: &mut SimRng) -> String {
    let base = || Experiment::default();
    match rng.below(10) {
        0 => rand_json_value(rng, 0).to_string(),
        1 => rand_text(rng, 40),
        2 | 3 => {
            let e = if rng.below(3) == 0 {
                base()
            } else {
                rand_experiment(rng)
            };
            mutate_json_tree(rng, &e)
        }
        4 | 5 => {
            let e = if rng.below(3) == 0 {
                base()
            } else {
                rand_experiment(rng)
            };
            let s = serde_json::to_string(&e).unwrap();
            let mut t = mutate_json_number(rng, &s);
            if rng.below(2) == 0 {
                t = mutate_json_number(rng, &t);
            }
            t
        }
        6 => serde_json::to_string(&rand_experiment(rng)).unwrap(),
        _ => {
            let s = serde_json::to_string(&rand_experiment(rng)).unwrap();
            let o = serde_json::to_string(&base()).unwrap();
            mutate_bytes(rng, &s, &o)
        }
    }
}

fn cpus_of(e: &Experiment) -> Option<u64> {
    let s = e.machine_spec().ok()?;
    Some(s.nr_cpus())
}

/// `simulate`: also run the scenario (replay of simulation findings) when it is small.
fn check_json_with(s: &str, simulate: bool) -> Option<Finding> {
    guarded(|| {
        let Ok(e) = serde_json::from_str::<Experiment>(s) else {
            return None;
        };
        let ((v, ra, rb), max_req, total) = watched("json", s, || {
            let v = e.validate();
            // Building a valid large machine costs ~10 ms: construct every invalid scenario,
            // every small valid one, and one in 16 of the others (by input hash; all on replay).
            let construct = v.is_err()
                || simulate
                || cpus_of(&e).is_some_and(|c| c <= 128)
                || fnv(s).is_multiple_of(16);
            if !construct {
                return (v, Ok(()), Ok(()));
            }
            let ra = Run::new(&e, Side::A).map(|_| ());
            let rb = Run::new(&e, Side::B).map(|_| ());
            (v, ra, rb)
        });
        if max_req > ALLOC_FINDING_BYTES {
            return finding(
                "construction allocates an absurd block",
                format!("largest single allocation {max_req} bytes (total {total})"),
            );
        }
        for (side, r) in [("A", &ra), ("B", &rb)] {
            if let Err(Invalid(errs)) = r
                && errs.is_empty()
            {
                return finding(format!("Run::new({side}) Err with no field errors"), "");
            }
        }
        match &v {
            Ok(()) => {
                if let Err(err) = ra.as_ref().and(rb.as_ref()) {
                    return finding("valid scenario refused by Run::new", format!("{err}"));
                }
                // the scenario survives a JSON round trip unchanged
                let back: Result<Experiment, _> =
                    serde_json::from_str(&serde_json::to_string(&e).unwrap());
                match back {
                    Ok(b) if b == e => {}
                    Ok(b) => {
                        return finding(
                            format!("JSON round trip: {:?} change", field_diff(&e, &b)),
                            format!("{e:?}\n      became {b:?}"),
                        );
                    }
                    Err(err) => return finding("JSON round trip: re-parse fails", err.to_string()),
                }
                if simulate && e.seconds <= 0.05 && cpus_of(&e).is_some_and(|c| c <= 256) {
                    for side in [Side::A, Side::B] {
                        if let Some(f) = sim_checks(&e, side) {
                            return Some(f);
                        }
                    }
                }
            }
            Err(Invalid(errs)) => {
                if errs.is_empty() {
                    return finding("validate: Err with no field errors", "");
                }
                if ra.is_ok() && rb.is_ok() {
                    return finding(
                        "invalid scenario accepted by Run::new on both sides",
                        format!("{errs:?}"),
                    );
                }
                let keys = known_keys();
                let bad: Vec<&str> = errs
                    .iter()
                    .filter(|x| {
                        !keys.contains(&x.field) && !e.workload.knobs.contains_key(&x.field)
                    })
                    .map(|x| x.field.as_str())
                    .collect();
                if !bad.is_empty() {
                    return finding(
                        format!("validate names unknown fields {bad:?}"),
                        format!("{errs:?}"),
                    );
                }
            }
        }
        None
    })
}

fn check_json(s: &str) -> Option<Finding> {
    check_json_with(s, false)
}

#[test]
fn fuzz_json_decoder() {
    let t0 = Instant::now();
    let n = 12_000 * multiplier();
    let mut rng = SimRng::new(0x5eed_0002);
    let mut found = Findings::new("json");
    let mut parsed = 0u64;
    let mut valid = 0u64;
    for _ in 0..n {
        let s = rand_json(&mut rng);
        if let Ok(e) = serde_json::from_str::<Experiment>(&s) {
            parsed += 1;
            valid += e.validate().is_ok() as u64;
        }
        if let Some(f) = check_json(&s) {
            found.add(&s, f);
        }
    }
    eprintln!(
        "fuzz_json_decoder: {n} JSON inputs ({parsed} parsed as a scenario, {valid} valid) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    found.finish("JSON decoder", |_, s| s.to_string(), check_json);
}

// ---- target 3: short simulations -------------------------------------------------------------

fn rand_valid_small(rng: &mut SimRng) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = pick(
        rng,
        &[
            "custom",
            "custom",
            "custom",
            "milan-2s",
            "genoa-2s",
            "gnr-2s-snc3",
            "spr-2s-snc4",
            "gnr-2s",
        ],
    )
    .to_string();
    let o = &mut e.machine.overrides;
    let sockets = 1 + rng.below(2) as u32;
    let cps = 2 + rng.below(23) as u32;
    o.sockets = Some(sockets);
    o.cores_per_socket = Some(cps);
    o.smt = Some(1 + rng.below(2) as u32);
    let max_nodes = (cps / 2).clamp(1, 3);
    o.nodes_per_socket = Some(1 + rng.below(max_nodes as u64) as u32);
    o.cores_per_llc = (rng.below(2) == 0).then(|| 1 + rng.below(cps as u64) as u32);
    e.hz = *pick(rng, &[100, 250, 1000]);
    let w = pick(rng, WORKLOADS);
    e.workload.name = w.name.to_string();
    let k = &mut e.workload.knobs;
    let mut set = |name: &str, v: u64| {
        k.insert(name.to_string(), serde_json::Value::from(v));
    };
    match w.name {
        "oltp" => {
            if rng.below(4) != 0 {
                set("clients", 1 + rng.below(200));
            }
        }
        "hackbench" => {
            let g = 1 + rng.below(10);
            let f = 1 + rng.below((100 / g).clamp(1, 20));
            set("groups", g);
            set("fds", f);
            if rng.below(2) == 0 {
                set("loops", 1 + rng.below(200));
            }
            if rng.below(2) == 0 {
                k.insert(
                    "mode".into(),
                    serde_json::Value::from(*pick(rng, &["process", "thread"])),
                );
            }
        }
        "hammerdb" => {
            if rng.below(4) != 0 {
                set("virtual_users", 1 + rng.below(200));
            }
        }
        "serve" => {
            set("threads", 1 + rng.below(16));
            set("connections", 1 + rng.below(64));
            set("rate", 1000 + rng.below(400_000));
            if rng.below(2) == 0 {
                set("set_pct", rng.below(101));
            }
        }
        "schbench" => {
            let m = 1 + rng.below(8);
            set("message_threads", m);
            if rng.below(3) != 0 {
                set("workers", 1 + rng.below((200 / m - 1).max(1)));
            }
        }
        _ => {
            if rng.below(4) != 0 {
                set("threads", 1 + rng.below(200));
            }
        }
    }
    // the toggles the experiment's release takes: a scenario the
    // generator means to be valid must not ask for one its kernel refuses
    let kernel = schedplay::kernels::info(&e.kernel).expect("the default kernel is known");
    let names: Vec<&str> = all_patch_names()
        .into_iter()
        .filter(|n| schedplay::kernels::resolve(kernel, "a", &[*n]).is_ok())
        .collect();
    for side in [&mut e.a, &mut e.b] {
        for n in &names {
            if rng.below(3) == 0 {
                side.push(n.to_string());
            }
        }
    }
    e.seconds = 0.002 + rng.unit() * 0.008;
    e.seed = rng.next_u64();
    e
}

/// Runs one side in random slices (drawn from the scenario's seed), checking every slice.
fn sim_checks(e: &Experiment, side: Side) -> Option<Finding> {
    let mut run = match Run::new(e, side) {
        Ok(r) => r,
        Err(err) => return finding("valid scenario refused by Run::new", err.to_string()),
    };
    let mut slices = SimRng::new(e.seed ^ 0x51ce);
    let mut n = 0u64;
    loop {
        let cap = if slices.below(4) == 0 { 50 } else { 5000 };
        let done = run.step(1 + slices.below(cap));
        n += 1;
        if let Err(msg) = run.engine().check_invariants() {
            return finding(
                "sim: invariant broken",
                format!("slice {n}, t={}: {msg}", run.engine().now),
            );
        }
        run.flush();
        let eng = run.engine();
        for c in 0..eng.topo.nr_cpus() {
            let charged = eng.cpu_time_ns(c);
            let want = eng.now + eng.overshoot_ns(c);
            if charged != want {
                return finding(
                    "sim: CPU time not conserved",
                    format!(
                        "slice {n}, CPU {c}: charged {charged} ns, now {} + overshoot {}",
                        eng.now,
                        eng.overshoot_ns(c)
                    ),
                );
            }
        }
        if done {
            break;
        }
        if n > 1_000_000 {
            return finding("sim: does not finish", format!("t={}", eng.now));
        }
    }
    let r = run.report();
    if !r.profile.is_empty() {
        let total: f64 = r.profile.iter().map(|p| p.percent).sum();
        if (total - 100.0).abs() > 1e-6 {
            return finding("report: profile does not sum to 100", format!("{total}"));
        }
    }
    for l in &r.cachelines {
        if l.hitm_local + l.hitm_remote > l.loads + l.atomics {
            return finding(
                "report: more HITMs than loads+atomics",
                format!(
                    "{}: hitm {}+{} > loads {} + atomics {}",
                    l.name, l.hitm_local, l.hitm_remote, l.loads, l.atomics
                ),
            );
        }
    }
    for (what, x) in [
        ("throughput_per_sec", r.throughput_per_sec),
        ("utilization", r.utilization),
        ("idle_pct", r.idle_pct),
        ("contention_pct", r.contention_pct),
        ("events_avg", r.events_avg),
        ("events_stddev", r.events_stddev),
    ] {
        if !x.is_finite() {
            return finding(format!("report: {what} is not finite"), format!("{x}"));
        }
    }
    None
}

#[test]
fn fuzz_short_simulations() {
    let t0 = Instant::now();
    let n = 1_500 * multiplier();
    let mut rng = SimRng::new(0x5eed_0003);
    let mut found = Findings::new("json");
    let mut events = 0u64;
    for _ in 0..n {
        let e = rand_valid_small(&mut rng);
        let side = if rng.below(2) == 0 { Side::A } else { Side::B };
        let input = serde_json::to_string(&e).unwrap();
        if let Some(f) = guarded(|| sim_checks(&e, side)) {
            found.add(&input, f);
        }
        events += (e.seconds * 1e3) as u64;
    }
    eprintln!(
        "fuzz_short_simulations: {n} simulations ({events} simulated ms) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    found.finish(
        "short simulations",
        |_, s| s.to_string(),
        |s| check_json_with(s, true),
    );
}

// ---- regression corpus -----------------------------------------------------------------------

#[test]
fn replay_corpus() {
    let mut failures = vec![];
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("tests/fuzz_corpus exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read_to_string(&p).unwrap();
        let f = if name.starts_with("link-") {
            check_link(&input)
        } else if name.starts_with("machine-") {
            check_machine_file(&input)
        } else if name.starts_with("json-") {
            check_json_with(&input, true)
        } else {
            continue;
        };
        n += 1;
        if let Some(f) = f {
            failures.push(format!(
                "{name}: {}\n    input: {input:?}\n    what: {}",
                f.kind, f.detail
            ));
        }
    }
    assert!(n > 0, "empty corpus");
    assert!(
        failures.is_empty(),
        "{} of {n} corpus inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- target 4: machine files -----------------------------------------------------------------

/// A small custom machine (up to 2 sockets x 16 cores x SMT2, 1-2 nodes per socket).
fn small_topology(rng: &mut SimRng) -> Topology {
    let o = LayoutOverrides {
        sockets: Some(1 + rng.below(2) as u32),
        cores_per_socket: Some(4 + rng.below(13) as u32),
        smt: Some(1 + rng.below(2) as u32),
        nodes_per_socket: Some(1 + rng.below(2) as u32),
        cores_per_cluster: Some(1 + rng.below(2) as u32 * 3),
        ..Default::default()
    };
    let names: [&str; 3] = ["custom", "milan-2s", "srf-2s"];
    let name = names[rng.below(3) as usize];
    let spec = preset(name)
        .unwrap()
        .with_overrides(&o)
        .or_else(|_| {
            preset("custom")
                .unwrap()
                .with_overrides(&LayoutOverrides::default())
        })
        .unwrap();
    Topology::new(spec).unwrap()
}

fn small_map(rng: &mut SimRng) -> CpuMap {
    CpuMap::of(&small_topology(rng))
}

/// The text of a small machine in one of the shapes users paste.
fn machine_text(rng: &mut SimRng) -> String {
    let t = small_topology(rng);
    // sometimes with a plain lscpu summary before it (its vendor narrows the closest preset)
    // and the arches without presets, whose own tables and LLC rules then apply
    let summary = match rng.below(10) {
        0 => "Architecture:  x86_64\nVendor ID:  GenuineIntel\nModel name:  Xeon\n",
        1 => "Vendor ID: AuthenticAMD\nNUMA node(s): 2\n",
        2 => "Architecture: aarch64\nVendor ID: HiSilicon\n",
        3 => "Architecture: ppc64le\nModel name: POWER10 (architected)\n",
        4 => "Architecture: riscv64\nVendor ID: 0x489\n",
        5 => "Architecture: loongarch64\nModel name: Loongson-3C5000\n",
        6 => "Architecture: s390x\nVendor ID: IBM/S390\n",
        7 => "Architecture: sparc64\n",
        _ => "",
    };
    let mut s = summary.to_string();
    s += &match rng.below(5) {
        0 => print::lscpu(&t),
        3 => vm_or_uneven_lscpu(rng, &t),
        1 => print::lscpu(&t)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect(),
        _ => {
            // lscpu -e, sometimes with offline CPUs between (the others keep their numbers)
            let mut s = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n".to_string();
            let gap = rng.below(3) == 0;
            for c in &t.cpus {
                let no = if gap { c.cpu * 2 } else { c.cpu };
                s += &format!(
                    "{:>3} {:>4} {:>6} {:>4} {}:{}:{}:{} yes\n",
                    no, c.node, c.socket, c.core, c.core, c.core, c.cluster, c.llc
                );
                if gap {
                    s += &format!("{:>3}    -      -    - -       no\n", no + 1);
                }
            }
            s
        }
    };
    // sometimes the sysfs topology lists (arm64's clusters), alone in place of lscpu's rows
    if rng.below(4) == 0 {
        let mut sys = String::new();
        for c in &t.cpus {
            let list = |cpus: &[u32]| {
                cpus.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let cpu = c.cpu;
            sys += &format!(
                "/sys/devices/system/cpu/cpu{cpu}/topology/cluster_cpus_list:{}\n/sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list:{}\n/sys/devices/system/cpu/cpu{cpu}/topology/package_cpus_list:{}\n",
                list(t.cluster_siblings(cpu as usize)),
                list(
                    &t.smt_siblings(cpu as usize)
                        .map(|x| x as u32)
                        .collect::<Vec<_>>()
                ),
                t.cpulist(&{
                    let mut p = schedplay::machine::cpuset::CpuSet::new(t.nr_cpus());
                    t.cpus
                        .iter()
                        .filter(|o| o.socket == c.socket)
                        .for_each(|o| p.set(o.cpu as usize));
                    p
                }),
            );
        }
        if rng.below(2) == 0 {
            s = summary.to_string() + &sys + &t.numactl();
        } else {
            s += &sys;
        }
    }
    match rng.below(5) {
        0 => s += &t.numactl(),
        3 => s += &print::numactl(&t),
        // no distances: the kernel's defaults (10 local, 20 remote)
        4 => {}
        1 => {
            for (n, row) in t.slit.iter().enumerate() {
                let r: Vec<String> = row.iter().map(u32::to_string).collect();
                s += &format!(
                    "/sys/devices/system/node/node{n}/distance:{}\n",
                    r.join(" ")
                );
            }
        }
        _ => {
            s += "\n";
            for row in &t.slit {
                let r: Vec<String> = row.iter().map(u32::to_string).collect();
                s += &format!("{}\n", r.join(" "));
            }
        }
    }
    s
}

/// `lscpu -p` of `t` as odd dumps show it: offline CPUs (rows of fewer, empty fields or without
/// topology), CPUs with fewer cache ids than the header, split L2 columns, or a VM's sockets
/// (each core its own socket, or one LLC id over every CPU).
fn vm_or_uneven_lscpu(rng: &mut SimRng, t: &Topology) -> String {
    let split = rng.below(3) == 0;
    let mut s = if split {
        "# CPU,Core,Socket,Node,,L1d,L1i,L2d,L2i,L3\n".to_string()
    } else {
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n".to_string()
    };
    let socket_per_core = rng.below(3) == 0;
    let one_llc = rng.below(3) == 0;
    let gap = rng.below(2) == 0;
    for c in &t.cpus {
        let no = if gap { c.cpu * 2 } else { c.cpu };
        let socket = if socket_per_core { c.core } else { c.socket };
        let l3 = if one_llc { 0 } else { c.llc };
        let l2 = if split {
            format!("{},{}", c.cluster, c.cluster)
        } else {
            c.cluster.to_string()
        };
        match rng.below(8) {
            // no L3 id on this CPU (asymmetric caches): an empty field
            0 => {
                s += &format!(
                    "{no},{},{socket},{},,{},{},{l2},\n",
                    c.core, c.node, c.core, c.core
                )
            }
            _ => {
                s += &format!(
                    "{no},{},{socket},{},,{},{},{l2},{l3}\n",
                    c.core, c.node, c.core, c.core
                )
            }
        }
        if gap {
            // an offline CPU: its number and empty fields, fewer or as many as the header's
            s += &match rng.below(3) {
                0 => format!("{},,,,,\n", no + 1),
                1 => format!("{},,,{},,,,,\n", no + 1, c.node),
                _ => format!("{},,,,,,,,\n", no + 1),
            };
        }
    }
    s
}

const NASTY_FIELDS: &[&str] = &[
    "no",
    "yes",
    "L2d:L2i",
    "",
    "-",
    "x",
    "-1",
    "0",
    "1",
    "3",
    "9",
    "10",
    "255",
    "256",
    "1023",
    "1024",
    "4095",
    "4096",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "0:0",
    "0:0:0:0:0",
    ":",
    ",",
    " ",
    "#",
    "node",
    "cpus:",
    "distance:",
    "1e3",
    "\u{feff}",
    "é",
];

fn mutate_machine_text(rng: &mut SimRng, text: &str, other: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let others: Vec<&str> = other.lines().collect();
    for _ in 0..1 + rng.below(4) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len() as u64) as usize;
        match rng.below(8) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.below(lines.len() as u64) as usize;
                lines.swap(i, j);
            }
            3 if !others.is_empty() => {
                lines[i] = pick(rng, &others).to_string();
            }
            4 => lines.truncate(i),
            _ => {
                // replace one field (between separators) by a nasty value
                let l = &lines[i];
                let cuts: Vec<usize> = l
                    .char_indices()
                    .filter(|(_, c)| matches!(c, ',' | ':' | ' '))
                    .map(|(k, _)| k)
                    .collect();
                let at = if cuts.is_empty() {
                    0
                } else {
                    *pick(rng, &cuts) + 1
                };
                let end = l[at..].find([',', ':', ' ']).map_or(l.len(), |k| at + k);
                lines[i] = format!("{}{}{}", &l[..at], pick(rng, NASTY_FIELDS), &l[end..]);
            }
        }
    }
    lines.join("\n")
}

fn check_machine_file(text: &str) -> Option<Finding> {
    guarded(|| {
        let (r, max_alloc, _) = watched("machine", text, || cpu_map::parse(text));
        if max_alloc > ALLOC_FINDING_BYTES {
            return finding(
                "machine file: large allocation",
                format!("{max_alloc} bytes"),
            );
        }
        let nlines = text.lines().count();
        match r {
            Err(errs) => {
                if errs.is_empty() {
                    return finding("machine file: Err without errors", "");
                }
                for e in &errs {
                    if e.line == 0 || e.line > nlines + 1 || e.col == 0 || e.message.is_empty() {
                        return finding(
                            "machine file: error without a line:column in the input",
                            e.to_string(),
                        );
                    }
                    let len = text.lines().nth(e.line - 1).map_or(0, str::len);
                    if e.col > len + 1 {
                        return finding(
                            "machine file: column past the end of its line",
                            e.to_string(),
                        );
                    }
                }
                None
            }
            Ok(p) => {
                if !p.map.check(&|_| (0, 0), &|_| (0, 0)).is_empty() {
                    return finding(
                        "machine file: parsed map fails its check",
                        format!("{:?}", p.map.check(&|_| (0, 0), &|_| (0, 0))),
                    );
                }
                let enc = p.map.encode();
                match CpuMap::decode(&enc) {
                    Ok(m) if m == p.map => {}
                    other => {
                        return finding(
                            "machine file: map does not round-trip",
                            format!("{enc:?}: {other:?}"),
                        );
                    }
                }
                let mut e = Experiment::default();
                e.machine.preset = p.map.closest_preset(p.vendor).to_string();
                e.machine.cpu_map = Some(enc);
                let t = match e.machine_spec().and_then(Topology::new) {
                    Ok(t) => t,
                    Err(err) => {
                        return finding("machine file: parsed machine refused", err.to_string());
                    }
                };
                if t.nr_cpus() <= 128 {
                    let d = SchedDomains::build(&t, true);
                    for cpu in 0..t.nr_cpus() {
                        let _ = d.dmesg(cpu);
                        if let Some(x) = d.of(cpu).find(|x| !x.groups[0].span.contains(cpu)) {
                            return finding(
                                "machine file: local group without its CPU",
                                format!("CPU {cpu} {}", x.name),
                            );
                        }
                    }
                }
                None
            }
        }
    })
}

#[test]
fn fuzz_machine_file_parser() {
    let t0 = Instant::now();
    let n = 3_000 * multiplier();
    let mut rng = SimRng::new(0x5eed_0004);
    let mut found = Findings::new("machine");
    let mut parsed = 0;
    // the corpus's machine seeds (dumps of the kernel's defaults and fallbacks: offline rows,
    // uneven caches, VMs, RISC-V / LoongArch / s390 / SPARC) are mutated too
    let mut seeds: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("tests/fuzz_corpus exists")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("machine-seed-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no machine seeds in the corpus");
    for i in 0..n {
        let base = machine_text(&mut rng);
        let text = match i % 5 {
            0 => base,
            4 => rand_text(&mut rng, 200),
            3 => {
                let seed = pick(&mut rng, &seeds).clone();
                mutate_machine_text(&mut rng, &seed, &base)
            }
            _ => {
                let other = machine_text(&mut rng);
                mutate_machine_text(&mut rng, &base, &other)
            }
        };
        if cpu_map::parse(&text).is_ok() {
            parsed += 1;
        }
        if let Some(f) = check_machine_file(&text) {
            found.add(&text, f);
        }
    }
    // every preset's own text parses back to its map
    for name in PRESETS {
        let t = Topology::new(preset(name).unwrap()).unwrap();
        let text = print::lscpu(&t) + &print::numactl(&t);
        assert_eq!(
            cpu_map::parse(&text).map(|p| p.map).ok(),
            Some(CpuMap::of(&t)),
            "{name}"
        );
    }
    eprintln!(
        "fuzz_machine_file_parser: {n} machine files ({parsed} parsed) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    found.finish(
        "machine file parser",
        |_, s| s.to_string(),
        check_machine_file,
    );
}
