//! The scenario's serde structs: what a scenario file may say.

use super::defaults::*;
use crate::plan::{
    Cc, ErrorModelKind, FlowKind, LinuxProfile, OutageDistribution, PeriodDistribution, Profile,
    RedMode, Selection, TopologyKind, TraceKind, Variant, WhenFull,
};
use crate::time::{Bytes, Duration, Freq, Rate, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Master seed; every random component derives its own stream from it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time.
    pub duration: Duration,
    /// Metrics count only what happens in (warmup, duration].
    #[serde(default)]
    pub warmup: Duration,
    pub topology: Topology,
    /// Flow groups keyed by a label; flows are numbered in key order.
    pub flows: BTreeMap<String, FlowGroup>,
    #[serde(default)]
    pub measure: Measure,
    #[serde(default)]
    pub trace: TraceSpec,
    /// Options of the real-Linux engine (`--engine linux`); the simulators
    /// ignore them (they configure the kernel, not the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux: Option<LinuxSpec>,
}

/// How the `linux` engine configures the kernel's TCP (sysctls of the
/// sender namespace, options of its route, the socket's congestion control).
/// Unset fields keep the profile's value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinuxSpec {
    /// Moved: the flow group's `profile` ("linux" for the kernel's
    /// defaults). Kept only to say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<LinuxProfile>,
    /// Moved: the flow group's `cc`. Kept only to say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Moved: the flow group's `cc`. Kept only to say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_cc: Option<BTreeMap<String, String>>,
    /// net.ipv4.tcp_sack
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// RACK loss detection (net.ipv4.tcp_recovery bit 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<bool>,
    /// Tail loss probes (net.ipv4.tcp_early_retrans 3 vs 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp: Option<bool>,
    /// F-RTO (net.ipv4.tcp_frto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frto: Option<bool>,
    /// TCP timestamps (net.ipv4.tcp_timestamps; 12 bytes of every packet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Initial window, packets (route initcwnd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
    /// Minimum RTO (route rto_min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// Receiver acks every segment at once (route quickack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<bool>,
    /// TCP_INFO sampling interval when trace.interval is 0 (default
    /// `LINUX_SAMPLE_INTERVAL`, 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Duration>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[serde(default)]
    pub kind: TopologyKind,
    /// Dumbbell: the shared link R1 → R2 (and its reverse, R2 → R1, for acks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<LinkSpec>,
    /// Dumbbell and parking lot: default for every source → first router link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkSpec>,
    /// Dumbbell and parking lot: default for every last router → sink link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink_access: Option<LinkSpec>,
    /// Path and parking lot: the chain of links, in the data's direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSpec>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    /// FIFO, drop arrivals when `buffer` packets already wait.
    #[default]
    DropTail,
    /// Random Early Detection with ns-2 2.35's semantics (`queue/red.cc`);
    /// parameters in the link's `red` table.
    Red,
    /// Paper C's threshold dropper (Sec. V.D): one connection signalled per
    /// congestion event; parameters in the link's `threshold` table.
    Threshold,
}

/// Named RED settings; explicit keys of the table override them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RedPreset {
    /// Paper C, Sec. V.A: thresholds 0.6 and 0.8 of the buffer, max_p 0.1 at
    /// the maximum threshold, queue weight 0.001, `wait` on. The paper is
    /// silent on the rest, so ns-2 2.35's defaults: gentle on; packet mode
    /// (ns-2's default byte mode would shrink the buffer, docs/ns2.md).
    PaperC,
}

