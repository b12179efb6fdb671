//! The event loop that prefetches (`Sim::events::<true>`) against the
//! plain one. A prefetch hint cannot change results; the code around it
//! (the lookahead, the stages' reads) must not either.

use crate::plan::Plan;
use crate::record::Column;
use crate::scenario::Scenario;
use crate::sim::Sim;

/// The event loop that prefetches (taken only above `PREFETCH_ABOVE`
/// of state, so no other test runs it) reports exactly what the other
/// one does: SACK and Reno flows, a UDP source, a warm-up, a trace.
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
    assert!(s.state_bytes() < super::PREFETCH_ABOVE);
    assert!(s.events::<true>(&mut || false));
    let fetched = s.report();
    assert!(plain.summary.events > 50_000, "{}", plain.summary.events);
    assert_eq!(
        serde_json::to_value(&plain.summary).unwrap(),
        serde_json::to_value(&fetched.summary).unwrap()
    );
    assert_eq!(plain.traces.len(), fetched.traces.len());
    for (a, b) in plain.traces.iter().zip(&fetched.traces) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.columns.len(), b.columns.len());
        for ((na, ca), (nb, cb)) in a.columns.iter().zip(&b.columns) {
            assert_eq!(na, nb);
            match (ca, cb) {
                (Column::F64(x), Column::F64(y)) => {
                    assert!(x
                        .iter()
                        .map(|v| v.to_bits())
                        .eq(y.iter().map(|v| v.to_bits())))
                }
                (Column::I64(x), Column::I64(y)) => assert_eq!(x, y),
                _ => panic!("column {na} of {} changed type", a.name),
            }
        }
    }
}
