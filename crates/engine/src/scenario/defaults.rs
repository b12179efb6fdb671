//! Every default of the scenario schema, each named once, each with its
//! origin. "ns-2" means ns-2 2.35's `tcl/lib/ns-default.tcl` unless another
//! file is named; "tcplab" marks a choice of this project (and why).
//!
//! The resolver ([`super::Scenario::resolve`], [`super::Plan`]) and the serde
//! attributes of [`super::schema`] read these and nothing else.

use crate::plan::RedMode;

// --- scenario ---

/// Master seed: tcplab (any fixed value makes runs reproducible).
pub const SEED: u64 = 1;
/// Flows in a group, and flows that never leave a `leaves` schedule: tcplab.
pub const COUNT: u32 = 1;
/// Bytes on the wire per packet, headers included: ns-2 `Agent/TCP
/// packetSize_ 1000` (the same for `Agent/UDP` in tcplab).
pub const PACKET_SIZE: u32 = 1000;
/// What throughput is normalized by: tcplab, the bottleneck's rate.
pub const REFERENCE: &str = "capacity";

pub(crate) fn default_seed() -> u64 {
    SEED
}
pub(crate) fn one() -> u32 {
    COUNT
}
pub(crate) fn default_packet_size() -> u32 {
    PACKET_SIZE
}
pub(crate) fn default_reference() -> String {
    REFERENCE.into()
}

// --- TCP (the flat options of a flow group) ---

/// The TCP defaults are the TCP layer's own (`tcp/defaults.rs`, each with its
/// origin); the profiles start from them.
pub use crate::tcp::defaults::*;

// --- RED (ns-2 `Queue/RED`, semantics of queue/red.cc) ---

/// Bytes of a mean packet: ns-2 `Queue/RED mean_pktsize_ 500`.
pub const RED_MEAN_PACKET_SIZE: u32 = 500;
/// tcplab: packets. ns-2's default (`Queue/RED bytes_ true`,
/// `queue_in_bytes_ true`) counts the buffer in mean-size packets of bytes,
/// which shrinks a buffer of full-size packets.
pub const RED_MODE: RedMode = RedMode::Packet;
/// Drop probability at max_thresh: ns-2 `Queue/RED linterm_ 10` (max_p = 1/10).
pub const RED_MAX_P: f64 = 0.1;
/// ns-2 `Queue/RED wait_ true`.
pub const RED_WAIT: bool = true;
/// ns-2 `Queue/RED gentle_ true`.
pub const RED_GENTLE: bool = true;
/// ns-2 `Queue/RED setbit_ false`: RED drops, it does not mark.
pub const RED_ECN: bool = false;
/// ns-2 `Queue/RED targetdelay_ 0.005` (s): the automatic min_thresh is
/// max(RED_MIN_THRESH_FLOOR, targetdelay × packet rate / 2) (red.cc `reset()`).
pub const RED_TARGET_DELAY_S: f64 = 0.005;
/// The floor of the automatic min_thresh, packets (red.cc `reset()`).
pub const RED_MIN_THRESH_FLOOR: f64 = 5.0;
/// max_thresh = 3 × min_thresh when unset (red.cc `reset()`).
pub const RED_MAX_OVER_MIN: f64 = 3.0;
/// The automatic queue weight assumes an RTT of at least this, s (red.cc
/// `reset()`: rtt = max(0.1, 3 · (delay + one packet time))).
pub const RED_MIN_RTT_S: f64 = 0.1;
/// Paper C (Sec. V.A) preset: thresholds 0.6 and 0.8 of the buffer, max_p
/// 0.1, queue weight 0.001.
pub const PAPER_C_MIN_OF_BUFFER: f64 = 0.6;
pub const PAPER_C_MAX_OF_BUFFER: f64 = 0.8;
pub const PAPER_C_MAX_P: f64 = 0.1;
pub const PAPER_C_WEIGHT: f64 = 0.001;

// --- impairments ---

/// Gilbert–Elliott loss probability in the good state: tcplab (the good
/// state loses nothing unless told).
pub const GE_PER_GOOD: f64 = 0.0;
/// Gilbert–Elliott loss probability in the bad state: tcplab (the bad state
/// loses everything unless told: the classic Gilbert channel).
pub const GE_PER_BAD: f64 = 1.0;

// --- the linux engine ---

/// TCP_INFO sampling interval of the linux engine when `trace.interval` is 0
/// and `[linux].sample_interval` unset, ns: tcplab (10 ms resolves a window's
/// sawtooth at the papers' RTTs without a sample stream that costs the
/// sender's real-time core).
pub const LINUX_SAMPLE_INTERVAL: crate::time::SimTime = 10_000_000;
