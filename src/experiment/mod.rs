//! The experiment drivers: what to run and how often. `scenario` (the versioned scenario JSON,
//! its validation into a `RunSpec`, the stories) and the share-link codec (`link`, with `b64url` for a file it carries and `sha256` naming an object it does not), `repeat` (seeds, means
//! and intervals), `steady` (the warm-up), `sweep` and `grid` (many points, sharded), `validation`
//! (the model against published figures), `stats` (the statistics they share), `bench` (the
//! simulator's own speed) and `machine_summary` (the machine an experiment builds). It uses the
//! engine through `run` (a side of an experiment on the engine) and the layers below; the report layer renders
//! what it returns.

pub mod b64url;
pub mod curve;
pub mod grid;
pub mod link;
pub mod machine_summary;
pub mod maxload;
pub mod precomputed;
pub mod repeat;
pub mod run;
pub mod scenario;
pub mod sensitivity;
pub mod sha256;
pub mod steady;
pub mod stories;
pub mod sweep;
pub mod traced;
pub mod validation;
