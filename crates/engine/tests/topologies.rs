//! Facts about the topologies other than the dumbbell: a path (a chain of
//! links every flow crosses), a parking lot (bottlenecks in a row, long and
//! cross flows) and reverse-direction flows (data against the acks).

mod common;
use common::*;
use tcplab_engine::sim::RunOutput;

fn link<'a>(out: &'a RunOutput, name: &str, direction: &str) -> &'a tcplab_engine::sim::LinkResult {
    out.summary
        .links
        .iter()
        .find(|l| l.name == name && l.direction == direction)
        .unwrap_or_else(|| panic!("no link {name} {direction}"))
}

#[test]
fn a_path_of_the_dumbbells_three_links_is_the_dumbbell_for_one_flow() {
    // One flow of a dumbbell crosses exactly three links: its access link,
    // the bottleneck, its sink link. A path of those three links is the same
    // network; with nothing random on the links (DropTail, no errors) and
    // the flow's own random stream (its clock's boot offset) unchanged, the
    // run must be the same packet for packet, only the link ids differ.
    for v in ["tahoe", "reno", "sack"] {
        let flows = format!(r#""tcp": {{"kind": "tcp", "variant": "{v}", "packet_size": 512}}"#);
        let dumbbell = format!(
            r#"{{"duration": "120s", "warmup": "0s", "seed": 3,
            "topology": {{
                "bottleneck": {{"rate": "1.5Mbps", "delay": "276ms", "buffer": 20}},
                "access": {{"rate": "10Mbps", "delay": "2ms", "buffer": 1000}},
                "sink_access": {{"rate": "10Mbps", "delay": "2ms", "buffer": 1000}}}},
            "flows": {{ {flows} }} }}"#
        );
        let path = format!(
            r#"{{"duration": "120s", "warmup": "0s", "seed": 3,
            "topology": {{"kind": "path", "links": [
                {{"rate": "10Mbps", "delay": "2ms", "buffer": 1000}},
                {{"rate": "1.5Mbps", "delay": "276ms", "buffer": 20}},
                {{"rate": "10Mbps", "delay": "2ms", "buffer": 1000}}]}},
            "flows": {{ {flows} }} }}"#
        );
        let (d, p) = (run(&dumbbell), run(&path));
        let (fd, fp) = (&d.summary.flows[0], &p.summary.flows[0]);
        assert_eq!(fd.delivered_packets, fp.delivered_packets, "{v}");
        assert_eq!(fd.sent_packets, fp.sent_packets, "{v}");
        assert_eq!(fd.retransmissions, fp.retransmissions, "{v}");
        assert_eq!(fd.timeouts, fp.timeouts, "{v}");
        assert_eq!(fd.drops, fp.drops, "{v}");
        assert!(fd.drops > 0, "{v}: the small buffer must overflow");
        let (bd, bp) = (
            link(&d, "bottleneck", "forward"),
            link(&p, "link[1]", "forward"),
        );
        assert_eq!((bd.arrivals, bd.drops), (bp.arrivals, bp.drops), "{v}");
    }
}

#[test]
fn a_two_link_path_is_limited_by_its_slower_link() {
    // Paper D's path without a third hop: 10 Mb/s then 1.5 Mb/s. The slow
    // link is the bottleneck: with a buffer above the bandwidth-delay
    // product (≈ 205 packets of 512 bytes) it is kept busy, and it drops;
    // the fast link, fed at the source's pace, never drops.
    let json = r#"{"duration": "200s", "warmup": "20s",
        "topology": {"kind": "path", "links": [
            {"rate": "10Mbps", "delay": "2ms", "buffer": 1000},
            {"rate": "1.5Mbps", "delay": "278ms", "buffer": 250}]},
        "flows": {"tcp": {"kind": "tcp", "variant": "reno", "packet_size": 512}}}"#;
    let out = run(json);
    let slow = link(&out, "link[1]", "forward");
    let fast = link(&out, "link[0]", "forward");
    assert!(slow.utilization > 0.9, "slow link {}", slow.utilization);
    assert_eq!(fast.drops, 0);
    assert!(fast.utilization < 0.16, "fast link {}", fast.utilization);
    // goodput is the slow link's share of payload: 1.5 Mb/s × 472/512 × utilization
    let f = &out.summary.flows[0];
    let expect = 1.5e6 * 472.0 / 512.0 * slow.utilization;
    assert!(
        (f.goodput_bps - expect).abs() / expect < 0.02,
        "{} vs {expect}",
        f.goodput_bps
    );
}

