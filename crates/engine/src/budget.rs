//! What a run will cost, estimated from the scenario before it starts, and a
//! refusal when that exceeds what the machine can do: a scenario that asks
//! for 10¹⁵ packets or 8 GB of traces gets an error naming the key that
//! makes it so, not hours at 100 % CPU or an allocation abort.
//!
//! The estimates are upper bounds of the right order, not predictions: a
//! TCP flow sends at most what its access link (and, all together, twice
//! what the bottleneck) carries; a UDP source sends its shape's mean rate;
//! every packet costs a few events; traces sampled every `interval` have a
//! row per TCP flow per sample, traces of every change a row per packet.
//!
//! The limits are set for the machine tcplab is developed and tested on
//! (2 cores, 24 GiB): see [`MAX_EVENTS`] and [`MAX_MEMORY_BYTES`]. `force`
//! skips the check.

use crate::scenario::{FlowKind, LinkSpec, RateShape, Scenario, ScenarioError, ShapeKind};
use crate::scenario::{OutageSpec, TraceKind};
use crate::time::{secs, SimTime};

/// The most events a run may take: 2·10¹⁰. The engine does 5–10 million
/// events a second on one core (600–1400 instructions an
/// event, bench/instructions.py), so this is about an hour of work; beyond, a run is almost surely
/// a unit typo ("1e12s", "1e15Gbps"), and with --force still possible.
pub const MAX_EVENTS: f64 = 2e10;

/// The most memory a run may hold: 6 GiB of engine state and traces. The
/// traces are copied on their way to Python (Rust columns → bytes → numpy →
/// Parquet), so a run's peak is up to three times what the engine holds:
/// 18 GiB, what a 24 GiB machine can give one run.
pub const MAX_MEMORY_BYTES: f64 = 6.0 * (1u64 << 30) as f64;

/// Measured rate of the engine used to turn events into a duration in messages.
const EVENTS_PER_SECOND: f64 = 5e6;

/// Memory of one flow's state (sender, sink, agent, results): about 5 KB
/// measured at 100 000 flows; 8 KB leaves room for its vectors' growth.
const BYTES_PER_FLOW: f64 = 8192.0;

/// Events per TCP data packet and its ack (bench/instructions.py: 1.0 for one
/// flow; for 100 flows at 100 Mb/s 2.3, where senders take acks without an
/// event, and 3.4 with traces on, which turn that off; timers included).
const EVENTS_PER_TCP_PACKET: f64 = 3.0;
/// TCP sends what the bottleneck carries plus what it drops: half again as
/// much covers the heaviest loss of the papers' scenarios.
const TCP_OVER_BOTTLENECK: f64 = 1.5;
/// A UDP packet: its send and its delivery to the bottleneck and to the sink.
const EVENTS_PER_UDP_PACKET: f64 = 3.0;

/// One cycle of a sine shape costs a fraction of an event in the rate solver
/// (a 1 GHz sine over 10 s, 10¹⁰ cycles, took about as long as 10⁸ events).
const EVENTS_PER_SINE_CYCLE: f64 = 0.01;

/// Trace bytes per row: the `record.rs` tables (6 columns of 8 bytes for the
/// TCP state and RTT tables, 4–5 for sends and drops, 3 for UDP, and a
/// 16-byte queue event per packet and queue it crosses).
const TCP_ROW_BYTES: f64 = 48.0;
const SEND_ROW_BYTES: f64 = 32.0;
const DROP_ROW_BYTES: f64 = 40.0;
const UDP_ROW_BYTES: f64 = 24.0;
const QUEUE_BYTES_PER_PACKET: f64 = 6.0 * 16.0;
const PLAYBACK_ROW_BYTES: f64 = 56.0;

/// A run's estimated cost: the largest contributor to each, by key path.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    pub events: f64,
    pub memory_bytes: f64,
    /// (key path, what it costs, its events)
    events_by: Vec<(String, String, f64)>,
    /// (key path, what it costs, its bytes)
    memory_by: Vec<(String, String, f64)>,
}

impl Budget {
    fn work(&mut self, key: String, what: String, events: f64) {
        self.events += events;
        self.events_by.push((key, what, events));
    }

    fn memory(&mut self, key: String, what: String, bytes: f64) {
        self.memory_bytes += bytes;
        self.memory_by.push((key, what, bytes));
    }

