//! The seed stories, one click away in the page: the claim each reproduces, what to look at, and
//! the report it comes from.

use crate::experiment::scenario::Experiment;
use serde::Serialize;

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
}

pub fn stories() -> Vec<Story> {
    let mut gnr = Experiment::default();
    gnr.machine.preset = "gnr-2s-96c-snc3".into();
    gnr.seconds = 0.3;
    gnr.b = vec!["skip-not-due".into()];
    // the reporter's class of machine (the mail came from a host named "hygon", "256 cores")
    let mut hygon = Experiment::default();
    hygon.machine.preset = "hygon-2s".into();
    hygon.seconds = 0.3;
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
        },
    ]
}
