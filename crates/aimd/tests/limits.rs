//! Runs whose tables cannot fit in memory are refused with the key named,
//! not aborted on allocation.

use tcplab_aimd::{simulate, Config, Policy};

fn refused(cfg: &Config) -> String {
    simulate(cfg).map(|_| ()).unwrap_err()
}

#[test]
fn a_histogram_too_large_names_its_bins() {
    let mut cfg = Config::homogeneous(1000, 0.5, Policy::All, 1000, 1);
    cfg.histogram_bins = 1_000_000_000;
    let e = refused(&cfg);
    assert!(e.starts_with("histogram_bins: this run would hold"), "{e}");
}

#[test]
fn too_many_traced_events_names_trace_events() {
    let mut cfg = Config::homogeneous(100_000, 0.5, Policy::All, 1_000_000, 1);
    cfg.trace_events = 1_000_000;
    let e = refused(&cfg);
    assert!(e.starts_with("trace_events:"), "{e}");
}

#[test]
fn too_many_connections_name_n() {
    // the per-connection vectors passed in are small enough to build here
    // (eta and beta: 2 × 8 bytes × 1e8 = 1.6 GB would be too much for a test),
    // so check the batch tables: 1e7 connections × 32 batches × 16 bytes
    let mut cfg = Config::homogeneous(10_000_000, 0.5, Policy::All, 1000, 1);
    cfg.batches = 64;
    let e = refused(&cfg);
    assert!(e.starts_with("batches:") || e.starts_with("n:"), "{e}");
}

#[test]
fn ordinary_runs_pass() {
    let mut cfg = Config::homogeneous(10, 0.5, Policy::All, 1000, 1);
    cfg.histogram_bins = 100;
    cfg.trace_events = 1000;
    assert!(simulate(&cfg).is_ok());
}