/// A two-bottleneck parking lot: one long flow group over both, one cross
/// group per bottleneck. Cross flows' access links are 10 ms longer, so
/// every flow has the same round-trip propagation delay (2 × 30 ms).
fn parking_lot(variant: &str, long: u32, seed: u64) -> String {
    format!(
        r#"{{"duration": "300s", "warmup": "30s", "seed": {seed},
        "topology": {{"kind": "parking-lot",
            "links": [{{"rate": "10Mbps", "delay": "10ms", "buffer": 50}},
                      {{"rate": "10Mbps", "delay": "10ms", "buffer": 50}}],
            "access": {{"rate": "100Mbps", "delay": "5ms", "buffer": 1000}},
            "sink_access": {{"rate": "100Mbps", "delay": "5ms", "buffer": 1000}}}},
        "flows": {{
            "a_long": {{"kind": "tcp", "variant": "{variant}", "count": {long}, "start_jitter": "2s"}},
            "cross0": {{"kind": "tcp", "variant": "{variant}", "hops": [0, 0], "start_jitter": "2s",
                        "access": {{"delay": "15ms"}}}},
            "cross1": {{"kind": "tcp", "variant": "{variant}", "hops": [1, 1], "start_jitter": "2s",
                        "access": {{"delay": "15ms"}}}}}}}}"#
    )
}

#[test]
fn on_a_parking_lot_the_long_flow_gets_less_than_each_cross_flow() {
    // With equal RTTs, a flow crossing two congested links sees both links'
    // losses and so gets less than a flow crossing one (the
    // multi-bottleneck penalty of AIMD; max-min fairness would give all
    // three 5 Mb/s). Three seeds, each must show it: the effect is large
    // (the long flow's share is well under a half of each link).
    for seed in 1..=3 {
        let out = run(&parking_lot("reno", 1, seed));
        let g: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_bps).collect();
        let (long, c0, c1) = (g[0], g[1], g[2]);
        assert!(
            long < c0 && long < c1,
            "seed {seed}: long {long}, cross {c0} {c1}"
        );
        for i in 0..2 {
            let l = link(&out, &format!("link[{i}]"), "forward");
            assert!(
                l.utilization > 0.9,
                "seed {seed}: link[{i}] {}",
                l.utilization
            );
        }
        // each link carries the long flow and its own cross flow, nothing else
        let b0 = link(&out, "link[0]", "forward").departures;
        let b1 = link(&out, "link[1]", "forward").departures;
        assert!(b0 > 0 && b1 > 0);
    }
}

#[test]
fn cross_flows_cross_only_their_own_bottleneck() {
    // Routes as data: a cross flow of hops [1, 1] never touches link[0].
    let json =
        parking_lot("sack", 1, 1).replace(r#""count": 1,"#, r#""count": 1, "stop": "0.5s","#);
    let out = run(&json);
    // the long flow stops sending new data at 0.5 s; after that only cross0
    // uses link[0] and only cross1 uses link[1]: both still full
    assert!(link(&out, "link[0]", "forward").utilization > 0.9);
    assert!(link(&out, "link[1]", "forward").utilization > 0.9);
    let g: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_bps).collect();
    assert!(g[1] > 8e6 && g[2] > 8e6, "{g:?}");
}

