//! These tests build their simulators from scenarios written as JSON: the
//! one place below `scenario` that imports it (test code only; the layer
//! table in docs/ARCHITECTURE.md allows it by name).

use super::forward::Next;
use super::*;
use crate::net::packet::FORWARD;
use crate::plan::Plan;
use crate::scenario::Scenario;

fn run(json: &str, chain: bool) -> RunOutput {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Sim::new(&Plan::from_scenario(&sc).unwrap());
    if !chain {
        for &FlowHot {
            route: [(at, len), _],
            ..
        } in &sim.hot
        {
            sim.hops[(at + len - 1) as usize].next = Next::Event;
        }
    }
    sim.run()
}

/// Two runs of one plan, one with a shortcut and one without, report the same
/// summary but for the event count.
/// `a` does what `b` does in fewer than `tenths` tenths of its events.
fn assert_same_in_fewer_events(a: &RunOutput, b: &RunOutput, tenths: u64) {
    assert!(
        a.summary.events * 10 < b.summary.events * tenths,
        "{} vs {} events",
        a.summary.events,
        b.summary.events
    );
    assert_same_but_the_event_count(a, b);
}

/// The same summary, the event count included.
fn assert_same_summary(a: &RunOutput, b: &RunOutput) {
    assert_eq!(
        serde_json::to_value(&a.summary).unwrap(),
        serde_json::to_value(&b.summary).unwrap()
    );
}

fn assert_same_but_the_event_count(a: &RunOutput, b: &RunOutput) {
    let (mut sa, mut sb) = (
        serde_json::to_value(&a.summary).unwrap(),
        serde_json::to_value(&b.summary).unwrap(),
    );
    sa["events"] = 0.into();
    sb["events"] = 0.into();
    assert_eq!(sa, sb);
}

/// Receivers that take packets as soon as their arrival is known (no
/// event) must see exactly what event-driven receivers see — including
/// packets still on their way when the warm-up snapshot is taken or when
/// the run ends — and a chain that comes back to the link being
/// delivered (sender → receiver → sender's access link) must not
/// schedule that link twice.
#[test]
fn receivers_without_an_event_change_nothing_but_the_event_count() {
    // (one TCP flow's acks go without an event in both runs — the UDP
    // flow's reverse route carries nothing — so its share saved is smaller)
    for (tcp, warmup, end, tenths) in [(1, "3.0037s", "20.0011s", 9), (3, "2.5s", "15.0043s", 8)] {
        let json = format!(
            r#"{{"duration": "{end}", "warmup": "{warmup}", "seed": 3,
            "topology": {{
              "bottleneck": {{"rate": "1Mbps", "delay": "7ms", "buffer": 12}},
              "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
              "sink_access": {{"rate": "10Mbps", "delay": "4ms", "buffer": 100}}}},
            "flows": {{
              "tcp": {{"kind": "tcp", "variant": "sack", "count": {tcp}, "start_jitter": "1s"}},
              "udp": {{"kind": "udp", "rate": "0.2Mbps"}}}}}}"#
        );
        let (a, b) = (run(&json, true), run(&json, false));
        assert_same_in_fewer_events(&a, &b, tenths);
    }
}