    /// Refuse a run beyond the limits: the message names the key that costs most.
    pub fn check(&self) -> Result<(), ScenarioError> {
        let biggest = |v: &[(String, String, f64)]| {
            v.iter()
                .max_by(|a, b| a.2.total_cmp(&b.2))
                .map(|(k, w, _)| (k.clone(), w.clone()))
                .unwrap_or_default()
        };
        if !(self.events <= MAX_EVENTS) {
            let (key, what) = biggest(&self.events_by);
            let hours = self.events / EVENTS_PER_SECOND / 3600.0;
            return Err(ScenarioError {
                path: key,
                message: format!(
                    "this run would {what}: ~{:.1e} events, ~{} of work (limit {:.0e} events, \
                     about an hour); shorten the duration or lower the rate, or pass --force \
                     (force=True) to run anyway",
                    self.events,
                    human_hours(hours),
                    MAX_EVENTS
                ),
            });
        }
        if !(self.memory_bytes <= MAX_MEMORY_BYTES) {
            let (key, what) = biggest(&self.memory_by);
            return Err(ScenarioError {
                path: key,
                message: format!(
                    "this run would {what}: ~{} of memory (limit {}); record fewer traces, \
                     a coarser trace.interval or fewer flows, or pass --force (force=True) \
                     to run anyway",
                    human_bytes(self.memory_bytes),
                    human_bytes(MAX_MEMORY_BYTES)
                ),
            });
        }
        Ok(())
    }
}

fn human_hours(h: f64) -> String {
    if h < 1.0 {
        format!("{:.0} minutes", (h * 60.0).max(1.0))
    } else if h < 48.0 {
        format!("{h:.1} hours")
    } else if h < 24.0 * 365.0 * 10.0 {
        format!("{:.0} days", h / 24.0)
    } else {
        format!("{:.1e} years", h / 24.0 / 365.0)
    }
}

fn human_bytes(b: f64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    if b < GIB {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else if b < 1e6 * GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.1e} bytes", b)
    }
}

