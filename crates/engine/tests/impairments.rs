//! Impairment facts: links lose what their error models say, and only that.

mod common;

use common::{dumbbell, run};

/// Constant UDP over a sink access link with Bernoulli errors: the measured
/// loss rate is the PER. n ≈ 250 000 packets; the binomial standard error is
/// √(p(1−p)/n) ≤ 0.0008; we allow 4 of them.
#[test]
fn measured_loss_rate_matches_the_per() {
    for per in [0.0, 0.001, 0.01, 0.05, 0.2, 1.0] {
        let flows = format!(
            r#""bg": {{"kind": "udp", "rate": "2Mbps", "sink_access": {{"errors": {{"model": "bernoulli", "per": {per}}}}}}}"#
        );
        let out = run(&dumbbell(
            "10Mbps", "5ms", 100, "1ms", &flows, "1000s", "0s",
        ));
        let f = &out.summary.flows[0];
        let sink = out
            .summary
            .links
            .iter()
            .find(|l| l.name == "sink_access[0]" && l.direction == "forward")
            .unwrap();
        let n = sink.arrivals as f64;
        let loss = sink.errors as f64 / n;
        let se = (per * (1.0 - per) / n).sqrt();
        assert!(
            (loss - per).abs() <= 4.0 * se + 1e-9,
            "PER {per}: measured {loss} (n = {n})"
        );
        // what the sink link lost is all that is missing (one packet may be in flight)
        let missing = f.sent_packets - f.delivered_packets;
        assert!(
            missing >= sink.errors && missing <= sink.errors + 1,
            "{missing} vs {}",
            sink.errors
        );
        assert_eq!(out.summary.links[0].drops, 0);
    }
}

/// Errors hit the forward direction only: a TCP flow's acks are never lost.
#[test]
fn errors_spare_the_reverse_direction() {
    let flows =
        r#""tcp": {"kind": "tcp", "sink_access": {"errors": {"model": "bernoulli", "per": 0.02}}}"#;
    let out = run(&dumbbell("10Mbps", "20ms", 100, "1ms", flows, "100s", "0s"));
    let rev = out
        .summary
        .links
        .iter()
        .find(|l| l.name == "sink_access[0]" && l.direction == "reverse")
        .unwrap();
    let fwd = out
        .summary
        .links
        .iter()
        .find(|l| l.name == "sink_access[0]" && l.direction == "forward")
        .unwrap();
    assert_eq!(rev.errors, 0);
    assert!(fwd.errors > 0);
    assert!(out.summary.flows[0].retransmissions >= fwd.errors);
}

/// The drops trace says why each packet was lost: the error model's losses
/// on the sink link are "error", the full bottleneck's are "overflow".
#[test]
fn drops_trace_records_the_cause() {
    use tcplab_engine::net::link::DropCause;
    let flows =
        r#""tcp": {"kind": "tcp", "sink_access": {"errors": {"model": "bernoulli", "per": 0.01}}}"#;
    let json = dumbbell("10Mbps", "20ms", 10, "1ms", flows, "60s", "0s").replacen(
        "\"seed\": 1,",
        "\"seed\": 1, \"trace\": {\"series\": [\"drops\"]},",
        1,
    );
    let out = run(&json);
    let links = common::i64_column(&out, "drops", "link");
    let causes = common::i64_column(&out, "drops", "cause");
    let sink_fwd = out
        .summary
        .links
        .iter()
        .position(|l| l.name == "sink_access[0]" && l.direction == "forward")
        .unwrap() as i64;
    let (mut err, mut ovf) = (0, 0);
    for (&l, &c) in links.iter().zip(causes) {
        if l == sink_fwd {
            assert_eq!(c, DropCause::Error as i64);
            err += 1;
        } else {
            assert_eq!(l, 0, "only the bottleneck overflows");
            assert_eq!(c, DropCause::Overflow as i64);
            ovf += 1;
        }
    }
    assert!(
        err > 10 && ovf > 0,
        "{err} error drops, {ovf} overflow drops"
    );
    assert_eq!(err as u64, out.summary.links[sink_fwd as usize].errors);
}
