//! A scenario resolved into its Plan (the types: `crate::plan`).
//!
//! A scenario file says what the user wants (units as strings, defaults
//! left out, flows as groups, a topology by kind). [`Plan::from_scenario`]
//! resolves it: defaults filled in (see `defaults.rs`, each with its
//! origin), the topology laid out into links and per-flow routes (see
//! `topology/`), every random schedule that is fixed before the run drawn
//! (start jitter, join and leave schedules, outage intervals, the TCP
//! clocks' boot offsets), every derived parameter computed (RED's
//! thresholds and queue weight, the payload of a packet, the reference
//! rate, a UDP shape's mean). Each schema spec the layers below take has
//! its resolved form here (`QueuePlan::of`, `ErrorPlan::of`,
//! `OutagePlan::of`, `ShapePlan::of`), and each flow's bottleneck is
//! decided here, once (`Route::bottleneck`).

use super::topology::{self, LinkLayout};
use super::*;
use crate::net::outage::OutageSchedule;
use crate::rng::{stream, Rng};
use crate::tcp::rtt::ns2_boot_time_s;
use crate::time::secs;
use crate::traffic::shape::Shape;

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

/// A scenario's rate knows its mean through the shape it describes
/// (`traffic::shape`).
impl RateShape {
    /// Long-run mean rate in bit/s (of the clipped shape; on/off: its
    /// expectation, rate·E[on]/(E[on] + E[off])).
    pub fn mean_bps(&self) -> f64 {
        match self {
            RateShape::Constant(r) => r.0,
            RateShape::Shaped(_) => Shape::mean_of(&ShapePlan::of(self)),
        }
    }

    /// Whether the long-run mean is positive, without computing it where
    /// that is costly: a sum of sines over a positive offset is (the clipped
    /// rate is at least the unclipped one, whose mean is the offset), while
    /// its clipped mean is an average over two million samples (~0.7 G
    /// instructions) that validating a scenario does not need.
    pub fn has_positive_mean(&self) -> bool {
        match self {
            RateShape::Shaped(t)
                if t.shape == ShapeKind::Sines && t.offset.is_some_and(|o| o.0 > 0.0) =>
            {
                true
            }
            _ => self.mean_bps() > 0.0,
        }
    }

    /// Mean rate over simulation time [a, b] (bit/s): exact for piecewise
    /// tables (which need not repeat), the long-run mean otherwise.
    pub fn mean_bps_over(&self, a: SimTime, b: SimTime) -> f64 {
        match self {
            RateShape::Constant(r) => r.0,
            RateShape::Shaped(_) => Shape::mean_over(&ShapePlan::of(self), a, b),
        }
    }
}

