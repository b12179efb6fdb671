//! TCP's defaults, each named once, each with its origin: "ns-2" means ns-2
//! 2.35's `tcl/lib/ns-default.tcl`; "tcplab" marks a choice of this project
//! (and why). The ns-2 2.35 profile is these values (`profiles.rs`); the
//! scenario's resolver reads them through `scenario::defaults`.

use crate::plan::Variant;
use crate::time::SimTime;

const MS: SimTime = 1_000_000;
const S: SimTime = 1_000_000_000;

/// tcplab: Reno, the papers' baseline (ns-2's plain `Agent/TCP` is Tahoe).
pub const VARIANT: Variant = Variant::Reno;
/// Additive increase, packets per RTT: ns-2 `Agent/TCP increase_num_ 1.0`.
pub const ALPHA: f64 = 1.0;
/// Multiplicative decrease: ns-2 `Agent/TCP decrease_num_ 0.5`.
pub const BETA: f64 = 0.5;
/// Advertised window when the scenario gives none: tcplab, large enough that
/// a greedy flow is never receiver-limited (ns-2's own `window_ 20` would cap
/// the papers' flows; the ns-2 export always writes the value explicitly).
pub const DEFAULT_WINDOW: u32 = 100_000;
/// No cap on cwnd: ns-2 `Agent/TCP maxcwnd_ 0`.
pub const MAX_CWND: u32 = 0;
/// ns-2 `Agent/TCP windowInit_ 2`.
pub const INITIAL_CWND: u32 = 2;
/// 0 = the advertised window: ns-2 `TcpAgent::reset()` (tcp.cc) sets
/// `ssthresh_ = int(wnd_)`.
pub const INITIAL_SSTHRESH: u32 = 0;
/// RTO before the first RTT sample: ns-2 `Agent/TCP rtxcur_init_ 3.0`.
pub const INITIAL_RTO_NS: SimTime = 3 * S;
/// ns-2 `Agent/TCP minrto_ 0.2`.
pub const MIN_RTO_NS: SimTime = 200 * MS;
/// ns-2 `Agent/TCP maxrto_ 60`.
pub const MAX_RTO_NS: SimTime = 60 * S;
/// RTT clock granularity: ns-2 `Agent/TCP tcpTick_ 0.01`.
pub const TICK_NS: SimTime = 10 * MS;
/// ns-2 `Agent/TCP numdupacks_ 3`.
pub const DUPACK_THRESHOLD: u32 = 3;
/// RFC 3042 limited transmit: ns-2 `Agent/TCP singledup_ 1`.
pub const LIMITED_TRANSMIT: bool = true;
/// ns-2 `Agent/TCP bugFix_ true`.
pub const BUG_FIX: bool = true;
/// The first packet is a 40-byte SYN: ns-2 `Agent/TCP syn_ true`.
pub const SYN: bool = true;
/// TCP/IP header bytes: ns-2 `Agent/TCP tcpip_base_hdr_size_ 40`.
pub const HEADER_SIZE: u32 = 40;
/// tcplab: the papers' receivers ack every packet (ns-2 `Agent/TCPSink`).
pub const DELAYED_ACK: bool = false;
/// ns-2 `Agent/TCPSink/DelAck interval_ 100ms`.
pub const DELACK_INTERVAL_NS: SimTime = 100 * MS;
