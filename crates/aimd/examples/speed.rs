//! Events per second of the hybrid model, per policy:
//! `cargo run -p tcplab-aimd --release --example speed [N] [EVENTS]`.

use std::time::Instant;
use tcplab_aimd::{simulate, theory, Config, Policy, Tag};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(10, |a| a.parse().expect("N"));
    let events: u64 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("EVENTS"));
    let policies = [
        Policy::RateProportional,
        Policy::LargestRate,
        Policy::RateIndependent { weights: vec![] },
        Policy::Beatdown { tag: Tag::Largest },
        Policy::All,
        Policy::Subset {
            probs: vec![0.3; n],
        },
    ];
    println!(
        "N = {n}, β = 0.5, {events} measured events (+10% warm-up); Theorem 1: {:.5}",
        theory::theorem1(n, 0.5)
    );
    for p in policies {
        let mut cfg = Config::homogeneous(n, 0.5, p.clone(), events, 1);
        cfg.histogram_bins = 50;
        let t = Instant::now();
        let out = simulate(&cfg).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let simulated = (events + cfg.warmup) as f64;
        println!(
            "{:<18} {:>8.1} ms  {:>6.1} M events/s  mean {:.5} ± {:.5}",
            p.name(),
            dt * 1e3,
            simulated / dt / 1e6,
            out.mean_aggregate,
            out.mean_aggregate_ci95
        );
    }
}
