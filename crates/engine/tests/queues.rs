//! Queue-discipline facts: RED drops as ns-2's formulas say, the threshold
//! dropper signals one connection per congestion event and never drops
//! below its threshold, and bad queue tables are refused with their paths.

mod common;

use common::{dumbbell, i64_column, run};
use tcplab_engine::net::link::DropCause;
use tcplab_engine::net::queue::{Red, ThresholdDropper};
use tcplab_engine::plan::{RedMode, RedParams, Selection, ThresholdParams};
use tcplab_engine::rng::Rng;
use tcplab_engine::scenario::Scenario;

fn red(min: f64, max: f64, max_p: f64, weight: f64, wait: bool, gentle: bool) -> Red {
    let p = RedParams {
        min_thresh: min,
        max_thresh: max,
        max_p,
        weight,
        wait,
        gentle,
        mode: RedMode::Packet,
        mean_packet_size: 500,
        ecn: false,
        seed: None,
    };
    // 8 kb/s with 500-byte mean packets: 2 packet times per second
    Red::new(&p, 8000.0, 100, Rng::stream(7, 5, 0))
}

/// The average is ns-2's EWMA, ave ← (1 − w)·ave + w·q, and an arrival to
/// an idle link first decays it as if ⌊ptc · idle⌋ packets had found the
/// queue empty. Hand-computed with w = ½: q = 4, 8, 0, 2 gives 2, 5, 2.5,
/// 2.25; then 1.6 s idle at ptc = 2/s is m = 3 more halvings besides the
/// arrival's own: 2.25 / 16.
#[test]
fn red_average_is_the_ewma_with_idle_decay() {
    let mut r = red(50.0, 60.0, 0.1, 0.5, true, false);
    for (q, want) in [(4, 2.0), (8, 5.0), (0, 2.5), (2, 2.25)] {
        assert!(r.arrive(q, 0, None, 1000).is_ok());
        assert_eq!(r.ave, want);
    }
    r.arrive(0, 0, Some(1_600_000_000), 1000).unwrap();
    assert_eq!(r.ave, 2.25 / 16.0);
    // an arrival right at the end of a busy period decays once (m = 0)
    r.arrive(0, 0, Some(0), 1000).unwrap();
    assert_eq!(r.ave, 2.25 / 32.0);
}

/// ns-2's drop probability for a fixed average, from its definition
/// (red.cc calculate_p_new and modify_p), written independently here: the
/// hazard h(c) after c arrivals since the last drop, and the long-run drop
/// fraction 1 / E[gap], E[gap] = Σ_{c≥0} Π_{k≤c} (1 − h(k)).
fn expected_drop_fraction(
    ave: f64,
    min: f64,
    max: f64,
    max_p: f64,
    wait: bool,
    gentle: bool,
) -> f64 {
    let pb = if ave < min {
        return 0.0;
    } else if ave >= max && !gentle {
        1.0
    } else if ave >= max {
        ((1.0 - max_p) / max * ave + 2.0 * max_p - 1.0).min(1.0)
    } else {
        max_p * (ave - min) / (max - min)
    };
    if pb <= 0.0 {
        return 0.0;
    }
    let h = |c: f64| -> f64 {
        let x = c * pb;
        if wait {
            if x < 1.0 {
                0.0
            } else if x < 2.0 {
                pb / (2.0 - x)
            } else {
                1.0
            }
        } else if x < 1.0 {
            pb / (1.0 - x)
        } else {
            1.0
        }
    };
    let (mut survive, mut gap) = (1.0, 0.0);
    let mut c = 1.0;
    while survive > 1e-15 {
        gap += survive;
        survive *= 1.0 - h(c).min(1.0);
        c += 1.0;
    }
    1.0 / gap
}

