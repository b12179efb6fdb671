//! tcplab-engine: a packet-level discrete-event simulator of TCP flows and UDP
//! background traffic on any topology of links (dumbbell, path, parking lot, two-way). Pure Rust; knows nothing of Python.
//!
//! Entry point: [`run::run_json`] (or [`scenario::Scenario`] → [`plan::Plan`]
//! → [`sim::Sim`]). The layers and the data flow: docs/ARCHITECTURE.md
//! (`tests/layers.rs` checks that no module imports a layer above its own).

pub mod budget;
pub mod net;
pub mod plan;
pub mod record;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod traffic;

/// Engine version; part of every result and of the sweep cache key.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
