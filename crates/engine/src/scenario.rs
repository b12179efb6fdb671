//! The one definition of a scenario. Scenario files are TOML; Python loads
//! them into a dict, applies `--set` overrides and hands the engine JSON. The
//! schema below rejects unknown keys (`deny_unknown_fields`), and every error
//! names the key path and the expected form.
//!
//! Defaults follow ns-2 2.35 (`tcl/lib/ns-default.tcl`) wherever the papers
//! depend on them; each says where it comes from.

use crate::time::{Duration, Freq, Rate, SimTime};
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
    /// Long-run mean rate in bit/s (of the clipped shape).
    pub fn mean_bps(&self) -> f64 {
        match self {
            RateShape::Constant(r) => r.0,
            RateShape::Shaped(_) => crate::traffic::shape::Shape::from_spec(self).mean_bps(),
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
        };
        let present = [
            ("mean", t.mean.is_some()),
            ("amplitude", t.amplitude.is_some()),
            ("frequency", t.frequency.is_some()),
            ("phase", t.phase.is_some()),
            ("offset", t.offset.is_some()),
            ("components", t.components.is_some()),
        ];
        let shape_name = match t.shape {
            ShapeKind::Sine => "sine",
            ShapeKind::Sines => "sines",
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
        }
        Ok(())
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

    // --- TCP (None until resolved; rejected for UDP) ---
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
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
        TcpParams {
            variant: self.variant.unwrap_or(Variant::Reno),
            alpha: self.alpha.unwrap_or(1.0),
            beta: self.beta.unwrap_or(0.5),
            window: self.window.unwrap_or(DEFAULT_WINDOW),
            max_cwnd: self.max_cwnd.unwrap_or(0),
            initial_cwnd: self.initial_cwnd.unwrap_or(2),
            initial_ssthresh: self.initial_ssthresh.unwrap_or(0),
            initial_rto_ns: self.initial_rto.map(|d| d.0).unwrap_or(3_000_000_000),
            min_rto_ns: self.min_rto.map(|d| d.0).unwrap_or(200_000_000),
            max_rto_ns: self.max_rto.map(|d| d.0).unwrap_or(60_000_000_000),
            tick_ns: self.tick.map(|d| d.0).unwrap_or(10_000_000),
            dupack_threshold: self.dupack_threshold.unwrap_or(3),
            limited_transmit: self.limited_transmit.unwrap_or(true),
            bug_fix: self.bug_fix.unwrap_or(true),
            syn: self.syn.unwrap_or(true),
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
            }
        }
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
                    if rate.mean_bps() <= 0.0 {
                        return Err(err(format!("{p}.rate"), "must be positive"));
                    }
                    if g.packet_size == 0 {
                        return Err(err(format!("{p}.packet_size"), "must be positive"));
                    }
                    let tcp_only = [
                        ("variant", g.variant.is_some()),
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
                        ("dupack_threshold", g.dupack_threshold.is_some()),
                        ("limited_transmit", g.limited_transmit.is_some()),
                        ("bug_fix", g.bug_fix.is_some()),
                        ("syn", g.syn.is_some()),
                        ("header_size", g.header_size.is_some()),
                        ("delayed_ack", g.delayed_ack.is_some()),
                        ("delack_interval", g.delack_interval.is_some()),
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
                            "is a UDP option; a TCP flow sends as fast as its window allows",
                        ));
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
                    .map(|g| g.rate.as_ref().map_or(0.0, |r| r.mean_bps()) * g.count as f64)
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
    fn resolved_scenario_round_trips() {
        let s = Scenario::from_json(MINIMAL).unwrap().resolve().unwrap();
        let again = Scenario::from_json(&s.to_json())
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(s.to_json(), again.to_json());
    }
}
