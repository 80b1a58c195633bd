//! oltp_read_write's transaction as sysbench issues it (oltp_common.lua, oltp_read_write.lua:
//! BEGIN, 10 point selects, the four range queries of 100 rows, an index and a non-index update, a
//! delete, an insert of the same id, COMMIT), each statement with its mean mysqld CPU (docs/MODEL.md
//! §18: derivation and plausible ranges).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stmt {
    Begin,
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    Commit,
}

impl Stmt {
    /// Mean mysqld CPU of the statement (parse of a prepared statement's execute, InnoDB work,
    /// the result set), ns [A: anchored on a point select's 40 µs round trip and the 108 µs mean
    /// statement of a one-client run, docs/MODEL.md §18].
    pub fn cpu_ns(self) -> u64 {
        match self {
            Stmt::Begin => 5_000,
            Stmt::PointSelect => 15_000,
            Stmt::SimpleRange => 35_000,
            Stmt::SumRange => 30_000,
            Stmt::OrderRange => 50_000,
            Stmt::DistinctRange => 60_000,
            Stmt::IndexUpdate => 50_000,
            Stmt::NonIndexUpdate => 40_000,
            Stmt::Delete => 40_000,
            Stmt::Insert => 50_000,
            // the commit's own CPU; its wait for the log flush is InnoDB's log threads
            Stmt::Commit => 25_000,
        }
    }
}

use Stmt::*;

/// The statements of one transaction, in the order sysbench sends them.
pub const TXN: [Stmt; 20] = [
    Begin,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    Commit,
];
