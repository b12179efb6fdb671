//! The Plan: what a run will do, resolved, in plain SI numbers (bit/s,
//! bytes, packets) and integer nanoseconds — and every type it is made of.
//!
//! This module is a leaf: it knows `time` and nothing of the scenario file.
//! The layers below the simulator (`net`, `tcp`, `traffic`, `record`) take
//! their parameters from these types; `scenario` resolves a scenario file
//! into a Plan (`Plan::from_scenario`, in `scenario/plan.rs`: defaults filled
//! in, the topology laid out, every random schedule fixed before the run
//! drawn, every derived parameter computed); `sim` builds its network from a
//! Plan and nothing else; exporters (ns-2, Linux) and Python (`_core.plan`)
//! read the same Plan, so every engine starts the same flows at the same
//! instants.
//!
//! What the Plan does not fix is what happens during the run: packet losses
//! drawn per arrival (error models, RED's coin), on/off periods and UDP send
//! jitter (drawn as the source sends), and everything TCP does.

use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything a run does, resolved. Serializes to JSON (`_core.plan`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// Master seed; every random stream derives from it and an index (a
    /// link id, a flow id), see `rng::stream`.
    pub seed: u64,
    /// Which builder laid out `links` and the routes (`scenario/topology/`).
    pub topology: TopologyKind,
    /// The run ends at this instant, ns (the scenario's `duration`).
    pub end_ns: SimTime,
    /// Results count what happens in the measurement window
    /// (warmup_ns, end_ns], ns; 0 = from the start.
    pub warmup_ns: SimTime,
    /// Rate that throughput is normalized by, bit/s (`measure.reference`:
    /// the bottleneck's rate, that minus the mean UDP rate over the window
    /// ("free"), or a given rate).
    pub reference_bps: f64,
    /// Every link direction; a link's id is its index.
    pub links: Vec<LinkPlan>,
    /// Every flow; a flow's id is its index. Flows are numbered group by
    /// group in the order of the groups' names, then within a group.
    pub flows: Vec<FlowPlan>,
    /// What the recorder traces.
    pub trace: TracePlan,
    /// How the `linux` engine sets up the kernel (`[linux]` with every
    /// option resolved); the simulators do not read it.
    pub linux: LinuxPlan,
}

/// One direction of a link: a FIFO buffer in front of a serializer of
/// `rate_bps`, then `delay_ns` of propagation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkPlan {
    pub id: u32,
    /// A label for people and result tables, shared by both directions:
    /// "bottleneck", "access[3]" (flow 3's), "link[1]". Programs read
    /// `role`, `flow` and `hop`, never this.
    pub name: String,
    /// What the link is in its topology.
    pub role: LinkRole,
    /// The flow whose own link this is (`access`, `sink_access`), else None.
    pub flow: Option<u32>,
    /// The link's place in the chain, `topology.links[hop]` (`chain`), else None.
    pub hop: Option<u32>,
    /// The scenario key whose spec the link runs with: "topology.bottleneck",
    /// "topology.links[1]", "topology.access", or "flows.<group>.access"
    /// where the flow's group overrides it (errors name it).
    pub key: String,
    pub direction: Direction,
    /// Id of the duplex link's forward direction (the reverse is
    /// `duplex + 1`); its outage schedule is drawn once, from this stream.
    pub duplex: u32,
    /// Serialization rate, bit/s.
    pub rate_bps: f64,
    /// Propagation delay, ns.
    pub delay_ns: SimTime,
    /// Packets that may wait (the one in transmission not counted; ns-2's
    /// `queue-limit` is buffer_pkts + 1).
    pub buffer_pkts: u32,
    /// Which arrivals the buffer admits.
    pub queue: QueuePlan,
    /// Packet errors decided as a packet arrives (forward direction only).
    pub errors: Option<ErrorPlan>,
    /// When the link is down, [start_ns, end_ns) merged and increasing:
    /// every outage that starts before the run ends, then the first one
    /// that starts at or after the end (a packet that arrives before the
    /// end is lost if it would still be on the link when that one begins).
    /// Both directions have the same list.
    pub outages: Vec<(SimTime, SimTime)>,
}

