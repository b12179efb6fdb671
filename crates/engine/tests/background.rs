//! Background traffic facts: UDP rate shapes are delivered as specified.

mod common;

use common::{dumbbell, f64_column, run};
use std::f64::consts::PI;
use tcplab_engine::sim::RunOutput;

fn udp_times(out: &RunOutput) -> Vec<f64> {
    f64_column(out, "udp", "t").to_vec()
}

fn sine_scenario(rate: &str, f: f64, duration_s: f64) -> String {
    let flows = format!(
        r#""bg": {{"kind": "udp", "rate": {rate}}}"#,
        rate = rate.replace("{f}", &f.to_string())
    );
    let json = dumbbell(
        "10Mbps",
        "5ms",
        100,
        "1ms",
        &flows,
        &format!("{duration_s}s"),
        "0s",
    );
    json.replace(r#""flows""#, r#""trace": {"series": ["udp"]}, "flows""#)
}

/// Paper A's background r(t) = C/2 (1 + sin 2πft), C = 1 Mb/s, alone on an
/// empty 10 Mb/s path: every packet sees the same delay D, so the delivered
/// count in any window equals ∫r/bits over the window shifted by D, within
/// one packet (pacing is exact: packet k leaves when ∫r reaches k·bits). At
/// f ≤ 2 Hz (≥ 31 packets per period) the fitted amplitude and phase of the
/// delivered rate also match: amplitude within 2 %, phase within 0.05 rad.
#[test]
fn delivered_udp_rate_follows_the_sine_from_0_05_to_10_hz() {
    let (m, a, bits) = (0.5e6, 0.5e6, 8000.0);
    for f in [0.05, 0.1, 0.4, 1.0, 2.0, 5.0, 10.0] {
        let periods = 10.0;
        let span = periods / f;
        let rate =
            r#"{"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.5Mbps", "frequency": "{f}Hz"}"#;
        let out = run(&sine_scenario(rate, f, span + 1.0));
        let times = udp_times(&out);
        let d = times[0]; // the first packet leaves at t = 0
        let sent: Vec<f64> = times.iter().map(|t| t - d).filter(|&t| t < span).collect();
        let bins = (periods * 20.0) as usize;
        let w = span / bins as f64;
        for k in 0..bins {
            let (lo, hi) = (k as f64 * w, (k + 1) as f64 * w);
            // departures in [lo, hi): packet 0 is at t = 0 before any volume
            let n = sent.iter().filter(|&&t| t >= lo && t < hi).count() as f64;
            let volume = m * w
                - a / (2.0 * PI * f) * ((2.0 * PI * f * hi).cos() - (2.0 * PI * f * lo).cos());
            let expected = volume / bits;
            assert!(
                (n - expected).abs() <= 1.0 + 1e-6,
                "f = {f} Hz, bin {k}: {n} packets, ∫r/bits = {expected:.3}"
            );
        }
        if f <= 2.0 {
            let (mut s, mut c) = (0.0, 0.0);
            for &t in &sent {
                s += bits * (2.0 * PI * f * t).sin();
                c += bits * (2.0 * PI * f * t).cos();
            }
            let amp = 2.0 * (s * s + c * c).sqrt() / span;
            let phase = c.atan2(s);
            assert!((amp - a).abs() < 0.02 * a, "f = {f}: amplitude {amp}");
            // the packet that completes a volume is sent at its end: a lag
            // of half an inter-packet gap, ≤ 0.04 rad at 2 Hz
            assert!(phase.abs() < 0.05, "f = {f}: phase {phase}");
        }
    }
}

/// The two-sine background of paper A, Fig. 3, is delivered with the mean
/// its components imply (C2 offset) and never more than the clipped shape.
#[test]
fn two_sine_background_delivers_its_mean() {
    let rate = r#"{"shape": "sines", "offset": "0.25Mbps", "components": [{"amplitude": "0.5Mbps", "frequency": "0.4Hz"}, {"amplitude": "0.25Mbps", "frequency": "3Hz"}]}"#;
    let out = run(&sine_scenario(rate, 0.0, 100.0));
    let udp = &out.summary.flows[0];
    // clipped mean from the engine's own quadrature; ±1 packet over 100 s
    let g = udp.throughput_bps;
    let sc = tcplab_engine::scenario::Scenario::from_json(&sine_scenario(rate, 0.0, 100.0))
        .unwrap()
        .resolve()
        .unwrap();
    let mean = sc.flows["bg"].rate.as_ref().unwrap().mean_bps();
    assert!(
        mean > 0.25e6,
        "clipping raises the mean above the offset: {mean}"
    );
    assert!(
        (g - mean).abs() < 8000.0 / 100.0 * 2.0 + 0.005 * mean,
        "{g} vs {mean}"
    );
}