#[test]
fn a_reverse_flow_sends_its_data_on_the_reverse_direction() {
    // Alone, a reverse flow fills the bottleneck's reverse direction with
    // data; the forward direction carries its 40-byte acks only.
    let flows = r#""back": {"kind": "tcp", "variant": "reno", "reverse": true}"#;
    let out = run(&dumbbell("1Mbps", "5ms", 40, "5ms", flows, "200s", "20s"));
    let rev = link(&out, "bottleneck", "reverse");
    let fwd = link(&out, "bottleneck", "forward");
    assert!(rev.utilization > 0.99, "reverse {}", rev.utilization);
    assert!(fwd.utilization < 0.05, "forward {}", fwd.utilization);
    let f = &out.summary.flows[0];
    assert!((f.goodput_bps / 1e6 - 0.96 * rev.utilization).abs() < 0.01);
}

#[test]
fn two_way_traffic_lowers_both_directions_utilization() {
    // One flow each way over a 1 Mb/s bottleneck: each direction's queue
    // holds the other flow's acks behind its own data, so acks arrive at
    // the sender in bursts and the windows move in phase with the other
    // direction's queue (ack compression: Zhang, Shenker and Clark, "The
    // effects of two-way traffic", SIGCOMM 1991): neither direction stays
    // full as one flow alone keeps it. Three seeds of start jitter.
    for seed in 1..=3 {
        let two_way = r#""fwd": {"kind": "tcp", "variant": "reno", "start_jitter": "1s"},
                       "rev": {"kind": "tcp", "variant": "reno", "start_jitter": "1s", "reverse": true}"#;
        let seeded = |json: String| json.replace(r#""seed": 1,"#, &format!(r#""seed": {seed},"#));
        let out = run(&seeded(dumbbell(
            "1Mbps", "5ms", 20, "5ms", two_way, "300s", "30s",
        )));
        let fwd_only = r#""fwd": {"kind": "tcp", "variant": "reno", "start_jitter": "1s"}"#;
        let one_way = run(&seeded(dumbbell(
            "1Mbps", "5ms", 20, "5ms", fwd_only, "300s", "30s",
        )));
        let alone = link(&one_way, "bottleneck", "forward").utilization;
        assert!(alone > 0.99, "seed {seed}: one way {alone}");
        assert_eq!(
            link(&one_way, "bottleneck", "reverse").drops,
            0,
            "acks alone never fill a queue"
        );
        for d in ["forward", "reverse"] {
            let u = link(&out, "bottleneck", d).utilization;
            assert!(u < 0.9 && u > 0.3, "seed {seed}: {d} utilization {u}");
        }
        // the reverse flow's data fill the reverse direction, not the forward one
        let r = &out.summary.flows[1];
        let rev = link(&out, "bottleneck", "reverse");
        assert!(r.throughput_bps < rev.utilization * 1e6 * 1.001);
    }
}

#[test]
fn topology_keys_are_checked_per_kind() {
    let bad = [
        (
            r#"{"kind": "path", "links": [{"rate": "1Mbps", "delay": "1ms", "buffer": 5}],
               "bottleneck": {"rate": "1Mbps", "delay": "1ms", "buffer": 5}}"#,
            "topology.bottleneck",
        ),
        (r#"{"kind": "path"}"#, "topology.links"),
        (
            r#"{"kind": "parking-lot", "links": [{"rate": "1Mbps", "delay": "1ms", "buffer": 5}]}"#,
            "topology.access",
        ),
        (
            r#"{"bottleneck": {"rate": "1Mbps", "delay": "1ms", "buffer": 5},
               "access": {"rate": "1Mbps", "delay": "1ms", "buffer": 5}}"#,
            "topology.sink_access",
        ),
    ];
    for (topo, key) in bad {
        let json = format!(
            r#"{{"duration": "1s", "topology": {topo}, "flows": {{"t": {{"kind": "tcp"}}}}}}"#
        );
        let e = tcplab_engine::run::run_json(&json).err().expect(key);
        assert_eq!(e.path, key, "{topo}: {e}");
    }
    let path_with_hops = r#"{"duration": "1s",
        "topology": {"kind": "path", "links": [{"rate": "1Mbps", "delay": "1ms", "buffer": 5}]},
        "flows": {"t": {"kind": "tcp", "hops": [0, 0]}}}"#;
    assert_eq!(
        tcplab_engine::run::run_json(path_with_hops)
            .err()
            .unwrap()
            .path,
        "flows.t.hops"
    );
    let out_of_range = parking_lot("reno", 1, 1).replace("[1, 1]", "[1, 2]");
    assert_eq!(
        tcplab_engine::run::run_json(&out_of_range)
            .err()
            .unwrap()
            .path,
        "flows.cross1.hops"
    );
    let access_on_path = r#"{"duration": "1s",
        "topology": {"kind": "path", "links": [{"rate": "1Mbps", "delay": "1ms", "buffer": 5}]},
        "flows": {"t": {"kind": "tcp", "access": {"delay": "3ms"}}}}"#;
    assert_eq!(
        tcplab_engine::run::run_json(access_on_path)
            .err()
            .unwrap()
            .path,
        "flows.t.access"
    );
}

