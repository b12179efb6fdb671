//! The Plan: a scenario resolved once into what a run will do, in plain SI
//! numbers (bit/s, bytes, packets) and integer nanoseconds.
//!
//! A scenario file says what the user wants (units as strings, defaults
//! left out, flows as groups, a topology by kind). [`Plan::from_scenario`]
//! resolves it: defaults filled in (see `defaults.rs`, each with its
//! origin), the topology laid out into links and per-flow routes (see
//! `topology/`), every random schedule that is fixed before the run drawn
//! (start jitter, join and leave schedules, outage intervals, the TCP
//! clocks' boot offsets), every derived parameter computed (RED's
//! thresholds and queue weight, the payload of a packet, the reference
//! rate). The packet engine builds its network from a Plan and nothing
//! else; exporters (ns-2, Linux) and Python (`_core.plan`) read the same
//! Plan, so every engine starts the same flows at the same instants.
//!
//! What the Plan does not fix is what happens during the run: packet losses
//! drawn per arrival (error models, RED's coin), on/off periods and UDP send
//! jitter (drawn as the source sends), and everything TCP does.

use super::*;
use crate::net::outage::OutageSchedule;
use crate::rng::{stream, Rng};
use crate::tcp::rtt::ns2_boot_time_s;
use crate::time::secs;
use crate::topology::{self, LinkLayout};
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything a run does, resolved. Serializes to JSON (`_core.plan`).
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Master seed; every random stream derives from it and an index (a
    /// link id, a flow id), see `rng::stream`.
    pub seed: u64,
    /// Which builder laid out `links` and the routes (`topology/`).
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
}

/// One direction of a link: a FIFO buffer in front of a serializer of
/// `rate_bps`, then `delay_ns` of propagation.
#[derive(Debug, Clone, Serialize)]
pub struct LinkPlan {
    pub id: u32,
    /// Shared by both directions: "bottleneck", "access[3]" (flow 3's).
    pub name: String,
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
    pub errors: Option<ErrorSpec>,
    /// When the link is down, [start_ns, end_ns) merged and increasing:
    /// every outage that starts before the run ends, then the first one
    /// that starts at or after the end (a packet that arrives before the
    /// end is lost if it would still be on the link when that one begins).
    /// Both directions have the same list.
    pub outages: Vec<(SimTime, SimTime)>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Away from the sources: data packets.
    Forward,
    /// Towards the sources: acks.
    Reverse,
}

/// A queue discipline with every parameter it runs with.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum QueuePlan {
    /// Drop an arrival that finds `buffer_pkts` waiting.
    DropTail,
    /// RED, ns-2 2.35's semantics; thresholds in packets (or, in byte mode,
    /// in units of mean_packet_size bytes), see [`red_params`].
    Red(RedParams),
    /// Paper C's threshold dropper (see `net::queue::ThresholdDropper`).
    Threshold {
        /// Th, packets waiting.
        threshold_pkts: u32,
        /// τ, ns: nothing more is dropped by the threshold this long after
        /// a congestion event starts.
        immunity_ns: SimTime,
        selection: Selection,
        /// Selection weight per flow group (rate-independent only; groups
        /// not named weigh 1).
        bias: BTreeMap<String, f64>,
    },
}

/// One flow: a source at the start of its forward route, a receiver at its
/// end; acks go back on the reverse route.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Route {
    /// Data: source → receiver.
    pub forward: Vec<u32>,
    /// Acks: receiver → source.
    pub reverse: Vec<u32>,
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
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TcpPlan {
    #[serde(flatten)]
    pub params: TcpParams,
    /// Payload bytes of a full packet: packet_size − header_size.
    pub payload_bytes: u32,
    /// Offset of the sender's RTT clock (ns-2's `tcpTick_` ticks are counted
    /// from a random boot time), s, in [0, tick): from the flow's own stream.
    pub boot_time_s: f64,
}

/// A CBR application writing into a TCP flow (paper B7), with a playback
/// reader at the receiver.
#[derive(Debug, Clone, Copy, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct UdpPlan {
    /// The rate over time (a constant or a shape, see `traffic::shape` for
    /// the semantics). Serialized in SI numbers and nanoseconds with a
    /// `kind` tag, as [`ShapePlan`] describes; the engine keeps the spec.
    #[serde(serialize_with = "shape_si")]
    pub shape: RateShape,
    /// Long-run mean of the shape (clipped at 0), bit/s.
    pub mean_bps: f64,
    /// Each packet leaves U[0, send_jitter_ns] after its time by the shape, ns.
    pub send_jitter_ns: SimTime,
}

