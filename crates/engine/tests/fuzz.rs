//! Bounded fuzzing of what users write: the unit parsers, and the scenario
//! parser + validator (`Scenario::from_json`, `resolve`, the run budget, and
//! the run itself when it is tiny). Random inputs are derived from valid
//! scenarios by structural mutation (values replaced by extreme numbers,
//! unit strings and wrong types, keys deleted, unknown keys added, subtrees
//! copied elsewhere) and by byte-level damage of the JSON text. The bar: no
//! panic, every error names a key path or a position, and a resolved scenario
//! round-trips through its JSON.
//!
//! Stable Rust only (no nightly for cargo-fuzz's sanitizers), so this is a
//! deterministic generator, not coverage-guided. A CI run does a bounded
//! number of executions per target (under a minute); a long run:
//!
//! ```text
//! FUZZ_EXECS=10000000 FUZZ_SEED=7 cargo test --release -p tcplab-engine --test fuzz -- --nocapture
//! ```

use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;
use tcplab_engine::rng::Rng;
use tcplab_engine::scenario::Scenario;
use tcplab_engine::time::{parse_bytes, parse_duration, parse_freq, parse_rate, MAX_TIME_NS};

fn execs(default: u64) -> u64 {
    std::env::var("FUZZ_EXECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn pick<'a, T>(rng: &mut Rng, v: &'a [T]) -> &'a T {
    &v[(rng.next_u64() % v.len() as u64) as usize]
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "1e300",
    "1e-300",
    "1e999",
    "-0",
    "18446744073709551615",
    "18446744073709551616",
    "4294967295",
    "4294967296",
    "1.9e10",
    "1e9",
    "1e18",
    "1e19",
    "9007199254740993",
    "2.5",
    "1e-9",
    "3",
    "40",
    "1000",
    ".5",
    "5.",
    "1e",
    "e5",
    "--1",
    "+1",
    "0x10",
    "1_000",
    "NaN",
    "inf",
    "-inf",
    "1e+308",
    "1e-324",
];
const UNITS: &[&str] = &[
    "", "s", "ms", "us", "µs", "ns", "min", "h", "sec", "bps", "kbps", "Mbps", "Gbps", "Kb/s",
    "Mb/s", "Hz", "kHz", "mHz", "B", "KB", "MB", "GB", "KiB", "MiB", "pkt", "Tbps", " s", "s ",
    "ss", "S", "\u{0}", "é", "%",
];

fn unit_string(rng: &mut Rng) -> String {
    let mut s = format!("{}{}", pick(rng, NUMBERS), pick(rng, UNITS));
    if rng.uniform() < 0.1 {
        // damage a character
        let mut chars: Vec<char> = s.chars().collect();
        if !chars.is_empty() {
            let i = (rng.next_u64() % chars.len() as u64) as usize;
            chars[i] = *pick(rng, &['9', '.', 'e', '-', ' ', 'ß', '\u{1F600}', '/']);
        }
        s = chars.into_iter().collect();
    }
    s
}

#[test]
fn fuzz_unit_parsers() {
    let n = execs(400_000);
    let mut rng = Rng::seed_from_u64(seed());
    let t0 = Instant::now();
    let mut accepted = 0u64;
    for _ in 0..n {
        let s = unit_string(&mut rng);
        let r = catch_unwind(|| {
            let d = parse_duration(&s).map(|v| v <= MAX_TIME_NS);
            let r = parse_rate(&s).map(|v| v.is_finite() && (0.0..=1e13).contains(&v));
            let f = parse_freq(&s).map(|v| v.is_finite() && (0.0..=1e9).contains(&v));
            let b = parse_bytes(&s).map(|v| v <= 1_000_000_000_000);
            [d, r, f, b]
        });
        let Ok(results) = r else {
            panic!("a unit parser panicked on {s:?}");
        };
        for x in results {
            match x {
                Ok(in_range) => {
                    assert!(in_range, "{s:?} parsed out of range");
                    accepted += 1;
                }
                Err(msg) => assert!(!msg.is_empty()),
            }
        }
    }
    eprintln!(
        "fuzz_unit_parsers: {n} executions (4 parsers each), {accepted} accepted, 0 panics, {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

/// Valid scenarios that reach most of the schema.
fn seeds() -> Vec<Value> {
    let links = json!({
        "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 40},
        "access": {"rate": "10Mbps", "delay": "2ms", "buffer": 100},
        "sink_access": {"rate": "10Mbps", "delay": "2ms", "buffer": 100}
    });
    vec![
        json!({"duration": "2s", "warmup": "0.5s", "seed": 3, "topology": links,
               "flows": {"tcp": {"kind": "tcp", "variant": "reno", "count": 2, "start_jitter": "0.1s"},
                         "bg": {"kind": "udp", "rate": {"shape": "sine", "mean": "0.5Mbps",
                                "amplitude": "0.5Mbps", "frequency": "0.4Hz"}}},
               "trace": {"series": ["cwnd", "queue", "drops", "rtt", "udp", "seq"], "interval": "0s"}}),
        json!({"duration": "2s", "topology": {
                  "bottleneck": {"rate": "1Mbps", "delay": "5ms", "buffer": 20, "queue": "red",
                                 "red": {"preset": "paper-c"},
                                 "errors": {"model": "bernoulli", "per": 0.01},
                                 "outages": {"every": "0.5s", "duration": "0.1s"}},
                  "access": {"rate": "10Mbps", "delay": "2ms", "buffer": 100},
                  "sink_access": {"rate": "10Mbps", "delay": "2ms", "buffer": 100}},
               "flows": {"sack": {"kind": "tcp", "variant": "sack", "count": 4,
                                  "joins": {"initial": 1, "factor": 2, "at": "0.5s", "every": "0.5s"}},
                         "on": {"kind": "udp", "rate": {"shape": "onoff", "rate": "0.3Mbps",
                                "on": {"distribution": "exponential", "mean": "0.2s"},
                                "off": {"distribution": "exponential", "mean": "0.2s"}}}},
               "trace": {"series": ["cwnd"], "interval": "0.1s"}}),
        json!({"duration": "3s", "warmup": "1s", "topology": links,
               "flows": {"cbr": {"kind": "tcp", "app": {"kind": "cbr", "rate": "0.2Mbps",
                                 "send_buffer": 8, "read": "10KB", "interval": "0.5s"},
                                 "delayed_ack": true, "syn": true},
                         "pw": {"kind": "udp", "rate": {"shape": "piecewise", "repeat": true,
                                "points": [["0s", "0.1Mbps"], ["1s", "0.4Mbps"], ["2s", "0.1Mbps"]]}},
                         "sines": {"kind": "udp", "rate": {"shape": "sines", "offset": "0.2Mbps",
                                   "components": [{"amplitude": "0.1Mbps", "frequency": "1Hz"}]}}},
               "measure": {"reference": "free"}}),
    ]
}

const KEYS: &[&str] = &[
    "duration",
    "warmup",
    "rate",
    "delay",
    "buffer",
    "count",
    "packet_size",
    "start",
    "stop",
    "tick",
    "min_rto",
    "max_rto",
    "initial_rto",
    "window",
    "interval",
    "frequency",
    "amplitude",
    "mean",
    "every",
    "at",
    "factor",
    "initial",
    "min",
    "read",
    "series",
    "queue",
    "model",
    "red",
    "threshold",
    "errors",
    "outages",
    "points",
    "components",
    "seed",
    "alpha",
    "beta",
    "send_jitter",
    "start_jitter",
    "delack_interval",
    "header_size",
    "bogus",
];

fn random_value(rng: &mut Rng, donor: &Value) -> Value {
    match rng.next_u64() % 12 {
        0..=3 => Value::String(unit_string(rng)),
        4 => pick(rng, NUMBERS)
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        5 => json!(rng.next_u64() >> (rng.next_u64() % 64)),
        6 => json!(-((rng.next_u64() >> 2) as i64)),
        7 => Value::Bool(rng.uniform() < 0.5),
        8 => Value::Null,
        9 => json!([]),
        10 => json!({}),
        _ => random_node(rng, donor).clone(),
    }
}

/// A random node of `v` (any depth).
fn random_node<'a>(rng: &mut Rng, v: &'a Value) -> &'a Value {
    let mut cur = v;
    loop {
        let children: Vec<&Value> = match cur {
            Value::Object(m) => m.values().collect(),
            Value::Array(a) => a.iter().collect(),
            _ => return cur,
        };
        if children.is_empty() || rng.uniform() < 0.25 {
            return cur;
        }
        cur = *pick(rng, &children);
    }
}

fn mutate(rng: &mut Rng, v: &mut Value, donor: &Value) {
    // walk to a random container, then change one of its entries
    let mut cur = v;
    loop {
        let go_deeper = rng.uniform() < 0.6;
        let next_key = match cur {
            Value::Object(m) if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                Some(pick(rng, &keys).clone())
            }
            _ => None,
        };
        match (go_deeper, next_key) {
            (true, Some(k)) if matches!(cur[&k], Value::Object(_) | Value::Array(_)) => {
                cur = cur.get_mut(&k).unwrap();
                if let Value::Array(a) = cur {
                    if a.is_empty() {
                        a.push(random_value(rng, donor));
                        return;
                    }
                    let i = (rng.next_u64() % a.len() as u64) as usize;
                    cur = &mut a[i];
                }
            }
            _ => break,
        }
    }
    match cur {
        Value::Object(m) => match rng.next_u64() % 4 {
            0 if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                m.remove(pick(rng, &keys));
            }
            1 => {
                m.insert(pick(rng, KEYS).to_string(), random_value(rng, donor));
            }
            _ => {
                let keys: Vec<String> = m.keys().cloned().collect();
                if keys.is_empty() {
                    return;
                }
                let k = pick(rng, &keys).clone();
                m.insert(k, random_value(rng, donor));
            }
        },
        Value::Array(a) => a.push(random_value(rng, donor)),
        // mostly keep the type, so that inputs get past parsing into validation
        Value::String(s) if rng.uniform() < 0.7 => *s = unit_string(rng),
        Value::Number(_) if rng.uniform() < 0.7 => {
            let x =
                pick(rng, NUMBERS).parse::<f64>().unwrap_or(0.0) * (rng.uniform() * 4.0).floor();
            *cur = if rng.uniform() < 0.5 {
                json!(x.abs().min(u64::MAX as f64) as u64)
            } else {
                serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
            };
        }
        other => *other = random_value(rng, donor),
    }
}