/// `[<link>.red]`: RED's parameters (ns-2 names in brackets). Unset keys
/// come from `preset`, else from ns-2 2.35's defaults, filled in by
/// [`Scenario::resolve`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<RedPreset>,
    /// Minimum threshold of the average queue, packets (`thresh_`; ns-2's
    /// automatic default max(5, targetdelay 5 ms × packet rate / 2)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_thresh: Option<f64>,
    /// Maximum threshold, packets (`maxthresh_`; default 3 × min_thresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_thresh: Option<f64>,
    /// Drop probability at max_thresh (`linterm_` = 1 / max_p; default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// EWMA weight of the average queue (`q_weight_`; ns-2's automatic
    /// default 1 − exp(−1 / (10 · RTT · packet rate)), RTT = max(0.1 s,
    /// 3 · (delay + one packet time))).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Uniformize inter-drop gaps with waiting (`wait_`; default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Drop probability rises from max_p to 1 between max_thresh and twice
    /// it, instead of jumping to 1 (`gentle_`; default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// "packet" (default) or "byte" (`bytes_`, `queue_in_bytes_`). In byte
    /// mode the hard limit is buffer × mean_packet_size bytes, as in ns-2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RedMode>,
    /// Bytes (`mean_pktsize_` 500): the unit of byte mode, and the packet
    /// time by which an idle period decays the average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_packet_size: Option<u32>,
    /// Mark instead of dropping: an early drop of an ECN-capable packet
    /// sets its CE codepoint and admits it (ns-2's `setbit_`, RFC 3168);
    /// a full buffer still drops. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Draw RED's random numbers as ns-2's default generator does after
    /// `$defaultRNG seed K` (L'Ecuyer's MRG32k3a), 1 ≤ K ≤ 2^31 − 2; the
    /// ns-2 export reseeds ns-2's generator with K at time 0, so the two
    /// simulators drop the same packets. Default: a stream of the scenario
    /// seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
}

/// `[<link>.threshold]`: paper C's threshold dropper. The link's `buffer` is
/// the hard limit (make it large); an arrival that finds `threshold` packets
/// waiting outside an immunity period starts a congestion event: one
/// connection is selected (by `selection`) and the next of its packets to
/// arrive above the threshold is dropped; then nothing is dropped by the
/// threshold for `immunity` (τ) after the event's start.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThresholdSpec {
    /// Th, packets waiting.
    pub threshold: u32,
    /// τ: how long after a congestion event nothing more is dropped (paper:
    /// a factor of the mean RTT).
    pub immunity: Duration,
    #[serde(default)]
    pub selection: Selection,
    /// Relative selection weights by flow group (rate-independent only;
    /// groups not named weigh 1): paper C's biased rate-independent policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias: Option<BTreeMap<String, f64>>,
}

/// An asymmetric link's reverse direction: what differs from the forward one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReverseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<u32>,
}

/// When a group's flows start: one time for all (`start = "1s"`), or one
/// per flow, in flow order (`start = ["0s", "0.5s", "1s"]`, `count` items).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a start time such as \"1s\", or a list of one per flow such as [\"0s\", \"0.5s\"]"
)]
pub enum Starts {
    One(Duration),
    Each(Vec<Duration>),
}

impl Default for Starts {
    fn default() -> Self {
        Starts::One(Duration(0))
    }
}

impl Starts {
    /// Flow `j`'s start (0-based within its group; validated in range).
    pub fn of(&self, j: u32) -> SimTime {
        match self {
            Starts::One(t) => t.0,
            Starts::Each(v) => v[j as usize].0,
        }
    }

    /// The latest start of the group's flows.
    pub fn latest(&self) -> SimTime {
        match self {
            Starts::One(t) => t.0,
            Starts::Each(v) => v.iter().map(|t| t.0).max().unwrap_or(0),
        }
    }

    /// The earliest start of the group's flows.
    pub fn earliest(&self) -> SimTime {
        match self {
            Starts::One(t) => t.0,
            Starts::Each(v) => v.iter().map(|t| t.0).min().unwrap_or(0),
        }
    }
}

/// A parking lot's bottlenecks a group's flows cross: one `[first, last]`
/// for all, or one pair per flow, in flow order (`[[0, 0], [1, 1], [2, 2]]`:
/// flow j crosses links[j] alone, the cross flows of a parking lot).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected [first, last] bottleneck indices, or a list of one such pair per flow such as [[0, 0], [1, 1]]"
)]
pub enum Hops {
    All([u32; 2]),
    Each(Vec<[u32; 2]>),
}

impl Hops {
    /// Flow `j`'s [first, last] (0-based within its group; validated in range).
    pub fn of(&self, j: u32) -> [u32; 2] {
        match self {
            Hops::All(h) => *h,
            Hops::Each(v) => v[j as usize],
        }
    }

    /// Every pair given.
    pub fn pairs(&self) -> &[[u32; 2]] {
        match self {
            Hops::All(h) => std::slice::from_ref(h),
            Hops::Each(v) => v,
        }
    }
}