/// Estimate a resolved scenario's cost.
pub fn estimate(sc: &Scenario) -> Budget {
    let mut b = Budget::default();
    let end = sc.duration.0;
    let span_s = |start: SimTime, stop: Option<SimTime>| {
        secs(stop.unwrap_or(end).min(end).saturating_sub(start.min(end)))
    };
    let series = &sc.trace.series;
    let has = |k: TraceKind| series.contains(&k);
    let interval = sc.trace.interval.0;
    let topo = &sc.topology;
    // the slowest link every flow may cross (a dumbbell's bottleneck)
    let bottleneck_pps = |size: u32| topo.capacity_bps() / (size.max(1) as f64 * 8.0);
    let mut tcp_flows = 0.0;
    let mut all_flows = 0.0;
    for (name, g) in &sc.flows {
        let p = format!("flows.{name}");
        let n = g.count as f64;
        all_flows += n;
        let t = span_s(g.start.earliest(), g.stop.map(|s| s.0));
        let size = g.packet_size.max(1) as f64 * 8.0;
        // a flow's first link: its own access link, or a path's first link
        let access = match &topo.access {
            Some(a) => a.with(&g.access),
            None => topo.links[0].clone(),
        };
        b.memory(
            format!("{p}.count"),
            format!("keep the state of {n:.0} flows"),
            n * BYTES_PER_FLOW,
        );
        outage_work(&mut b, &format!("{p}.access.outages"), &access, end);
        match g.kind {
            FlowKind::Tcp => {
                tcp_flows += n;
                // each flow at most its access link; all at most the bottleneck and its losses
                let pkts = (n * access.rate.0 / size)
                    .min(TCP_OVER_BOTTLENECK * bottleneck_pps(g.packet_size))
                    * t;
                b.work(
                    // as many as the links carry in the time: the duration decides
                    "duration".into(),
                    format!("send ~{pkts:.1e} TCP packets ({p})"),
                    pkts * EVENTS_PER_TCP_PACKET,
                );
                if let Some(app) = &g.app {
                    let writes = n * app.rate.0 / size * t;
                    b.work(
                        format!("{p}.app.rate"),
                        format!("make ~{writes:.1e} application writes"),
                        writes,
                    );
                    let reads = n * t / secs(app.interval.0.max(1));
                    b.work(
                        format!("{p}.app.interval"),
                        format!("make ~{reads:.1e} playback reads"),
                        reads,
                    );
                    b.memory(
                        format!("{p}.app.interval"),
                        format!("record ~{reads:.1e} playback reads"),
                        reads * PLAYBACK_ROW_BYTES,
                    );
                }
                let mut row = 0.0;
                if has(TraceKind::Seq) {
                    row += SEND_ROW_BYTES;
                }
                if interval == 0 {
                    if has(TraceKind::Cwnd) || has(TraceKind::Inflight) || has(TraceKind::Seq) {
                        row += TCP_ROW_BYTES;
                    }
                    if has(TraceKind::Rtt) {
                        row += TCP_ROW_BYTES;
                    }
                }
                b.memory(
                    "trace.series".into(),
                    format!("trace ~{pkts:.1e} TCP packets"),
                    pkts * row,
                );
                trace_per_packet(&mut b, &has, pkts);
            }
            FlowKind::Udp => {
                let rate = g.rate.as_ref();
                let bps = rate.map_or(0.0, |r| r.mean_bps().max(peak_bps(r) * 0.5));
                let pkts = n * bps / size * t;
                b.work(
                    format!("{p}.rate"),
                    format!("send ~{pkts:.1e} UDP packets"),
                    pkts * EVENTS_PER_UDP_PACKET,
                );
                if let Some(r) = rate {
                    shape_work(&mut b, &format!("{p}.rate"), r, n, t);
                }
                if has(TraceKind::Udp) {
                    b.memory(
                        "trace.series".into(),
                        format!("trace ~{pkts:.1e} UDP packets"),
                        pkts * UDP_ROW_BYTES,
                    );
                }
                trace_per_packet(&mut b, &has, pkts);
            }
        }
    }
    for (which, l) in topo.specs() {
        outage_work(&mut b, &format!("{which}.outages"), l, end);
    }
    let sampled = (has(TraceKind::Cwnd)
        || has(TraceKind::Inflight)
        || has(TraceKind::Seq)
        || has(TraceKind::Rtt))
        && interval > 0;
    if sampled {
        let samples = secs(end) / secs(interval);
        // the TCP state table and the RTT table, each as asked for
        let tables = (has(TraceKind::Cwnd) || has(TraceKind::Inflight) || has(TraceKind::Seq)) as u8
            as f64
            + has(TraceKind::Rtt) as u8 as f64;
        // a sample visits every flow
        b.work(
            "trace.interval".into(),
            format!("take ~{samples:.1e} trace samples of {all_flows:.0} flows"),
            samples * all_flows.max(1.0),
        );
        b.memory(
            "trace.interval".into(),
            format!("record ~{:.1e} trace rows", samples * tcp_flows * tables),
            samples * tcp_flows * tables * TCP_ROW_BYTES,
        );
    }
    b
}

/// Drops and queue traces: rows per packet, whichever kind.
fn trace_per_packet(b: &mut Budget, has: &impl Fn(TraceKind) -> bool, pkts: f64) {
    let mut row = 0.0;
    if has(TraceKind::Queue) {
        row += QUEUE_BYTES_PER_PACKET;
    }
    if has(TraceKind::Drops) {
        row += DROP_ROW_BYTES;
    }
    b.memory(
        "trace.series".into(),
        format!("trace the queues and drops of ~{pkts:.1e} packets"),
        pkts * row,
    );
}

/// A periodic outage schedule is walked outage by outage.
fn outage_work(b: &mut Budget, key: &str, l: &LinkSpec, end: SimTime) {
    if let Some(OutageSpec {
        every: Some(every), ..
    }) = &l.outages
    {
        let n = secs(end) / secs(every.0.max(1));
        b.work(
            format!("{key}.every"),
            format!("go through ~{n:.1e} outages"),
            n,
        );
        // the Plan lists every interval before the run starts
        b.memory(
            format!("{key}.every"),
            format!("list ~{n:.1e} outages"),
            n * OUTAGE_BYTES,
        );
    }
}

/// The highest rate of a shape (bit/s), where it is known from the table.
fn peak_bps(r: &RateShape) -> f64 {
    match r {
        RateShape::Constant(c) => c.0,
        RateShape::Shaped(t) => {
            let mean = t.mean.map_or(0.0, |m| m.0);
            let amp = t.amplitude.map_or(0.0, |a| a.0);
            let comps: f64 = t.components.iter().flatten().map(|c| c.amplitude.0).sum();
            let points = t
                .points
                .iter()
                .flatten()
                .map(|p| p.1 .0)
                .fold(0.0, f64::max);
            (mean + amp)
                .max(t.offset.map_or(0.0, |o| o.0) + comps)
                .max(points)
                .max(t.rate.map_or(0.0, |r| r.0))
        }
    }
}