/// What a link is in its topology (`LinkPlan::role`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LinkRole {
    /// The dumbbell's shared link R1 → R2 (`topology.bottleneck`).
    Bottleneck,
    /// A flow's own link from its source to the first router
    /// (`topology.access`, or the group's `access` override).
    Access,
    /// A flow's own link from the last router to its receiver
    /// (`topology.sink_access`, or the group's override).
    SinkAccess,
    /// A link of a path's or parking lot's chain, `topology.links[hop]`.
    Chain,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Away from the sources: data packets.
    Forward,
    /// Towards the sources: acks.
    Reverse,
}

/// A queue discipline with every parameter it runs with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum QueuePlan {
    /// Drop an arrival that finds `buffer_pkts` waiting.
    DropTail,
    /// RED, ns-2 2.35's semantics; thresholds in packets (or, in byte mode,
    /// in units of mean_packet_size bytes), see `scenario::red_params`.
    Red(RedParams),
    /// Paper C's threshold dropper (see `net::queue::ThresholdDropper`).
    Threshold(ThresholdParams),
}

/// The threshold dropper's parameters (`[<link>.threshold]` resolved).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdParams {
    /// Th, packets waiting.
    pub threshold_pkts: u32,
    /// τ, ns: nothing more is dropped by the threshold this long after
    /// a congestion event starts.
    pub immunity_ns: SimTime,
    pub selection: Selection,
    /// Selection weight per flow group (rate-independent only; groups
    /// not named weigh 1).
    pub bias: BTreeMap<String, f64>,
}

/// One flow: a source at the start of its forward route, a receiver at its
/// end; acks go back on the reverse route.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowPlan {
    pub id: u32,
    /// The flow group's name.
    pub group: String,
    pub kind: FlowKind,
    /// When the source starts, ns: the group's `start` — or, with `joins`,
    /// the step at which the flow joins — plus U[0, start_jitter] from the
    /// flow's own stream; capped at the end. A flow with start_ns ≥
    /// stop_ns never sends.
    pub start_ns: SimTime,
    /// When the source stops sending new data, ns: the group's `stop` — or,
    /// with `leaves`, the step at which the flow leaves — capped at the end.
    pub stop_ns: SimTime,
    /// The links the flow's packets cross, in order.
    pub route: Route,
    /// The bottleneck of each direction of the route, computed once here for
    /// every consumer (metrics, models, exporters).
    pub bottleneck: Bottleneck,
    /// Bytes of a full packet on the wire, headers included.
    pub packet_size: u32,
    /// TCP flows: the sender's and receiver's parameters.
    pub tcp: Option<TcpPlan>,
    /// TCP flows driven by an application instead of an infinite backlog.
    pub app: Option<AppPlan>,
    /// UDP flows: the source.
    pub udp: Option<UdpPlan>,
}

/// A flow's route as link ids (htsim's route: the hops a packet walks), at
/// most 255 links per direction (a packet keeps its place in a byte).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Route {
    /// Data: source → receiver.
    pub forward: Vec<u32>,
    /// Acks: receiver → source.
    pub reverse: Vec<u32>,
}

/// A flow's bottleneck link per direction: the slowest link of the route;
/// among links of equal rate the one whose role is `bottleneck`, else the
/// first on the route (`Route::bottleneck`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Bottleneck {
    /// Link id on `route.forward` (the data's).
    pub forward: u32,
    /// Link id on `route.reverse` (the acks').
    pub reverse: u32,
}

impl Route {
    /// The route of direction `dir` (0 forward, 1 reverse: `Packet::dir`).
    pub fn dir(&self, dir: usize) -> &[u32] {
        if dir == 0 {
            &self.forward
        } else {
            &self.reverse
        }
    }
}

/// A TCP flow's parameters with every default applied.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct TcpPlan {
    #[serde(flatten)]
    pub params: TcpParams,
    /// Payload bytes of a full packet: packet_size − header_size.
    pub payload_bytes: u32,
    /// Bytes of an ack on the wire: the receiver's acks are bare headers of
    /// `header_size` bytes (40; 52 under the linux profile, whose timestamps
    /// the kernel's acks carry too), see `tcp::sink`.
    pub ack_bytes: u32,
    /// Offset of the sender's RTT clock (ns-2's `tcpTick_` ticks are counted
    /// from a random boot time), s, in [0, tick): from the flow's own stream.
    pub boot_time_s: f64,
}

