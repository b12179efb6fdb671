//! tcplab-aimd: the hybrid AIMD model of paper C (Altman, Barman, Tuffin, Vojnović,
//! "Parallel TCP sockets: simple model, throughput and validation", Infocom 2006).
//!
//! N connections increase their rates linearly (ηᵢ); the link is congested when
//! Σxᵢ = c (zero buffer, Baccelli–Hong); a loss policy picks which connections are
//! cut by βᵢ (eqs. 2–4). Between congestion events everything is linear, so
//! [`simulate`] jumps from event to event and integrates the paths exactly.
//! Pure Rust; knows nothing of Python.

pub mod beatdown;
pub mod policy;
pub mod rng;
pub mod sim;
pub mod stats;
pub mod theory;

pub use policy::{Policy, Tag};
pub use sim::{simulate, Config, FlowStats, Output, Trace};

/// Model version; part of every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