/// A duplex link: both directions get the same rate, delay and buffer (as
/// ns-2's `duplex-link`) unless `reverse` gives the reverse direction its
/// own (an asymmetric link, as two ns-2 `simplex-link`s).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: Rate,
    pub delay: Duration,
    /// Packets that may WAIT; the one in transmission is not counted (the
    /// ns-2 export writes `queue-limit buffer+1`).
    pub buffer: u32,
    #[serde(default)]
    pub queue: QueueKind,
    /// RED's parameters (only with queue = "red").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<RedSpec>,
    /// The threshold dropper's parameters (only with queue = "threshold").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<ThresholdSpec>,
    /// Packet errors on the link's forward direction (away from the sources;
    /// acks on the reverse direction are unaffected, as ns-2's `lossmodel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorSpec>,
    /// Times the link is down, both directions (handoffs, paper B4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outages: Option<OutageSpec>,
    /// The reverse direction's own rate, delay and buffer (toward the
    /// sources: acks on a dumbbell; unset keys are the forward direction's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseSpec>,
}

/// Random packet errors. A lost packet is decided as it arrives at the link
/// and never enters the buffer (ns-2's `$ns lossmodel` puts the ErrorModel
/// at the link's head, before the queue). Which keys apply depends on
/// `model`: `per` for "bernoulli"; `p_gb`, `p_bg`, `per_good` (default 0)
/// and `per_bad` (default 1) for "gilbert-elliott"; `packets` (strictly
/// increasing arrival numbers) for "list".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    pub model: ErrorModelKind,
    /// Packet error rate, in [0, 1] (bernoulli).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<f64>,
    /// P(good → bad) per packet (gilbert-elliott).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_gb: Option<f64>,
    /// P(bad → good) per packet (gilbert-elliott); bursts last 1/p_bg packets on average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_bg: Option<f64>,
    /// Loss probability in the good state (gilbert-elliott, default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_good: Option<f64>,
    /// Loss probability in the bad state (gilbert-elliott, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_bad: Option<f64>,
    /// Arrival numbers to lose, strictly increasing, from 0 (list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<Vec<u64>>,
}

/// When a link is down. Either periodic (`start`, `every`) or an explicit
/// list (`at`); each outage lasts `duration` (fixed, or exponential with that
/// mean). Overlapping outages merge into one. While down, both directions of
/// the link lose every packet that arrives, and every packet still on the
/// link (waiting, in transmission or propagating) when an outage begins is
/// lost too — as ns-2's dynamic links (`rtmodel-at`) do.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    /// First outage of a periodic schedule (default: `every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    /// Period of a periodic schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Duration>,
    /// Explicit outage start times, increasing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Vec<Duration>>,
    /// Length (or mean length) of each outage.
    pub duration: Duration,
    #[serde(default)]
    pub distribution: OutageDistribution,
}

/// Per-group changes to the default access links.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outages: Option<OutageSpec>,
}

/// A rate over time for a UDP source: a constant (`rate = "0.5Mbps"`) or a
/// shape table (`rate = { shape = "sine", mean = "0.5Mbps", amplitude =
/// "0.5Mbps", frequency = "0.4Hz" }`). Every shape is clipped at 0 and paced
/// exactly (see `traffic::shape`).
#[derive(Debug, Clone, PartialEq)]
pub enum RateShape {
    Constant(Rate),
    Shaped(ShapeSpec),
}

/// Which shape a `rate = { shape = ... }` table describes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShapeKind {
    /// r(t) = mean + amplitude·sin(2πf·t + phase), clipped at 0 (paper A: mean = amplitude = C/2).
    Sine,
    /// r(t) = offset + Σ aᵢ·sin(2πfᵢ·t + φᵢ), clipped at 0 (paper A, Fig. 3:
    /// C1 sin 2πf1t + C2 sin 2πf2t + C2).
    Sines,
    /// Piecewise-linear through `points` [[time, rate], ...] (trace-driven
    /// background); `repeat = true` repeats the table with period = last time.
    Piecewise,
    /// `rate` during on periods, silent during off periods; period lengths
    /// drawn from `on` and `off` (exponential, pareto or fixed).
    OnOff,
}

/// `on = { distribution = "pareto", mean = "1s", alpha = 1.5 }`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodSpec {
    pub distribution: PeriodDistribution,
    pub mean: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
}

/// One sine component of a `sines` shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SineComponent {
    pub amplitude: Rate,
    pub frequency: Freq,
    /// Radians at t = 0 (simulation time, not the flow's start).
    #[serde(default)]
    pub phase: f64,
}

