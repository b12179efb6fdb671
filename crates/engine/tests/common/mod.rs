//! Helpers for the network-fact tests: build scenarios as JSON and run them.

#![allow(dead_code)]

use tcplab_engine::record::Column;
use tcplab_engine::run::run_json;
use tcplab_engine::sim::RunOutput;

/// A dumbbell with the given bottleneck and fast, short access links.
pub fn dumbbell(
    rate: &str,
    delay: &str,
    buffer: u32,
    access_delay: &str,
    flows: &str,
    duration: &str,
    warmup: &str,
) -> String {
    format!(
        r#"{{
        "duration": "{duration}", "warmup": "{warmup}", "seed": 1,
        "topology": {{
            "bottleneck": {{"rate": "{rate}", "delay": "{delay}", "buffer": {buffer}}},
            "access": {{"rate": "1Gbps", "delay": "{access_delay}", "buffer": 10000}},
            "sink_access": {{"rate": "1Gbps", "delay": "{access_delay}", "buffer": 10000}}
        }},
        "flows": {{ {flows} }}
    }}"#
    )
}

pub fn run(json: &str) -> RunOutput {
    run_json(json).expect("valid scenario").1
}

/// Jain's fairness index of a set of throughputs.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

pub fn bottleneck_utilization(out: &RunOutput) -> f64 {
    out.summary.links[0].utilization
}

/// A float column of a trace table, by name.
pub fn f64_column<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [f64] {
    match column(out, table, col) {
        Column::F64(v) => v,
        _ => panic!("{table}.{col} is not a float column"),
    }
}

/// An integer column of a trace table, by name.
pub fn i64_column<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a [i64] {
    match column(out, table, col) {
        Column::I64(v) => v,
        _ => panic!("{table}.{col} is not an integer column"),
    }
}

fn column<'a>(out: &'a RunOutput, table: &str, col: &str) -> &'a Column {
    let t = out
        .traces
        .iter()
        .find(|t| t.name == table)
        .unwrap_or_else(|| panic!("no {table} trace"));
    &t.columns
        .iter()
        .find(|(n, _)| *n == col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .1
}