/// The work of a shape that does not come with packets: sine cycles, on/off
/// periods and the segments of a repeating table.
fn shape_work(b: &mut Budget, key: &str, r: &RateShape, n: f64, t: f64) {
    let RateShape::Shaped(s) = r else {
        return;
    };
    match s.shape {
        ShapeKind::Sine | ShapeKind::Sines => {
            let hz = s
                .frequency
                .iter()
                .map(|f| f.0)
                .chain(s.components.iter().flatten().map(|c| c.frequency.0))
                .fold(0.0, f64::max);
            let cycles = n * hz * t;
            let k = if s.shape == ShapeKind::Sine {
                format!("{key}.frequency")
            } else {
                format!("{key}.components")
            };
            b.work(
                k,
                format!("follow ~{cycles:.1e} cycles of its sine"),
                cycles * EVENTS_PER_SINE_CYCLE,
            );
        }
        ShapeKind::OnOff => {
            let mean = |p: &Option<crate::scenario::PeriodSpec>| {
                p.as_ref().map_or(0.0, |p| secs(p.mean.0))
            };
            let cycle = mean(&s.on) + mean(&s.off);
            let periods = n * t / cycle.max(1e-9);
            b.work(
                format!("{key}.on"),
                format!("go through ~{periods:.1e} on/off periods"),
                periods,
            );
        }
        ShapeKind::Piecewise => {
            let pts = s.points.as_ref().map_or(0, |p| p.len()) as f64;
            let last = s
                .points
                .iter()
                .flatten()
                .map(|p| secs(p.0 .0))
                .fold(0.0, f64::max);
            if s.repeat == Some(true) && last > 0.0 {
                let segs = n * t / last * pts;
                b.work(
                    format!("{key}.points"),
                    format!("go through ~{segs:.1e} segments of its repeating table"),
                    segs,
                );
            }
        }
    }
}

/// Memory of one flow in a Plan handed to Python (`_core.plan`): the Plan and
/// its JSON text; 3.3 KB measured at 100 000 flows (peak RSS 330 MB).
const PLAN_BYTES_PER_FLOW: f64 = 4096.0;
/// One outage interval in a Plan: two u64 on each direction of its duplex link.
const OUTAGE_BYTES: f64 = 32.0;
/// The largest Plan `_core.plan` builds: it is built before anything runs (the
/// ns-2 export, the linux engine, `predict`), so it has no --force.
pub const MAX_PLAN_BYTES: f64 = 2.0 * (1u64 << 30) as f64;

/// Refuse to build a Plan beyond [`MAX_PLAN_BYTES`]: its flows and the outage
/// intervals it lists, naming the key that costs most.
pub fn check_plan(sc: &Scenario) -> Result<(), ScenarioError> {
    let end = sc.duration.0;
    let mut parts: Vec<(String, String, f64)> = Vec::new();
    let mut total = 0.0;
    let mut add = |key: String, what: String, bytes: f64| {
        total += bytes;
        parts.push((key, what, bytes));
    };
    let topo = &sc.topology;
    for (name, g) in &sc.flows {
        let n = g.count as f64;
        add(
            format!("flows.{name}.count"),
            format!("hold {n:.0} flows"),
            n * PLAN_BYTES_PER_FLOW,
        );
        // every flow has access links of its own (the group's overrides applied)
        for (which, link, over) in [
            ("access", &topo.access, &g.access),
            ("sink_access", &topo.sink_access, &g.sink_access),
        ] {
            if let Some(l) = link {
                let outages = outage_count(&l.with(over), end);
                add(
                    format!("topology.{which}.outages.every"),
                    format!(
                        "list ~{:.1e} outages of the {which} links of {name}",
                        n * outages
                    ),
                    n * outages * OUTAGE_BYTES,
                );
            }
        }
    }
    for (key, l) in topo.specs() {
        if key == "topology.access" || key == "topology.sink_access" {
            continue;
        }
        let n = outage_count(l, end);
        add(
            format!("{key}.outages.every"),
            format!("list ~{n:.1e} outages"),
            n * OUTAGE_BYTES,
        );
    }
    if total <= MAX_PLAN_BYTES {
        return Ok(());
    }
    let (key, what, _) = parts
        .into_iter()
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .unwrap_or_default();
    Err(ScenarioError {
        path: key,
        message: format!(
            "this scenario's plan would {what}: ~{} of memory before anything runs (limit {}); \
             use fewer flows or rarer outages",
            human_bytes(total),
            human_bytes(MAX_PLAN_BYTES)
        ),
    })
}