/// A CBR application writing into a TCP flow (paper B7), with a playback
/// reader at the receiver.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct AppPlan {
    /// Payload bit/s the application writes (one packet's payload per
    /// payload·8/rate seconds).
    pub rate_bps: f64,
    /// Packets of unacknowledged + unsent data the sender holds (None:
    /// unlimited). With when_full = "block" it also caps the flow's window
    /// (`TcpParams::window` above is already capped).
    pub send_buffer_pkts: Option<u32>,
    pub when_full: Option<WhenFull>,
    /// Bytes the reader takes per interval, at most.
    pub read_bytes: u64,
    /// The reader reads every interval_ns from the flow's start.
    pub interval_ns: SimTime,
}

/// A UDP source: packets of `packet_size` bytes paced by a rate over time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UdpPlan {
    /// The rate over time (a constant or a shape, see `traffic::shape` for
    /// the semantics), in SI numbers and nanoseconds with a `kind` tag.
    pub shape: ShapePlan,
    /// Long-run mean of the shape (clipped at 0), bit/s.
    pub mean_bps: f64,
    /// Each packet leaves U[0, send_jitter_ns] after its time by the shape, ns.
    pub send_jitter_ns: SimTime,
}

/// A UDP source's rate shape as the Plan writes it: plain bit/s, Hz,
/// radians and nanoseconds (the scenario's unit strings resolved).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ShapePlan {
    /// A constant rate.
    Constant { rate_bps: f64 },
    /// mean + amplitude·sin(2π·frequency·t + phase), clipped at 0.
    Sine {
        mean_bps: f64,
        amplitude_bps: f64,
        frequency_hz: f64,
        phase_rad: f64,
    },
    /// offset + Σ amplitudeᵢ·sin(2π·frequencyᵢ·t + phaseᵢ), clipped at 0.
    Sines {
        offset_bps: f64,
        components: Vec<SinePlan>,
    },
    /// Piecewise-linear through (t_ns, bit/s); `repeat`: periodic with the
    /// last time as period.
    Piecewise {
        points: Vec<(SimTime, f64)>,
        repeat: bool,
    },
    /// `rate_bps` during on periods, silent during off periods.
    Onoff {
        rate_bps: f64,
        on: PeriodPlan,
        off: PeriodPlan,
    },
}

/// One component of a `sines` shape.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SinePlan {
    pub amplitude_bps: f64,
    pub frequency_hz: f64,
    pub phase_rad: f64,
}

/// The distribution of on or off period lengths.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PeriodPlan {
    pub distribution: PeriodDistribution,
    pub mean_ns: SimTime,
    /// Pareto's shape (pareto only).
    pub alpha: Option<f64>,
}

/// What the recorder traces (`[trace]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TracePlan {
    /// Sorted, without duplicates.
    pub series: Vec<TraceKind>,
    /// 0 records every change; otherwise one sample every interval_ns.
    pub interval_ns: SimTime,
}

/// The `linux` engine's kernel settings: the scenario's `[linux]` table with
/// every option resolved (`scenario/plan.rs`, `linux_plan`). Under the
/// kernel profile "linux" the kernel's own defaults; under "ns2" the options
/// that bring the kernel as close to ns-2's agents as it goes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinuxPlan {
    /// "linux" when the first TCP flow's profile is `linux`, else "ns2" (the
    /// linux engine runs every TCP flow in one kernel, so it refuses TCP
    /// flows of different kernel profiles).
    pub profile: LinuxProfile,
    /// net.ipv4.tcp_sack. ns2: whether a TCP flow's variant is sack.
    pub sack: bool,
    /// RACK loss detection (net.ipv4.tcp_recovery). ns2: off.
    pub rack: bool,
    /// Tail loss probes (net.ipv4.tcp_early_retrans 3, else 0). ns2: off.
    pub tlp: bool,
    /// F-RTO (net.ipv4.tcp_frto). ns2: off.
    pub frto: bool,
    /// TCP timestamps (net.ipv4.tcp_timestamps). ns2: off.
    pub timestamps: bool,
    /// The route's initcwnd, packets; None leaves the kernel's (linux).
    /// ns2: the first TCP flow's initial_cwnd.
    pub initial_cwnd: Option<u32>,
    /// The route's rto_min, ns; None leaves the kernel's (linux). ns2: the
    /// first TCP flow's min_rto.
    pub min_rto_ns: Option<SimTime>,
    /// The receiver's route acks every segment at once (quickack). ns2:
    /// when no TCP flow has delayed acks; linux: off.
    pub quickack: bool,
    /// TCP_INFO is sampled every sample_interval_ns: `trace.interval` when
    /// it is above 0, else `[linux].sample_interval`, else
    /// `defaults::LINUX_SAMPLE_INTERVAL`.
    pub sample_interval_ns: SimTime,
    /// The `[linux]` keys the scenario set (the others are the profile's),
    /// sorted: a consumer that must know whether a choice was the user's.
    pub explicit: Vec<String>,
}