fn plan_of(json: &str) -> tcplab_engine::plan::Plan {
    let sc = tcplab_engine::scenario::Scenario::from_json(json).expect("scenario");
    tcplab_engine::scenario::Plan::from_scenario(&sc).expect("plan")
}

const THREE_HOPS: &str = r#"{"duration": "20s",
    "topology": {"kind": "parking-lot",
        "links": [{"rate": "10Mbps", "delay": "10ms", "buffer": 50},
                  {"rate": "10Mbps", "delay": "10ms", "buffer": 50},
                  {"rate": "10Mbps", "delay": "10ms", "buffer": 50}],
        "access": {"rate": "100Mbps", "delay": "5ms", "buffer": 1000},
        "sink_access": {"rate": "100Mbps", "delay": "5ms", "buffer": 1000}},
    "flows": {"long": {"kind": "tcp"},
              "cross": {"kind": "tcp", "count": 3, "hops": [[0, 0], [1, 1], [2, 2]],
                        "start": ["0s", "0.5s", "1s"], "access": {"delay": "25ms"}}}}"#;

#[test]
fn one_group_gives_each_flow_its_own_start_and_bottlenecks() {
    let plan = plan_of(THREE_HOPS);
    let name = |id: u32| plan.links[id as usize].name.clone();
    // groups in key order: cross (flows 0-2), then long (flow 3)
    for j in 0..3u32 {
        let f = &plan.flows[j as usize];
        assert_eq!(f.group, "cross");
        assert_eq!(f.start_ns, j as u64 * 500_000_000, "flow {j}");
        let chain: Vec<String> = f.route.forward[1..f.route.forward.len() - 1]
            .iter()
            .map(|&l| name(l))
            .collect();
        assert_eq!(chain, vec![format!("link[{j}]")], "flow {j}");
    }
    let long = &plan.flows[3];
    assert_eq!(long.start_ns, 0);
    assert_eq!(long.route.forward.len(), 5); // access, three links, sink
                                             // and it runs: every flow delivers, none before its start
    let out = tcplab_engine::run::run_json(THREE_HOPS).expect("runs").1;
    for f in &out.summary.flows {
        assert!(f.delivered_packets > 1000, "{f:?}");
    }
}

