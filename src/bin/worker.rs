//! The wasm engine for the page's Web Worker. Trunk builds this binary with `data-type="worker"`;
//! the exports come from `schedplay::wasm` (re-exported so the linker keeps them).

#[cfg(target_arch = "wasm32")]
pub use schedplay::wasm::*;

fn main() {}
