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

/// A piecewise-linear rate at time `x` (seconds) through `pts`, repeated
/// with period = last time: the test's own reading of the table.
fn table_rate(pts: &[(f64, f64)], x: f64) -> f64 {
    let period = pts.last().unwrap().0;
    let x = x.rem_euclid(period);
    for w in pts.windows(2) {
        let ((t0, r0), (t1, r1)) = (w[0], w[1]);
        if x >= t0 && x < t1 {
            return r0 + (r1 - r0) * (x - t0) / (t1 - t0);
        }
    }
    pts.last().unwrap().1
}

/// A trace-driven background (piecewise-linear table, repeated) alone on an
/// empty 10 Mb/s path: every packet sees the same delay, so the packets
/// delivered in any bin equal ∫r/bits over the bin, within one packet (the
/// error of exact pacing: packet k leaves when ∫r reaches k·bits). Checked
/// for ramps, steps and silences, two packet sizes, bins of 0.1–0.5 s.
#[test]
fn delivered_udp_rate_follows_a_piecewise_trace() {
    let tables: [&[(f64, f64)]; 2] = [
        &[
            (0.0, 0.2e6),
            (4.0, 3e6),
            (6.0, 3e6),
            (6.0, 0.0),
            (7.0, 0.0),
            (10.0, 1e6),
        ],
        &[
            (0.0, 1e6),
            (0.5, 0.1e6),
            (1.0, 2e6),
            (1.0, 0.5e6),
            (2.0, 0.5e6),
        ],
    ];
    for (pts, size, bins_per_s) in [
        (tables[0], 1000, 2.0),
        (tables[0], 500, 10.0),
        (tables[1], 1000, 4.0),
    ] {
        let json_pts: Vec<String> = pts
            .iter()
            .map(|(t, r)| format!(r#"["{t}s", {r}]"#))
            .collect();
        let rate = format!(
            r#"{{"shape": "piecewise", "points": [{}], "repeat": true}}"#,
            json_pts.join(", ")
        );
        let span = 40.0;
        let json = sine_scenario(&rate, 0.0, span + 1.0).replace(
            r#""kind": "udp""#,
            &format!(r#""kind": "udp", "packet_size": {size}"#),
        );
        let out = run(&json);
        let times = udp_times(&out);
        let d = times[0];
        let bits = size as f64 * 8.0;
        let sent: Vec<f64> = times.iter().map(|t| t - d).filter(|&t| t < span).collect();
        let bins = (span * bins_per_s) as usize;
        let w = span / bins as f64;
        let mut worst: f64 = 0.0;
        for k in 0..bins {
            let (lo, hi) = (k as f64 * w, (k + 1) as f64 * w);
            let n = sent.iter().filter(|&&t| t >= lo && t < hi).count() as f64;
            let m = 4000;
            let volume: f64 = (0..m)
                .map(|i| table_rate(pts, lo + (i as f64 + 0.5) * w / m as f64))
                .sum::<f64>()
                * w
                / m as f64;
            worst = worst.max((n - volume / bits).abs());
        }
        eprintln!("piecewise table {pts:?}, {size} B: worst bin off by {worst:.3} packets");
        assert!(
            worst <= 1.0 + 1e-3,
            "{pts:?} size {size}: worst bin off by {worst} packets"
        );
    }
}

fn onoff_scenario(on: &str, off: &str, count: u32, duration_s: f64) -> String {
    let rate = format!(r#"{{"shape": "onoff", "rate": "1Mbps", "on": {on}, "off": {off}}}"#);
    sine_scenario(&rate, 0.0, duration_s).replace(
        r#""kind": "udp""#,
        &format!(r#""kind": "udp", "count": {count}"#),
    )
}

/// On/off sources deliver rate·E[on]/(E[on] + E[off]) on average. Fixed
/// periods (0.3 s on, 0.7 s off) give 0.3 Mb/s to within two packets over
/// 200 s. Exponential 1 s / 1 s over 20 000 s (10 000 cycles): the on share
/// has σ = 1/(2·sqrt(2·10 000)) ≈ 0.0035; allowed 0.012 (3.4 σ). Pareto on
/// periods (α = 1.5, mean 0.5 s, infinite variance) with exponential 0.5 s
/// off: heavier noise, allowed 0.05. Each flow of a group draws its own periods.
#[test]
fn onoff_background_delivers_rate_times_on_share() {
    let out = run(&onoff_scenario(
        r#"{"distribution": "fixed", "mean": "0.3s"}"#,
        r#"{"distribution": "fixed", "mean": "0.7s"}"#,
        1,
        200.0,
    ));
    let g = out.summary.flows[0].throughput_bps;
    eprintln!("on/off fixed 0.3s/0.7s: {g} bit/s (expected 300000)");
    assert!((g - 0.3e6).abs() <= 2.0 * 8000.0 / 200.0, "{g}");

    let out = run(&onoff_scenario(
        r#"{"distribution": "exponential", "mean": "1s"}"#,
        r#"{"distribution": "exponential", "mean": "1s"}"#,
        2,
        20_000.0,
    ));
    let (a, b) = (
        out.summary.flows[0].throughput_bps,
        out.summary.flows[1].throughput_bps,
    );
    eprintln!("on/off exp 1s/1s: {a} and {b} bit/s (expected 500000)");
    for g in [a, b] {
        assert!((g - 0.5e6).abs() < 0.012e6, "{g}");
    }
    assert_ne!(
        out.summary.flows[0].delivered_packets,
        out.summary.flows[1].delivered_packets
    );

    let out = run(&onoff_scenario(
        r#"{"distribution": "pareto", "mean": "0.5s", "alpha": 1.5}"#,
        r#"{"distribution": "exponential", "mean": "0.5s"}"#,
        1,
        20_000.0,
    ));
    let g = out.summary.flows[0].throughput_bps;
    eprintln!("on/off pareto(1.5) 0.5s / exp 0.5s: {g} bit/s (expected 500000)");
    assert!((g - 0.5e6).abs() < 0.05e6, "{g}");
}

/// Send jitter: a constant 0.5 Mb/s source (a packet every 16 ms) with
/// jitter 1 ms: each packet arrives U[0, 1 ms] after its jitter-free time
/// (the path adds a constant delay), the lateness averages 0.5 ms (σ of the
/// mean of 6 250 draws ≈ 0.004 ms), and no packet is lost or added.
#[test]
fn send_jitter_delays_each_packet_by_up_to_the_jitter() {
    let json = sine_scenario(r#""0.5Mbps""#, 0.0, 100.0)
        .replace(r#""kind": "udp""#, r#""kind": "udp", "send_jitter": "1ms""#);
    let times = udp_times(&run(&json));
    let plain = udp_times(&run(&sine_scenario(r#""0.5Mbps""#, 0.0, 100.0)));
    assert_eq!(times.len(), plain.len());
    let late: Vec<f64> = times.iter().zip(&plain).map(|(a, b)| a - b).collect();
    assert!(late.iter().all(|&l| (-1e-9..=1e-3 + 1e-9).contains(&l)));
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    eprintln!("send jitter 1 ms: mean lateness {mean} s");
    assert!((mean - 0.5e-3).abs() < 0.02e-3, "{mean}");
}