/// Senders that take acks as soon as their arrival is known (no event)
/// must do exactly what event-driven senders do: same results, ties of the
/// same nanosecond decided alike (the dumbbell's equal rates put times on a
/// lattice), across the warm-up snapshot, flows that stop, the run's end,
/// and paced controllers (CUBIC and BBR under the linux profile).
#[test]
fn senders_without_an_event_change_nothing_but_the_event_count() {
    let flows = [
        r#""tcp": {"kind": "tcp", "variant": "sack", "count": 4, "start_jitter": "1s"},
           "reno": {"kind": "tcp", "variant": "reno", "count": 2, "stop": "9.0021s"}"#,
        r#""tcp": {"kind": "tcp", "cc": "cubic", "profile": "linux", "count": 3, "start_jitter": "1s"},
           "bbr": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 2, "start_jitter": "1s"}"#,
        // flows started together, data both ways, delayed acks: ties of
        // equal nanoseconds between flows at every round trip
        r#""tcp": {"kind": "tcp", "variant": "newreno", "count": 3},
           "rev": {"kind": "tcp", "variant": "reno", "count": 3, "reverse": true},
           "del": {"kind": "tcp", "variant": "sack", "count": 2, "delayed_ack": true}"#,
    ];
    // (a paced sender's pacer event is nearly always due before its ack:
    // few of its acks go without an event)
    let cases = [
        (flows[0], "3.0037s", "20.0011s", 8),
        (flows[1], "2.5s", "15.0043s", 10),
        (flows[2], "2.5s", "15.0043s", 8),
    ];
    for (flows, warmup, end, tenths) in cases {
        let flows = format!(r#"{flows}, "udp": {{"kind": "udp", "rate": "0.2Mbps"}}"#);
        same_in_fewer_events_without(&flows, warmup, end, tenths, |sim| {
            let mut senders = 0;
            for h in &mut sim.hops {
                if h.next == Next::Sender {
                    h.next = Next::Event;
                    senders += 1;
                }
            }
            senders
        });
    }
}

/// A rate-independent threshold dropper reads no sender (its candidates are
/// the flows running at the arrival, its draw its own stream), so senders
/// take acks without an event beside it: the same results as with an event
/// per ack — congestion events, drops and selections included — with a
/// bias between groups, a flow that stops while it may be selected, the
/// warm-up snapshot and the run's end, and the dropper on both bottleneck
/// directions. (A largest-rate dropper reads windows: no shortcut there.)
#[test]
fn senders_without_an_event_beside_a_rate_independent_dropper() {
    for (sel, th, bias) in [
        (
            "rate-independent",
            3,
            r#", "bias": {"tcp": 1.0, "reno": 0.25}"#,
        ),
        ("rate-independent", 2, ""),
        ("largest-rate", 3, ""),
    ] {
        let json = format!(
            r#"{{"duration": "20.0011s", "warmup": "3.0037s", "seed": 4,
            "topology": {{
              "bottleneck": {{"rate": "2Mbps", "delay": "7ms", "buffer": 30, "queue": "threshold",
                             "threshold": {{"threshold": {th}, "immunity": "30ms", "selection": "{sel}"{bias}}}}},
              "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
              "sink_access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}}}},
            "flows": {{
              "tcp": {{"kind": "tcp", "variant": "sack", "count": 4, "start_jitter": "1s"}},
              "reno": {{"kind": "tcp", "variant": "reno", "count": 2, "stop": "9.0021s"}}}}}}"#
        );
        let sc = Scenario::from_json(&json).unwrap();
        let plan = Plan::from_scenario(&sc).unwrap();
        let a = Sim::new(&plan).run();
        let mut sim = Sim::new(&plan);
        let mut senders = 0;
        for h in &mut sim.hops {
            if h.next == Next::Sender {
                h.next = Next::Event;
                senders += 1;
            }
        }
        if sel == "largest-rate" {
            assert_eq!(senders, 0);
            continue;
        }
        assert_eq!(senders, 6);
        let b = sim.run();
        assert!(a.summary.links.iter().any(|l| l.drops > 0));
        assert_same_in_fewer_events(&a, &b, 8);
    }
}

/// UDP sources that send ahead of their events (`Sim::udp_send`) must do
/// exactly what one event per packet does: same results, with the warm-up
/// snapshot and the run's end falling between departures, a source that
/// stops, and shapes (sine; on/off with send jitter; constant, 1000 bytes
/// every 8 ms, so its times fall on the links' nanosecond lattice).
#[test]
fn udp_sources_sending_ahead_change_nothing_but_the_event_count() {
    let flows = [
        r#""tcp": {"kind": "tcp", "variant": "reno", "count": 2, "start_jitter": "1s"},
           "sine": {"kind": "udp", "rate": {"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.5Mbps", "frequency": "0.4Hz"}},
           "cbr": {"kind": "udp", "rate": "1Mbps", "packet_size": 1000, "stop": "9.0021s"}"#,
        r#""tcp": {"kind": "tcp", "variant": "sack", "count": 3, "start_jitter": "1s"},
           "onoff": {"kind": "udp", "send_jitter": "1ms", "start": "0.3s",
                     "rate": {"shape": "onoff", "rate": "1Mbps", "on": {"distribution": "exponential", "mean": "0.5s"},
                              "off": {"distribution": "exponential", "mean": "0.5s"}}}"#,
    ];
    for (flows, warmup, end) in [
        (flows[0], "3.0037s", "20.0011s"),
        (flows[1], "2.5s", "15.0043s"),
    ] {
        same_in_fewer_events_without(flows, warmup, end, 9, |sim| {
            let mut ahead = 0;
            for f in &mut sim.flows {
                ahead += f.sends_ahead as u32;
                f.sends_ahead = false;
            }
            ahead
        });
    }
}

