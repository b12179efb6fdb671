//! tcplab's own bulk TCP sender and receiver, run inside the namespaces.
//!
//! The sender opens one connection per TCP flow at the flow's start (source
//! port `port_base + flow id`, so the emulator can tell flows apart), sets the
//! flow's congestion control, writes as fast as the socket takes data until
//! the flow's stop, and samples TCP_INFO of every connection at a fixed
//! interval. The receiver accepts the connections, reads and counts bytes
//! per flow, and snapshots the counts at the end of warm-up and of the run.

use crate::sys;
use serde::Deserialize;
use serde_json::json;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Deserialize)]
pub struct SendFlow {
    pub id: u32,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub cc: String,
}

#[derive(Deserialize)]
pub struct SendConfig {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub port: u16,
    pub port_base: u16,
    pub flows: Vec<SendFlow>,
    pub sample_ns: u64,
    pub end_ns: u64,
    pub rt_prio: i32,
    pub out: String,
}

#[derive(Deserialize)]
pub struct RecvConfig {
    pub addr: Ipv4Addr,
    pub port: u16,
    pub port_base: u16,
    pub n_flows: u32,
    pub warmup_ns: u64,
    pub end_ns: u64,
    pub rt_prio: i32,
    pub out: String,
}

fn connect(cfg: &SendConfig, f: &SendFlow) -> Result<TcpStream, String> {
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(format!("socket: {}", std::io::Error::last_os_error()));
        }
        let stream = TcpStream::from_raw_fd(fd);
        sys::set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1).map_err(|e| e.to_string())?;
        sys::set_congestion(fd, &f.cc).map_err(|e| format!("flow {}: {e}", f.id))?;
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: (cfg.port_base + f.id as u16).to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(cfg.src).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // With some hundreds of flows starting at once the kernel answered a few
        // binds with EADDRNOTAVAIL for an address that is there (450 flows:
        // intermittently, from about flow 445 on; cause not found: the address
        // and route are set once, before the start); a retry a moment later binds.
        let mut tries = 0;
        while libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len) != 0 {
            let e = std::io::Error::last_os_error();
            tries += 1;
            if e.raw_os_error() != Some(libc::EADDRNOTAVAIL) || tries >= 200 {
                return Err(format!("flow {}: bind: {e}", f.id));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let da = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: cfg.port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(cfg.dst).to_be(),
            },
            sin_zero: [0; 8],
        };
        // the same transient state can answer a connect with ENETUNREACH (one
        // of 500 flows): retried the same way
        let mut tries = 0;
        while libc::connect(fd, &da as *const _ as *const libc::sockaddr, len) != 0 {
            let e = std::io::Error::last_os_error();
            tries += 1;
            if e.raw_os_error() != Some(libc::ENETUNREACH) || tries >= 200 {
                return Err(format!("flow {}: connect: {e}", f.id));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(stream)
    }
}