/// Weight 1 makes the average the queue each arrival sees, so the drop
/// fraction at a fixed queue is the curve of RED's parameters. 200 000
/// arrivals per point; the tolerance is 5 binomial standard errors (RED's
/// uniformized gaps vary less than Bernoulli drops, so this is loose).
#[test]
fn red_drop_fraction_follows_ns2s_curve() {
    let (min, max) = (10.0, 20.0);
    for (max_p, wait, gentle) in [
        (0.1, true, false),
        (0.1, false, false),
        (0.2, true, true),
        (0.05, false, true),
    ] {
        for q in [5, 10, 12, 15, 19, 20, 25, 30, 39, 45] {
            let mut r = red(min, max, max_p, 1.0, wait, gentle);
            let n = 200_000;
            let mut drops = 0u32;
            for _ in 0..n {
                match r.arrive(q, 0, None, 1000) {
                    Ok(()) => {}
                    Err(DropCause::Red) => drops += 1,
                    Err(c) => panic!("unexpected {c:?}"),
                }
            }
            let got = drops as f64 / n as f64;
            let want = expected_drop_fraction(q as f64, min, max, max_p, wait, gentle);
            let se = (want * (1.0 - want) / n as f64).sqrt();
            assert!(
                (got - want).abs() <= 5.0 * se + 2.0 / n as f64,
                "q = {q}, max_p {max_p}, wait {wait}, gentle {gentle}: dropped {got}, ns-2's formula {want}"
            );
        }
    }
}

/// The gentle region is what distinguishes gentle RED: between max_thresh
/// and twice it the probability climbs from max_p to 1 instead of jumping.
#[test]
fn gentle_red_ramps_to_one_at_twice_max_thresh() {
    let base_p = |q: usize, gentle: bool| {
        let mut r = red(10.0, 20.0, 0.1, 1.0, false, gentle);
        let _ = r.arrive(q, 0, None, 1000);
        r.base_p()
    };
    for (q, want) in [
        (15, 0.05),
        (20, 0.1),
        (30, 0.55),
        (35, 0.775),
        (40, 1.0),
        (45, 1.0),
    ] {
        assert!(
            (base_p(q, true) - want).abs() < 1e-12,
            "gentle at {q}: {}",
            base_p(q, true)
        );
    }
    assert_eq!(base_p(20, false), 1.0);
    assert_eq!(base_p(30, false), 1.0);
    // after the count correction: at 22 packets gentle RED still spares most
    // arrivals, plain RED drops them all
    let frac = |q: usize, gentle: bool| {
        let mut r = red(10.0, 20.0, 0.1, 1.0, false, gentle);
        let n = 50_000;
        (0..n)
            .filter(|_| r.arrive(q, 0, None, 1000).is_err())
            .count() as f64
            / n as f64
    };
    assert!(frac(22, true) < 0.5 && frac(22, false) > 0.999);
}

/// Byte mode with packets of the mean size drops like packet mode (ns-2
/// counts bytes / mean_pktsize and scales p by size / mean_pktsize).
#[test]
fn red_byte_mode_with_mean_size_packets_matches_packet_mode() {
    let mk = |mode| {
        let p = RedParams {
            min_thresh: 10.0,
            max_thresh: 20.0,
            max_p: 0.1,
            weight: 1.0,
            wait: true,
            gentle: true,
            mode,
            mean_packet_size: 1000,
            ecn: false,
            seed: None,
        };
        Red::new(&p, 1e7, 100, Rng::stream(3, 5, 1))
    };
    let (mut pk, mut by) = (mk(RedMode::Packet), mk(RedMode::Byte));
    for _ in 0..50_000 {
        assert_eq!(
            pk.arrive(15, 0, None, 1000).is_err(),
            by.arrive(15, 15_000, None, 1000).is_err()
        );
    }
}

/// The hard limit is the buffer: an arrival that finds it full is an
/// overflow drop, whatever the average.
#[test]
fn red_hard_limit_is_the_buffer() {
    let mut r = red(50.0, 60.0, 0.1, 0.001, true, true);
    assert_eq!(r.arrive(100, 0, None, 1000), Err(DropCause::Overflow));
    assert_eq!(r.arrive(99, 0, None, 1000), Ok(()));
}

fn dropper(th: u32, tau_ms: u64, selection: Selection) -> ThresholdDropper {
    let spec = ThresholdParams {
        threshold_pkts: th,
        immunity_ns: tau_ms * 1_000_000,
        selection,
        bias: Default::default(),
    };
    ThresholdDropper::new(&spec, 1000, Rng::stream(1, 5, 0))
}