/// The kernel profile of the `linux` engine (also the moved `linux.profile`
/// key's values).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinuxProfile {
    Linux,
    Ns2,
}

impl Plan {
    /// The plan as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a plan always serializes")
    }
}

// --- what a plan's parts are made of ---

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TopologyKind {
    /// sources → own access link → R1 → bottleneck → R2 → own sink link → sinks.
    #[default]
    Dumbbell,
    /// Every flow crosses one chain of links, `links[0]` first, with no
    /// access links of its own (paper D's two-link path).
    Path,
    /// A chain of bottlenecks R0 → R1 → … → RK (`links`); each flow has its
    /// own access and sink links and crosses the bottlenecks its group's
    /// `hops` names (all of them by default): long flows and cross traffic.
    #[serde(rename = "parking-lot")]
    ParkingLot,
}

/// RED's queue measure: packets, or bytes in units of `mean_packet_size`
/// (ns-2 `bytes_` and `queue_in_bytes_` both true).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    Packet,
    Byte,
}

/// RED's parameters with every default applied (what the engine runs);
/// thresholds in packets (byte mode: in units of mean_packet_size bytes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RedParams {
    pub min_thresh: f64,
    pub max_thresh: f64,
    pub max_p: f64,
    pub weight: f64,
    pub wait: bool,
    pub gentle: bool,
    pub mode: RedMode,
    pub mean_packet_size: u32,
    pub ecn: bool,
    /// ns-2's generator seed for the random drops (`RedSpec::seed`).
    pub seed: Option<u32>,
}

/// Who the threshold dropper signals at a congestion event (paper C, Sec. I
/// and V.D).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// A connection chosen with fixed probability (uniform, or by `bias`),
    /// whatever its rate.
    #[default]
    RateIndependent,
    /// The connection with the largest congestion window.
    LargestRate,
    /// The connection of the arriving packet (in effect rate-proportional:
    /// a connection's packets arrive in proportion to its rate).
    FirstArrival,
}

impl Selection {
    /// Whether the dropper chooses a victim among the flows (every
    /// selection but the arriving packet's own flow).
    pub fn chooses(self) -> bool {
        self != Selection::FirstArrival
    }

    /// Whether that choice reads the senders' windows (largest-rate only: a
    /// rate-independent choice draws from the dropper's own stream among
    /// the flows running at the arrival).
    pub fn reads_windows(self) -> bool {
        self == Selection::LargestRate
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum ErrorModelKind {
    /// Each packet is lost independently with probability `per` (paper B's PER).
    #[serde(rename = "bernoulli")]
    Bernoulli,
    /// A two-state Markov chain stepped once per arriving packet: good → bad
    /// with probability `p_gb`, bad → good with `p_bg`; then the packet is
    /// lost with `per_good` or `per_bad` of the state it is now in (ns-2's
    /// `ErrorModel/MultiState` with packet transitions does the same).
    #[serde(rename = "gilbert-elliott")]
    GilbertElliott,
    /// Deterministic: the arrivals numbered in `packets` are lost (0 = the
    /// first packet to arrive at the link's forward direction, counting every
    /// flow's packets that reach the error model; ns-2's `ErrorModel/List`
    /// with unit pkt counts the same way). For differential tests: the same
    /// losses in both engines.
    #[serde(rename = "list")]
    List,
}

/// A link direction's packet errors as the Plan writes them: the model and
/// the keys that apply to it (`[<link>.errors]` with its defaults filled
/// in; see `scenario::ErrorSpec` for each key).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorPlan {
    pub model: ErrorModelKind,
    /// Packet error rate (bernoulli).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per: Option<f64>,
    /// P(good → bad) per packet (gilbert-elliott).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_gb: Option<f64>,
    /// P(bad → good) per packet (gilbert-elliott).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_bg: Option<f64>,
    /// Loss probability in the good state (gilbert-elliott).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_good: Option<f64>,
    /// Loss probability in the bad state (gilbert-elliott).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_bad: Option<f64>,
    /// Arrival numbers to lose, strictly increasing, from 0 (list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<Vec<u64>>,
}

/// How long each outage lasts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum OutageDistribution {
    /// Exactly `duration`.
    #[default]
    Fixed,
    /// Exponential with mean `duration`, drawn from the link's own stream.
    Exponential,
}