/// The table form of a rate. Which keys apply depends on `shape`; the others
/// are rejected by [`Scenario::resolve`] with their key path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeSpec {
    pub shape: ShapeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplitude: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<Freq>,
    /// Radians at t = 0 of the simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<SineComponent>>,
    /// Piecewise: [[time, rate], ...], times from t = 0 of the simulation,
    /// nondecreasing (two equal times make a step), the first at 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<(Duration, Rate)>>,
    /// Piecewise: repeat the table with period = its last time (default:
    /// hold the last rate after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<bool>,
    /// Piecewise: a CSV file (columns t_s, rate_bps). Read by tcplab's
    /// scenario loader into `points`; the engine never sees a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// On/off: the rate during on periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<PeriodSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<PeriodSpec>,
}

impl Serialize for RateShape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RateShape::Constant(r) => r.serialize(s),
            RateShape::Shaped(t) => t.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RateShape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RateShape;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a rate such as \"0.5Mbps\" or a shape table such as { shape = \"sine\", mean = \"0.5Mbps\", amplitude = \"0.5Mbps\", frequency = \"0.4Hz\" }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateShape, E> {
                Rate::deserialize(de::value::StrDeserializer::<E>::new(v)).map(RateShape::Constant)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RateShape, E> {
                Rate::deserialize(de::value::F64Deserializer::<E>::new(v)).map(RateShape::Constant)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RateShape, E> {
                self.visit_f64(v as f64)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RateShape, E> {
                self.visit_f64(v as f64)
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<RateShape, A::Error> {
                ShapeSpec::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(RateShape::Shaped)
            }
        }
        d.deserialize_any(V)
    }
}

/// A group of identical flows. TCP options are flat on the group (so that
/// `--set flows.tcp.variant=newreno` works) and are filled with ns-2 defaults
/// by [`Scenario::resolve`]; they are rejected on UDP groups.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    pub kind: FlowKind,
    #[serde(default = "one")]
    pub count: u32,
    /// Bytes on the wire, headers included (a TCP packet carries
    /// `packet_size - header_size` bytes of payload).
    #[serde(default = "default_packet_size")]
    pub packet_size: u32,
    /// One start for every flow, or a list of one per flow (`Starts`).
    #[serde(default)]
    pub start: Starts,
    /// Each flow starts at `start + U[0, start_jitter]`.
    #[serde(default)]
    pub start_jitter: Duration,
    /// Defaults to the end of the run (unless `leaves` stops the flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Flows join over time: `initial` start at `start`, the rest as the
    /// number of active flows grows by `factor` at `at`, `at + every`, …
    /// (paper B5: "N doubles every 5 s after 15 s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joins: Option<JoinSpec>,
    /// Flows leave over time: the number of active flows shrinks by `factor`
    /// at `at`, `at + every`, …, highest index first (paper B6: "half the
    /// flows leave every 5 s after 15 s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<LeaveSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkOverride>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink_access: Option<LinkOverride>,
    /// The group's data travel the topology backwards (sink side → source
    /// side) and its acks forwards, sharing queues with the other flows'
    /// acks and data (ack compression).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reverse: bool,
    /// Parking lot: the first and last bottleneck (indices into
    /// `topology.links`) the group's flows cross; all of them by default.
    /// A list of pairs gives each flow its own (`Hops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<Hops>,

    // --- UDP ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateShape>,
    /// Each packet leaves U[0, send_jitter] after its time by the shape (a
    /// random sending overhead, as ns-2's `overhead_`; breaks the phase lock
    /// of constant sources). Packets keep their order: one never leaves
    /// before the one ahead of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_jitter: Option<Duration>,

    // --- TCP application (default: an infinite backlog, ns-2 FTP) ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppSpec>,

    // --- TCP (None until resolved; rejected for UDP) ---
    /// Congestion control: "reno" (unset: TCP(α, β), Reno's by default),
    /// "cubic" or "bbr" (paced; `crate::tcp::cc`). Every engine reads it: the `linux` engine
    /// sets the kernel's congestion control by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<Cc>,
    /// Loss recovery: "tahoe", "reno" (unset), "newreno", "sack" ("sack"
    /// under the `linux` profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// Whose defaults the keys below start from: "ns2-2.35" (unset),
    /// "ns2-2001" or "linux" (`crate::tcp::profiles`); a key set here always wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Additive increase, packets per RTT (ns-2 `increase_num_` 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Multiplicative decrease factor (ns-2 `decrease_num_` 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Receiver's advertised window, packets (ns-2 `window_` is 20; tcplab's
    /// default is large so flows are greedy, as the papers intend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// Upper bound on cwnd, packets; 0 = none (ns-2 `maxcwnd_` 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cwnd: Option<u32>,
    /// Initial window, packets (ns-2 `windowInit_` 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
    /// Initial ssthresh, packets; 0 = the advertised window (ns-2 `reset()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<u32>,
    /// RTO before the first RTT sample (ns-2 `rtxcur_init_` 3 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// (ns-2 `minrto_` 0.2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// (ns-2 `maxrto_` 60 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<Duration>,
    /// RTT clock granularity (ns-2 `tcpTick_` 0.01 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<Duration>,
    /// Place the clock ticks as ns-2 does after `$defaultRNG seed K`: flow j
    /// of the group (from 0) gets ns-2's `boot_time_` for seed K + j
    /// (`tcp::rtt::ns2_boot_time_s`); the ns-2 export reseeds and resets each
    /// agent the same way. Unset: an offset drawn from the scenario seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_seed: Option<u32>,
    /// Duplicate acks that trigger fast retransmit (ns-2 `numdupacks_` 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dupack_threshold: Option<u32>,
    /// Send a new packet on each of the first dupacks (RFC 3042; ns-2 `singledup_` 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// One fast retransmit per window: no new reduction until everything sent
    /// before the last one is acked (ns-2 `bugFix_` true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bug_fix: Option<bool>,
    /// The first packet is a 40-byte SYN (ns-2 `syn_` true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn: Option<bool>,
    /// TCP/IP header bytes (ns-2 `tcpip_base_hdr_size_` 40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_size: Option<u32>,
    /// Receiver acks every other packet, or after `delack_interval` (ns-2 DelAck sink).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    /// (ns-2 `Agent/TCPSink/DelAck interval_` 100 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delack_interval: Option<Duration>,
    /// ECN-capable (RFC 3168): data packets carry ECT, the receiver echoes
    /// a CE mark on its ack, and the sender reduces its window once per
    /// window of data instead of losing a packet (ns-2's `ecn_`). Default
    /// false; `cc = "dctcp"` needs it (and turns it on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
}