#[test]
fn per_flow_lists_must_have_one_item_per_flow() {
    let short_starts = THREE_HOPS.replace(r#"["0s", "0.5s", "1s"]"#, r#"["0s", "0.5s"]"#);
    let e = tcplab_engine::run::run_json(&short_starts)
        .err()
        .expect("refused");
    assert_eq!(e.path, "flows.cross.start", "{e}");
    assert!(e.to_string().contains("count is 3, the list has 2"), "{e}");
    let short_hops = THREE_HOPS.replace("[[0, 0], [1, 1], [2, 2]]", "[[0, 0], [1, 1]]");
    let e = tcplab_engine::run::run_json(&short_hops)
        .err()
        .expect("refused");
    assert_eq!(e.path, "flows.cross.hops", "{e}");
    let bad_pair = THREE_HOPS.replace("[[0, 0], [1, 1], [2, 2]]", "[[0, 0], [1, 1], [2, 3]]");
    let e = tcplab_engine::run::run_json(&bad_pair)
        .err()
        .expect("refused");
    assert_eq!(e.path, "flows.cross.hops", "{e}");
    assert!(e.to_string().contains("got [2, 3]"), "{e}");
    let not_a_time = THREE_HOPS.replace(r#"["0s", "0.5s", "1s"]"#, r#"{"a": 1}"#);
    let e = tcplab_engine::run::run_json(&not_a_time)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("start"), "{e}");
    let with_joins = THREE_HOPS.replace(
        r#""access": {"delay": "25ms"}"#,
        r#""access": {"delay": "25ms"}, "joins": {"initial": 1, "at": "5s", "every": "1s", "factor": 2}"#,
    );
    let e = tcplab_engine::run::run_json(&with_joins)
        .err()
        .expect("refused");
    assert_eq!(e.path, "flows.cross.start", "{e}");
}

const ASYMMETRIC: &str = r#"{"duration": "60s", "warmup": "5s",
    "topology": {"bottleneck": {"rate": "2Mbps", "delay": "5ms", "buffer": 20,
                                "reverse": {"rate": "512kbps", "delay": "15ms", "buffer": 10}},
                 "access": {"rate": "1Gbps", "delay": "5ms", "buffer": 10000},
                 "sink_access": {"rate": "1Gbps", "delay": "5ms", "buffer": 10000}},
    "flows": {"fwd": {"kind": "tcp"}, "rev": {"kind": "tcp", "reverse": true}}}"#;

#[test]
fn an_asymmetric_link_has_its_own_numbers_each_way() {
    let plan = plan_of(ASYMMETRIC);
    let b: Vec<_> = plan
        .links
        .iter()
        .filter(|l| l.name == "bottleneck")
        .collect();
    assert_eq!(b.len(), 2);
    let (f, r) = (b[0], b[1]);
    assert_eq!(
        (f.rate_bps, f.delay_ns, f.buffer_pkts),
        (2e6, 5_000_000, 20)
    );
    assert_eq!(
        (r.rate_bps, r.delay_ns, r.buffer_pkts),
        (512e3, 15_000_000, 10)
    );
    // each direction carries at most its own rate
    let out = tcplab_engine::run::run_json(ASYMMETRIC).expect("runs").1;
    for (dir, rate) in [("forward", 2e6), ("reverse", 512e3)] {
        let l = link(&out, "bottleneck", dir);
        assert_eq!(l.rate_bps, rate);
        assert!(
            l.utilization <= 1.0 && l.utilization > 0.5,
            "{dir}: {}",
            l.utilization
        );
    }
    // a symmetric link is unchanged by an empty `reverse`
    let empty = ASYMMETRIC.replace(
        r#""reverse": {"rate": "512kbps", "delay": "15ms", "buffer": 10}"#,
        r#""reverse": {}"#,
    );
    let p = plan_of(&empty);
    assert_eq!(p.links[1].rate_bps, 2e6);
    assert_eq!(p.links[1].buffer_pkts, 20);
    let zero = ASYMMETRIC.replace(r#""rate": "512kbps""#, r#""rate": 0"#);
    let e = tcplab_engine::run::run_json(&zero).err().expect("refused");
    assert_eq!(e.path, "topology.bottleneck.reverse.rate", "{e}");
    let unknown = ASYMMETRIC.replace(r#""buffer": 10}"#, r#""buffer": 10, "queue": "red"}"#);
    let e = tcplab_engine::run::run_json(&unknown)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("queue"), "{e}");
}