/// What one input does: parse, resolve, budget, round-trip, and a tiny run.
fn exercise(text: &str) -> &'static str {
    let sc = match Scenario::from_json(text) {
        Ok(sc) => sc,
        Err(e) => {
            assert!(!e.message.is_empty());
            return "rejected at parse";
        }
    };
    let sc = match sc.resolve() {
        Ok(sc) => sc,
        Err(e) => {
            assert!(
                !e.message.is_empty() && !e.path.is_empty(),
                "no key path: {e}"
            );
            return "rejected by validation";
        }
    };
    let again = Scenario::from_json(&sc.to_json())
        .and_then(|s| s.resolve())
        .unwrap_or_else(|e| panic!("a resolved scenario does not round-trip: {e}"));
    assert_eq!(
        again.to_json(),
        sc.to_json(),
        "a resolved scenario does not round-trip"
    );
    let b = tcplab_engine::budget::estimate(&sc);
    if b.check().is_err() {
        return "refused by the budget";
    }
    if b.events < 2e4 && b.memory_bytes < 1e8 {
        // planned only when small: a plan holds every flow's route
        let plan = tcplab_engine::scenario::Plan::from_scenario(&sc)
            .unwrap_or_else(|e| panic!("a resolved scenario has no plan: {e}"));
        tcplab_engine::sim::Sim::new(&plan).run();
        return "ran";
    }
    "accepted"
}