/// A join schedule: active flows n₀ = `initial`, then at `at + k·every`
/// (k = 0, 1, …) n ← min(count, ⌈n·factor⌉); flow j starts at the first step
/// with n > j (plus its start jitter).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JoinSpec {
    pub initial: u32,
    pub at: Duration,
    pub every: Duration,
    /// Growth per step, > 1 (2 doubles).
    pub factor: f64,
}

/// A leave schedule: active flows n₀ = count, then at `at + k·every`
/// n ← max(min, ⌊n·factor⌋); flow j stops at the first step with n ≤ j.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LeaveSpec {
    pub at: Duration,
    pub every: Duration,
    /// Fraction that stays per step, in (0, 1) (0.5 halves).
    pub factor: f64,
    /// Flows that never leave (default 1).
    #[serde(default = "one")]
    pub min: u32,
}

/// Which application drives a TCP flow.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Constant bit rate (ns-2 Application/Traffic/CBR over a TCP agent),
    /// with a playback reader at the receiver (paper B7).
    Cbr,
}

/// `app = { kind = "cbr", rate = "1Mbps", send_buffer = 64, read = "125KB",
/// interval = "1s" }`: the application writes one packet's payload every
/// payload·8/rate seconds into the TCP send buffer; the receiver keeps what
/// arrives in order in a playback buffer and reads up to `read` bytes every
/// `interval` (from the flow's start).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub kind: AppKind,
    /// Application data rate (payload, headers not counted).
    pub rate: Rate,
    /// Packets of unacknowledged + unsent data the sender holds; absent =
    /// unlimited (ns-2's TCP agent has no send buffer limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<u32>,
    /// Default "block" (filled in by resolve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_full: Option<WhenFull>,
    /// Bytes the playback reader takes per interval, at most (paper B7: 125KB).
    pub read: Bytes,
    /// How often the reader reads (paper B7: 1 s).
    pub interval: Duration,
}

/// Reference against which throughput is normalized.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// "capacity" (bottleneck rate), "free" (bottleneck rate minus the mean
    /// UDP rate), or a rate such as "0.5Mbps".
    #[serde(default = "default_reference")]
    pub reference: String,
}

impl Default for Measure {
    fn default() -> Self {
        Measure {
            reference: default_reference(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    #[serde(default)]
    pub series: Vec<TraceKind>,
    /// 0 records every change; otherwise one sample per interval.
    #[serde(default)]
    pub interval: Duration,
}