/// A UDP source's rate shape as the Plan writes it: plain bit/s, Hz,
/// radians and nanoseconds (the scenario's unit strings resolved).
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SinePlan {
    pub amplitude_bps: f64,
    pub frequency_hz: f64,
    pub phase_rad: f64,
}

/// The distribution of on or off period lengths.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PeriodPlan {
    pub distribution: PeriodDistribution,
    pub mean_ns: SimTime,
    /// Pareto's shape (pareto only).
    pub alpha: Option<f64>,
}

impl ShapePlan {
    /// The resolved (validated) shape `r` in SI numbers.
    pub fn of(r: &RateShape) -> ShapePlan {
        let rate = |x: Option<crate::time::Rate>| x.map_or(0.0, |r| r.0);
        let period = |p: &Option<PeriodSpec>| {
            let p = p.expect("validated: on/off periods are set");
            PeriodPlan {
                distribution: p.distribution,
                mean_ns: p.mean.0,
                alpha: p.alpha,
            }
        };
        match r {
            RateShape::Constant(r) => ShapePlan::Constant { rate_bps: r.0 },
            RateShape::Shaped(t) => match t.shape {
                ShapeKind::Sine => ShapePlan::Sine {
                    mean_bps: rate(t.mean),
                    amplitude_bps: rate(t.amplitude),
                    frequency_hz: t.frequency.map_or(1.0, |f| f.0),
                    phase_rad: t.phase.unwrap_or(0.0),
                },
                ShapeKind::Sines => ShapePlan::Sines {
                    offset_bps: rate(t.offset),
                    components: t
                        .components
                        .iter()
                        .flatten()
                        .map(|c| SinePlan {
                            amplitude_bps: c.amplitude.0,
                            frequency_hz: c.frequency.0,
                            phase_rad: c.phase,
                        })
                        .collect(),
                },
                ShapeKind::Piecewise => ShapePlan::Piecewise {
                    points: t.points.iter().flatten().map(|(d, r)| (d.0, r.0)).collect(),
                    repeat: t.repeat.unwrap_or(false),
                },
                ShapeKind::OnOff => ShapePlan::Onoff {
                    rate_bps: rate(t.rate),
                    on: period(&t.on),
                    off: period(&t.off),
                },
            },
        }
    }
}

fn shape_si<S: serde::Serializer>(r: &RateShape, s: S) -> Result<S::Ok, S::Error> {
    ShapePlan::of(r).serialize(s)
}

/// What the recorder traces (`[trace]`).
#[derive(Debug, Clone, Serialize)]
pub struct TracePlan {
    /// Sorted, without duplicates.
    pub series: Vec<TraceKind>,
    /// 0 records every change; otherwise one sample every interval_ns.
    pub interval_ns: SimTime,
}

impl Plan {
    /// Resolve `sc` (defaults, checks: see [`Scenario::resolve`]) into the
    /// plan of its run.
    pub fn from_scenario(sc: &Scenario) -> Result<Plan, ScenarioError> {
        let sc = sc.clone().resolve()?;
        let end = sc.duration.0;
        let layout = topology::build(&sc);
        let links = layout
            .links
            .iter()
            .enumerate()
            .map(|(id, l)| link_plan(l, id as u32, sc.seed, end))
            .collect();
        let times = flow_times(&sc);
        let mut flows = Vec::with_capacity(times.len());
        let mut routes = layout.routes.into_iter();
        for (name, g) in &sc.flows {
            for j in 0..g.count {
                let id = flows.len() as u32;
                let [forward, reverse] = routes.next().expect("a route per flow");
                let (start_ns, stop_ns) = times[id as usize];
                flows.push(FlowPlan {
                    id,
                    group: name.clone(),
                    kind: g.kind,
                    start_ns,
                    stop_ns,
                    route: Route { forward, reverse },
                    packet_size: g.packet_size,
                    tcp: (g.kind == FlowKind::Tcp).then(|| tcp_plan(&sc, g, id, j)),
                    app: g.app.as_ref().map(|a| AppPlan {
                        rate_bps: a.rate.0,
                        send_buffer_pkts: a.send_buffer,
                        when_full: a.when_full,
                        read_bytes: a.read.0,
                        interval_ns: a.interval.0,
                    }),
                    udp: g.rate.as_ref().map(|r| UdpPlan {
                        shape: r.clone(),
                        mean_bps: r.mean_bps(),
                        send_jitter_ns: g.send_jitter.map_or(0, |d| d.0),
                    }),
                });
            }
        }
        Ok(Plan {
            seed: sc.seed,
            topology: sc.topology.kind,
            end_ns: end,
            warmup_ns: sc.warmup.0,
            reference_bps: reference_bps(&sc),
            links,
            flows,
            trace: TracePlan {
                series: sc.trace.series.clone(),
                interval_ns: sc.trace.interval.0,
            },
        })
    }

