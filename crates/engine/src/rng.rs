//! Deterministic random streams: the shared generator (`tcplab-rng`), plus the
//! component ids the engine derives its streams from.

pub use tcplab_rng::Rng;

/// Well-known component ids, combined with an index (flow, link) to name a stream.
pub mod stream {
    pub const FLOW_START: u64 = 1;
    pub const LINK_ERRORS: u64 = 2;
    pub const LINK_OUTAGES: u64 = 3;
    pub const UDP_SOURCE: u64 = 4;
    pub const QUEUE: u64 = 5;
}