/// A link's outage schedule, resolved (`[<link>.outages]`): periodic from
/// `start_ns` every `every_ns`, or at the times of `at_ns`; each lasts
/// `duration_ns` (fixed, or exponential with that mean). What
/// `net::outage::OutageSchedule` draws the intervals from.
#[derive(Debug, Clone, PartialEq)]
pub struct OutagePlan {
    /// First outage of a periodic schedule, ns.
    pub start_ns: SimTime,
    /// Period, ns; None: the list `at_ns`.
    pub every_ns: Option<SimTime>,
    /// Explicit outage start times, ns, increasing.
    pub at_ns: Vec<SimTime>,
    /// Length (or mean length) of each outage, ns.
    pub duration_ns: SimTime,
    pub distribution: OutageDistribution,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    Tcp,
    Udp,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// ns-2 `Agent/TCP`: slow start from cwnd 1, go-back-N, on 3 dupacks or a timeout.
    Tahoe,
    /// ns-2 `Agent/TCP/Reno`: fast retransmit and fast recovery (RFC 5681).
    Reno,
    /// ns-2 `Agent/TCP/Newreno`: partial acks keep recovery going (RFC 6582).
    NewReno,
    /// ns-2 `Agent/TCP/Sack1`: scoreboard and pipe (RFC 6675 in ns-2's reading).
    Sack,
}

impl Variant {
    /// The name a scenario gives the variant (`variant = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Tahoe => "tahoe",
            Variant::Reno => "reno",
            Variant::NewReno => "newreno",
            Variant::Sack => "sack",
        }
    }
}

/// What a CBR writer does when the send buffer is full.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WhenFull {
    /// The writer waits: no application data is lost, at most `send_buffer`
    /// packets are unacknowledged (exactly ns-2 with window_ = send_buffer).
    Block,
    /// The write is discarded (a live source skips data it cannot queue).
    Drop,
}

/// Distribution of on or off period lengths.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PeriodDistribution {
    /// Every period lasts `mean`.
    Fixed,
    /// Exponential with mean `mean`.
    Exponential,
    /// Pareto with mean `mean` and shape `alpha` > 1 (scale mean·(α−1)/α).
    Pareto,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// cwnd and ssthresh of every TCP flow.
    Cwnd,
    /// Packets in flight (highest sent − highest acked) of every TCP flow.
    Inflight,
    /// Every data packet sent (sequence number, retransmission flag) and the cumulative ack.
    Seq,
    /// Occupancy of every link's buffer, by flow class.
    Queue,
    /// Every drop: time, link, flow.
    Drops,
    /// Every UDP packet delivered to its sink: time, flow, sequence number
    /// (the delivered background rate, paper A's "sending rates" plots).
    Udp,
    /// Smoothed RTT, RTT variation, retransmission timeout and its backoff of
    /// every TCP flow, at every change (or every sample).
    Rtt,
}

