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
