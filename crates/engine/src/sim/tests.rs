use super::forward::Next;
use super::*;

fn run(json: &str, chain: bool) -> RunOutput {
    let sc = Scenario::from_json(json).unwrap();
    let mut sim = Sim::new(&Plan::from_scenario(&sc).unwrap());
    if !chain {
        for &[(at, len), _] in &sim.route_at {
            sim.hops[(at + len - 1) as usize].next = Next::Event;
        }
    }
    sim.run()
}

/// Receivers that take packets as soon as their arrival is known (no
/// event) must see exactly what event-driven receivers see — including
/// packets still on their way when the warm-up snapshot is taken or when
/// the run ends — and a chain that comes back to the link being
/// delivered (sender → receiver → sender's access link) must not
/// schedule that link twice.
#[test]
fn receivers_without_an_event_change_nothing_but_the_event_count() {
    for (tcp, warmup, end) in [(1, "3.0037s", "20.0011s"), (3, "2.5s", "15.0043s")] {
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
        let (mut sa, mut sb) = (
            serde_json::to_value(&a.summary).unwrap(),
            serde_json::to_value(&b.summary).unwrap(),
        );
        assert!(
            a.summary.events < b.summary.events * 4 / 5,
            "{} vs {} events",
            a.summary.events,
            b.summary.events
        );
        sa["events"] = 0.into();
        sb["events"] = 0.into();
        assert_eq!(sa, sb);
    }
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