/// Outages a link's periodic schedule goes through before `end` (0 without one).
fn outage_count(l: &LinkSpec, end: SimTime) -> f64 {
    match &l.outages {
        Some(OutageSpec {
            every: Some(every), ..
        }) => secs(end) / secs(every.0.max(1)),
        _ => 0.0,
    }
}

/// Refuse a run whose estimate exceeds the limits, unless `force`.
pub fn check(sc: &Scenario, force: bool) -> Result<(), ScenarioError> {
    if force {
        return Ok(());
    }
    estimate(sc).check()
}

/// [`check`] for a run that streams its traces to files as it goes
/// (`Sim::spill_traces`): their rows are not held, so they cost no memory
/// (playback reads, which stay in memory, still do); the work they take
/// still counts.
pub fn check_streamed(sc: &Scenario, force: bool) -> Result<(), ScenarioError> {
    if force {
        return Ok(());
    }
    let mut b = estimate(sc);
    b.memory_by.retain(|(key, _, _)| !key.starts_with("trace."));
    b.memory_bytes = b.memory_by.iter().map(|m| m.2).sum();
    b.check()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(duration: &str, flows: &str, trace: &str) -> Scenario {
        let json = format!(
            r#"{{"duration": "{duration}", {trace}
            "topology": {{
              "bottleneck": {{"rate": "10Mbps", "delay": "10ms", "buffer": 50}},
              "access": {{"rate": "100Mbps", "delay": "1ms", "buffer": 1000}},
              "sink_access": {{"rate": "100Mbps", "delay": "1ms", "buffer": 1000}}}},
            "flows": {{ {flows} }}}}"#
        );
        Scenario::from_json(&json).unwrap().resolve().unwrap()
    }

    const TCP: &str = r#""tcp": {"kind": "tcp", "count": 10}"#;

    #[test]
    fn a_plan_too_big_to_build_is_refused_by_the_key_that_makes_it() {
        assert!(check_plan(&scenario("10s", TCP, "")).is_ok());
        // 10^6 flows: ~4 GB of plan, where a hundred thousand are about 330 MB
        let many = scenario("1s", r#""tcp": {"kind": "tcp", "count": 1000000}"#, "");
        let e = check_plan(&many).unwrap_err();
        assert_eq!(e.path, "flows.tcp.count", "{e}");
        assert!(e.message.contains("before anything runs"), "{e}");
        // an outage every microsecond for 1000 s on the bottleneck: 10^9 intervals
        let mut often = scenario("1000s", TCP, "");
        let spec = r#"{"duration": "1us", "every": "1us"}"#;
        often.topology.bottleneck.as_mut().unwrap().outages =
            Some(serde_json::from_str(spec).unwrap());
        let e = check_plan(&often).unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.outages.every", "{e}");
        // and a run of it: 10^9 events are within the run's limit, its 32 GB are not
        assert!(refused(&often).message.contains("memory"));
        // on each flow's access links (the group's override), counted per flow
        let json = r#""tcp": {"kind": "tcp", "count": 100,
            "access": {"outages": {"duration": "1us", "every": "10us"}}}"#;
        let e = check_plan(&scenario("1000s", json, "")).unwrap_err();
        assert_eq!(e.path, "topology.access.outages.every", "{e}");
    }

    fn refused(sc: &Scenario) -> ScenarioError {
        let e = check(sc, false).unwrap_err();
        assert!(check(sc, true).is_ok(), "force skips the check");
        assert!(e.message.contains("--force"), "{e}");
        e
    }

    #[test]
    fn ordinary_runs_pass() {
        check(&scenario("1000s", TCP, ""), false).unwrap();
        let traced = r#""trace": {"series": ["cwnd", "rtt", "queue", "drops", "seq"]},"#;
        check(&scenario("1000s", TCP, traced), false).unwrap();
    }

    #[test]
    fn a_run_too_long_names_the_duration() {
        let e = refused(&scenario("1e8s", TCP, ""));
        assert_eq!(e.path, "duration");
        assert!(e.message.contains("TCP packets"), "{e}");
        assert!(
            e.message.contains("hours") || e.message.contains("days"),
            "{e}"
        );
    }

    #[test]
    fn a_udp_rate_too_high_names_the_rate() {
        let udp = r#""udp": {"kind": "udp", "rate": "10000Gbps"}"#;
        let e = refused(&scenario("100s", udp, ""));
        assert_eq!(e.path, "flows.udp.rate");
        assert!(e.message.contains("UDP packets"), "{e}");
    }

    #[test]
    fn too_many_flows_names_the_count() {
        let many = r#""tcp": {"kind": "tcp", "count": 1000000000}"#;
        let e = refused(&scenario("10s", many, ""));
        assert_eq!(e.path, "flows.tcp.count");
        assert!(e.message.contains("GiB"), "{e}");
    }

    #[test]
    fn a_trace_interval_too_fine_names_the_interval() {
        // 1 ns samples of 10 flows for 10 s: 10^10 samples
        let trace = r#""trace": {"series": ["cwnd"], "interval": "1ns"},"#;
        let e = refused(&scenario("10s", TCP, trace));
        assert_eq!(e.path, "trace.interval");
    }

    #[test]
    fn streamed_traces_cost_no_memory_but_their_work_counts() {
        // 100 flows at 100 Mb/s for 20 000 s, every series: ~2.5e8 packets,
        // ~50 GiB of trace rows held in memory, none when streamed
        let json = r#"{"duration": "20000s",
            "topology": {
              "bottleneck": {"rate": "100Mbps", "delay": "10ms", "buffer": 250},
              "access": {"rate": "1Gbps", "delay": "1ms", "buffer": 1000},
              "sink_access": {"rate": "1Gbps", "delay": "1ms", "buffer": 1000}},
            "flows": {"tcp": {"kind": "tcp", "count": 100}},
            "trace": {"series": ["cwnd", "inflight", "seq", "queue", "drops", "rtt"]}}"#;
        let sc = Scenario::from_json(json).unwrap().resolve().unwrap();
        assert_eq!(refused(&sc).path, "trace.series");
        check_streamed(&sc, false).unwrap();
        // without traces, the same memory either way; too much work stays too much
        let flows = r#""tcp": {"kind": "tcp", "count": 1000000000}"#;
        let e = check_streamed(&scenario("10s", flows, ""), false).unwrap_err();
        assert_eq!(e.path, "flows.tcp.count");
        let trace = r#""trace": {"series": ["cwnd"], "interval": "1ns"},"#;
        let e = check_streamed(&scenario("10s", TCP, trace), false).unwrap_err();
        assert_eq!(e.path, "trace.interval");
        assert!(e.message.contains("events"), "{e}");
        assert!(check_streamed(&scenario("10s", TCP, trace), true).is_ok());
    }

    #[test]
    fn a_sine_too_fast_for_its_duration_names_the_frequency() {
        let udp = r#""udp": {"kind": "udp", "rate": {"shape": "sine", "mean": "1Mbps",
            "amplitude": "1Mbps", "frequency": "1e9Hz"}}"#;
        check(&scenario("10s", udp, ""), false).unwrap();
        let e = refused(&scenario("100000s", udp, ""));
        assert_eq!(e.path, "flows.udp.rate.frequency");
    }

    #[test]
    fn outages_every_nanosecond_name_the_schedule() {
        let json = r#"{"duration": "1000000s",
            "topology": {
              "bottleneck": {"rate": "1kbps", "delay": "10ms", "buffer": 50,
                             "outages": {"every": "2ns", "duration": "1ns"}},
              "access": {"rate": "1kbps", "delay": "1ms", "buffer": 10},
              "sink_access": {"rate": "1kbps", "delay": "1ms", "buffer": 10}},
            "flows": {"tcp": {"kind": "tcp"}}}"#;
        let sc = Scenario::from_json(json).unwrap().resolve().unwrap();
        assert_eq!(refused(&sc).path, "topology.bottleneck.outages.every");
    }

    #[test]
    fn the_estimate_bounds_what_a_run_takes() {
        // an upper bound of the right order: at least what the run does, at
        // most ten times as much
        let sc = scenario("20s", TCP, "");
        let est = estimate(&sc).events;
        let events = crate::sim::Sim::new(&crate::scenario::Plan::from_scenario(&sc).unwrap())
            .run()
            .summary
            .events as f64;
        assert!(est >= events && est <= 10.0 * events, "{est} vs {events}");
    }
}
