//! Run a resolved scenario (JSON file) and print the summary and wall time:
//! `cargo run --release -p tcplab-engine --example run_scenario -- scenario.json`.
//! Used for profiling the engine without Python in the way.
//!
//! With `--summary OUT.json` it also writes the run summary and a digest of
//! every trace column (bench/check_identical.py compares these across builds).
//!
//! With `--repeat N` the process runs the scenario N - 1 times before the one
//! it reports (`measured`, the function to collect under
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=*measured*`):
//! as in a sweep of `reproduce`, a sine's departures are then replayed
//! (traffic/schedule.rs: the process's first run of a schedule solves it,
//! the second records it, later ones replay).
//!
//! With `--workers T` (and more scenario files after the first, `--also
//! FILE`), it runs each file `--repeat` times, the files in order, on T
//! threads that each take the next run when done, as `reproduce`'s workers
//! take a sweep's points (the seeds of a point in a row), and prints the
//! summaries' events only: a sine's schedule is then shared by threads.

use tcplab_engine::record::Column;

/// FNV-1a over the bits of a column: equal digests ⇔ (almost surely) equal traces.
fn digest(col: &Column) -> (usize, u64) {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    };
    let n = match col {
        Column::F64(v) => {
            v.iter().for_each(|x| eat(x.to_bits()));
            v.len()
        }
        Column::I64(v) => {
            v.iter().for_each(|&x| eat(x as u64));
            v.len()
        }
    };
    (n, h)
}

/// The reported run (out of line, so that callgrind can collect it alone).
#[inline(never)]
fn measured(text: &str) -> tcplab_engine::sim::RunOutput {
    tcplab_engine::run::run_json(text)
        .expect("valid scenario")
        .1
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: run_scenario SCENARIO.json [--summary OUT.json]");
    let (mut summary_out, mut repeat, mut workers) = (None, 1, 0);
    let mut files = vec![path.clone()];
    let mut rest = args[2..].iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--summary" => summary_out = Some(rest.next().expect("--summary needs a file").clone()),
            "--workers" => {
                workers = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--workers needs a count")
            }
            "--also" => files.push(rest.next().expect("--also needs a file").clone()),
            "--repeat" => {
                repeat = rest
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--repeat needs a count")
            }
            other => panic!("unknown argument {other}"),
        }
    }
    if workers > 0 {
        return sweep(&files, repeat, workers);
    }
    let text = std::fs::read_to_string(path).expect("readable file");
    for _ in 1..repeat {
        tcplab_engine::run::run_json(&text).expect("valid scenario");
    }
    let t0 = std::time::Instant::now();
    let out = measured(&text);
    let wall = t0.elapsed().as_secs_f64();
    let delivered: u64 = out.summary.flows.iter().map(|f| f.delivered_packets).sum();
    println!(
        "wall {wall:.3} s, {} events ({:.1} M/s), {delivered} packets delivered ({:.0} ns/packet)",
        out.summary.events,
        out.summary.events as f64 / wall / 1e6,
        wall * 1e9 / delivered as f64
    );
    if let Some(file) = summary_out {
        let traces: serde_json::Map<String, serde_json::Value> = out
            .traces
            .iter()
            .map(|t| {
                let cols: serde_json::Map<String, serde_json::Value> = t
                    .columns
                    .iter()
                    .map(|(name, c)| {
                        let (n, h) = digest(c);
                        (
                            name.to_string(),
                            serde_json::json!([n, format!("{h:016x}")]),
                        )
                    })
                    .collect();
                (t.name.to_string(), serde_json::Value::Object(cols))
            })
            .collect();
        let doc = serde_json::json!({ "summary": out.summary, "traces": traces });
        std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap() + "\n")
            .expect("writable summary file");
    }
}

/// Every file `repeat` times, in order, on `workers` threads taking the next
/// run when done; prints each run's events in the order of the runs.
fn sweep(files: &[String], repeat: usize, workers: usize) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("readable file"))
        .collect();
    let runs = texts.len() * repeat;
    let next = AtomicUsize::new(0);
    let events = std::sync::Mutex::new(vec![0u64; runs]);
    let t0 = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= runs {
                    break;
                }
                let out = tcplab_engine::run::run_json(&texts[i / repeat])
                    .expect("valid scenario")
                    .1;
                events.lock().unwrap()[i] = out.summary.events;
            });
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let events = events.into_inner().unwrap();
    println!(
        "wall {wall:.3} s, {runs} runs on {workers} workers, {} events",
        events.iter().sum::<u64>()
    );
}