impl Plan {
    /// Resolve `sc` (defaults, checks: see [`Scenario::resolve`]) into the
    /// plan of its run.
    pub fn from_scenario(sc: &Scenario) -> Result<Plan, ScenarioError> {
        let sc = sc.clone().resolve()?;
        let end = sc.duration.0;
        let layout = topology::build(&sc);
        let links: Vec<LinkPlan> = layout
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
                let route = Route { forward, reverse };
                let (start_ns, stop_ns) = times[id as usize];
                flows.push(FlowPlan {
                    id,
                    group: name.clone(),
                    kind: g.kind,
                    start_ns,
                    stop_ns,
                    bottleneck: route.bottleneck(&links),
                    route,
                    packet_size: g.packet_size,
                    tcp: (g.kind == FlowKind::Tcp).then(|| tcp_plan(&sc, g, id, j)),
                    app: g.app.as_ref().map(|a| AppPlan {
                        rate_bps: a.rate.0,
                        send_buffer_pkts: a.send_buffer,
                        when_full: a.when_full,
                        read_bytes: a.read.0,
                        interval_ns: a.interval.0,
                    }),
                    udp: g.rate.as_ref().map(|r| {
                        let shape = ShapePlan::of(r);
                        UdpPlan {
                            mean_bps: Shape::mean_of(&shape),
                            shape,
                            send_jitter_ns: g.send_jitter.map_or(0, |d| d.0),
                        }
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
            trace: TracePlan {
                series: sc.trace.series.clone(),
                interval_ns: sc.trace.interval.0,
            },
            linux: linux_plan(&sc, &flows),
            flows,
        })
    }
}

impl Route {
    /// Each direction's bottleneck among `links` (the plan's): the slowest
    /// link; among equals the one whose role is `bottleneck`, else the first.
    pub fn bottleneck(&self, links: &[LinkPlan]) -> Bottleneck {
        let slowest = |route: &[u32]| {
            let mut best: Option<u32> = None;
            for &k in route {
                let l = &links[k as usize];
                let better = best.is_none_or(|b| {
                    let b = &links[b as usize];
                    l.rate_bps < b.rate_bps
                        || (l.rate_bps == b.rate_bps
                            && l.role == LinkRole::Bottleneck
                            && b.role != LinkRole::Bottleneck)
                });
                if better {
                    best = Some(k);
                }
            }
            best.expect("a route crosses at least one link (validated)")
        };
        Bottleneck {
            forward: slowest(&self.forward),
            reverse: slowest(&self.reverse),
        }
    }
}

/// The `[linux]` table resolved (see [`LinuxPlan`] for each option's rule)
/// for the planned `flows` of the resolved scenario `sc`.
fn linux_plan(sc: &Scenario, flows: &[FlowPlan]) -> LinuxPlan {
    let lx = sc.linux.clone().unwrap_or_default();
    let tcp: Vec<&TcpParams> = flows
        .iter()
        .filter_map(|f| f.tcp.as_ref().map(|t| &t.params))
        .collect();
    let first = tcp.first();
    let profile = match first.map(|t| t.profile) {
        Some(Profile::Linux) => LinuxProfile::Linux,
        _ => LinuxProfile::Ns2,
    };
    let ns2 = profile == LinuxProfile::Ns2;
    let mut explicit = Vec::new();
    let mut set = |key: &str, on: bool| {
        if on {
            explicit.push(key.to_string());
        }
    };
    set("frto", lx.frto.is_some());
    set("initial_cwnd", lx.initial_cwnd.is_some());
    set("min_rto", lx.min_rto.is_some());
    set("quickack", lx.quickack.is_some());
    set("rack", lx.rack.is_some());
    set("sack", lx.sack.is_some());
    set("sample_interval", lx.sample_interval.is_some());
    set("timestamps", lx.timestamps.is_some());
    set("tlp", lx.tlp.is_some());
    LinuxPlan {
        profile,
        sack: lx
            .sack
            .unwrap_or(!ns2 || tcp.iter().any(|t| t.variant == Variant::Sack)),
        rack: lx.rack.unwrap_or(!ns2),
        tlp: lx.tlp.unwrap_or(!ns2),
        frto: lx.frto.unwrap_or(!ns2),
        timestamps: lx.timestamps.unwrap_or(!ns2),
        initial_cwnd: lx
            .initial_cwnd
            .or(first.filter(|_| ns2).map(|t| t.initial_cwnd)),
        min_rto_ns: lx
            .min_rto
            .map(|d| d.0)
            .or(first.filter(|_| ns2).map(|t| t.min_rto_ns)),
        quickack: lx
            .quickack
            .unwrap_or(ns2 && !tcp.iter().any(|t| t.delayed_ack)),
        sample_interval_ns: match sc.trace.interval.0 {
            0 => lx.sample_interval.map_or(LINUX_SAMPLE_INTERVAL, |d| d.0),
            t => t,
        },
        explicit,
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
        // the sink's acks are bare headers (tcp::sink)
        ack_bytes: params.header_size,
        boot_time_s,
    }
}

fn link_plan(l: &LinkLayout, id: u32, seed: u64, end: SimTime) -> LinkPlan {
    let s = &l.spec;
    LinkPlan {
        id,
        name: l.name.clone(),
        role: l.role,
        flow: l.flow,
        hop: l.hop,
        key: l.key.clone(),
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
        errors: if l.forward {
            s.errors.as_ref().map(ErrorPlan::of)
        } else {
            None
        },
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
        &OutagePlan::of(o),
        Rng::stream(seed, stream::LINK_OUTAGES, duplex as u64),
        end,
    )
}

impl OutagePlan {
    /// The schedule a (resolved) outage spec describes.
    pub fn of(o: &OutageSpec) -> OutagePlan {
        OutagePlan {
            start_ns: o.start.or(o.every).map_or(0, |d| d.0),
            every_ns: o.every.map(|d| d.0),
            at_ns: o
                .at
                .as_ref()
                .map(|v| v.iter().map(|d| d.0).collect())
                .unwrap_or_default(),
            duration_ns: o.duration.0,
            distribution: o.distribution,
        }
    }
}

impl ErrorPlan {
    /// The error model of a (resolved) spec.
    pub fn of(e: &ErrorSpec) -> ErrorPlan {
        ErrorPlan {
            model: e.model,
            per: e.per,
            p_gb: e.p_gb,
            p_bg: e.p_bg,
            per_good: e.per_good,
            per_bad: e.per_bad,
            packets: e.packets.clone(),
        }
    }
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
                QueuePlan::Threshold(ThresholdParams {
                    threshold_pkts: t.threshold,
                    immunity_ns: t.immunity.0,
                    selection: t.selection,
                    bias: t.bias.clone().unwrap_or_default(),
                })
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
fn flow_times(sc: &Scenario) -> Vec<(SimTime, SimTime)> {
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
        let mut start = self.start.of(j);
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