pub fn send(cfg: SendConfig, wait_go: impl FnOnce() -> u64) -> Result<(), String> {
    let cfg = Arc::new(cfg);
    let fds: Arc<Vec<AtomicI32>> = Arc::new(cfg.flows.iter().map(|_| AtomicI32::new(-1)).collect());
    let rt = sys::realtime(cfg.rt_prio);
    println!("ready");
    let t0 = wait_go();
    let errors = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    for (k, _) in cfg.flows.iter().enumerate() {
        let (cfg, fds, errors) = (cfg.clone(), fds.clone(), errors.clone());
        std::thread::spawn(move || {
            let _ = sys::realtime(cfg.rt_prio);
            let f = &cfg.flows[k];
            sys::sleep_until(t0 + f.start_ns);
            let mut s = match connect(&cfg, f) {
                Ok(s) => s,
                Err(e) => {
                    errors.lock().unwrap().push(e);
                    return;
                }
            };
            let _ = s.set_write_timeout(Some(std::time::Duration::from_millis(20)));
            fds[k].store(s.as_raw_fd(), Ordering::Release);
            let buf = vec![0x5au8; 1 << 16];
            let stop = t0 + f.stop_ns;
            use std::io::Write;
            while sys::mono_ns() < stop {
                match s.write(&buf) {
                    Ok(_) => {}
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            || e.kind() == std::io::ErrorKind::TimedOut => {}
                    Err(e) => {
                        errors
                            .lock()
                            .unwrap()
                            .push(format!("flow {}: write: {e}", f.id));
                        break;
                    }
                }
            }
            // Keep the socket (and its TCP_INFO) until the process ends.
            std::mem::forget(s);
        });
    }
    // Sample TCP_INFO at k · sample_ns (model time) until the end.
    let (mut t, mut flow, mut cwnd, mut ssthresh, mut unacked, mut acked, mut rtt, mut mss) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let (mut retrans, mut ca_state, mut lost) = (vec![], vec![], vec![]);
    let mut k = 0u64;
    loop {
        let at = k * cfg.sample_ns.max(1_000_000);
        if at > cfg.end_ns {
            break;
        }
        sys::sleep_until(t0 + at);
        for (i, f) in cfg.flows.iter().enumerate() {
            let fd = fds[i].load(Ordering::Acquire);
            if fd < 0 {
                continue;
            }
            if let Some(ti) = sys::tcp_info(fd) {
                t.push(at as f64 / 1e9);
                flow.push(f.id);
                cwnd.push(ti.snd_cwnd);
                ssthresh.push(ti.snd_ssthresh);
                unacked.push(ti.unacked);
                acked.push(ti.bytes_acked);
                rtt.push(ti.rtt);
                mss.push(ti.snd_mss);
                retrans.push(ti.total_retrans);
                ca_state.push(ti.ca_state);
                lost.push(ti.lost);
            }
        }
        k += 1;
    }
    let out = json!({
        "realtime": rt.err().unwrap_or_else(|| "SCHED_FIFO".into()),
        "errors": *errors.lock().unwrap(),
        "samples": {"t": t, "flow": flow, "cwnd": cwnd, "ssthresh": ssthresh, "unacked": unacked,
                    "bytes_acked": acked, "rtt_us": rtt, "mss": mss, "total_retrans": retrans,
                    "ca_state": ca_state, "lost": lost},
    });
    std::fs::write(&cfg.out, out.to_string()).map_err(|e| format!("{}: {e}", cfg.out))?;
    std::process::exit(0);
}

pub fn recv(cfg: RecvConfig, wait_go: impl FnOnce() -> u64) -> Result<(), String> {
    let listener = TcpListener::bind(SocketAddrV4::new(cfg.addr, cfg.port))
        .map_err(|e| format!("listen {}:{}: {e}", cfg.addr, cfg.port))?;
    let counts: Arc<Vec<AtomicU64>> =
        Arc::new((0..cfg.n_flows).map(|_| AtomicU64::new(0)).collect());
    let rt = sys::realtime(cfg.rt_prio);
    println!("ready");
    let t0 = wait_go();
    {
        let counts = counts.clone();
        let (port_base, prio) = (cfg.port_base, cfg.rt_prio);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut s) = conn else { continue };
                let Ok(peer) = s.peer_addr() else { continue };
                let f = peer.port().wrapping_sub(port_base) as usize;
                if f >= counts.len() {
                    continue;
                }
                let counts = counts.clone();
                std::thread::spawn(move || {
                    let _ = sys::realtime(prio);
                    use std::io::Read;
                    let mut buf = vec![0u8; 1 << 17];
                    while let Ok(n) = s.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        counts[f].fetch_add(n as u64, Ordering::Relaxed);
                    }
                });
            }
        });
    }
    let snap = || {
        counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect::<Vec<_>>()
    };
    sys::sleep_until(t0 + cfg.warmup_ns);
    let warm = snap();
    sys::sleep_until(t0 + cfg.end_ns);
    let end = snap();
    let out = json!({
        "realtime": rt.err().unwrap_or_else(|| "SCHED_FIFO".into()),
        "warm_bytes": warm, "end_bytes": end,
    });
    std::fs::write(&cfg.out, out.to_string()).map_err(|e| format!("{}: {e}", cfg.out))?;
    std::process::exit(0);
}