/// TCP options with every default filled in (see `scenario::FlowGroup` for what
/// each means, `tcp/defaults.rs` for each default's origin).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct TcpParams {
    pub cc: Cc,
    pub profile: Profile,
    pub variant: Variant,
    /// Additive increase, packets per RTT.
    pub alpha: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// Receiver's advertised window, packets.
    pub window: u32,
    /// Upper bound on cwnd, packets; 0 = none.
    pub max_cwnd: u32,
    /// Initial window, packets.
    pub initial_cwnd: u32,
    /// Initial ssthresh, packets; 0 = the advertised window.
    pub initial_ssthresh: u32,
    /// RTO before the first RTT sample, ns.
    pub initial_rto_ns: SimTime,
    pub min_rto_ns: SimTime,
    pub max_rto_ns: SimTime,
    /// RTT clock granularity, ns.
    pub tick_ns: SimTime,
    /// ns-2 seed of the first flow's clock phase (`FlowGroup::tick_seed`).
    pub tick_seed: Option<u32>,
    /// Duplicate acks that trigger fast retransmit.
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
    pub bug_fix: bool,
    /// The first packet is a SYN of header_size bytes.
    pub syn: bool,
    /// TCP/IP header bytes of every packet; an ack is a bare header
    /// (`TcpPlan::ack_bytes`).
    pub header_size: u32,
    /// Bytes of a full data packet on the wire, headers included.
    pub packet_size: u32,
    pub delayed_ack: bool,
    /// Delayed-ack timer, ns.
    pub delack_interval_ns: SimTime,
    /// With delayed acks, packet 0 is acked at once (the profile's; ns-2's
    /// `SYN_immediate_ack_`).
    pub syn_immediate_ack: bool,
    /// ECN-capable transport (RFC 3168).
    pub ecn: bool,
}

/// Which congestion control a flow group runs (the scenario key `cc`). The
/// same key drives every engine: the simulators build the controller below,
/// the `linux` engine sets the kernel's `TCP_CONGESTION`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    /// TCP(α, β) with slow start; plain Reno is (1, ½). Under the `linux`
    /// profile, Linux's Reno (`tcp_cong.c`: segment counting, RFC 3465).
    #[default]
    Reno,
    /// CUBIC (RFC 9438, Linux's `tcp_cubic.c`), see `tcp::cc::cubic`.
    Cubic,
    /// BBR version 1 (Linux's `tcp_bbr.c`), paced, see `tcp::cc::bbr`.
    Bbr,
    /// DCTCP (RFC 8257, Linux's `tcp_dctcp.c`): Reno's growth, a window cut
    /// by the fraction of ECN-marked data, see `tcp::cc::dctcp`.
    Dctcp,
}

impl Cc {
    pub fn name(self) -> &'static str {
        match self {
            Cc::Reno => "reno",
            Cc::Cubic => "cubic",
            Cc::Bbr => "bbr",
            Cc::Dctcp => "dctcp",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum Profile {
    /// ns-2 2.35's `ns-default.tcl` (the Debian package the tests run).
    #[default]
    #[serde(rename = "ns2-2.35")]
    Ns2v235,
    /// ns-2 before the TCP default changes of May 2001 (see `tcp::profiles`).
    #[serde(rename = "ns2-2001")]
    Ns2v2001,
    /// Linux's defaults (`include/net/tcp.h`, `net/ipv4/tcp_cong.c`):
    /// IW10 (`TCP_INIT_CWND`, RFC 6928), SACK recovery that detects losses
    /// by RACK-TLP (RFC 8985, `tcp::recovery::rack`) and sends by PRR
    /// (RFC 6937, `tcp::recovery::sack::Prr`), Linux's RTO estimator
    /// (`tcp::rtt::LinuxRtt`) with a 200 ms minimum
    /// RTO (`TCP_RTO_MIN`), a 1 s initial RTO (`TCP_TIMEOUT_INIT`, RFC 6298),
    /// a 120 s maximum (`TCP_RTO_MAX`), delayed acks every second segment
    /// or after 40 ms (`TCP_DELACK_MIN`), and the window counted in
    /// segments acked (RFC 3465; `tcp::cc::linux`) for Reno and CUBIC alike.
    #[serde(rename = "linux")]
    Linux,
}

impl Profile {
    /// The name a scenario gives the profile (`profile = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::Ns2v235 => "ns2-2.35",
            Profile::Ns2v2001 => "ns2-2001",
            Profile::Linux => "linux",
        }
    }
}