/// A UDP flow's reverse route carries nothing, so one TCP flow's acks beside
/// UDP sources (paper A) cross the reverse bottleneck as its only input and
/// go on from the receiver's link without an event (`link_inputs`): the
/// same as the delivery event there did, across the warm-up snapshot, the
/// run's end, a source that stops and a constant rate on the links' lattice.
#[test]
fn acks_beside_udp_sources_change_nothing_but_the_event_count() {
    let flows = [
        r#""tcp": {"kind": "tcp", "variant": "reno"},
           "sine": {"kind": "udp", "rate": {"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps", "frequency": "0.4Hz"}}"#,
        r#""tcp": {"kind": "tcp", "variant": "sack", "start": "0.5s", "stop": "13.0041s"},
           "cbr": {"kind": "udp", "rate": "1Mbps", "packet_size": 1000, "stop": "9.0021s"},
           "sine": {"kind": "udp", "rate": {"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.4Mbps", "frequency": "1Hz"}}"#,
    ];
    for (flows, warmup, end) in [
        (flows[0], "3.0037s", "20.0011s"),
        (flows[1], "2.5s", "15.0043s"),
    ] {
        same_in_fewer_events_without(flows, warmup, end, 9, |sim| {
            // the receiver's link delivers the acks by an event again
            let mut evented = 0;
            for (f, hot) in sim.hot.iter().enumerate() {
                let (at, _) = hot.route[1 - FORWARD as usize];
                let first = &mut sim.hops[at as usize];
                if matches!(sim.agents[f], Agent::Tcp { .. }) && first.next == Next::Link {
                    first.next = Next::Event;
                    evented += 1;
                }
            }
            evented
        });
    }
}

/// `flows` on a small dumbbell (2 Mb/s, equal access rates: times on a
/// lattice), run as built and with a shortcut turned off by `off` (which
/// says how many places it turned it off in): the same summary, in fewer
/// than `tenths` tenths of the events.
fn same_in_fewer_events_without(
    flows: &str,
    warmup: &str,
    end: &str,
    tenths: u64,
    off: impl Fn(&mut Sim) -> u32,
) {
    let json = format!(
        r#"{{"duration": "{end}", "warmup": "{warmup}", "seed": 3,
        "topology": {{
          "bottleneck": {{"rate": "2Mbps", "delay": "7ms", "buffer": 12}},
          "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
          "sink_access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}}}},
        "flows": {{ {flows} }}}}"#
    );
    let sc = Scenario::from_json(&json).unwrap();
    let plan = Plan::from_scenario(&sc).unwrap();
    let a = Sim::new(&plan).run();
    let mut sim = Sim::new(&plan);
    assert!(off(&mut sim) > 0);
    let b = sim.run();
    assert_same_in_fewer_events(&a, &b, tenths);
}

