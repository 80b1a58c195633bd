//! The seed stories, one click away in the page: the claim each reproduces, what to look at, and
//! the report it comes from.

use crate::experiment::scenario::Experiment;
use serde::Serialize;

/// OLTP as benchmark teams drive it: sysbench on another host, over the network card
/// (`client=remote`), 3 connections per CPU (`clients` = 1152 on 384 CPUs: docs/MODEL.md §18,
/// the assumption and its range). The seed-000 story and validation's rows run it.
pub const OLTP_REMOTE_000: &[(&str, &str)] = &[("client", "remote"), ("clients", "1152")];

/// A seed story: the claim it reproduces, what to look at, and the report it comes from.
#[derive(Clone, Debug, Serialize)]
pub struct Story {
    pub name: &'static str,
    pub title: &'static str,
    pub claim: &'static str,
    pub look_at: &'static str,
    pub source: &'static str,
    /// The reported figures, and the profile symbol the model's figure is read from.
    pub reported: &'static str,
    pub symbol: &'static str,
    /// The side whose details (profile, c2c table, CPUs) `look_at` is about: "a" or "b".
    pub details_side: &'static str,
    /// The rows of `validation::ROWS` this story's figures are (model against reported).
    pub rows: &'static [&'static str],
    pub experiment: Experiment,
    /// The load curve behind the story (`experiment::curve`): the knob, its values and the
    /// value the story's experiment runs (where the report sits on it).
    pub curve: Option<StoryCurve>,
}

/// A story's load curve.
#[derive(Clone, Debug, Serialize)]
pub struct StoryCurve {
    pub knob: &'static str,
    pub values: Vec<u64>,
    pub reported: u64,
    /// Where on the curve the report sits, in words.
    #[serde(rename = "where")]
    pub where_: &'static str,
}

