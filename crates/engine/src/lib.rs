//! tcplab-engine: a packet-level discrete-event simulator of TCP flows and UDP
//! background traffic over a dumbbell. Pure Rust; knows nothing of Python.

/// Engine version; part of every result and of the sweep cache key.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