/// A link that hands packets on to the next link at the instant they reach
/// it (`Next::Link`) admits them there before the simulator's clock gets
/// there; its counters at the warm-up and at the end must still be those of
/// the same run with a delivery event at every hop: arrivals, departures,
/// drops and busy time (a snapshot used to subtract a future transmission
/// from the time already spent: utilizations of 1.8e9 on ack links).
#[test]
fn links_that_hand_packets_on_count_as_if_every_hop_were_an_event() {
    for (tcp, warmup, end) in [(1, "3.0037s", "20.0011s"), (4, "2.5s", "15.0043s")] {
        let json = format!(
            r#"{{"duration": "{end}", "warmup": "{warmup}", "seed": 5,
            "topology": {{
              "bottleneck": {{"rate": "1Mbps", "delay": "7ms", "buffer": 8}},
              "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
              "sink_access": {{"rate": "10Mbps", "delay": "4ms", "buffer": 100}}}},
            "flows": {{
              "tcp": {{"kind": "tcp", "variant": "sack", "count": {tcp}, "start_jitter": "1s"}},
              "udp": {{"kind": "udp", "rate": "0.2Mbps"}}}}}}"#
        );
        let sc = Scenario::from_json(&json).unwrap();
        let chained = Sim::new(&Plan::from_scenario(&sc).unwrap()).run();
        let mut sim = Sim::new(&Plan::from_scenario(&sc).unwrap());
        for h in &mut sim.hops {
            h.next = Next::Event;
        }
        let evented = sim.run();
        assert!(chained.summary.events < evented.summary.events);
        for (a, b) in chained.summary.links.iter().zip(&evented.summary.links) {
            let what = format!("{} {}", a.name, a.direction);
            assert!(
                (0.0..=1.0).contains(&a.utilization),
                "{what}: {}",
                a.utilization
            );
            assert_eq!(
                (a.arrivals, a.departures, a.drops, a.errors),
                (b.arrivals, b.departures, b.drops, b.errors),
                "{what}"
            );
            assert!((a.utilization - b.utilization).abs() < 1e-12, "{what}");
        }
    }
}

fn f64s<'a>(t: &'a crate::record::Table, name: &str) -> &'a [f64] {
    match &t.columns.iter().find(|c| c.0 == name).unwrap().1 {
        crate::record::Column::F64(v) => v,
        _ => panic!("{name} is not f64"),
    }
}

fn i64s<'a>(t: &'a crate::record::Table, name: &str) -> &'a [i64] {
    match &t.columns.iter().find(|c| c.0 == name).unwrap().1 {
        crate::record::Column::I64(v) => v,
        _ => panic!("{name} is not i64"),
    }
}

/// One BBR flow on a clean 10 Mb/s link (RTT 50 ms, BDP 62 packets, a
/// 1-BDP buffer): it reaches the link rate with no loss and a small
/// standing queue (pacing at the estimated rate; 5/4 probing adds at most
/// a quarter of a BDP), and its window drops to 4 packets (probe-rtt)
/// about every 10 s ("Window length of min_rtt filter (in sec)": 10).
#[test]
fn bbr_fills_a_clean_link_with_a_small_queue_and_probes_rtt_every_10_s() {
    let json = r#"{"duration": "45s", "warmup": "5s", "seed": 1,
        "topology": {
          "bottleneck": {"rate": "10Mbps", "delay": "23ms", "buffer": 62},
          "access": {"rate": "100Mbps", "delay": "1ms", "buffer": 1000},
          "sink_access": {"rate": "100Mbps", "delay": "1ms", "buffer": 1000}},
        "flows": {"tcp": {"kind": "tcp", "cc": "bbr", "profile": "linux"}},
        "trace": {"series": ["cwnd", "queue"], "interval": "0.01s"}}"#;
    let out = run(json, true);
    let s = serde_json::to_value(&out.summary).unwrap();
    let util = s["links"][0]["utilization"].as_f64().unwrap();
    assert!(util > 0.95, "utilization {util}");
    let tcp = out.traces.iter().find(|t| t.name == "tcp").unwrap();
    let (t, cwnd) = (f64s(tcp, "t"), f64s(tcp, "cwnd"));
    let mut episodes: Vec<f64> = vec![];
    for (&t, &w) in t.iter().zip(cwnd) {
        if w <= 4.0 && t > 2.0 && episodes.last().map_or(true, |&e| t - e > 1.0) {
            episodes.push(t);
        }
    }
    assert!(episodes.len() >= 3, "probe-rtt at {episodes:?}");
    for w in episodes.windows(2) {
        let gap = w[1] - w[0];
        assert!((9.9..=10.6).contains(&gap), "probe-rtt at {episodes:?}");
    }
    let q = out.traces.iter().find(|t| t.name == "queue").unwrap();
    let (qt, link, n) = (f64s(q, "t"), i64s(q, "link"), i64s(q, "tcp"));
    let mut by_link = std::collections::BTreeMap::<i64, (f64, f64)>::new();
    for i in 0..qt.len() {
        if qt[i] > 5.0 {
            let e = by_link.entry(link[i]).or_default();
            e.0 += n[i] as f64;
            e.1 += 1.0;
        }
    }
    let worst = by_link.values().map(|(s, k)| s / k).fold(0.0, f64::max);
    assert!(worst < 62.0 / 4.0, "mean standing queue {worst} packets");
    eprintln!("bbr: utilization {util}, probe-rtt at {episodes:?}, mean queue {worst}");
}

