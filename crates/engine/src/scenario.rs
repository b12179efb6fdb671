//! The one definition of a scenario. Scenario files are TOML; Python loads
//! them into a dict, applies `--set` overrides and hands the engine JSON. The
//! schema below rejects unknown keys (`deny_unknown_fields`), and every error
//! names the key path and the expected form.
//!
//! Defaults follow ns-2 2.35 (`tcl/lib/ns-default.tcl`) wherever the papers
//! depend on them; each says where it comes from.

use crate::tcp::profiles::Profile;
use crate::time::{Bytes, Duration, Freq, Rate, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A scenario error: where (dotted key path) and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.into(),
        message: message.into(),
    }
}

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
    /// "linux": the kernel's defaults (SACK, RACK/TLP, F-RTO, timestamps,
    /// IW10, delayed acks); "ns2": as close to ns-2's agents as Linux goes
    /// (SACK only for variant "sack", no RACK/TLP/F-RTO/timestamps, the
    /// flow's initial_cwnd and min_rto, no delayed acks unless delayed_ack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<LinuxProfile>,
    /// Congestion control of every TCP flow: "reno" (default), "cubic", "bbr", ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Per TCP group, a congestion control other than `cc` (`[linux.group_cc] bulk = "cubic"`).
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
    /// TCP_INFO sampling interval when trace.interval is 0 (default 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Duration>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinuxProfile {
    Linux,
    Ns2,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TopologyKind {
    /// sources → own access link → R1 → bottleneck → R2 → own sink link → sinks.
    #[default]
    Dumbbell,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[serde(default)]
    pub kind: TopologyKind,
    /// The shared link R1 → R2 (and its reverse, R2 → R1, for acks).
    pub bottleneck: LinkSpec,
    /// Default for every source → R1 link.
    pub access: LinkSpec,
    /// Default for every R2 → sink link.
    pub sink_access: LinkSpec,
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

/// RED's queue measure: packets, or bytes in units of `mean_packet_size`
/// (ns-2 `bytes_` and `queue_in_bytes_` both true).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    Packet,
    Byte,
}

/// Named RED settings; explicit keys of the table override them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RedPreset {
    /// Paper C, Sec. V.A: thresholds 0.6 and 0.8 of the buffer, max_p 0.1 at
    /// the maximum threshold, queue weight 0.001, `wait` on. The paper is
    /// silent on the rest, so ns-2 2.35's defaults: gentle on; packet mode
    /// (ns-2's default byte mode would shrink the buffer, NS2-NOTES).
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
}

/// RED's parameters with every default applied (what the engine runs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub min_thresh: f64,
    pub max_thresh: f64,
    pub max_p: f64,
    pub weight: f64,
    pub wait: bool,
    pub gentle: bool,
    pub mode: RedMode,
    pub mean_packet_size: u32,
}

impl RedSpec {
    /// Apply the preset and ns-2 2.35's defaults for a link of `rate_bps`,
    /// `delay_ns` and `buffer` packets.
    pub fn params(&self, rate_bps: f64, delay_ns: SimTime, buffer: u32) -> RedParams {
        let (mut min, mut max, mut max_p, mut weight, mut wait, mut gentle, mut mode) =
            (None, None, None, None, None, None, None);
        if let Some(RedPreset::PaperC) = self.preset {
            min = Some(0.6 * buffer as f64);
            max = Some(0.8 * buffer as f64);
            max_p = Some(0.1);
            weight = Some(0.001);
            wait = Some(true);
            gentle = Some(true);
            mode = Some(RedMode::Packet);
        }
        let mean = self.mean_packet_size.unwrap_or(500);
        // ns-2 red.cc reset(): ptc, the link's rate in mean-size packets per second
        let ptc = rate_bps / (8.0 * mean as f64);
        let min_thresh = self
            .min_thresh
            .or(min)
            .unwrap_or_else(|| (0.005 * ptc / 2.0).max(5.0));
        let max_thresh = self.max_thresh.or(max).unwrap_or(3.0 * min_thresh);
        let weight = self.weight.or(weight).unwrap_or_else(|| {
            let rtt = (3.0 * (crate::time::secs(delay_ns) + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        });
        RedParams {
            min_thresh,
            max_thresh,
            max_p: self.max_p.or(max_p).unwrap_or(0.1),
            weight,
            wait: self.wait.or(wait).unwrap_or(true),
            gentle: self.gentle.or(gentle).unwrap_or(true),
            mode: self.mode.or(mode).unwrap_or(RedMode::Packet),
            mean_packet_size: mean,
        }
    }
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

/// A duplex link: both directions get the same rate, delay and buffer (as
/// ns-2's `duplex-link`).
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

impl ErrorSpec {
    /// Long-run fraction of arrivals lost: `per`, or for Gilbert–Elliott
    /// π_good·per_good + π_bad·per_bad with π_bad = p_gb / (p_gb + p_bg).
    pub fn loss_rate(&self) -> f64 {
        match self.model {
            ErrorModelKind::Bernoulli => self.per.unwrap_or(0.0),
            ErrorModelKind::GilbertElliott => {
                let (gb, bg) = (self.p_gb.unwrap_or(0.0), self.p_bg.unwrap_or(0.0));
                let bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
                (1.0 - bad) * self.per_good.unwrap_or(0.0) + bad * self.per_bad.unwrap_or(1.0)
            }
            // not a rate: the losses depend on how many packets arrive
            ErrorModelKind::List => 0.0,
        }
    }

    fn resolved(mut self) -> ErrorSpec {
        if self.model == ErrorModelKind::GilbertElliott {
            self.per_good.get_or_insert(0.0);
            self.per_bad.get_or_insert(1.0);
        }
        self
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let (name, allowed, required): (&str, &[&str], &[&str]) = match self.model {
            ErrorModelKind::Bernoulli => ("bernoulli", &["per"], &["per"]),
            ErrorModelKind::GilbertElliott => (
                "gilbert-elliott",
                &["p_gb", "p_bg", "per_good", "per_bad"],
                &["p_gb", "p_bg"],
            ),
            ErrorModelKind::List => ("list", &[], &[]),
        };
        match (&self.packets, self.model) {
            (Some(_), m) if m != ErrorModelKind::List => {
                return Err(err(
                    format!("{path}.packets"),
                    format!("does not apply to model = \"{name}\" (only to \"list\")"),
                ))
            }
            (None, ErrorModelKind::List) => {
                return Err(err(
                    format!("{path}.packets"),
                    "missing; a list of arrival numbers to lose (from 0, strictly increasing)",
                ))
            }
            (Some(p), _) => {
                if let Some(i) = p.windows(2).position(|w| w[1] <= w[0]) {
                    return Err(err(
                        format!("{path}.packets[{}]", i + 1),
                        format!(
                            "must be greater than the one before ({} after {}): the list is strictly increasing",
                            p[i + 1], p[i]
                        ),
                    ));
                }
            }
            _ => {}
        }
        let keys = [
            ("per", self.per),
            ("p_gb", self.p_gb),
            ("p_bg", self.p_bg),
            ("per_good", self.per_good),
            ("per_bad", self.per_bad),
        ];
        for (k, v) in keys {
            match v {
                Some(_) if !allowed.contains(&k) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        format!(
                            "does not apply to model = \"{name}\" (it takes {})",
                            allowed.join(", ")
                        ),
                    ))
                }
                Some(x) if !(0.0..=1.0).contains(&x) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        format!("must be a probability in [0, 1], got {x}"),
                    ))
                }
                None if required.contains(&k) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        "missing; a probability in [0, 1]",
                    ))
                }
                _ => {}
            }
        }
        if self.model == ErrorModelKind::GilbertElliott && self.p_bg == Some(0.0) {
            return Err(err(
                format!("{path}.p_bg"),
                "must be positive (with p_bg = 0 the bad state never ends)",
            ));
        }
        Ok(())
    }
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

