//! `tcplab-emu`: the `linux` engine's helpers, driven by
//! `python/tcplab/backends/linux.py`.
//!
//! ```text
//! tcplab-emu emulate CONFIG.json   # the bottleneck between the two namespaces' TUN devices
//! tcplab-emu send CONFIG.json      # bulk TCP senders + TCP_INFO sampler (in the sender namespace)
//! tcplab-emu recv CONFIG.json      # the receiving end (in the receiver namespace)
//! ```
//!
//! Each reads its JSON configuration, sets itself up, prints `ready`, then
//! waits for one line `go T0` on stdin: T0 (CLOCK_MONOTONIC, ns) is time 0 of
//! the scenario for all three. Each ends on its own at the scenario's end and
//! writes its results as JSON to the configured `out` path.

mod bulk;
mod emu;
mod sys;

use std::io::BufRead;

fn wait_go() -> u64 {
    use std::io::Write;
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok();
    line.trim()
        .strip_prefix("go ")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("tcplab-emu: expected `go T0_NS` on stdin, got {line:?}");
            std::process::exit(2)
        })
}

fn load<T: serde::de::DeserializeOwned>(path: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

fn main() {
    sys::die_with_parent();
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: tcplab-emu emulate|send|recv CONFIG.json");
        std::process::exit(2);
    }
    let res = match args[1].as_str() {
        "emulate" => load(&args[2]).and_then(|c| emu::run(c, wait_go)),
        "send" => load(&args[2]).and_then(|c| bulk::send(c, wait_go)),
        "recv" => load(&args[2]).and_then(|c| bulk::recv(c, wait_go)),
        other => Err(format!("unknown subcommand {other:?}")),
    };
    if let Err(e) = res {
        eprintln!("tcplab-emu {}: {e}", args[1]);
        std::process::exit(1);
    }
}