/// Traces streamed to files as the run goes (`Sim::spill_traces`, written
/// out every 10 ms of simulated time) hold exactly the in-memory tables, row
/// for row — the queue table's too, whose rows are sorted by link and
/// written per link as they become final — however small the chunks; the
/// summary (its event count included) is the same.
#[test]
fn spilled_traces_are_the_in_memory_tables() {
    let json = r#"{"duration": "20s", "warmup": "2s", "seed": 5,
        "topology": {
          "bottleneck": {"rate": "40Mbps", "delay": "10ms", "buffer": 30},
          "access": {"rate": "100Mbps", "delay": "2ms", "buffer": 50},
          "sink_access": {"rate": "100Mbps", "delay": "3ms", "buffer": 50}},
        "flows": {
          "tcp": {"kind": "tcp", "variant": "sack", "count": 6, "start_jitter": "1s"},
          "udp": {"kind": "udp", "rate": "8Mbps"}},
        "trace": {"series": ["cwnd", "inflight", "seq", "queue", "drops", "udp", "rtt"]}}"#;
    let plan = Plan::from_scenario(&Scenario::from_json(json).unwrap()).unwrap();
    let whole = Sim::new(&plan).run();
    for rows in [1, 1000, 1 << 20] {
        let dir =
            std::env::temp_dir().join(format!("tcplab-spill-test-{}-{rows}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Sim::new(&plan).spill_traces(dir.clone(), rows).run();
        assert!(out.trace_error.is_none());
        assert_eq!(
            serde_json::to_value(&out.summary).unwrap(),
            serde_json::to_value(&whole.summary).unwrap()
        );
        let names = |o: &RunOutput| o.traces.iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(&out), names(&whole));
        for (t, w) in out.traces.iter().zip(&whole.traces) {
            let parts = t.spilled.as_ref().expect("spilled");
            if t.name == "queue" {
                assert!(parts.len() > 2, "queue rows of several links: {parts:?}");
            }
            let total: u64 = parts.iter().map(|p| p.1).sum();
            for (name, col) in &w.columns {
                let mut bytes = vec![];
                for (stem, _) in parts {
                    bytes.extend(std::fs::read(dir.join(format!("{stem}.{name}"))).unwrap());
                }
                let (expected, n): (Vec<u8>, usize) = match col {
                    crate::record::Column::F64(v) => {
                        (v.iter().flat_map(|x| x.to_le_bytes()).collect(), v.len())
                    }
                    crate::record::Column::I64(v) => {
                        (v.iter().flat_map(|x| x.to_le_bytes()).collect(), v.len())
                    }
                };
                assert!(n > 0, "{}.{name} is empty", t.name);
                assert_eq!(total as usize, n, "{}.{name} rows", t.name);
                assert!(
                    bytes == expected,
                    "{}.{name} differs (chunks of {rows})",
                    t.name
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A run without traces streams nothing: no folder, no spill events, the
/// same summary.
#[test]
fn an_untraced_run_streams_nothing() {
    let json = r#"{"duration": "5s", "seed": 2,
        "topology": {
          "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 30},
          "access": {"rate": "100Mbps", "delay": "2ms", "buffer": 50},
          "sink_access": {"rate": "100Mbps", "delay": "3ms", "buffer": 50}},
        "flows": {"tcp": {"kind": "tcp", "count": 2}}}"#;
    let plan = Plan::from_scenario(&Scenario::from_json(json).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("tcplab-spill-none-{}", std::process::id()));
    let sim = Sim::new(&plan).spill_traces(dir.clone(), 10);
    assert!(sim.rec.spill.is_none());
    let out = sim.run();
    assert!(!dir.exists() && out.traces.is_empty() && out.trace_error.is_none());
    assert_eq!(
        serde_json::to_value(&out.summary).unwrap(),
        serde_json::to_value(&Sim::new(&plan).run().summary).unwrap()
    );
}

#[test]
fn a_flows_hot_record_is_one_cache_line() {
    assert_eq!(std::mem::size_of::<FlowHot>(), 64);
    assert_eq!(std::mem::align_of::<FlowHot>(), 64);
}

/// A sine-shaped source's departures replayed from an earlier run of the
/// process (`traffic::schedule`) make the same run as departures solved
/// afresh: as long a run, a shorter one, and a longer one, which goes on
/// past the recording from the shape as it was at its end.
#[test]
fn departures_replayed_from_an_earlier_run_change_nothing() {
    use crate::traffic::schedule;
    let json = |end: &str| {
        format!(
            r#"{{"duration": "{end}", "warmup": "2s", "seed": 5,
            "topology": {{
              "bottleneck": {{"rate": "2Mbps", "delay": "7ms", "buffer": 12}},
              "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
              "sink_access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}}}},
            "flows": {{
              "tcp": {{"kind": "tcp", "variant": "reno"}},
              "sine": {{"kind": "udp", "rate": {{"shape": "sine", "mean": "1Mbps", "amplitude": "0.9Mbps",
                        "frequency": "0.3Hz", "phase": 0.987654}}}}}}}}"#
        )
    };
    let fresh = |end: &str| {
        schedule::forget_all();
        run(&json(end), true)
    };
    let (short, long) = (fresh("20.0031s"), fresh("45.0017s"));
    schedule::forget_all();
    let same = assert_same_summary;
    same(&run(&json("20.0031s"), true), &short); // solves (records too if not the first schedule)
    same(&run(&json("20.0031s"), true), &short); // records (or replays)
    assert!(schedule::kept() > 0);
    same(&run(&json("20.0031s"), true), &short); // replays
    same(&run(&json("45.0017s"), true), &long); // replays, then solves on
    same(&run(&json("20.0031s"), true), &short); // replays part of the longer
    same(&run(&json("45.0017s"), true), &long);
}

/// The event loop that prefetches (`Sim::events::<true>`, taken only above
/// `PREFETCH_ABOVE` of state, so no other test runs it) reports exactly what
/// the plain one does: a hint cannot change results, and the code around it
/// (the lookahead, the stages' reads) must not either. SACK and Reno flows,
/// a UDP source, a warm-up, a trace.
#[test]
fn prefetching_changes_nothing() {
    let json = r#"{"duration": "8.0013s", "warmup": "2.5s", "seed": 5,
        "topology": {
          "bottleneck": {"rate": "20Mbps", "delay": "7ms", "buffer": 40},
          "access": {"rate": "200Mbps", "delay": "3ms", "buffer": 100},
          "sink_access": {"rate": "200Mbps", "delay": "4ms", "buffer": 100}},
        "flows": {
          "sack": {"kind": "tcp", "variant": "sack", "count": 12, "start_jitter": "1s"},
          "reno": {"kind": "tcp", "variant": "reno", "count": 6, "start_jitter": "1s",
                   "delayed_ack": true},
          "udp": {"kind": "udp", "rate": "2Mbps"}},
        "trace": {"series": ["cwnd", "seq", "queue", "drops", "udp"]}}"#;
    let sim = || Sim::new(&Plan::from_scenario(&Scenario::from_json(json).unwrap()).unwrap());
    let plain = sim().run();
    let mut s = sim();
    assert!(s.state_bytes() < PREFETCH_ABOVE);
    assert!(s.events::<true>(&mut || false));
    let fetched = s.report();
    assert!(plain.summary.events > 50_000, "{}", plain.summary.events);
    assert_same_summary(&plain, &fetched);
    assert_eq!(plain.traces.len(), fetched.traces.len());
    for (a, b) in plain.traces.iter().zip(&fetched.traces) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.columns.len(), b.columns.len());
        for ((na, ca), (nb, cb)) in a.columns.iter().zip(&b.columns) {
            assert_eq!(na, nb);
            match (ca, cb) {
                (crate::record::Column::F64(x), crate::record::Column::F64(y)) => {
                    assert!(x
                        .iter()
                        .map(|v| v.to_bits())
                        .eq(y.iter().map(|v| v.to_bits())))
                }
                (crate::record::Column::I64(x), crate::record::Column::I64(y)) => assert_eq!(x, y),
                _ => panic!("column {na} of {} changed type", a.name),
            }
        }
    }
}

/// Paced senders that run their pacer's events ahead of the clock
/// (`Sim::pace_until`, when an ack they take without an event comes after
/// the event) and take the acks queued behind one their link delivered by an
/// event (`Sim::drain_to_senders`) must do exactly what the event queue does
/// with one event per pacer firing and per ack: same results, ties of the
/// same nanosecond decided alike, across the warm-up snapshot, flows that
/// stop, the run's end, retransmission timers, and paced flows beside
/// unpaced ones, data both ways and delayed acks.
#[test]
fn pacers_ahead_of_the_clock_change_nothing_but_the_event_count() {
    let flows = [
        r#""bbr": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 4, "start_jitter": "1s"},
           "stop": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 2, "stop": "9.0021s"}"#,
        r#""bbr": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 3, "start_jitter": "1s"},
           "cubic": {"kind": "tcp", "cc": "cubic", "profile": "linux", "count": 2, "start_jitter": "1s"},
           "sack": {"kind": "tcp", "variant": "sack", "count": 2, "start_jitter": "1s"}"#,
        // started together, data both ways, delayed acks: ties of equal
        // nanoseconds between flows at every round trip
        r#""bbr": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 3},
           "rev": {"kind": "tcp", "cc": "bbr", "profile": "linux", "count": 2, "reverse": true},
           "del": {"kind": "tcp", "variant": "sack", "count": 2, "delayed_ack": true}"#,
    ];
    for (flows, warmup, end, tenths) in [
        (flows[0], "3.0037s", "20.0011s", 9),
        (flows[1], "2.5s", "15.0043s", 9),
        (flows[2], "2.5s", "15.0043s", 8),
    ] {
        let flows = format!(r#"{flows}, "udp": {{"kind": "udp", "rate": "0.2Mbps"}}"#);
        same_in_fewer_events_without(&flows, warmup, end, tenths, |sim| {
            sim.pace_ahead = false;
            // (as if a drain were running: none starts)
            sim.draining = true;
            sim.hops.iter().filter(|h| h.next == Next::Sender).count() as u32
        });
    }
}

/// The same on the cost guard's BBR case (ten flows, every link's rate a
/// multiple of 10 Mb/s, so times fall on a lattice): a pacer event and an
/// ack of the same nanosecond recur, and ns-2's order decides which goes
/// first (`Sim::pace_until`; reversing that decision changes this run:
/// seed 6 found so, at 70 s).
#[test]
fn pacers_ahead_of_the_clock_decide_ties_as_the_event_queue() {
    let json = r#"{"duration": "70s", "warmup": "10s", "seed": 6,
        "topology": {
          "bottleneck": {"rate": "10Mbps", "delay": "40ms", "buffer": 20},
          "access": {"rate": "100Mbps", "delay": "10ms", "buffer": 1000},
          "sink_access": {"rate": "100Mbps", "delay": "10ms", "buffer": 1000}},
        "flows": {
          "sack": {"kind": "tcp", "variant": "sack", "count": 10, "packet_size": 1000,
                   "window": 10000, "start_jitter": "1s", "profile": "linux", "cc": "bbr"}}}"#;
    let plan = Plan::from_scenario(&Scenario::from_json(json).unwrap()).unwrap();
    let ahead = Sim::new(&plan).run();
    let mut sim = Sim::new(&plan);
    sim.pace_ahead = false;
    sim.draining = true;
    let evented = sim.run();
    assert_same_in_fewer_events(&ahead, &evented, 7);
}
