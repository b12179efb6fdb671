//! Run a resolved scenario (JSON file) and print the summary and wall time:
//! `cargo run --release -p tcplab-engine --example run_scenario -- scenario.json`.
//! Used for profiling the engine without Python in the way.

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario SCENARIO.json");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let t0 = std::time::Instant::now();
    let (_, out) = tcplab_engine::sim::run_json(&text).expect("valid scenario");
    let wall = t0.elapsed().as_secs_f64();
    let delivered: u64 = out.summary.flows.iter().map(|f| f.delivered_packets).sum();
    println!(
        "wall {wall:.3} s, {} events ({:.1} M/s), {delivered} packets delivered ({:.0} ns/packet)",
        out.summary.events,
        out.summary.events as f64 / wall / 1e6,
        wall * 1e9 / delivered as f64
    );
}