#[test]
fn fuzz_scenario_parser_and_validator() {
    let n = execs(20_000);
    let mut rng = Rng::seed_from_u64(seed() ^ 0x5eed);
    let seeds = seeds();
    for s in &seeds {
        assert_eq!(
            exercise(&s.to_string()),
            "ran",
            "a seed scenario must run: {s}"
        );
    }
    let t0 = Instant::now();
    let mut outcomes = std::collections::BTreeMap::<&str, u64>::new();
    let mut panics = Vec::new();
    for _ in 0..n {
        let base = pick(&mut rng, &seeds);
        let mut v = base.clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            mutate(&mut rng, &mut v, base);
        }
        let mut text = v.to_string();
        if rng.uniform() < 0.05 && !text.is_empty() {
            // damage the JSON text itself
            let mut bytes = text.into_bytes();
            let i = (rng.next_u64() % bytes.len() as u64) as usize;
            bytes[i] = *pick(&mut rng, b"{}[]\",:0e-.x ");
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        match catch_unwind(AssertUnwindSafe(|| exercise(&text))) {
            Ok(o) => *outcomes.entry(o).or_default() += 1,
            Err(_) => panics.push(text),
        }
    }
    eprintln!(
        "fuzz_scenario_parser_and_validator: {n} executions in {:.1} s: {outcomes:?}, {} panics",
        t0.elapsed().as_secs_f64(),
        panics.len()
    );
    for p in panics.iter().take(5) {
        eprintln!("panicked on: {p}");
    }
    assert!(panics.is_empty(), "{} inputs panicked", panics.len());
}