    /// The plan as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a plan always serializes")
    }
}

impl AppPlan {
    /// The application's spec (what `traffic::app::CbrApp` takes).
    pub fn spec(&self) -> AppSpec {
        AppSpec {
            kind: AppKind::Cbr,
            rate: crate::time::Rate(self.rate_bps),
            send_buffer: self.send_buffer_pkts,
            when_full: self.when_full,
            read: crate::time::Bytes(self.read_bytes),
            interval: Duration(self.interval_ns),
        }
    }
}

impl AppSpec {
    /// The window cap a blocking send buffer sets (None: no cap): the
    /// sender never has more than send_buffer packets unacknowledged.
    pub fn window_cap(&self) -> Option<u32> {
        match self.when_full {
            Some(WhenFull::Drop) => None,
            _ => self.send_buffer,
        }
    }
}

impl TracePlan {
    /// The recorder's spec.
    pub fn spec(&self) -> TraceSpec {
        TraceSpec {
            series: self.series.clone(),
            interval: Duration(self.interval_ns),
        }
    }
}

/// Flow `id`, the `j`-th of group `g` (from 0).
fn tcp_plan(sc: &Scenario, g: &FlowGroup, id: u32, j: u32) -> TcpPlan {
    let mut params = g.tcp_params();
    if let Some(cap) = g.app.as_ref().and_then(AppSpec::window_cap) {
        params.window = params.window.min(cap);
    }
    let tick_s = secs(params.tick_ns);
    let boot_time_s = match params.tick_seed {
        // as ns-2 draws it after `$defaultRNG seed K + j`
        Some(k) => ns2_boot_time_s(k + j, tick_s),
        None => Rng::stream(sc.seed, stream::FLOW_START, 1_000_000 + id as u64).uniform() * tick_s,
    };
    TcpPlan {
        params,
        payload_bytes: params.packet_size - params.header_size,
        boot_time_s,
    }
}

fn link_plan(l: &LinkLayout, id: u32, seed: u64, end: SimTime) -> LinkPlan {
    let s = &l.spec;
    LinkPlan {
        id,
        name: l.name.clone(),
        direction: if l.forward {
            Direction::Forward
        } else {
            Direction::Reverse
        },
        duplex: l.duplex,
        rate_bps: s.rate.0,
        delay_ns: s.delay.0,
        buffer_pkts: s.buffer,
        queue: QueuePlan::of(s),
        errors: if l.forward { s.errors.clone() } else { None },
        outages: s.outages.as_ref().map_or(Vec::new(), |o| {
            let mut v = Vec::new();
            for iv in outage_schedule(o, seed, l.duplex, end) {
                v.push(iv);
                if iv.0 >= end {
                    break;
                }
            }
            v
        }),
    }
}

/// The outage schedule of the duplex link whose forward direction is
/// `duplex` (drawn from that link's stream), for a run that ends at `end` ns.
pub fn outage_schedule(o: &OutageSpec, seed: u64, duplex: u32, end: SimTime) -> OutageSchedule {
    OutageSchedule::new(
        o,
        Rng::stream(seed, stream::LINK_OUTAGES, duplex as u64),
        end,
    )
}