impl OutageSpec {
    fn resolved(mut self) -> OutageSpec {
        if let (None, Some(e)) = (self.start, self.every) {
            self.start = Some(e);
        }
        self
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err(format!("{path}.duration"), "must be positive"));
        }
        match (&self.every, &self.at) {
            (Some(_), Some(_)) => Err(err(
                format!("{path}.at"),
                "give either every (periodic) or at (a list), not both",
            )),
            (None, None) => Err(err(
                path,
                "needs every (e.g. every = \"5s\") or at (e.g. at = [\"10s\", \"30s\"])",
            )),
            (Some(every), None) => {
                if every.0 == 0 {
                    return Err(err(format!("{path}.every"), "must be positive"));
                }
                if self.distribution == OutageDistribution::Fixed && self.duration.0 >= every.0 {
                    return Err(err(
                        format!("{path}.duration"),
                        "must be shorter than every (the link would never come up)",
                    ));
                }
                Ok(())
            }
            (None, Some(at)) => {
                if self.start.is_some() {
                    return Err(err(
                        format!("{path}.start"),
                        "applies to a periodic schedule (every); a list gives its times in at",
                    ));
                }
                if at.is_empty() {
                    return Err(err(format!("{path}.at"), "needs at least one time"));
                }
                for (i, w) in at.windows(2).enumerate() {
                    if w[1].0 <= w[0].0 {
                        return Err(err(format!("{path}.at[{}]", i + 1), "times must increase"));
                    }
                }
                Ok(())
            }
        }
    }
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

impl LinkSpec {
    pub fn with(&self, o: &Option<LinkOverride>) -> LinkSpec {
        let mut l = self.clone();
        if let Some(o) = o {
            if let Some(r) = o.rate {
                l.rate = r;
            }
            if let Some(d) = o.delay {
                l.delay = d;
            }
            if let Some(b) = o.buffer {
                l.buffer = b;
            }
            if let Some(e) = &o.errors {
                l.errors = Some(e.clone());
            }
            if let Some(x) = &o.outages {
                l.outages = Some(x.clone());
            }
        }
        l
    }
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

impl RateShape {
    /// Long-run mean rate in bit/s (of the clipped shape; on/off: its
    /// expectation, rate·E[on]/(E[on] + E[off])).
    pub fn mean_bps(&self) -> f64 {
        match self {
            RateShape::Constant(r) => r.0,
            RateShape::Shaped(_) => crate::traffic::shape::Shape::from_spec(self, 0, 0).mean_bps(),
        }
    }

    /// Check a shape table's keys and values; `path` is the key path of `rate`.
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let RateShape::Shaped(t) = self else {
            return Ok(());
        };
        let allowed: &[&str] = match t.shape {
            ShapeKind::Sine => &["mean", "amplitude", "frequency", "phase"],
            ShapeKind::Sines => &["offset", "components"],
            ShapeKind::Piecewise => &["points", "repeat", "file"],
            ShapeKind::OnOff => &["rate", "on", "off"],
        };
        let present = [
            ("mean", t.mean.is_some()),
            ("amplitude", t.amplitude.is_some()),
            ("frequency", t.frequency.is_some()),
            ("phase", t.phase.is_some()),
            ("offset", t.offset.is_some()),
            ("components", t.components.is_some()),
            ("points", t.points.is_some()),
            ("repeat", t.repeat.is_some()),
            ("file", t.file.is_some()),
            ("rate", t.rate.is_some()),
            ("on", t.on.is_some()),
            ("off", t.off.is_some()),
        ];
        let shape_name = match t.shape {
            ShapeKind::Sine => "sine",
            ShapeKind::Sines => "sines",
            ShapeKind::Piecewise => "piecewise",
            ShapeKind::OnOff => "onoff",
        };
        if let Some((k, _)) = present.iter().find(|(k, set)| *set && !allowed.contains(k)) {
            return Err(err(
                format!("{path}.{k}"),
                format!(
                    "does not apply to shape = \"{shape_name}\" (it takes {})",
                    allowed.join(", ")
                ),
            ));
        }
        let check_freq = |p: String, f: &Option<Freq>| -> Result<(), ScenarioError> {
            match f {
                None => Err(err(p, "missing; e.g. \"0.4Hz\"")),
                Some(f) if !(f.0 > 0.0 && f.0.is_finite()) => Err(err(p, "must be positive")),
                _ => Ok(()),
            }
        };
        match t.shape {
            ShapeKind::Sine => {
                match t.mean {
                    None => return Err(err(format!("{path}.mean"), "missing; e.g. \"0.5Mbps\"")),
                    Some(m) if !(m.0 > 0.0) => {
                        return Err(err(format!("{path}.mean"), "must be positive"))
                    }
                    _ => {}
                }
                if t.amplitude.is_none() {
                    return Err(err(
                        format!("{path}.amplitude"),
                        "missing; e.g. \"0.5Mbps\" (amplitude > mean is clipped at 0)",
                    ));
                }
                check_freq(format!("{path}.frequency"), &t.frequency)?;
                if !t.phase.unwrap_or(0.0).is_finite() {
                    return Err(err(
                        format!("{path}.phase"),
                        "must be a finite number of radians",
                    ));
                }
            }
            ShapeKind::Sines => {
                let Some(comps) = &t.components else {
                    return Err(err(
                        format!("{path}.components"),
                        "missing; e.g. [{ amplitude = \"0.25Mbps\", frequency = \"0.4Hz\" }]",
                    ));
                };
                if comps.is_empty() {
                    return Err(err(format!("{path}.components"), "needs at least one sine"));
                }
                for (i, c) in comps.iter().enumerate() {
                    check_freq(
                        format!("{path}.components[{i}].frequency"),
                        &Some(c.frequency),
                    )?;
                    if !c.phase.is_finite() {
                        return Err(err(
                            format!("{path}.components[{i}].phase"),
                            "must be a finite number of radians",
                        ));
                    }
                }
                let offset = t.offset.map_or(0.0, |o| o.0);
                if !(offset > 0.0) {
                    return Err(err(
                        format!("{path}.offset"),
                        "must be positive (the long-run mean before clipping)",
                    ));
                }
            }
            ShapeKind::Piecewise => validate_points(path, t)?,
            ShapeKind::OnOff => {
                match t.rate {
                    None => return Err(err(format!("{path}.rate"), "missing; e.g. \"1Mbps\"")),
                    Some(r) if !(r.0 > 0.0 && r.0.is_finite()) => {
                        return Err(err(format!("{path}.rate"), "must be positive"))
                    }
                    _ => {}
                }
                for (k, p) in [("on", &t.on), ("off", &t.off)] {
                    let pp = format!("{path}.{k}");
                    let Some(p) = p else {
                        return Err(err(
                            pp,
                            "missing; e.g. { distribution = \"exponential\", mean = \"1s\" }",
                        ));
                    };
                    if p.mean.0 == 0 {
                        return Err(err(format!("{pp}.mean"), "must be positive"));
                    }
                    match (p.distribution, p.alpha) {
                        (PeriodDistribution::Pareto, None) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                "missing; the Pareto shape, > 1 (e.g. 1.5)",
                            ))
                        }
                        (PeriodDistribution::Pareto, Some(a)) if !(a > 1.0 && a.is_finite()) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                format!("must exceed 1 (the mean is infinite otherwise), got {a}"),
                            ))
                        }
                        (PeriodDistribution::Pareto, _) => {}
                        (_, Some(_)) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                "applies only to distribution = \"pareto\"",
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Mean rate over simulation time [a, b] (bit/s): exact for piecewise
    /// tables (which need not repeat), the long-run mean otherwise.
    pub fn mean_bps_over(&self, a: SimTime, b: SimTime) -> f64 {
        match self {
            RateShape::Shaped(t) if t.shape == ShapeKind::Piecewise && b > a => {
                crate::traffic::shape::Piecewise::from_spec(t).mean_between(a, b)
            }
            _ => self.mean_bps(),
        }
    }
}