/// First-arrival: the first arrival that finds Th waiting is dropped, then
/// nothing for τ, whatever the queue; nothing is ever dropped below Th.
#[test]
fn threshold_dropper_drops_once_per_immunity_period() {
    let ms: u64 = 1_000_000;
    let mut d = dropper(3, 100, Selection::FirstArrival);
    for t in 0..50u64 {
        assert_eq!(d.arrive(2, (t % 4) as u32, t * ms), Ok(()), "below Th");
    }
    assert_eq!(d.arrive(3, 1, 50 * ms), Err(DropCause::Threshold));
    for t in 51..150u64 {
        assert_eq!(
            d.arrive(900, t as u32 % 4, t * ms),
            Ok(()),
            "immune at {t} ms"
        );
    }
    assert_eq!(d.arrive(2, 0, 150 * ms), Ok(()));
    assert_eq!(d.arrive(7, 2, 151 * ms), Err(DropCause::Threshold));
    assert_eq!(d.arrive(1000, 2, 152 * ms), Err(DropCause::Overflow));
    assert_eq!(d.events, 2);
}

/// With a policy (largest-rate, rate-independent) the event asks for a
/// victim; only the victim's next arrival above Th is dropped, once.
#[test]
fn threshold_dropper_drops_only_the_selected_connection() {
    let ms: u64 = 1_000_000;
    let mut d = dropper(3, 100, Selection::LargestRate);
    assert_eq!(d.arrive(3, 0, 0), Ok(()));
    assert!(d.wants_victim);
    d.select(Some(2), 0);
    assert!(!d.wants_victim);
    assert_eq!(d.arrive(5, 0, ms), Ok(()));
    assert_eq!(d.arrive(2, 2, 2 * ms), Ok(()), "below Th: spared");
    assert_eq!(d.arrive(4, 2, 3 * ms), Err(DropCause::Threshold));
    assert_eq!(d.arrive(4, 2, 4 * ms), Ok(()), "one drop per event");
    assert_eq!(
        d.arrive(9, 1, 102 * ms),
        Ok(()),
        "immune for τ after the drop"
    );
    assert!(!d.wants_victim);
    assert_eq!(
        d.arrive(4, 2, 103 * ms),
        Ok(()),
        "a new event τ after the drop"
    );
    assert!(d.wants_victim);
    d.select(None, 103 * ms);
    assert_eq!(d.arrive(9, 1, 104 * ms), Ok(()), "no connection to signal");
    assert!(!d.wants_victim);
}

fn drops_of(out: &tcplab_engine::sim::RunOutput) -> Vec<(f64, i64, i64)> {
    let t = common::f64_column(out, "drops", "t");
    let flow = i64_column(out, "drops", "flow");
    let cause = i64_column(out, "drops", "cause");
    (0..t.len()).map(|i| (t[i], flow[i], cause[i])).collect()
}