impl QueuePlan {
    /// The discipline of a (resolved) link with all its parameters.
    pub fn of(l: &LinkSpec) -> QueuePlan {
        match l.queue {
            QueueKind::DropTail => QueuePlan::DropTail,
            QueueKind::Red => QueuePlan::Red(red_params(
                &l.red.clone().unwrap_or_default(),
                l.rate.0,
                l.delay.0,
                l.buffer,
            )),
            QueueKind::Threshold => {
                let t = l
                    .threshold
                    .as_ref()
                    .expect("validated: queue = threshold has its table");
                QueuePlan::Threshold {
                    threshold_pkts: t.threshold,
                    immunity_ns: t.immunity.0,
                    selection: t.selection,
                    bias: t.bias.clone().unwrap_or_default(),
                }
            }
        }
    }
}

/// RED's parameters — the one derivation: the table's explicit keys, else
/// its preset's, else ns-2 2.35's automatic defaults for a link of
/// `rate_bps`, `delay_ns` and `buffer` packets (red.cc `reset()`).
pub fn red_params(spec: &RedSpec, rate_bps: f64, delay_ns: SimTime, buffer: u32) -> RedParams {
    let (mut min, mut max, mut max_p, mut weight, mut wait, mut gentle, mut mode) =
        (None, None, None, None, None, None, None);
    if let Some(RedPreset::PaperC) = spec.preset {
        min = Some(PAPER_C_MIN_OF_BUFFER * buffer as f64);
        max = Some(PAPER_C_MAX_OF_BUFFER * buffer as f64);
        max_p = Some(PAPER_C_MAX_P);
        weight = Some(PAPER_C_WEIGHT);
        wait = Some(true);
        gentle = Some(true);
        mode = Some(RedMode::Packet);
    }
    let mean = spec.mean_packet_size.unwrap_or(RED_MEAN_PACKET_SIZE);
    // ns-2 red.cc reset(): ptc, the link's rate in mean-size packets per second
    let ptc = rate_bps / (8.0 * mean as f64);
    let min_thresh = spec
        .min_thresh
        .or(min)
        .unwrap_or_else(|| (RED_TARGET_DELAY_S * ptc / 2.0).max(RED_MIN_THRESH_FLOOR));
    let max_thresh = spec
        .max_thresh
        .or(max)
        .unwrap_or(RED_MAX_OVER_MIN * min_thresh);
    let weight = spec.weight.or(weight).unwrap_or_else(|| {
        let rtt = (3.0 * (secs(delay_ns) + 1.0 / ptc)).max(RED_MIN_RTT_S);
        1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
    });
    RedParams {
        min_thresh,
        max_thresh,
        max_p: spec.max_p.or(max_p).unwrap_or(RED_MAX_P),
        weight,
        wait: spec.wait.or(wait).unwrap_or(RED_WAIT),
        gentle: spec.gentle.or(gentle).unwrap_or(RED_GENTLE),
        mode: spec.mode.or(mode).unwrap_or(RED_MODE),
        mean_packet_size: mean,
        ecn: spec.ecn.unwrap_or(RED_ECN),
        seed: spec.seed,
    }
}

/// The reference rate (bit/s) of a resolved scenario (see [`Plan::reference_bps`]).
fn reference_bps(sc: &Scenario) -> f64 {
    let c = sc.topology.capacity_bps();
    match sc.measure.reference.as_str() {
        "capacity" => c,
        "free" => {
            let udp: f64 = sc
                .flows
                .values()
                .filter(|g| g.kind == FlowKind::Udp)
                .map(|g| {
                    g.rate
                        .as_ref()
                        .map_or(0.0, |r| r.mean_bps_over(sc.warmup.0, sc.duration.0))
                        * g.count as f64
                })
                .sum();
            (c - udp).max(0.0)
        }
        other => crate::time::parse_rate(other).unwrap_or(c),
    }
}

/// (start, stop) of every flow of a resolved scenario, in flow id order
/// (see [`FlowPlan::start_ns`], [`FlowPlan::stop_ns`]).
pub fn flow_times(sc: &Scenario) -> Vec<(SimTime, SimTime)> {
    let end = sc.duration.0;
    let mut out = Vec::new();
    for g in sc.flows.values() {
        for j in 0..g.count {
            let id = out.len() as u64;
            let (base, stop) = g.flow_window(j, end);
            let jitter = if g.start_jitter.0 > 0 {
                (Rng::stream(sc.seed, stream::FLOW_START, id).uniform() * g.start_jitter.0 as f64)
                    as SimTime
            } else {
                0
            };
            out.push((base.saturating_add(jitter).min(end), stop));
        }
    }
    out
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
