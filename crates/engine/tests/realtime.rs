//! Real-time applications over TCP (paper B7): a CBR writer feeding the
//! sender and a playback reader at the receiver.

mod common;

use common::{dumbbell, f64_column, i64_column, run};

/// One CBR-over-TCP flow (1000-byte packets, 960 bytes of payload) at
/// `rate`, reading 125 KB per second, over a bottleneck of `bottleneck`.
fn cbr(bottleneck: &str, rate: &str, extra: &str, duration: &str, series: &str) -> String {
    let flows = format!(
        r#""rt": {{"kind": "tcp", "app": {{"kind": "cbr", "rate": "{rate}", "read": "125KB", "interval": "1s"{extra}}}}}"#
    );
    dumbbell(bottleneck, "20ms", 50, "2ms", &flows, duration, "0s").replace(
        r#""flows""#,
        &format!(r#""trace": {{"series": [{series}]}}, "flows""#),
    )
}

/// On an uncongested path (10 Mb/s for a 1 Mb/s stream) the receiver gets
/// the stream at its rate: after the first second (which loses the SYN and
/// the path delay) every read finds its 125 KB, give or take the
/// quantization of 960-byte packets (130.2 per second): at least 99 % of it,
/// and the 70 % success percentage is 100 %.
#[test]
fn cbr_on_an_uncongested_path_reads_its_rate_every_interval() {
    let out = run(&cbr("10Mbps", "1Mbps", "", "60s", ""));
    let read = i64_column(&out, "playback", "read_bytes");
    let wanted = i64_column(&out, "playback", "wanted_bytes");
    assert_eq!(read.len(), 60);
    assert!(wanted.iter().all(|&w| w == 125_000));
    assert!(read[1..].iter().all(|&r| r >= 123_750), "{read:?}");
    let ok = read
        .iter()
        .filter(|&&r| r as f64 >= 0.7 * 125_000.0)
        .count();
    assert_eq!(ok, read.len());
    // no retransmissions, and the sender never sent more than was written
    let f = &out.summary.flows[0];
    assert_eq!(f.retransmissions, 0);
    let writes: f64 = 60.0 / (960.0 * 8.0 / 1e6);
    assert!((f.sent_packets as f64) <= writes.floor() + 1.0);
}

/// The sender sends only what the application has written: every new data
/// packet k (the SYN is write 0) leaves no earlier than write k, at
/// k·7.68 ms — also on a congested path, where the window would allow more.
#[test]
fn cbr_sender_never_sends_more_than_written() {
    for bottleneck in ["10Mbps", "0.5Mbps"] {
        let out = run(&cbr(bottleneck, "1Mbps", "", "30s", r#""seq""#));
        let t = f64_column(&out, "sends", "t");
        let seq = i64_column(&out, "sends", "seq");
        let gap = 960.0 * 8.0 / 1e6;
        for (&t, &s) in t.iter().zip(seq) {
            assert!(
                t >= s as f64 * gap - 1e-9,
                "{bottleneck}: packet {s} sent at {t}"
            );
        }
    }
}

/// On a path slower than the stream (0.5 Mb/s for 1 Mb/s), the reader gets
/// about half its share: the 70 % success percentage drops to 0. A send
/// buffer of 16 packets holds: a blocked writer caps the packets in flight
/// at 16 and loses no data; a dropping writer also keeps at most 16 packets
/// unacknowledged, and discards about half the writes.
#[test]
fn cbr_on_a_slow_path_fails_and_respects_its_send_buffer() {
    for policy in ["block", "drop"] {
        let extra = format!(r#", "send_buffer": 16, "when_full": "{policy}""#);
        let out = run(&cbr("0.5Mbps", "1Mbps", &extra, "60s", r#""inflight""#));
        let read = i64_column(&out, "playback", "read_bytes");
        let ok = read
            .iter()
            .filter(|&&r| r as f64 >= 0.7 * 125_000.0)
            .count();
        assert_eq!(ok, 0, "{policy}: {read:?}");
        let mean = read[5..].iter().sum::<i64>() as f64 / (read.len() - 5) as f64;
        // 0.5 Mb/s of 1000-byte packets carries 0.48 Mb/s of payload = 60 KB/s
        assert!(
            (mean - 60_000.0).abs() < 3_000.0,
            "{policy}: mean read {mean}"
        );
        let inflight = i64_column(&out, "tcp", "inflight");
        assert!(
            inflight.iter().all(|&n| n <= 16),
            "{policy}: {:?}",
            inflight.iter().max()
        );
        let dropped: i64 = i64_column(&out, "playback", "dropped_writes").iter().sum();
        let writes: f64 = 60.0 / (960.0 * 8.0 / 1e6);
        match policy {
            "block" => assert_eq!(dropped, 0),
            _ => assert!((dropped as f64 / writes - 0.5).abs() < 0.05, "{dropped}"),
        }
    }
}

/// An application that stops writing at 10 s still has everything it wrote
/// delivered (ns-2: `$app stop` ends the writes, not the connection): writes
/// k·7.68 ms < 10 s are k = 0..=1302, the first of them is the SYN.
#[test]
fn cbr_data_written_before_the_stop_is_delivered() {
    let json = cbr("0.5Mbps", "1Mbps", "", "60s", "")
        .replace(r#""kind": "tcp","#, r#""kind": "tcp", "stop": "10s","#);
    let out = run(&json);
    assert_eq!(out.summary.flows[0].delivered_packets, 1302);
}