fn threshold_scenario(selection: &str, extra: &str, flows: &str) -> String {
    dumbbell("10Mbps", "50ms", 1000, "5ms", flows, "200s", "0s")
        .replace(
            r#""buffer": 1000}"#,
            &format!(
                r#""buffer": 1000, "queue": "threshold", "threshold": {{"threshold": 3, "immunity": "240ms", "selection": "{selection}"{extra}}}}}"#
            ),
        )
        .replace(r#""seed": 1,"#, r#""seed": 1, "trace": {"series": ["drops"]},"#)
}

/// In a packet simulation (5 SACK flows, RTT ~ 120 ms, Th = 3, τ = 2 RTT)
/// every bottleneck drop after the start-up is the dropper's, one per congestion event: drops
/// are at least τ apart, so no two connections are hit in one event.
#[test]
fn threshold_dropper_hits_one_connection_per_congestion_event() {
    for sel in ["first-arrival", "largest-rate", "rate-independent"] {
        let sc = threshold_scenario(
            sel,
            "",
            r#""sack": {"kind": "tcp", "variant": "sack", "count": 5, "start_jitter": "4s"}"#,
        );
        let out = run(&sc);
        // after the start-up (slow start can overflow the buffer before a
        // selected connection reacts)
        let d: Vec<_> = drops_of(&out).into_iter().filter(|x| x.0 > 20.0).collect();
        assert!(d.len() > 100, "{sel}: only {} drops", d.len());
        assert!(
            d.iter().all(|x| x.2 == DropCause::Threshold as i64),
            "{sel}"
        );
        let min_gap = d
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(f64::MAX, f64::min);
        assert!(min_gap >= 0.24 - 1e-9, "{sel}: drops {min_gap} s apart");
        let mut hit = [0u32; 5];
        d.iter().for_each(|x| hit[x.1 as usize] += 1);
        assert!(hit.iter().all(|&h| h > 0), "{sel}: {hit:?}");
        assert!(out.summary.links[0].utilization > 0.8);
    }
}

/// Rate-independent with a bias (paper C's Example 1): the group selected
/// more often (weight 2) is signalled more and gets less throughput than the
/// other (weight 1), compared with the unbiased dropper on the same seed.
#[test]
fn biased_rate_independent_selection_shifts_throughput() {
    let flows = r#""a": {"kind": "tcp", "variant": "sack", "count": 2, "start_jitter": "4s"},
                   "b": {"kind": "tcp", "variant": "sack", "count": 2, "start_jitter": "4s"}"#;
    let by_group = |bias: &str| {
        let out = run(&threshold_scenario("rate-independent", bias, flows));
        let d: Vec<_> = drops_of(&out).into_iter().filter(|x| x.0 > 20.0).collect();
        let drops_a = d.iter().filter(|x| x.1 < 2).count() as f64;
        let g = |lo: usize, hi: usize| -> f64 {
            out.summary.flows[lo..hi]
                .iter()
                .map(|f| f.goodput_bps)
                .sum()
        };
        (drops_a / d.len() as f64, g(0, 2) / g(2, 4))
    };
    let (share, ratio) = by_group(r#", "bias": {"a": 2, "b": 1}"#);
    let (share0, ratio0) = by_group("");
    assert!(
        share > 0.6 && share > share0 + 0.1,
        "a's share of drops {share} vs {share0}"
    );
    assert!(ratio < ratio0 - 0.1, "a/b goodput {ratio} vs {ratio0}");
}

/// RED with its thresholds well inside the buffer (10 SACK flows, RTT
/// 120 ms, buffer 200, thresholds 30 and 90): it drops early, so nearly all
/// drops are RED's and the buffer rarely fills, and the link stays busy.
/// (With paper C's thresholds at 0.6 and 0.8 of a small buffer the queue
/// reaches the limit before the slow average does — in ns-2 as here.)
#[test]
fn red_on_a_dumbbell_drops_early() {
    let sc = dumbbell(
        "10Mbps",
        "50ms",
        200,
        "5ms",
        r#""sack": {"kind": "tcp", "variant": "sack", "count": 10, "start_jitter": "4s"}"#,
        "200s",
        "20s",
    )
    .replace(
        r#""buffer": 200}"#,
        r#""buffer": 200, "queue": "red", "red": {"min_thresh": 30, "max_thresh": 90, "weight": 0.002}}"#,
    )
    .replace(r#""seed": 1,"#, r#""seed": 1, "trace": {"series": ["drops"]},"#);
    let out = run(&sc);
    let d: Vec<_> = drops_of(&out).into_iter().filter(|x| x.0 > 20.0).collect();
    let red = d.iter().filter(|x| x.2 == DropCause::Red as i64).count();
    let overflow = d
        .iter()
        .filter(|x| x.2 == DropCause::Overflow as i64)
        .count();
    assert_eq!(red + overflow, d.len());
    assert!(red > 20 * overflow.max(1), "red {red}, overflow {overflow}");
    assert!(out.summary.links[0].utilization > 0.9);
}

fn resolve(json: &str) -> Result<Scenario, tcplab_engine::scenario::ScenarioError> {
    Scenario::from_json(json).and_then(|s| s.resolve())
}

fn with_bottleneck(extra: &str) -> String {
    dumbbell(
        "10Mbps",
        "5ms",
        50,
        "1ms",
        r#""tcp": {"kind": "tcp"}"#,
        "10s",
        "0s",
    )
    .replace(r#""buffer": 50}"#, &format!(r#""buffer": 50, {extra}}}"#))
}

#[test]
fn bad_queue_tables_are_refused_with_their_paths() {
    let cases = [
        (
            r#""queue": "red", "red": {"min_thresh": 30, "max_thresh": 20}"#,
            "topology.bottleneck.red.min_thresh",
        ),
        (
            r#""queue": "red", "red": {"min_thresh": 30, "max_thresh": 60}"#,
            "topology.bottleneck.red.max_thresh",
        ),
        (
            r#""queue": "red", "red": {"preset": "paper-c", "max_p": 0}"#,
            "topology.bottleneck.red.max_p",
        ),
        (
            r#""queue": "red", "red": {"preset": "paper-c", "max_p": 1.5}"#,
            "topology.bottleneck.red.max_p",
        ),
        (
            r#""queue": "red", "red": {"preset": "paper-c", "weight": 0}"#,
            "topology.bottleneck.red.weight",
        ),
        (
            r#""queue": "red", "red": {"preset": "paper-c", "weight": 2}"#,
            "topology.bottleneck.red.weight",
        ),
        (r#""red": {"preset": "paper-c"}"#, "topology.bottleneck.red"),
        (
            r#""queue": "red", "threshold": {"threshold": 3, "immunity": "1s"}"#,
            "topology.bottleneck.threshold",
        ),
        (r#""queue": "threshold""#, "topology.bottleneck.threshold"),
        (
            r#""queue": "threshold", "threshold": {"threshold": 50, "immunity": "1s"}"#,
            "topology.bottleneck.threshold.threshold",
        ),
        (
            r#""queue": "threshold", "threshold": {"threshold": 3, "immunity": 0}"#,
            "topology.bottleneck.threshold.immunity",
        ),
        (
            r#""queue": "threshold", "threshold": {"threshold": 3}"#,
            "topology.bottleneck.threshold",
        ),
        (
            r#""queue": "threshold", "threshold": {"threshold": 3, "immunity": "1s", "selection": "largest-rate", "bias": {"tcp": 2}}"#,
            "topology.bottleneck.threshold.bias",
        ),
        (
            r#""queue": "threshold", "threshold": {"threshold": 3, "immunity": "1s", "bias": {"udp": 2}}"#,
            "topology.bottleneck.threshold.bias.udp",
        ),
        (
            r#""queue": "threshold", "threshold": {"threshold": 3, "immunity": "1s", "selection": "smallest"}"#,
            "topology.bottleneck.threshold.selection",
        ),
        (
            r#""queue": "red", "red": {"preset": "paper-c", "mode": "bits"}"#,
            "topology.bottleneck.red.mode",
        ),
        (
            r#""queue": "red", "red": {"presets": "paper-c"}"#,
            "topology.bottleneck.red.presets",
        ),
    ];
    for (extra, path) in cases {
        let e = resolve(&with_bottleneck(extra)).expect_err(extra);
        assert_eq!(e.path, path, "{extra}: {e}");
    }
    // RED with ns-2's automatic thresholds (5 and 15) on a small buffer
    let e = resolve(
        &with_bottleneck(r#""queue": "red""#).replace(r#""buffer": 50,"#, r#""buffer": 10,"#),
    )
    .unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.red.max_thresh");
}

/// The preset fills paper C's values, explicit keys override it, and the
/// resolved scenario carries every value (and round-trips).
#[test]
fn red_preset_resolves_to_paper_c_values() {
    let s = resolve(&with_bottleneck(
        r#""queue": "red", "red": {"preset": "paper-c", "wait": false}"#,
    ))
    .unwrap();
    let r = s.topology.bottleneck().red.clone().unwrap();
    assert_eq!(r.min_thresh, Some(30.0));
    assert_eq!(r.max_thresh, Some(40.0));
    assert_eq!(r.max_p, Some(0.1));
    assert_eq!(r.weight, Some(0.001));
    assert_eq!(r.wait, Some(false));
    assert_eq!(r.gentle, Some(true));
    assert_eq!(r.mode, Some(RedMode::Packet));
    let again = resolve(&s.to_json()).unwrap();
    assert_eq!(s.to_json(), again.to_json());
    // a RED table is valid on any link
    let acc = dumbbell("10Mbps", "5ms", 50, "1ms", r#""tcp": {"kind": "tcp"}"#, "10s", "0s").replace(
        r#""access": {"rate": "1Gbps", "delay": "1ms", "buffer": 10000}"#,
        r#""access": {"rate": "1Gbps", "delay": "1ms", "buffer": 10000, "queue": "red", "red": {"preset": "paper-c"}}"#,
    );
    let s = resolve(&acc).unwrap();
    assert_eq!(
        s.topology.access().red.clone().unwrap().max_thresh,
        Some(8000.0)
    );
    run(&acc);
}
