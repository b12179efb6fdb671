use super::*;

const MINIMAL: &str = r#"{
    "duration": "10s",
    "topology": {
        "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
        "access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100},
        "sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}
    },
    "flows": {"tcp": {"kind": "tcp"}}
}"#;

#[test]
fn minimal_scenario_resolves_with_ns2_defaults() {
    let s = Scenario::from_json(MINIMAL).unwrap().resolve().unwrap();
    let g = &s.flows["tcp"];
    assert_eq!(g.variant, Some(Variant::Reno));
    assert_eq!(g.initial_cwnd, Some(2));
    assert_eq!(g.min_rto, Some(Duration(200_000_000)));
    assert_eq!(g.stop, Some(Duration(10_000_000_000)));
}

#[test]
fn unknown_key_names_its_path() {
    let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "varaint": "reno""#);
    let e = Scenario::from_json(&bad).unwrap_err();
    assert_eq!(e.path, "flows.tcp.varaint");
    assert!(e.message.contains("unknown field"), "{e}");
}

#[test]
fn wrong_unit_and_unknown_variant_are_reported() {
    let bad = MINIMAL.replace(r#""delay": "5ms""#, r#""delay": "5 parsecs""#);
    let e = Scenario::from_json(&bad).unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.delay");
    let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "variant": "vegas""#);
    let e = Scenario::from_json(&bad).unwrap_err();
    assert_eq!(e.path, "flows.tcp.variant");
    assert!(e.message.contains("newreno"), "{e}");
}

#[test]
fn bad_values_are_rejected_with_paths() {
    let bad = MINIMAL.replace(r#""kind": "tcp""#, r#""kind": "tcp", "beta": 1.5"#);
    let e = Scenario::from_json(&bad).unwrap().resolve().unwrap_err();
    assert_eq!(e.path, "flows.tcp.beta");
    let bad = MINIMAL.replace(r#""rate": "1Mbps""#, r#""rate": 0"#);
    let e = Scenario::from_json(&bad).unwrap().resolve().unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.rate");
    let bad = MINIMAL.replace(r#""rate": "1Mbps""#, r#""rate": "-1Mbps""#);
    assert!(Scenario::from_json(&bad).is_err());
}

fn with_udp(rate: &str) -> String {
    MINIMAL.replace(
        r#""tcp": {"kind": "tcp"}"#,
        &format!(r#""tcp": {{"kind": "tcp"}}, "bg": {{"kind": "udp", "rate": {rate}}}"#),
    )
}

#[test]
fn bad_shapes_are_rejected_with_paths() {
    let resolve = |r: &str| Scenario::from_json(&with_udp(r)).and_then(|s| s.resolve());
    let e =
        resolve(r#"{"shape": "sine", "mean": "-1Mbps", "amplitude": "1Mbps", "frequency": "1Hz"}"#)
            .unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.mean");
    let e = resolve(r#"{"shape": "sine", "mean": 0, "amplitude": "1Mbps", "frequency": "1Hz"}"#)
        .unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.mean");
    let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps"}"#).unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.frequency");
    let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps", "frequency": "1Hz", "offset": 3}"#).unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.offset");
    let e = resolve(r#"{"shape": "sine", "mean": "1Mbps", "amplitude": "1Mbps", "frequency": "1Hz", "wobble": 3}"#).unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.wobble");
    let e = resolve(r#"{"shape": "sines", "offset": "1Mbps", "components": [{"amplitude": "1Mbps", "frequency": 0}]}"#).unwrap_err();
    assert_eq!(e.path, "flows.bg.rate.components[0].frequency");
    let s = resolve(
        r#"{"shape": "sine", "mean": "0.5Mbps", "amplitude": "0.5Mbps", "frequency": "0.4Hz"}"#,
    )
    .unwrap();
    let again = Scenario::from_json(&s.to_json())
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(s.to_json(), again.to_json());
}

fn resolve_with(link_extra: &str, group_extra: &str) -> Result<Scenario, ScenarioError> {
    let text = MINIMAL
        .replace(
            r#""sink_access": {"rate": "10Mbps", "delay": "1ms", "buffer": 100}"#,
            &format!(
                r#""sink_access": {{"rate": "10Mbps", "delay": "1ms", "buffer": 100{link_extra}}}"#
            ),
        )
        .replace(
            r#""tcp": {"kind": "tcp"}"#,
            &format!(r#""tcp": {{"kind": "tcp", "count": 8{group_extra}}}"#),
        );
    Scenario::from_json(&text).and_then(|s| s.resolve())
}

#[test]
fn bad_error_models_are_rejected_with_paths() {
    let e = |x: &str| resolve_with(&format!(r#", "errors": {x}"#), "").unwrap_err();
    let p = "topology.sink_access.errors";
    assert_eq!(
        e(r#"{"model": "bernoulli", "per": 1.5}"#).path,
        format!("{p}.per")
    );
    assert_eq!(e(r#"{"model": "bernoulli"}"#).path, format!("{p}.per"));
    assert_eq!(
        e(r#"{"model": "bernoulli", "per": 0.1, "p_gb": 0.1}"#).path,
        format!("{p}.p_gb")
    );
    assert_eq!(
        e(r#"{"model": "gilbert-elliott", "p_gb": 0.1}"#).path,
        format!("{p}.p_bg")
    );
    assert_eq!(
        e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0}"#).path,
        format!("{p}.p_bg")
    );
    assert_eq!(
        e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0.3, "per": 0.1}"#).path,
        format!("{p}.per")
    );
    assert_eq!(
        e(r#"{"model": "gilbert-elliott", "p_gb": 0.1, "p_bg": 0.3, "per_bad": 2}"#).path,
        format!("{p}.per_bad")
    );
    let s = resolve_with(
        r#", "errors": {"model": "gilbert-elliott", "p_gb": 0.01, "p_bg": 0.3}"#,
        "",
    )
    .unwrap();
    let ge = s.topology.sink_access().errors.clone().unwrap();
    assert_eq!((ge.per_good, ge.per_bad), (Some(0.0), Some(1.0)));
    assert!((ge.loss_rate() - 0.01 / 0.31).abs() < 1e-12);
}

#[test]
fn bad_loss_lists_are_rejected_with_paths() {
    let e = |x: &str| resolve_with(&format!(r#", "errors": {x}"#), "").unwrap_err();
    let p = "topology.sink_access.errors";
    assert_eq!(e(r#"{"model": "list"}"#).path, format!("{p}.packets"));
    assert_eq!(
        e(r#"{"model": "bernoulli", "per": 0.1, "packets": [1]}"#).path,
        format!("{p}.packets")
    );
    assert_eq!(
        e(r#"{"model": "list", "packets": [1], "per": 0.1}"#).path,
        format!("{p}.per")
    );
    let err = e(r#"{"model": "list", "packets": [3, 7, 7]}"#);
    assert_eq!(err.path, format!("{p}.packets[2]"));
    assert!(
        err.message.contains("strictly increasing"),
        "{}",
        err.message
    );
    assert_eq!(
        e(r#"{"model": "list", "packets": [3, -1]}"#)
            .path
            .split('.')
            .next(),
        Some("topology")
    );
    let s = resolve_with(r#", "errors": {"model": "list", "packets": []}"#, "").unwrap();
    assert_eq!(
        s.topology.sink_access().errors.clone().unwrap().packets,
        Some(vec![])
    );
}

#[test]
fn bad_outage_schedules_are_rejected_with_paths() {
    let e = |x: &str| resolve_with(&format!(r#", "outages": {x}"#), "").unwrap_err();
    let p = "topology.sink_access.outages";
    assert_eq!(
        e(r#"{"every": "5s", "duration": "5s"}"#).path,
        format!("{p}.duration")
    );
    assert_eq!(
        e(r#"{"every": "5s", "duration": 0}"#).path,
        format!("{p}.duration")
    );
    assert_eq!(e(r#"{"duration": "1s"}"#).path, p);
    assert_eq!(
        e(r#"{"every": "5s", "at": ["1s"], "duration": "1s"}"#).path,
        format!("{p}.at")
    );
    assert_eq!(
        e(r#"{"at": ["3s", "2s"], "duration": "1s"}"#).path,
        format!("{p}.at[1]")
    );
    assert_eq!(
        e(r#"{"at": ["3s"], "start": "1s", "duration": "1s"}"#).path,
        format!("{p}.start")
    );
    assert_eq!(
        e(r#"{"every": "5s", "duration": "1s", "distribution": "pareto"}"#).path,
        format!("{p}.distribution")
    );
    // a periodic schedule starts one period in unless told; exponential
    // durations may exceed the period (overlaps merge)
    let s = resolve_with(
        r#", "outages": {"every": "5s", "duration": "6s", "distribution": "exponential"}"#,
        "",
    )
    .unwrap();
    assert_eq!(
        s.topology.sink_access().outages.clone().unwrap().start,
        Some(Duration(5_000_000_000))
    );
}

#[test]
fn bad_join_and_leave_schedules_are_rejected_with_paths() {
    let e = |x: &str| resolve_with("", x).unwrap_err();
    let j = r#""at": "2s", "every": "1s""#;
    assert_eq!(
        e(&format!(r#", "joins": {{"initial": 2, {j}, "factor": 1}}"#)).path,
        "flows.tcp.joins.factor"
    );
    assert_eq!(
        e(&format!(r#", "joins": {{"initial": 9, {j}, "factor": 2}}"#)).path,
        "flows.tcp.joins.initial"
    );
    assert_eq!(
        e(&format!(r#", "joins": {{"initial": 0, {j}, "factor": 2}}"#)).path,
        "flows.tcp.joins.initial"
    );
    assert_eq!(
        e(r#", "joins": {"initial": 2, "at": "2s", "every": 0, "factor": 2}"#).path,
        "flows.tcp.joins.every"
    );
    assert_eq!(
        e(&format!(
            r#", "start": "3s", "joins": {{"initial": 2, {j}, "factor": 2}}"#
        ))
        .path,
        "flows.tcp.joins.at"
    );
    assert_eq!(
        e(&format!(r#", "leaves": {{{j}, "factor": 1}}"#)).path,
        "flows.tcp.leaves.factor"
    );
    assert_eq!(
        e(&format!(r#", "leaves": {{{j}, "factor": 0}}"#)).path,
        "flows.tcp.leaves.factor"
    );
    assert_eq!(
        e(&format!(r#", "leaves": {{{j}, "factor": 0.5, "min": 9}}"#)).path,
        "flows.tcp.leaves.min"
    );
    assert_eq!(
        e(&format!(
            r#", "stop": "5s", "leaves": {{{j}, "factor": 0.5}}"#
        ))
        .path,
        "flows.tcp.stop"
    );
    assert_eq!(
        e(&format!(
            r#", "joins": {{"initial": 2, {j}, "factor": 2}}, "leaves": {{{j}, "factor": 0.5}}"#
        ))
        .path,
        "flows.tcp.leaves"
    );
    // a resolved leave schedule keeps stop unset, so it resolves again
    let s = resolve_with("", &format!(r#", "leaves": {{{j}, "factor": 0.5}}"#)).unwrap();
    assert_eq!(s.flows["tcp"].stop, None);
    Scenario::from_json(&s.to_json())
        .unwrap()
        .resolve()
        .unwrap();
}

#[test]
fn join_and_leave_schedules_give_each_flow_its_window() {
    let s = |x: &str| resolve_with("", x).unwrap();
    let sec = 1_000_000_000;
    let end = 10 * sec;
    // 8 flows, 2 at first, doubling at 2 s and 3 s (then all 8 are in)
    let g = s(r#", "joins": {"initial": 2, "at": "2s", "every": "1s", "factor": 2}"#).flows["tcp"]
        .clone();
    let starts: Vec<_> = (0..8).map(|j| g.flow_window(j, end).0 / sec).collect();
    assert_eq!(starts, vec![0, 0, 2, 2, 3, 3, 3, 3]);
    // 8 flows halving at 2, 3, 4 s down to the minimum of 1
    let g = s(r#", "leaves": {"at": "2s", "every": "1s", "factor": 0.5}"#).flows["tcp"].clone();
    let stops: Vec<_> = (0..8).map(|j| g.flow_window(j, end).1 / sec).collect();
    assert_eq!(stops, vec![10, 4, 3, 3, 2, 2, 2, 2]);
}

#[test]
fn new_shapes_and_apps_resolve_and_round_trip() {
    let json = with_udp(
        r#"{"shape": "piecewise", "points": [["0s", "1Mbps"], [2.5, 300000], ["4s", 0]], "repeat": true}"#,
    )
    .replace(
        r#""tcp": {"kind": "tcp"}"#,
        r#""tcp": {"kind": "tcp", "app": {"kind": "cbr", "rate": "1Mbps", "send_buffer": 8, "read": "125KB", "interval": "1s"}},
           "onoff": {"kind": "udp", "send_jitter": "1ms", "rate": {"shape": "onoff", "rate": "1Mbps",
             "on": {"distribution": "pareto", "mean": "1s", "alpha": 1.5}, "off": {"distribution": "fixed", "mean": "0.5s"}}}"#,
    );
    let s = Scenario::from_json(&json).unwrap().resolve().unwrap();
    let app = s.flows["tcp"].app.unwrap();
    assert_eq!(app.when_full, Some(WhenFull::Block));
    assert_eq!(app.read.0, 125_000);
    // (1 + 0.3)/2·2.5 + 0.3/2·1.5 = 1.85 Mbit per 4 s
    let bg = s.flows["bg"].rate.as_ref().unwrap();
    assert!((bg.mean_bps() - 1.85e6 / 4.0).abs() < 1e-6);
    assert!((s.flows["onoff"].rate.as_ref().unwrap().mean_bps() - 1e6 / 1.5).abs() < 1e-6);
    let again = Scenario::from_json(&s.to_json())
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(s.to_json(), again.to_json());
}

#[test]
fn resolved_scenario_round_trips() {
    let s = Scenario::from_json(MINIMAL).unwrap().resolve().unwrap();
    let again = Scenario::from_json(&s.to_json())
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(s.to_json(), again.to_json());
}

#[test]
fn linux_profile_and_cc_resolve_and_refuse_what_they_do_not_read() {
    let s = resolve_with("", r#", "cc": "cubic", "profile": "linux""#).unwrap();
    let g = &s.flows["tcp"];
    assert_eq!(
        g.variant,
        Some(Variant::Sack),
        "the linux profile recovers by SACK"
    );
    assert_eq!((g.initial_cwnd, g.header_size), (Some(10), Some(52)));
    assert_eq!(g.delayed_ack, Some(true));
    assert_eq!(g.tcp_params().cc, Cc::Cubic);
    // α and β are TCP(α, β)'s: refused with CUBIC or with Linux's Reno
    let e = resolve_with("", r#", "cc": "cubic", "beta": 0.8"#).unwrap_err();
    assert_eq!(e.path, "flows.tcp.beta");
    assert!(e.message.contains("cc = \"cubic\""), "{e}");
    let e = resolve_with("", r#", "profile": "linux", "alpha": 2"#).unwrap_err();
    assert_eq!(e.path, "flows.tcp.alpha");
    let e = resolve_with("", r#", "cc": "vegas""#).unwrap_err();
    assert_eq!(e.path, "flows.tcp.cc");
    assert!(e.message.contains("cubic"), "{e}");
}

#[test]
fn the_old_linux_keys_are_refused_with_the_new_spelling() {
    let with = |linux: &str| {
        let text = MINIMAL.replace(
            r#""flows": {"tcp": {"kind": "tcp"}}"#,
            &format!(r#""flows": {{"tcp": {{"kind": "tcp"}}}}, "linux": {linux}"#),
        );
        Scenario::from_json(&text).unwrap().resolve().unwrap_err()
    };
    let e = with(r#"{"cc": "cubic"}"#);
    assert_eq!(e.path, "linux.cc");
    assert!(e.message.contains("cc = \"cubic\""), "{e}");
    let e = with(r#"{"group_cc": {"tcp": "bbr"}}"#);
    assert_eq!(e.path, "linux.group_cc");
    assert!(e.message.contains("flows.tcp.cc = \"bbr\""), "{e}");
    let e = with(r#"{"profile": "linux"}"#);
    assert_eq!(e.path, "linux.profile");
    assert!(e.message.contains("profile = \"linux\""), "{e}");
}

/// The Plan writes a UDP source's rate in SI numbers and nanoseconds, never
/// the scenario's unit strings.
#[test]
fn plan_writes_rate_shapes_in_si_units() {
    let udp = |rate: &str| {
        let sc = Scenario::from_json(&with_udp(rate)).unwrap();
        let plan = Plan::from_scenario(&sc).unwrap();
        let v: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        let f = v["flows"].as_array().unwrap();
        f.iter().find(|f| f["kind"] == "udp").unwrap()["udp"]["shape"].clone()
    };
    let c = udp(r#""0.5Mbps""#);
    assert_eq!(
        c,
        serde_json::json!({"kind": "constant", "rate_bps": 500000.0})
    );
    let s = udp(
        r#"{"shape": "sine", "mean": "500kbps", "amplitude": "0.25Mbps", "frequency": "0.4Hz"}"#,
    );
    assert_eq!(
        s,
        serde_json::json!({"kind": "sine", "mean_bps": 500000.0, "amplitude_bps": 250000.0,
                           "frequency_hz": 0.4, "phase_rad": 0.0})
    );
    let p =
        udp(r#"{"shape": "piecewise", "points": [[0, "1Mbps"], ["250ms", 0]], "repeat": true}"#);
    assert_eq!(
        p,
        serde_json::json!({"kind": "piecewise", "points": [[0, 1000000.0], [250000000, 0.0]],
                           "repeat": true})
    );
    let o = udp(
        r#"{"shape": "onoff", "rate": "2Mbps", "on": {"distribution": "fixed", "mean": "1s"},
            "off": {"distribution": "pareto", "mean": "2s", "alpha": 1.5}}"#,
    );
    assert_eq!(o["kind"], "onoff");
    assert_eq!(o["rate_bps"], 2e6);
    assert_eq!(
        o["on"],
        serde_json::json!({"distribution": "fixed", "mean_ns": 1000000000u64, "alpha": null})
    );
    assert_eq!(o["off"]["mean_ns"], 2_000_000_000u64);
    assert_eq!(o["off"]["alpha"], 1.5);
    let m = udp(
        r#"{"shape": "sines", "offset": "1Mbps", "components": [{"amplitude": "1Mbps", "frequency": "2Hz", "phase": 1.5}]}"#,
    );
    assert_eq!(
        m["components"],
        serde_json::json!([{"amplitude_bps": 1e6, "frequency_hz": 2.0, "phase_rad": 1.5}])
    );
    assert_eq!(m["offset_bps"], 1e6);
}

/// BBR needs Linux's SACK recovery (delivery-rate samples and Linux's count
/// of packets in flight): under an ns-2 profile, or without SACK, it is
/// refused by the key that makes the combination, not run into a collapse.
#[test]
fn bbr_is_refused_outside_the_linux_profile_with_sack() {
    let group = |extra: &str| {
        MINIMAL.replace(
            r#""kind": "tcp""#,
            &format!(r#""kind": "tcp", "cc": "bbr"{extra}"#),
        )
    };
    for profile in [
        "",
        r#", "profile": "ns2-2.35""#,
        r#", "profile": "ns2-2001""#,
    ] {
        let e = Scenario::from_json(&group(&format!(r#"{profile}, "variant": "sack""#)))
            .unwrap()
            .resolve()
            .unwrap_err();
        assert_eq!(e.path, "flows.tcp.cc", "{profile}: {e}");
        assert!(e.message.contains("profile = \"linux\""), "{e}");
    }
    let e = Scenario::from_json(&group(r#", "profile": "linux", "variant": "reno""#))
        .unwrap()
        .resolve()
        .unwrap_err();
    assert_eq!(e.path, "flows.tcp.variant");
    assert!(e.message.contains("\"reno\""), "{e}");
    Scenario::from_json(&group(r#", "profile": "linux""#))
        .unwrap()
        .resolve()
        .expect("BBR under the linux profile (SACK by default) runs");
}

/// A number out of a key's range is said without Rust's type names.
#[test]
fn out_of_range_numbers_are_said_without_rust_type_names() {
    let bad = MINIMAL.replace(r#""buffer": 40"#, r#""buffer": -5"#);
    let e = Scenario::from_json(&bad).unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.buffer");
    assert_eq!(
        e.message,
        "expected a whole number from 0 to 4294967295, got integer -5"
    );
    let bad = MINIMAL.replace(r#""buffer": 40"#, r#""buffer": 2.5"#);
    let e = Scenario::from_json(&bad).unwrap_err();
    assert!(e.message.starts_with("expected a whole number"), "{e}");
    assert!(!e.message.contains("u32"), "{e}");
}

/// CUBIC over Reno's or NewReno's recovery is refused by the variant key
/// (one flow kept a clean link only 64-78 % busy); SACK and Tahoe run.
#[test]
fn cubic_is_refused_with_reno_and_newreno_recovery() {
    let group = |variant: &str| {
        MINIMAL.replace(
            r#""kind": "tcp""#,
            &format!(r#""kind": "tcp", "cc": "cubic", "variant": "{variant}""#),
        )
    };
    for v in ["reno", "newreno"] {
        let e = Scenario::from_json(&group(v))
            .unwrap()
            .resolve()
            .unwrap_err();
        assert_eq!(e.path, "flows.tcp.variant", "{e}");
    }
    for v in ["sack", "tahoe"] {
        Scenario::from_json(&group(v)).unwrap().resolve().expect(v);
    }
}

/// A path longer than a route can be is refused by key before any run (it
/// panicked in the engine's build, and `tcplab plan` accepted it).
#[test]
fn a_route_over_255_links_is_refused_by_key() {
    let path = |n: usize| {
        let link = r#"{"rate": "10Mbps", "delay": "1ms", "buffer": 10}"#;
        let links = vec![link; n].join(", ");
        format!(
            r#"{{"duration": "1s", "topology": {{"kind": "path", "links": [{links}]}},
               "flows": {{"tcp": {{"kind": "tcp"}}}}}}"#
        )
    };
    Plan::from_scenario(&Scenario::from_json(&path(255)).unwrap()).expect("255 links run");
    let e = Plan::from_scenario(&Scenario::from_json(&path(256)).unwrap()).unwrap_err();
    assert_eq!(e.path, "topology.links");
    assert!(e.message.contains("256"), "{e}");
}

/// Not a check: the tool behind `bench/udp_identical.py`. Reads a JSON
/// list of `[name, scenario]` from `$TCPLAB_UDP_CASES` and writes every
/// UDP flow's departure times (little-endian i64 ns) to
/// `$TCPLAB_UDP_OUT/<index>_<flow>.bin`, so departure sequences of two
/// builds can be compared exactly.
#[test]
#[ignore]
fn dump_departures() {
    let (Ok(cases), Ok(out)) = (
        std::env::var("TCPLAB_UDP_CASES"),
        std::env::var("TCPLAB_UDP_OUT"),
    ) else {
        return;
    };
    let text = std::fs::read_to_string(cases).unwrap();
    let list: Vec<(String, serde_json::Value)> = serde_json::from_str(&text).unwrap();
    for (i, (name, sc)) in list.iter().enumerate() {
        let plan = Scenario::from_json(&sc.to_string())
            .and_then(|s| Plan::from_scenario(&s))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for f in plan.flows.iter().filter(|f| f.udp.is_some()) {
            let times = crate::sim::udp_departures(&plan, f.id).unwrap();
            let bytes: Vec<u8> = times
                .iter()
                .flat_map(|t| (*t as i64).to_le_bytes())
                .collect();
            std::fs::write(format!("{out}/{i}_{}.bin", f.id), bytes).unwrap();
        }
    }
}

fn plan_of(json: &str) -> Plan {
    Plan::from_scenario(&Scenario::from_json(json).unwrap()).unwrap()
}

#[test]
fn links_say_their_role_flow_hop_and_key() {
    let sc = MINIMAL.replace(
        r#""flows": {"tcp": {"kind": "tcp"}}"#,
        r#""flows": {"a": {"kind": "tcp"}, "b": {"kind": "tcp", "access": {"delay": "3ms"}}}"#,
    );
    let p = plan_of(&sc);
    let l = |id: usize| {
        let l = &p.links[id];
        (l.role, l.flow, l.hop, l.key.as_str(), l.direction)
    };
    assert_eq!(
        l(0),
        (
            LinkRole::Bottleneck,
            None,
            None,
            "topology.bottleneck",
            Direction::Forward
        )
    );
    assert_eq!(
        l(3),
        (
            LinkRole::Access,
            Some(0),
            None,
            "topology.access",
            Direction::Reverse
        )
    );
    assert_eq!(
        l(4),
        (
            LinkRole::SinkAccess,
            Some(0),
            None,
            "topology.sink_access",
            Direction::Forward
        )
    );
    assert_eq!(
        l(6),
        (
            LinkRole::Access,
            Some(1),
            None,
            "flows.b.access",
            Direction::Forward
        )
    );
    let chain = r#"{"duration": "1s", "topology": {"kind": "path", "links": [
        {"rate": "10Mbps", "delay": "1ms", "buffer": 10},
        {"rate": "1Mbps", "delay": "1ms", "buffer": 10}]},
        "flows": {"a": {"kind": "tcp"}}}"#;
    let p = plan_of(chain);
    assert_eq!(
        (p.links[2].role, p.links[2].hop, p.links[2].key.as_str()),
        (LinkRole::Chain, Some(1), "topology.links[1]")
    );
}

#[test]
fn a_flows_bottleneck_is_its_routes_slowest_link_the_bottleneck_among_equals() {
    let bottleneck = |json: &str| {
        let b = plan_of(json).flows[0].bottleneck;
        (b.forward, b.reverse)
    };
    // every link as fast as the bottleneck: the link of role bottleneck
    let equal = MINIMAL.replace(r#""rate": "10Mbps""#, r#""rate": "1Mbps""#);
    assert_eq!(bottleneck(&equal), (0, 1));
    // a slower access link is the flow's bottleneck (forward: its id; reverse: + 1)
    let slow = MINIMAL.replace(
        r#""access": {"rate": "10Mbps""#,
        r#""access": {"rate": "500kbps""#,
    );
    assert_eq!(bottleneck(&slow), (2, 3));
    // a chain of equal links: the first on each route
    let chain = r#"{"duration": "1s", "topology": {"kind": "path", "links": [
        {"rate": "1Mbps", "delay": "1ms", "buffer": 10},
        {"rate": "1Mbps", "delay": "1ms", "buffer": 10}]},
        "flows": {"a": {"kind": "tcp"}}}"#;
    assert_eq!(bottleneck(chain), (0, 3));
}

#[test]
fn the_plan_says_ack_size_and_the_linux_table_resolved() {
    let p = plan_of(MINIMAL);
    assert_eq!(p.flows[0].tcp.unwrap().ack_bytes, 40);
    assert_eq!(
        p.linux,
        LinuxPlan {
            profile: LinuxProfile::Ns2,
            sack: false,
            rack: false,
            tlp: false,
            frto: false,
            timestamps: false,
            initial_cwnd: Some(2),
            min_rto_ns: Some(200_000_000),
            quickack: true,
            sample_interval_ns: LINUX_SAMPLE_INTERVAL,
            explicit: vec![],
        }
    );
    let linux = MINIMAL
        .replace(r#""kind": "tcp""#, r#""kind": "tcp", "profile": "linux""#)
        .replace(
            r#""flows""#,
            r#""linux": {"sack": false, "sample_interval": "5ms"}, "flows""#,
        );
    let p = plan_of(&linux);
    assert_eq!(p.flows[0].tcp.unwrap().ack_bytes, 52);
    let lx = &p.linux;
    assert_eq!(lx.profile, LinuxProfile::Linux);
    assert!(!lx.sack && lx.rack && lx.tlp && lx.frto && lx.timestamps && !lx.quickack);
    assert_eq!((lx.initial_cwnd, lx.min_rto_ns), (None, None));
    assert_eq!(lx.sample_interval_ns, 5_000_000);
    assert_eq!(lx.explicit, ["sack", "sample_interval"]);
}

#[test]
fn a_plan_reads_back_from_its_json() {
    let p = plan_of(MINIMAL);
    let back: Plan = serde_json::from_str(&p.to_json()).unwrap();
    assert_eq!(back.to_json(), p.to_json());
}

#[test]
fn a_positive_mean_is_known_without_the_clipped_average_where_the_offset_shows_it() {
    // validation asks whether a rate's mean is positive; for a clipped sum of
    // sines the mean is a two-million-sample average, which a positive offset
    // makes unnecessary: the answer must be the one the average gives
    let shaped = |offset: &str| {
        let json = with_udp(&format!(
            r#"{{"shape": "sines", "offset": {offset}, "components": [
                {{"amplitude": "1Mbps", "frequency": "0.4Hz"}}, {{"amplitude": "0.5Mbps", "frequency": "2Hz"}}]}}"#
        ));
        Scenario::from_json(&json).map(|s| s.flows["bg"].rate.clone().unwrap())
    };
    for offset in [
        r#""1Mbps""#,
        r#""0.2Mbps""#,
        "1",
        "0",
        r#""-0.5Mbps""#,
        r#""-2Mbps""#,
    ] {
        let Ok(rate) = shaped(offset) else { continue };
        assert_eq!(
            rate.has_positive_mean(),
            rate.mean_bps() > 0.0,
            "offset {offset}"
        );
    }
    // clipped (the amplitudes exceed the offset) and positive: accepted
    assert!(shaped(r#""0.2Mbps""#).unwrap().has_positive_mean());
    let resolved = Scenario::from_json(&with_udp(
        r#"{"shape": "sines", "offset": "0.2Mbps", "components": [
            {"amplitude": "1Mbps", "frequency": "0.4Hz"}, {"amplitude": "0.5Mbps", "frequency": "2Hz"}]}"#,
    ))
    .and_then(|s| s.resolve());
    assert!(resolved.is_ok());
}