/// A piecewise table: points present (a `file` must have been read by the
/// loader), first time 0, times nondecreasing, rates finite, some positive.
fn validate_points(path: &str, t: &ShapeSpec) -> Result<(), ScenarioError> {
    let Some(points) = &t.points else {
        if t.file.is_some() {
            return Err(err(
                format!("{path}.file"),
                "a trace file is read by tcplab's scenario loader (tcplab.load_scenario, \
                 `tcplab run`), which puts its rows into `points`; the engine takes only points",
            ));
        }
        return Err(err(
            format!("{path}.points"),
            "missing; e.g. [[\"0s\", \"1Mbps\"], [\"10s\", \"3Mbps\"]], or file = \"trace.csv\"",
        ));
    };
    if t.file.is_some() {
        return Err(err(
            format!("{path}.file"),
            "give either file or points, not both",
        ));
    }
    if points.is_empty() {
        return Err(err(
            format!("{path}.points"),
            "needs at least one [time, rate] point",
        ));
    }
    if points[0].0 .0 != 0 {
        return Err(err(
            format!("{path}.points[0]"),
            "the first point must be at time 0 (times are simulation time)",
        ));
    }
    for (i, w) in points.windows(2).enumerate() {
        if w[1].0 .0 < w[0].0 .0 {
            return Err(err(
                format!("{path}.points[{}]", i + 1),
                "times must not decrease (two equal times make a step)",
            ));
        }
    }
    for (i, p) in points.iter().enumerate() {
        if !p.1 .0.is_finite() {
            return Err(err(format!("{path}.points[{i}]"), "rate must be finite"));
        }
    }
    if !points.iter().any(|p| p.1 .0 > 0.0) {
        return Err(err(
            format!("{path}.points"),
            "every rate is 0: nothing would be sent",
        ));
    }
    if t.repeat == Some(true) && points.last().unwrap().0 .0 == 0 {
        return Err(err(
            format!("{path}.repeat"),
            "a repeating table needs a last time > 0 (its period)",
        ));
    }
    Ok(())
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
    #[serde(default)]
    pub start: Duration,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// Whose defaults the keys below start from: "ns2-2.35" (unset) or
    /// "ns2-2001" (`crate::tcp::profiles`); a key set here always wins.
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

/// The steps of a join or leave schedule before `end`: (time, active flows after it).
fn schedule_steps(
    mut n: u32,
    at: SimTime,
    every: SimTime,
    end: SimTime,
    step: impl Fn(u32) -> u32,
) -> Vec<(SimTime, u32)> {
    let mut out = Vec::new();
    let mut t = at;
    while t < end {
        let next = step(n);
        if next == n {
            break;
        }
        n = next;
        out.push((t, n));
        t += every;
    }
    out
}

impl FlowGroup {
    /// Flow `j` of this group (0-based within the group): (when it may
    /// start before jitter, when it stops), for a run ending at `end`.
    pub fn flow_window(&self, j: u32, end: SimTime) -> (SimTime, SimTime) {
        let mut start = self.start.0;
        let mut stop = self.stop.map_or(end, |s| s.0).min(end);
        if let Some(js) = &self.joins {
            if j >= js.initial {
                let count = self.count;
                let f = js.factor;
                let steps = schedule_steps(js.initial, js.at.0, js.every.0, end, |n| {
                    ((n as f64 * f).ceil() as u32).clamp(n, count)
                });
                start = steps
                    .iter()
                    .find(|&&(_, n)| n > j)
                    .map_or(SimTime::MAX, |&(t, _)| t);
            }
        }
        if let Some(ls) = &self.leaves {
            let f = ls.factor;
            let min = ls.min;
            let steps = schedule_steps(self.count, ls.at.0, ls.every.0, end, |n| {
                ((n as f64 * f).floor() as u32).max(min).min(n)
            });
            if let Some(&(t, _)) = steps.iter().find(|&&(_, n)| n <= j) {
                stop = stop.min(t);
            }
        }
        (start, stop)
    }
}

/// Which application drives a TCP flow.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Constant bit rate (ns-2 Application/Traffic/CBR over a TCP agent),
    /// with a playback reader at the receiver (paper B7).
    Cbr,
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

fn one() -> u32 {
    1
}
fn default_packet_size() -> u32 {
    1000
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

fn default_reference() -> String {
    "capacity".into()
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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    #[serde(default)]
    pub series: Vec<TraceKind>,
    /// 0 records every change; otherwise one sample per interval.
    #[serde(default)]
    pub interval: Duration,
}

/// TCP options with every default filled in (see [`FlowGroup`] for origins).
#[derive(Debug, Clone, Copy)]
pub struct TcpParams {
    pub variant: Variant,
    pub alpha: f64,
    pub beta: f64,
    pub window: u32,
    pub max_cwnd: u32,
    pub initial_cwnd: u32,
    pub initial_ssthresh: u32,
    pub initial_rto_ns: SimTime,
    pub min_rto_ns: SimTime,
    pub max_rto_ns: SimTime,
    pub tick_ns: SimTime,
    pub tick_seed: Option<u32>,
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
    pub bug_fix: bool,
    pub syn: bool,
    pub header_size: u32,
    pub packet_size: u32,
    pub delayed_ack: bool,
    pub delack_interval_ns: SimTime,
}

impl FlowGroup {
    /// The resolved TCP parameters (call after [`Scenario::resolve`]).
    pub fn tcp_params(&self) -> TcpParams {
        let d = self.profile.unwrap_or_default().defaults();
        TcpParams {
            variant: self.variant.unwrap_or(Variant::Reno),
            alpha: self.alpha.unwrap_or(1.0),
            beta: self.beta.unwrap_or(0.5),
            window: self.window.unwrap_or(DEFAULT_WINDOW),
            max_cwnd: self.max_cwnd.unwrap_or(0),
            initial_cwnd: self.initial_cwnd.unwrap_or(d.initial_cwnd),
            initial_ssthresh: self.initial_ssthresh.unwrap_or(0),
            initial_rto_ns: self.initial_rto.map(|x| x.0).unwrap_or(d.initial_rto_ns),
            min_rto_ns: self.min_rto.map(|x| x.0).unwrap_or(d.min_rto_ns),
            max_rto_ns: self.max_rto.map(|x| x.0).unwrap_or(d.max_rto_ns),
            tick_ns: self.tick.map(|x| x.0).unwrap_or(d.tick_ns),
            tick_seed: self.tick_seed,
            dupack_threshold: self.dupack_threshold.unwrap_or(3),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            bug_fix: self.bug_fix.unwrap_or(true),
            syn: self.syn.unwrap_or(d.syn),
            header_size: self.header_size.unwrap_or(40),
            packet_size: self.packet_size,
            delayed_ack: self.delayed_ack.unwrap_or(false),
            delack_interval_ns: self.delack_interval.map(|d| d.0).unwrap_or(100_000_000),
        }
    }
}

/// Advertised window when the scenario gives none: large enough that a
/// greedy flow is never receiver-limited (ns-2's own default, 20, would cap
/// the papers' flows; the ns-2 export always writes the value explicitly).
pub const DEFAULT_WINDOW: u32 = 100_000;

impl Scenario {
    /// Parse JSON (from Python) or any serde source; errors carry the key path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let mut msg = e.into_inner().to_string();
            // serde_json appends the position in the JSON text, which the user never saw
            if let Some(i) = msg.find(" at line ") {
                msg.truncate(i);
            }
            err(path, msg)
        })?;
        Ok(sc)
    }

    /// Fill defaults, check values, and return the scenario as it will run.
    pub fn resolve(mut self) -> Result<Scenario, ScenarioError> {
        self.validate()?;
        let end = self.duration;
        let topo = &mut self.topology;
        for l in [
            &mut topo.bottleneck,
            &mut topo.access,
            &mut topo.sink_access,
        ] {
            l.errors = l.errors.take().map(ErrorSpec::resolved);
            l.outages = l.outages.take().map(OutageSpec::resolved);
        }
        for g in self.flows.values_mut() {
            for o in [g.access.as_mut(), g.sink_access.as_mut()]
                .into_iter()
                .flatten()
            {
                o.errors = o.errors.take().map(ErrorSpec::resolved);
                o.outages = o.outages.take().map(OutageSpec::resolved);
            }
            if g.stop.is_none() && g.leaves.is_none() {
                g.stop = Some(end);
            }
            if g.kind == FlowKind::Tcp {
                let p = g.tcp_params();
                g.variant = Some(p.variant);
                g.alpha = Some(p.alpha);
                g.beta = Some(p.beta);
                g.window = Some(p.window);
                g.max_cwnd = Some(p.max_cwnd);
                g.initial_cwnd = Some(p.initial_cwnd);
                g.initial_ssthresh = Some(p.initial_ssthresh);
                g.initial_rto = Some(Duration(p.initial_rto_ns));
                g.min_rto = Some(Duration(p.min_rto_ns));
                g.max_rto = Some(Duration(p.max_rto_ns));
                g.tick = Some(Duration(p.tick_ns));
                g.dupack_threshold = Some(p.dupack_threshold);
                g.limited_transmit = Some(p.limited_transmit);
                g.bug_fix = Some(p.bug_fix);
                g.syn = Some(p.syn);
                g.header_size = Some(p.header_size);
                g.delayed_ack = Some(p.delayed_ack);
                g.delack_interval = Some(Duration(p.delack_interval_ns));
                if let Some(app) = &mut g.app {
                    if app.send_buffer.is_some() {
                        app.when_full.get_or_insert(WhenFull::Block);
                    }
                }
            }
        }
        for l in [
            &mut self.topology.bottleneck,
            &mut self.topology.access,
            &mut self.topology.sink_access,
        ] {
            resolve_queue(l);
        }
        // Group links inherit the resolved values; check them again at their buffers.
        self.validate()?;
        let mut series = std::mem::take(&mut self.trace.series);
        series.sort();
        series.dedup();
        self.trace.series = series;
        Ok(self)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err("duration", "must be positive"));
        }
        if self.warmup.0 >= self.duration.0 {
            return Err(err("warmup", "must be shorter than duration"));
        }
        check_link("topology.bottleneck", &self.topology.bottleneck, true)?;
        check_link("topology.access", &self.topology.access, false)?;
        check_link("topology.sink_access", &self.topology.sink_access, false)?;
        for (which, l) in [
            ("bottleneck", &self.topology.bottleneck),
            ("access", &self.topology.access),
            ("sink_access", &self.topology.sink_access),
        ] {
            let bias = l.threshold.as_ref().and_then(|t| t.bias.as_ref());
            if let Some(g) = bias.and_then(|b| b.keys().find(|g| !self.flows.contains_key(*g))) {
                return Err(err(
                    format!("topology.{which}.threshold.bias.{g}"),
                    format!(
                        "no flow group {g:?} (groups: {})",
                        self.flows.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        if self.flows.is_empty() {
            return Err(err(
                "flows",
                "needs at least one flow group, e.g. [flows.tcp] kind = \"tcp\"",
            ));
        }
        for (name, g) in &self.flows {
            let p = format!("flows.{name}");
            if g.count == 0 {
                return Err(err(format!("{p}.count"), "must be at least 1"));
            }
            if let Some(stop) = g.stop {
                if stop.0 <= g.start.0 {
                    return Err(err(format!("{p}.stop"), "must be after start"));
                }
            }
            check_dynamics(&p, g)?;
            for (which, o, base) in [
                ("access", &g.access, &self.topology.access),
                ("sink_access", &g.sink_access, &self.topology.sink_access),
            ] {
                check_link(&format!("{p}.{which}"), &base.with(o), false)?;
            }
            match g.kind {
                FlowKind::Udp => {
                    let Some(rate) = &g.rate else {
                        return Err(err(
                            format!("{p}.rate"),
                            "a UDP flow needs a rate, e.g. rate = \"0.5Mbps\"",
                        ));
                    };
                    rate.validate(&format!("{p}.rate"))?;
                    let piecewise =
                        matches!(rate, RateShape::Shaped(t) if t.shape == ShapeKind::Piecewise);
                    if !piecewise && rate.mean_bps() <= 0.0 {
                        return Err(err(format!("{p}.rate"), "must be positive"));
                    }
                    if g.packet_size == 0 {
                        return Err(err(format!("{p}.packet_size"), "must be positive"));
                    }
                    let tcp_only = [
                        ("variant", g.variant.is_some()),
                        ("profile", g.profile.is_some()),
                        ("alpha", g.alpha.is_some()),
                        ("beta", g.beta.is_some()),
                        ("window", g.window.is_some()),
                        ("max_cwnd", g.max_cwnd.is_some()),
                        ("initial_cwnd", g.initial_cwnd.is_some()),
                        ("initial_ssthresh", g.initial_ssthresh.is_some()),
                        ("initial_rto", g.initial_rto.is_some()),
                        ("min_rto", g.min_rto.is_some()),
                        ("max_rto", g.max_rto.is_some()),
                        ("tick", g.tick.is_some()),
                        ("tick_seed", g.tick_seed.is_some()),
                        ("dupack_threshold", g.dupack_threshold.is_some()),
                        ("limited_transmit", g.limited_transmit.is_some()),
                        ("bug_fix", g.bug_fix.is_some()),
                        ("syn", g.syn.is_some()),
                        ("header_size", g.header_size.is_some()),
                        ("delayed_ack", g.delayed_ack.is_some()),
                        ("delack_interval", g.delack_interval.is_some()),
                        ("app", g.app.is_some()),
                    ];
                    if let Some((key, _)) = tcp_only.iter().find(|(_, set)| *set) {
                        return Err(err(
                            format!("{p}.{key}"),
                            "is a TCP option; this group has kind = \"udp\"",
                        ));
                    }
                }
                FlowKind::Tcp => {
                    if g.rate.is_some() {
                        return Err(err(
                            format!("{p}.rate"),
                            "is a UDP option; a TCP flow sends as fast as its window allows \
                             (or as its app writes)",
                        ));
                    }
                    if g.send_jitter.is_some() {
                        return Err(err(format!("{p}.send_jitter"), "is a UDP option"));
                    }
                    if let Some(app) = &g.app {
                        let ap = format!("{p}.app");
                        if !(app.rate.0 > 0.0 && app.rate.0.is_finite()) {
                            return Err(err(format!("{ap}.rate"), "must be positive"));
                        }
                        if app.send_buffer == Some(0) {
                            return Err(err(
                                format!("{ap}.send_buffer"),
                                "must be at least 1 packet (leave it out for no limit)",
                            ));
                        }
                        if app.when_full.is_some() && app.send_buffer.is_none() {
                            return Err(err(
                                format!("{ap}.when_full"),
                                "needs a send_buffer (without one the buffer is never full)",
                            ));
                        }
                        if app.read.0 == 0 {
                            return Err(err(format!("{ap}.read"), "must be positive"));
                        }
                        if app.interval.0 == 0 {
                            return Err(err(format!("{ap}.interval"), "must be positive"));
                        }
                    }
                    let t = g.tcp_params();
                    if !(t.alpha > 0.0 && t.alpha.is_finite()) {
                        return Err(err(
                            format!("{p}.alpha"),
                            "must be a positive number of packets per RTT",
                        ));
                    }
                    if !(t.beta > 0.0 && t.beta < 1.0) {
                        return Err(err(format!("{p}.beta"), "must be in (0, 1)"));
                    }
                    if t.packet_size <= t.header_size {
                        return Err(err(
                            format!("{p}.packet_size"),
                            format!("must exceed the {}-byte header", t.header_size),
                        ));
                    }
                    if t.window == 0 {
                        return Err(err(format!("{p}.window"), "must be at least 1 packet"));
                    }
                    if t.initial_cwnd == 0 {
                        return Err(err(
                            format!("{p}.initial_cwnd"),
                            "must be at least 1 packet",
                        ));
                    }
                    if t.dupack_threshold == 0 {
                        return Err(err(format!("{p}.dupack_threshold"), "must be at least 1"));
                    }
                    if t.tick_ns == 0 {
                        return Err(err(format!("{p}.tick"), "must be positive"));
                    }
                    if t.min_rto_ns > t.max_rto_ns {
                        return Err(err(format!("{p}.min_rto"), "must not exceed max_rto"));
                    }
                    if let Some(k) = t.tick_seed {
                        // ns-2's RNG takes raw seeds in 1..2^31-1; flow j uses k + j
                        if k == 0 || k as u64 + g.count.max(1) as u64 > (1u64 << 31) - 1 {
                            return Err(err(
                                format!("{p}.tick_seed"),
                                "must be at least 1, and tick_seed + count at most 2^31 - 1",
                            ));
                        }
                    }
                }
            }
        }
        match self.measure.reference.as_str() {
            "capacity" | "free" => {}
            other => {
                crate::time::parse_rate(other).map_err(|_| {
                    err("measure.reference", format!("expected \"capacity\", \"free\" or a rate such as \"0.5Mbps\", got {other:?}"))
                })?;
            }
        }
        Ok(())
    }

    /// The reference rate (bit/s) that throughput is normalized by.
    pub fn reference_bps(&self) -> f64 {
        let c = self.topology.bottleneck.rate.0;
        match self.measure.reference.as_str() {
            "capacity" => c,
            "free" => {
                let udp: f64 = self
                    .flows
                    .values()
                    .filter(|g| g.kind == FlowKind::Udp)
                    .map(|g| {
                        g.rate
                            .as_ref()
                            .map_or(0.0, |r| r.mean_bps_over(self.warmup.0, self.duration.0))
                            * g.count as f64
                    })
                    .sum();
                (c - udp).max(0.0)
            }
            other => crate::time::parse_rate(other).unwrap_or(c),
        }
    }

    /// Resolved scenario as JSON (defaults filled in, units normalized).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }
}

fn check_link(path: &str, l: &LinkSpec, _is_bottleneck: bool) -> Result<(), ScenarioError> {
    if !(l.rate.0 > 0.0) {
        return Err(err(
            format!("{path}.rate"),
            "must be positive, e.g. \"10Mbps\"",
        ));
    }
    check_queue(path, l)?;
    if let Some(e) = &l.errors {
        e.validate(&format!("{path}.errors"))?;
    }
    if let Some(o) = &l.outages {
        o.validate(&format!("{path}.outages"))?;
    }
    Ok(())
}

/// Join and leave schedules of group `g` (key path `p`).
fn check_dynamics(p: &str, g: &FlowGroup) -> Result<(), ScenarioError> {
    if g.joins.is_some() && g.leaves.is_some() {
        return Err(err(
            format!("{p}.leaves"),
            "a group either joins or leaves; put the two schedules in two groups",
        ));
    }
    if let Some(j) = &g.joins {
        let q = format!("{p}.joins");
        if !(j.factor > 1.0 && j.factor.is_finite()) {
            return Err(err(
                format!("{q}.factor"),
                format!(
                    "must be greater than 1 (2 doubles the active flows), got {}",
                    j.factor
                ),
            ));
        }
        if j.initial == 0 {
            return Err(err(format!("{q}.initial"), "must be at least 1"));
        }
        if j.initial > g.count {
            return Err(err(
                format!("{q}.initial"),
                format!("must not exceed count ({}), got {}", g.count, j.initial),
            ));
        }
        if j.every.0 == 0 {
            return Err(err(format!("{q}.every"), "must be positive"));
        }
        if j.at.0 <= g.start.0 {
            return Err(err(format!("{q}.at"), "must be after the group's start"));
        }
        if let Some(stop) = g.stop {
            if j.at.0 >= stop.0 {
                return Err(err(format!("{q}.at"), "must be before the group's stop"));
            }
        }
    }
    if let Some(l) = &g.leaves {
        let q = format!("{p}.leaves");
        if g.stop.is_some() {
            return Err(err(
                format!("{p}.stop"),
                "cannot be combined with leaves (the schedule sets each flow's stop)",
            ));
        }
        if !(l.factor > 0.0 && l.factor < 1.0) {
            return Err(err(
                format!("{q}.factor"),
                format!(
                    "must be in (0, 1) (0.5 halves the active flows), got {}",
                    l.factor
                ),
            ));
        }
        if l.min > g.count {
            return Err(err(
                format!("{q}.min"),
                format!("must not exceed count ({}), got {}", g.count, l.min),
            ));
        }
        if l.every.0 == 0 {
            return Err(err(format!("{q}.every"), "must be positive"));
        }
        if l.at.0 <= g.start.0 {
            return Err(err(format!("{q}.at"), "must be after the group's start"));
        }
    }
    Ok(())
}

/// The queue discipline's table matches `queue` and its values make sense
/// for this link.
fn check_queue(path: &str, l: &LinkSpec) -> Result<(), ScenarioError> {
    let kind = match l.queue {
        QueueKind::DropTail => "droptail",
        QueueKind::Red => "red",
        QueueKind::Threshold => "threshold",
    };
    if l.red.is_some() && l.queue != QueueKind::Red {
        return Err(err(
            format!("{path}.red"),
            format!("applies only with queue = \"red\" (this link has queue = \"{kind}\")"),
        ));
    }
    if l.threshold.is_some() && l.queue != QueueKind::Threshold {
        return Err(err(
            format!("{path}.threshold"),
            format!("applies only with queue = \"threshold\" (this link has queue = \"{kind}\")"),
        ));
    }
    let b = l.buffer;
    match l.queue {
        QueueKind::DropTail => {}
        QueueKind::Red => {
            let p = l
                .red
                .clone()
                .unwrap_or_default()
                .params(l.rate.0, l.delay.0, b);
            let at = |k: &str| format!("{path}.red.{k}");
            if !(p.min_thresh > 0.0 && p.min_thresh.is_finite()) {
                return Err(err(
                    at("min_thresh"),
                    "must be a positive number of packets",
                ));
            }
            if !(p.max_thresh > p.min_thresh && p.max_thresh.is_finite()) {
                return Err(err(
                    at("min_thresh"),
                    format!(
                        "must be below max_thresh (got min_thresh {} and max_thresh {})",
                        p.min_thresh, p.max_thresh
                    ),
                ));
            }
            if p.max_thresh > b as f64 {
                return Err(err(
                    at("max_thresh"),
                    format!(
                        "{} exceeds the buffer ({b} packets); RED's thresholds must fit in it",
                        p.max_thresh
                    ),
                ));
            }
            if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                return Err(err(
                    at("max_p"),
                    format!("must be in (0, 1], got {}", p.max_p),
                ));
            }
            if !(p.weight > 0.0 && p.weight <= 1.0) {
                return Err(err(
                    at("weight"),
                    format!("must be in (0, 1], got {}", p.weight),
                ));
            }
            if p.mean_packet_size == 0 {
                return Err(err(at("mean_packet_size"), "must be at least 1 byte"));
            }
        }
        QueueKind::Threshold => {
            let Some(t) = &l.threshold else {
                return Err(err(
                    format!("{path}.threshold"),
                    "queue = \"threshold\" needs its table, e.g. threshold = { threshold = 3, immunity = \"240ms\" }",
                ));
            };
            let at = |k: &str| format!("{path}.threshold.{k}");
            if t.threshold == 0 {
                return Err(err(at("threshold"), "must be at least 1 packet"));
            }
            if t.threshold >= b {
                return Err(err(
                    at("threshold"),
                    format!(
                        "{} is not below the buffer ({b} packets), the dropper's hard limit; make the buffer large",
                        t.threshold
                    ),
                ));
            }
            if t.immunity.0 == 0 {
                return Err(err(
                    at("immunity"),
                    "must be positive (paper C: a factor of the RTT)",
                ));
            }
            if let Some(bias) = &t.bias {
                if t.selection != Selection::RateIndependent {
                    return Err(err(
                        at("bias"),
                        "applies only with selection = \"rate-independent\"",
                    ));
                }
                if let Some((g, w)) = bias.iter().find(|(_, w)| !(**w > 0.0 && w.is_finite())) {
                    return Err(err(
                        format!("{}.{g}", at("bias")),
                        format!("must be a positive weight, got {w}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Fill a link's RED table with the values it will run with.
fn resolve_queue(l: &mut LinkSpec) {
    if l.queue == QueueKind::Red {
        let spec = l.red.take().unwrap_or_default();
        let p = spec.params(l.rate.0, l.delay.0, l.buffer);
        l.red = Some(RedSpec {
            preset: spec.preset,
            min_thresh: Some(p.min_thresh),
            max_thresh: Some(p.max_thresh),
            max_p: Some(p.max_p),
            weight: Some(p.weight),
            wait: Some(p.wait),
            gentle: Some(p.gentle),
            mode: Some(p.mode),
            mean_packet_size: Some(p.mean_packet_size),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{
        "duration": "10s",
        "topology": {
            "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
            "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
            "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}
        },
        "flows": {"tcp": {"kind": "tcp"}}
    }"#;

    #[test]
    fn minimal_scenario_resolves_with_ns2_defaults() {
        let s = Scenario::from_json(MINIMAL).unwrap().resolve().unwrap();
        let g = &s.flows["tcp"];
        assert_eq!(g.variant, Some(Variant::Reno));
        assert_eq!(g.initial_cwnd, Some(2));
        assert_eq!(g.min_rto, Some(Duration(200_000_000)));
        assert_eq!(g.stop, Some(Duration(10_000_000_000)));
    }

    #[test]
    fn unknown_key_names_its_path() {
        let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "varaint": "reno""#);
        let e = Scenario::from_json(&bad).unwrap_err();
        assert_eq!(e.path, "flows.tcp.varaint");
        assert!(e.message.contains("unknown field"), "{e}");
    }

    #[test]
    fn wrong_unit_and_unknown_variant_are_reported() {
        let bad = MINIMAL.replace(r#""delay": "5ms""#, r#""delay": "5 parsecs""#);
        let e = Scenario::from_json(&bad).unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.delay");
        let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "variant": "vegas""#);
        let e = Scenario::from_json(&bad).unwrap_err();
        assert_eq!(e.path, "flows.tcp.variant");
        assert!(e.message.contains("newreno"), "{e}");
    }

    #[test]
    fn bad_values_are_rejected_with_paths() {
        let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "beta": 1.5"#);
        let e = Scenario::from_json(&bad).unwrap().resolve().unwrap_err();
        assert_eq!(e.path, "flows.tcp.beta");
        let bad = MINIMAL.replace(r#""rate": "1Mbps""#, r#""rate": 0"#);
        let e = Scenario::from_json(&bad).unwrap().resolve().unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.rate");
        let bad = MINIMAL.replace(r#""rate": "1Mbps""#, r#""rate": "-1Mbps""#);
        assert!(Scenario::from_json(&bad).is_err());
    }

    fn with_udp(rate: &str) -> String {
        MINIMAL.replace(
            r#""tcp": {"kind": "tcp"}"#,
            &format!(r#""tcp": {{"kind": "tcp"}}, "bg": {{"kind": "udp", "rate": {rate}}}"#),
        )
    }

    #[test]
    fn bad_shapes_are_rejected_with_paths() {
        let resolve = |r: &str| Scenario::from_json(&with_udp(r)).and_then(|s| s.resolve());
        let e = resolve(
            r#"{"shape": "sine", "mean": "-1Mbps", "amplitude": "1Mbps", "frequency": "1Hz"}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.mean");
        let e =
            resolve(r#"{"shape": "sine", "mean": 0, "amplitude": "1Mbps", "frequency": "1Hz"}"#)
                .unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.mean");
        let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps"}"#).unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.frequency");
        let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps", "frequency": "1Hz", "offset": 3}"#).unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.offset");
        let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps", "frequency": "1Hz", "wobble": 3}"#).unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.wobble");
        let e = resolve(r#"{"shape": "sines", "offset": "1Mbps", "components": [{"amplitude": "1Mbps", "frequency": 0}]}"#).unwrap_err();
        assert_eq!(e.path, "flows.bg.rate.components[0].frequency");
        let s = resolve(
            r#"{"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.5Mbps", "frequency": "0.4Hz"}"#,
        )
        .unwrap();
        let again = Scenario::from_json(&s.to_json())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.to_json(), again.to_json());
    }

    fn resolve_with(link_extra: &str, group_extra: &str) -> Result<Scenario, ScenarioError> {
        let text = MINIMAL
            .replace(
                r#""sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}"#,
                &format!(
                    r#""sink_access": {{"rate": "10Mbps", "delay": "1ms", "buffer": 100{link_extra}}}"#
                ),
            )
            .replace(
                r#""tcp": {"kind": "tcp"}"#,
                &format!(r#""tcp": {{"kind": "tcp", "count": 8{group_extra}}}"#),
            );
        Scenario::from_json(&text).and_then(|s| s.resolve())
    }

    #[test]
    fn bad_error_models_are_rejected_with_paths() {
        let e = |x: &str| resolve_with(&format!(r#", "errors": {x}"#), "").unwrap_err();
        let p = "topology.sink_access.errors";
        assert_eq!(
            e(r#"{"model": "bernoulli", "per": 1.5}"#).path,
            format!("{p}.per")
        );
        assert_eq!(e(r#"{"model": "bernoulli"}"#).path, format!("{p}.per"));
        assert_eq!(
            e(r#"{"model": "bernoulli", "per": 0.1, "p_gb": 0.1}"#).path,
            format!("{p}.p_gb")
        );
        assert_eq!(
            e(r#"{"model": "gilbert-elliott", "p_gb": 0.1}"#).path,
            format!("{p}.p_bg")
        );
        assert_eq!(
            e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0}"#).path,
            format!("{p}.p_bg")
        );
        assert_eq!(
            e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0.3, "per": 0.1}"#).path,
            format!("{p}.per")
        );
        assert_eq!(
            e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0.3, "per_bad": 2}"#).path,
            format!("{p}.per_bad")
        );
        let s = resolve_with(
            r#", "errors": {"model": "gilbert-elliott", "p_gb": 0.01, "p_bg": 0.3}"#,
            "",
        )
        .unwrap();
        let ge = s.topology.sink_access.errors.unwrap();
        assert_eq!((ge.per_good, ge.per_bad), (Some(0.0), Some(1.0)));
        assert!((ge.loss_rate() - 0.01 / 0.31).abs() < 1e-12);
    }

    #[test]
    fn bad_loss_lists_are_rejected_with_paths() {
        let e = |x: &str| resolve_with(&format!(r#", "errors": {x}"#), "").unwrap_err();
        let p = "topology.sink_access.errors";
        assert_eq!(e(r#"{"model": "list"}"#).path, format!("{p}.packets"));
        assert_eq!(
            e(r#"{"model": "bernoulli", "per": 0.1, "packets": [1]}"#).path,
            format!("{p}.packets")
        );
        assert_eq!(
            e(r#"{"model": "list", "packets": [1], "per": 0.1}"#).path,
            format!("{p}.per")
        );
        let err = e(r#"{"model": "list", "packets": [3, 7, 7]}"#);
        assert_eq!(err.path, format!("{p}.packets[2]"));
        assert!(
            err.message.contains("strictly increasing"),
            "{}",
            err.message
        );
        assert_eq!(
            e(r#"{"model": "list", "packets": [3, -1]}"#)
                .path
                .split('.')
                .next(),
            Some("topology")
        );
        let s = resolve_with(r#", "errors": {"model": "list", "packets": []}"#, "").unwrap();
        assert_eq!(s.topology.sink_access.errors.unwrap().packets, Some(vec![]));
    }

    #[test]
    fn bad_outage_schedules_are_rejected_with_paths() {
        let e = |x: &str| resolve_with(&format!(r#", "outages": {x}"#), "").unwrap_err();
        let p = "topology.sink_access.outages";
        assert_eq!(
            e(r#"{"every": "5s", "duration": "5s"}"#).path,
            format!("{p}.duration")
        );
        assert_eq!(
            e(r#"{"every": "5s", "duration": 0}"#).path,
            format!("{p}.duration")
        );
        assert_eq!(e(r#"{"duration": "1s"}"#).path, p);
        assert_eq!(
            e(r#"{"every": "5s", "at": ["1s"], "duration": "1s"}"#).path,
            format!("{p}.at")
        );
        assert_eq!(
            e(r#"{"at": ["3s", "2s"], "duration": "1s"}"#).path,
            format!("{p}.at[1]")
        );
        assert_eq!(
            e(r#"{"at": ["3s"], "start": "1s", "duration": "1s"}"#).path,
            format!("{p}.start")
        );
        assert_eq!(
            e(r#"{"every": "5s", "duration": "1s", "distribution": "pareto"}"#).path,
            format!("{p}.distribution")
        );
        // a periodic schedule starts one period in unless told; exponential
        // durations may exceed the period (overlaps merge)
        let s = resolve_with(
            r#", "outages": {"every": "5s", "duration": "6s", "distribution": "exponential"}"#,
            "",
        )
        .unwrap();
        assert_eq!(
            s.topology.sink_access.outages.unwrap().start,
            Some(Duration(5_000_000_000))
        );
    }

    #[test]
    fn bad_join_and_leave_schedules_are_rejected_with_paths() {
        let e = |x: &str| resolve_with("", x).unwrap_err();
        let j = r#""at": "2s", "every": "1s""#;
        assert_eq!(
            e(&format!(r#", "joins": {{"initial": 2, {j}, "factor": 1}}"#)).path,
            "flows.tcp.joins.factor"
        );
        assert_eq!(
            e(&format!(r#", "joins": {{"initial": 9, {j}, "factor": 2}}"#)).path,
            "flows.tcp.joins.initial"
        );
        assert_eq!(
            e(&format!(r#", "joins": {{"initial": 0, {j}, "factor": 2}}"#)).path,
            "flows.tcp.joins.initial"
        );
        assert_eq!(
            e(r#", "joins": {"initial": 2, "at": "2s", "every": 0, "factor": 2}"#).path,
            "flows.tcp.joins.every"
        );
        assert_eq!(
            e(&format!(
                r#", "start": "3s", "joins": {{"initial": 2, {j}, "factor": 2}}"#
            ))
            .path,
            "flows.tcp.joins.at"
        );
        assert_eq!(
            e(&format!(r#", "leaves": {{{j}, "factor": 1}}"#)).path,
            "flows.tcp.leaves.factor"
        );
        assert_eq!(
            e(&format!(r#", "leaves": {{{j}, "factor": 0}}"#)).path,
            "flows.tcp.leaves.factor"
        );
        assert_eq!(
            e(&format!(r#", "leaves": {{{j}, "factor": 0.5, "min": 9}}"#)).path,
            "flows.tcp.leaves.min"
        );
        assert_eq!(
            e(&format!(
                r#", "stop": "5s", "leaves": {{{j}, "factor": 0.5}}"#
            ))
            .path,
            "flows.tcp.stop"
        );
        assert_eq!(
            e(&format!(
                r#", "joins": {{"initial": 2, {j}, "factor": 2}}, "leaves": {{{j}, "factor": 0.5}}"#
            ))
            .path,
            "flows.tcp.leaves"
        );
        // a resolved leave schedule keeps stop unset, so it resolves again
        let s = resolve_with("", &format!(r#", "leaves": {{{j}, "factor": 0.5}}"#)).unwrap();
        assert_eq!(s.flows["tcp"].stop, None);
        Scenario::from_json(&s.to_json())
            .unwrap()
            .resolve()
            .unwrap();
    }

    #[test]
    fn join_and_leave_schedules_give_each_flow_its_window() {
        let s = |x: &str| resolve_with("", x).unwrap();
        let sec = 1_000_000_000;
        let end = 10 * sec;
        // 8 flows, 2 at first, doubling at 2 s and 3 s (then all 8 are in)
        let g = s(r#", "joins": {"initial": 2, "at": "2s", "every": "1s", "factor": 2}"#).flows
            ["tcp"]
            .clone();
        let starts: Vec<_> = (0..8).map(|j| g.flow_window(j, end).0 / sec).collect();
        assert_eq!(starts, vec![0, 0, 2, 2, 3, 3, 3, 3]);
        // 8 flows halving at 2, 3, 4 s down to the minimum of 1
        let g = s(r#", "leaves": {"at": "2s", "every": "1s", "factor": 0.5}"#).flows["tcp"].clone();
        let stops: Vec<_> = (0..8).map(|j| g.flow_window(j, end).1 / sec).collect();
        assert_eq!(stops, vec![10, 4, 3, 3, 2, 2, 2, 2]);
    }

    #[test]
    fn new_shapes_and_apps_resolve_and_round_trip() {
        let json = with_udp(
            r#"{"shape": "piecewise", "points": [["0s", "1Mbps"], [2.5, 300000], ["4s", 0]], "repeat": true}"#,
        )
        .replace(
            r#""tcp": {"kind": "tcp"}"#,
            r#""tcp": {"kind": "tcp", "app": {"kind": "cbr", "rate": "1Mbps", "send_buffer": 8, "read": "125KB", "interval": "1s"}},
               "onoff": {"kind": "udp", "send_jitter": "1ms", "rate": {"shape": "onoff", "rate": "1Mbps",
                 "on": {"distribution": "pareto", "mean": "1s", "alpha": 1.5}, "off": {"distribution": "fixed", "mean": "0.5s"}}}"#,
        );
        let s = Scenario::from_json(&json).unwrap().resolve().unwrap();
        let app = s.flows["tcp"].app.unwrap();
        assert_eq!(app.when_full, Some(WhenFull::Block));
        assert_eq!(app.read.0, 125_000);
        // (1 + 0.3)/2·2.5 + 0.3/2·1.5 = 1.85 Mbit per 4 s
        let bg = s.flows["bg"].rate.as_ref().unwrap();
        assert!((bg.mean_bps() - 1.85e6 / 4.0).abs() < 1e-6);
        assert!((s.flows["onoff"].rate.as_ref().unwrap().mean_bps() - 1e6 / 1.5).abs() < 1e-6);
        let again = Scenario::from_json(&s.to_json())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.to_json(), again.to_json());
    }

    #[test]
    fn resolved_scenario_round_trips() {
        let s = Scenario::from_json(MINIMAL).unwrap().resolve().unwrap();
        let again = Scenario::from_json(&s.to_json())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.to_json(), again.to_json());
    }
}