/// The seed stories: the two seeds on the release they were measured on (6.18), then the seed-000
/// machine, 6.18 against 6.19.
pub fn stories() -> Vec<Story> {
    let mut gnr = Experiment::default();
    gnr.machine.preset = "gnr-2s-96c-snc3".into();
    // OLTP as benchmark teams drive it: sysbench on another host, every statement a packet on
    // the network card (validation's rows run the same knobs)
    for (k, v) in OLTP_REMOTE_000 {
        let v = v
            .parse::<u64>()
            .map_or_else(|_| serde_json::Value::from(*v), serde_json::Value::from);
        gnr.workload.knobs.insert(k.to_string(), v);
    }
    // steady state: the warm-up `auto` gives a run of this length (the widest NUMA level's
    // first interval, capped at half the run), so the figures are not the start-up storm
    gnr.seconds = 0.6;
    gnr.warmup = 0.3;
    gnr.b = vec!["skip-not-due".into()];
    // the seeds stay on the release they were measured on
    gnr.kernel = "6.18".into();
    // the same machine and load, 6.18 against the release that merged the fix (3324b2180c17,
    // 522fb20fbdbe): each side as released, no toggle
    let mut gnr619 = gnr.clone();
    gnr619.b = vec![];
    gnr619.kernel_b = Some("6.19".into());
    // the reporter's class of machine (the mail came from a host named "hygon", "256 cores")
    let mut hygon = Experiment {
        kernel: "6.18".into(),
        ..Default::default()
    };
    hygon.machine.preset = "hygon-2s".into();
    hygon.seconds = 0.6;
    hygon.warmup = 0.256; // `auto`: the widest NUMA level's first interval on 256 CPUs
    hygon.a = vec!["cache-aware".into()];
    hygon.b = vec!["cache-aware".into(), "cas-skip-many-threads".into()];
    vec![
        Story {
            name: "sched-balance-running",
            title: "sched_balance_running on 2S GNR SNC3",
            claim: "an OLTP load spent 7.8% of all cycles in sched_balance_domains() contending on the global sched_balance_running flag; checking the balance interval first removed it: +8% throughput (A: v6.18, B: skip-not-due)",
            look_at: "sched_balance_domains in A's profile and the sched_balance_running line in the c2c table; B's throughput change",
            source: "LKML 2025-10-28, Re: [PATCH v2] sched/fair: Skip sched_balance_running cmpxchg when balance is not due (Tim Chen; unmerged: mainline took the serialize-after-swb form, 3324b2180c17)",
            reported: "7.8% of cycles in sched_balance_domains before, gone after; +8% throughput",
            symbol: "sched_balance_domains",
            details_side: "a",
            rows: &["000-share-a", "000-share-b", "000-gain"],
            experiment: gnr,
            curve: Some(StoryCurve {
                knob: "clients",
                values: vec![768, 1152, 1536, 2304],
                reported: 1152,
                where_: "the storm's size follows how often CPUs go idle: at 2 and 3 connections per CPU the server is 70-86% busy and its CPUs go idle thousands of times a second, so nearly every tick finds a balance due; from 6 per CPU it is saturated, seldom idle, and the storm all but vanishes. The report sits where network-driven OLTP runs (about 84% busy in a published HammerDB run): 3 per CPU",
            }),
        },
        Story {
            name: "cache-aware-false-sharing",
            title: "cache-aware false sharing on a 2S Hygon",
            claim: "cache-aware scheduling made mysql+sysbench about 10% slower on 256 cores: mm->nr_running_avg shared a line with mm->mm_sched_cpu, rewritten to -1 on every tick (A: cache-aware, B: with patch 25/28)",
            look_at: "account_mm_sched and exceed_llc_nr in B's profile, HITM on mm_struct(mysqld) in the c2c table, B's throughput change",
            source: "LKML 2025-09, Re: [RFC PATCH v4 25/28] sched: Skip cache aware scheduling if the process has many active threads (Tingyin Duan's report, Chen Yu's analysis)",
            reported: "about 10% slower with patch 25/28; exceed_llc_nr high in perf top",
            symbol: "account_mm_sched",
            details_side: "b",
            rows: &["002-regression"],
            experiment: hygon,
            curve: Some(StoryCurve {
                knob: "clients",
                values: vec![128, 256, 512, 1024],
                reported: 512,
                where_: "25/28's check fires once about 16 of mysqld's threads run in the scanned LLCs, so every point of this curve trips it; the cost is the storm of mm_struct writes on a saturated box (sysbench on the box, at its throughput peak, 2 per CPU), and turns into idle time below saturation",
            }),
        },
        Story {
            name: "sched-balance-running-6.19",
            title: "the same GNR SNC3 box: 6.18 against 6.19",
            claim: "v6.19 merged the fix in the form PeterZ asked for: the sched_balance_running cmpxchg only after should_we_balance (3324b2180c17), newidle serialized too (522fb20fbdbe), and the SNC-3 domain fix (4d6dd05d07d0); it also reverted the 3/2 newidle-cost bump (d206fbad9328) and made newidle balance proportional to its success (33cf66d88306). A: 6.18 as released; B: 6.19 as released, on the same box and load",
            look_at: "sched_balance_domains in both profiles and the sched_balance_running line in the c2c table (A has the storm, B should not); newidle_balance_calls in the counters; B's throughput change is everything 6.19 changed together",
            source: "tip sched/core for v6.19 (tip-bot2 mails, Oct-Nov 2025); the seed measurement itself was on 6.18 (first story)",
            reported: "no published figure for 6.19 on this box: the model's own comparison with the first story",
            symbol: "sched_balance_domains",
            details_side: "a",
            rows: &[],
            experiment: gnr619,
            curve: None,
        },
    ]
}

/// The story called `name`, or an error naming the stories there are.
pub fn find(name: &str) -> Result<Story, crate::error::FieldError> {
    let all = stories();
    let names: Vec<&str> = all.iter().map(|s| s.name).collect();
    let list = names.join(", ");
    all.into_iter().find(|s| s.name == name).ok_or_else(|| {
        crate::error::FieldError::new("story", format!("{name:?} is not a story: {list}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_stay_on_6_18_and_the_third_story_is_the_seed_000_box_6_18_against_6_19() {
        let s = stories();
        assert_eq!(s.len(), 3);
        assert_eq!(
            (
                s[0].experiment.kernel.as_str(),
                s[1].experiment.kernel.as_str()
            ),
            ("6.18", "6.18")
        );
        let (a, b) = (&s[0].experiment, &s[2].experiment);
        assert_eq!(
            (b.kernel.as_str(), b.kernel_b.as_deref()),
            ("6.18", Some("6.19"))
        );
        assert!(b.a.is_empty() && b.b.is_empty(), "each release as released");
        assert_eq!(
            (&b.machine, &b.workload, b.seconds, b.seed),
            (&a.machine, &a.workload, a.seconds, a.seed)
        );
        for st in &s {
            st.experiment.validate().unwrap();
        }
    }
}
