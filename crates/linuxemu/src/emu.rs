//! The bottleneck in user space: IP packets read from the sender's TUN device
//! enter the engine's forward bottleneck [`Link`] (rate, buffer, queue
//! discipline, impairment, delay) and are written to the receiver's TUN
//! device when the link delivers them; the receiver's packets (the acks) take
//! the reverse link. Background UDP is the engine's own [`UdpSource`]s,
//! injected into the forward link as emulated packets — they never exist as
//! real packets.
//!
//! Time: CLOCK_MONOTONIC − t0 is the engine's SimTime. A packet read at real
//! time t arrives at the link at t; the link computes its delivery time
//! exactly, and the loop sleeps (ppoll, nanosecond timeout) until the next
//! delivery or arrival. A late wake-up delays the packet's write, never the
//! model: later packets keep their exact schedule. Lateness is measured and
//! reported.
//!
//! Everything it emulates is read from the engine's Plan of the scenario
//! (`EmuConfig::plan`), built with the packet engine's own builders
//! (`sim::build_link`, `sim::udp_source_of`): the bottleneck's two directions
//! (the links of role `bottleneck`, ids 0 and 1, with their random streams),
//! each UDP flow's source and its access link (its own link of the Plan, with
//! that link's id as its stream), every flow's start and stop instants, the
//! run's end and warm-up. The one adjustment: the TCP flows' access and sink
//! links are not emulated packet by packet; their propagation delay and one
//! packet's serialization (`fwd_extra_ns`, `rev_extra_ns`, computed by
//! backends/linux.py from the same Plan) are added to the bottleneck's
//! `delay_ns`.

use crate::sys;
use serde::Deserialize;
use serde_json::json;
use tcplab_engine::net::link::{Admit, DropCause, Link, LinkSnapshot};
use tcplab_engine::net::packet::{Kind, Packet};
use tcplab_engine::plan::{Direction, LinkPlan, LinkRole, Plan, TopologyKind};
use tcplab_engine::sched::Order;
use tcplab_engine::sim::{build_link, udp_source_of};
use tcplab_engine::time::{secs, SimTime};
use tcplab_engine::traffic::udp::UdpSource;

#[derive(Deserialize)]
pub struct EmuConfig {
    /// The engine's Plan of the scenario (`_core.plan`).
    pub plan: Plan,
    pub snd_ns: String,
    pub rcv_ns: String,
    /// TUN device name (the same in both namespaces).
    pub tun: String,
    /// TCP flow i uses source port port_base + i.
    pub port_base: u16,
    /// Constant one-way delay added to the forward (data) and reverse (ack)
    /// bottleneck's `delay_ns`: the TCP flows' access and sink links'
    /// propagation and one packet's serialization on each (a data packet
    /// forward, an ack of the flow's `ack_bytes` back).
    pub fwd_extra_ns: u64,
    pub rev_extra_ns: u64,
    /// Largest IP packet (the TUN MTU).
    pub mtu: usize,
    /// SCHED_FIFO priority (0 = leave the scheduler alone).
    pub rt_prio: i32,
    pub out: String,
}

/// Per-flow packet counters on the forward link.
#[derive(Clone, Copy, Default)]
struct FlowCount {
    delivered_packets: u64,
    delivered_bytes: u64,
    drops: u64,
}

/// Packet bytes, held while the link holds the packet; `Packet::seq` is the slot.
struct Slab {
    bufs: Vec<Box<[u8]>>,
    lens: Vec<usize>,
    free: Vec<u32>,
    size: usize,
}

impl Slab {
    fn take(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.bufs.push(vec![0u8; self.size].into_boxed_slice());
        self.lens.push(0);
        (self.bufs.len() - 1) as u32
    }
}

/// Late wake-ups: how long after its scheduled time each delivery was written.
#[derive(Default)]
struct Lateness {
    n: u64,
    sum_ns: u128,
    max_ns: u64,
    /// Counts per power-of-two bucket of microseconds: [0,1), [1,2), [2,4), ...
    hist: [u64; 32],
}

impl Lateness {
    fn add(&mut self, ns: u64) {
        self.n += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        let us = ns / 1000;
        let b = if us == 0 {
            0
        } else {
            (64 - us.leading_zeros()) as usize
        };
        self.hist[b.min(31)] += 1;
    }

    /// Upper bound (µs) of the bucket holding quantile q.
    fn quantile_us(&self, q: f64) -> u64 {
        let target = (q * self.n as f64).ceil() as u64;
        let mut acc = 0;
        for (b, &c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= target.max(1) {
                return if b == 0 { 1 } else { 1u64 << b };
            }
        }
        u64::MAX
    }
}

struct Udp {
    src: UdpSource,
    access: Link,
    stop: SimTime,
    /// Next departure from the source (model time), if any.
    next_departure: Option<SimTime>,
    /// The next packet to reach the bottleneck, and when.
    pending: Option<(Packet, SimTime)>,
}

impl Udp {
    /// Emit packets until one survives the access link (or the source stops).
    fn advance(&mut self, flows: &mut [FlowCount], drops: &mut DropLog) {
        while let Some(t) = self.next_departure.filter(|&t| t < self.stop) {
            let (mut p, next) = self.src.emit(t);
            self.next_departure = next;
            // (the order of same-nanosecond events is ns-2's; a real-time
            // emulator has no ties to break)
            match self.access.pass(&mut p, t, Order::default()) {
                Ok((at, _, _)) => {
                    self.pending = Some((p, at));
                    return;
                }
                Err(cause) => {
                    flows[p.flow as usize].drops += 1;
                    drops.push(t, 2, p.flow, p.seq as i64, cause);
                }
            }
        }
        self.next_departure = None;
    }
}

/// The drops trace, as columns (link 0 forward, 1 reverse, 2 a UDP access link).
#[derive(Default)]
struct DropLog {
    t: Vec<f64>,
    link: Vec<i64>,
    flow: Vec<i64>,
    seq: Vec<i64>,
    cause: Vec<i64>,
}

impl DropLog {
    fn push(&mut self, now: SimTime, link: i64, flow: u32, seq: i64, cause: DropCause) {
        self.t.push(secs(now));
        self.link.push(link);
        self.flow
            .push(if flow == u32::MAX { -1 } else { flow as i64 });
        self.seq.push(seq);
        self.cause.push(cause as i64);
    }
}

fn tcp_flow(buf: &[u8], by_src: bool, port_base: u16, n_flows: u32) -> Option<(u32, u32)> {
    if buf.len() < 20 || buf[0] >> 4 != 4 || buf[9] != 6 {
        return None;
    }
    let ihl = (buf[0] & 0x0f) as usize * 4;
    if buf.len() < ihl + 8 {
        return None;
    }
    let port = if by_src {
        u16::from_be_bytes([buf[ihl], buf[ihl + 1]])
    } else {
        u16::from_be_bytes([buf[ihl + 2], buf[ihl + 3]])
    };
    let seq = u32::from_be_bytes([buf[ihl + 4], buf[ihl + 5], buf[ihl + 6], buf[ihl + 7]]);
    let f = port.checked_sub(port_base)? as u32;
    (f < n_flows).then_some((f, seq))
}

/// Run the emulator; `wait_go` blocks until the controller says when t0 is.
pub fn run(cfg: EmuConfig, wait_go: impl FnOnce() -> u64) -> Result<(), String> {
    let plan = &cfg.plan;
    // (backends/linux.py refuses these first, naming the scenario key)
    if plan.topology != TopologyKind::Dumbbell {
        return Err("topology.kind: the linux engine emulates a dumbbell's bottleneck only".into());
    }
    if let Some(f) = plan.flows.iter().find(|f| {
        f.route
            .forward
            .first()
            .map(|&l| plan.links[l as usize].role)
            != Some(LinkRole::Access)
    }) {
        return Err(format!(
            "flows.{}.reverse: the linux engine sends data one way only (sender namespace to receiver)",
            f.group
        ));
    }
    let snd = sys::tun_in_netns(&cfg.snd_ns, &cfg.tun).map_err(|e| e.to_string())?;
    let rcv = sys::tun_in_netns(&cfg.rcv_ns, &cfg.tun).map_err(|e| e.to_string())?;
    // The engine's own links: the bottleneck's forward (data, errors) and
    // reverse (acks) directions, their delays lengthened by the access links
    // folded in.
    let bottleneck = |direction: Direction, extra_ns: u64| {
        let l = plan
            .links
            .iter()
            .find(|l| l.role == LinkRole::Bottleneck && l.direction == direction)
            .expect("a dumbbell has a bottleneck");
        let folded = LinkPlan {
            delay_ns: l.delay_ns + extra_ns,
            ..l.clone()
        };
        build_link(&folded, plan.seed)
    };
    let mut links = [
        bottleneck(Direction::Forward, cfg.fwd_extra_ns),
        bottleneck(Direction::Reverse, cfg.rev_extra_ns),
    ];
    // Flows in the engine's numbering; start and stop instants as the packet
    // engine runs them (jitter, joins, leaves).
    let n_flows = plan.flows.len() as u32;
    let start_of: Vec<SimTime> = plan.flows.iter().map(|f| f.start_ns).collect();
    let udps: Vec<Udp> = plan
        .flows
        .iter()
        .filter(|f| f.udp.is_some())
        .map(|f| Udp {
            src: udp_source_of(f, plan.seed),
            // the flow's own access link of the Plan (its id, its stream)
            access: build_link(&plan.links[f.route.forward[0] as usize], plan.seed),
            stop: f.stop_ns,
            next_departure: Some(f.start_ns),
            pending: None,
        })
        .collect();
    let end = plan.end_ns;
    let warmup = plan.warmup_ns;
    let mut slab = Slab {
        bufs: Vec::new(),
        lens: Vec::new(),
        free: Vec::new(),
        size: cfg.mtu.max(2048),
    };
    let mut flows = vec![FlowCount::default(); n_flows as usize];
    let mut isn = vec![None::<u32>; n_flows as usize];
    let mut warm_flows: Option<Vec<FlowCount>> = None;
    let mut warm_links: Option<[LinkSnapshot; 2]> = None;
    let mut other = [0u64; 2];
    let mut late = Lateness::default();
    let mut drops = DropLog::default();
    // Diagnostics: packets read from a device per wake-up, and each real
    // drop's position in its batch (bursts that arrive together).
    let mut batches = [[0u64; 32]; 2];
    let mut drop_batch: Vec<u32> = Vec::new();
    let mut udps = udps;
    for u in udps.iter_mut() {
        u.advance(&mut flows, &mut drops);
    }

    let rt = sys::realtime(cfg.rt_prio);
    println!("ready");
    let t0 = wait_go();
    let now_model = || sys::mono_ns().saturating_sub(t0);
    let fds = [snd, rcv];

    loop {
        let mut now = now_model();
        if now >= end {
            break;
        }
        // 1. Background packets that reach the bottleneck by now, at their
        //    exact model times (source → its own access link → bottleneck).
        loop {
            let mut best: Option<(usize, SimTime)> = None;
            for (i, u) in udps.iter().enumerate() {
                if let Some((_, t)) = u.pending {
                    if t <= now && best.is_none_or(|(_, b)| t < b) {
                        best = Some((i, t));
                    }
                }
            }
            let Some((i, at)) = best else { break };
            let (p, _) = udps[i].pending.take().expect("chosen");
            if let Admit::Dropped(cause) = links[0].arrive(p, at) {
                flows[p.flow as usize].drops += 1;
                drops.push(at, 0, p.flow, p.seq as i64, cause);
            }
            udps[i].advance(&mut flows, &mut drops);
        }
        // 2. Real packets from both TUN devices.
        for dir in 0..2 {
            let mut batch = 0usize;
            loop {
                let slot = slab.take();
                let buf = &mut slab.bufs[slot as usize];
                let n = unsafe {
                    libc::read(fds[dir], buf.as_mut_ptr() as *mut libc::c_void, buf.len())
                };
                if n <= 0 {
                    slab.free.push(slot);
                    break;
                }
                let n = n as usize;
                slab.lens[slot as usize] = n;
                if buf[0] >> 4 != 4 {
                    // Only IPv4 crosses (the namespaces have IPv6 off).
                    other[dir] += 1;
                    slab.free.push(slot);
                    continue;
                }
                now = now_model();
                batch += 1;
                let fl = tcp_flow(buf, dir == 0, cfg.port_base, n_flows);
                let (flow, seq) = fl.unwrap_or((u32::MAX, 0));
                if dir == 0 {
                    if let Some((f, s)) = fl {
                        // SYN: remember the initial sequence number
                        let ihl = (buf[0] & 0x0f) as usize * 4;
                        if buf.len() > ihl + 13 && buf[ihl + 13] & 0x02 != 0 {
                            isn[f as usize] = Some(s);
                        }
                    }
                }
                let mut p = Packet::new(
                    if dir == 0 { Kind::Data } else { Kind::Ack },
                    flow,
                    slot,
                    n as u32,
                );
                p.hop = dir as u8;
                if let Admit::Dropped(cause) = links[dir].arrive(p, now) {
                    slab.free.push(slot);
                    if (flow as usize) < flows.len() {
                        flows[flow as usize].drops += 1;
                    }
                    let rel = match (dir, fl) {
                        (0, Some((f, s))) => {
                            isn[f as usize].map_or(-1, |i| s.wrapping_sub(i) as i64)
                        }
                        _ => seq as i64,
                    };
                    drops.push(now, dir as i64, flow, rel, cause);
                    drop_batch.push(batch as u32);
                }
            }
            if batch > 0 {
                batches[dir][batch.min(31)] += 1;
            }
        }
        // 3. Deliveries due by now.
        now = now_model();
        for dir in 0..2 {
            while let Some(at) = links[dir].next_delivery() {
                if at > now {
                    break;
                }
                let (_, _, p) = links[dir].pop_arrived(now).expect("due");
                late.add(now - at);
                if p.kind == Kind::Udp {
                    let f = &mut flows[p.flow as usize];
                    f.delivered_packets += 1;
                    f.delivered_bytes += p.size_bytes as u64;
                    continue;
                }
                let slot = p.seq as usize;
                let out = fds[1 - dir];
                let len = slab.lens[slot];
                unsafe { libc::write(out, slab.bufs[slot].as_ptr() as *const libc::c_void, len) };
                if dir == 0 && (p.flow as usize) < flows.len() {
                    let ihl = (slab.bufs[slot][0] & 0x0f) as usize * 4;
                    let doff = if len > ihl + 12 {
                        (slab.bufs[slot][ihl + 12] >> 4) as usize * 4
                    } else {
                        0
                    };
                    let payload = len.saturating_sub(ihl + doff);
                    if payload > 0 {
                        let f = &mut flows[p.flow as usize];
                        f.delivered_packets += 1;
                        f.delivered_bytes += payload as u64;
                    }
                }
                slab.free.push(slot as u32);
            }
        }
        // 4. The end of warm-up: counters from here on are measured.
        if warm_links.is_none() && now >= warmup {
            warm_links = Some([links[0].snapshot(warmup), links[1].snapshot(warmup)]);
            warm_flows = Some(flows.clone());
        }
        // 5. Sleep until the next thing due (or a packet arrives).
        let mut next = end;
        if warm_links.is_none() {
            next = next.min(warmup);
        }
        for l in &links {
            if let Some(t) = l.next_delivery() {
                next = next.min(t);
            }
        }
        for u in &udps {
            if let Some((_, t)) = u.pending {
                next = next.min(t);
            }
        }
        let now = now_model();
        if next > now {
            let mut pfd = [
                libc::pollfd {
                    fd: snd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: rcv,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let ts = sys::timespec(next - now);
            unsafe { libc::ppoll(pfd.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        }
    }

    let wl = warm_links.unwrap_or_default();
    let wf = warm_flows.unwrap_or_else(|| vec![FlowCount::default(); flows.len()]);
    let measured = (end - warmup) as f64;
    let names = ["forward", "reverse"];
    let mut link_rows = Vec::new();
    for (i, l) in links.iter_mut().enumerate() {
        let a = l.snapshot(end);
        let b = wl[i];
        link_rows.push(json!({
            "id": i, "name": "bottleneck", "direction": names[i], "rate_bps": l.rate_bps,
            "arrivals": a.arrivals - b.arrivals, "drops": a.drops - b.drops,
            "errors": a.errors - b.errors, "departures": a.sent_packets - b.sent_packets,
            "utilization": (a.busy_ns - b.busy_ns) as f64 / measured,
        }));
    }
    let flow_rows: Vec<_> = flows
        .iter()
        .zip(&wf)
        .enumerate()
        .map(|(i, (a, b))| {
            json!({
                "id": i,
                "start_s": secs(start_of[i]),
                "delivered_packets": a.delivered_packets - b.delivered_packets,
                "delivered_bytes": a.delivered_bytes - b.delivered_bytes,
                "drops": a.drops - b.drops,
            })
        })
        .collect();
    let out = json!({
        "links": link_rows,
        "flows": flow_rows,
        "drops": {"t": drops.t, "link": drops.link, "flow": drops.flow, "seq": drops.seq, "cause": drops.cause},
        "timing": {
            "realtime": rt.err().unwrap_or_else(|| "SCHED_FIFO".into()),
            "deliveries": late.n,
            "late_mean_us": if late.n > 0 { late.sum_ns as f64 / late.n as f64 / 1e3 } else { 0.0 },
            "late_p50_us_max": late.quantile_us(0.5),
            "late_p99_us_max": late.quantile_us(0.99),
            "late_p999_us_max": late.quantile_us(0.999),
            "late_max_us": late.max_ns as f64 / 1e3,
            "late_hist_log2_us": late.hist.to_vec(),
            "read_batch_hist": [batches[0].to_vec(), batches[1].to_vec()],
            "drop_batch_position": drop_batch,
        },
        "other_packets": other,
    });
    std::fs::write(&cfg.out, out.to_string()).map_err(|e| format!("{}: {e}", cfg.out))?;
    unsafe {
        libc::close(snd);
        libc::close(rcv);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP header (20 + 20 bytes) from `sport` to `dport` with sequence `seq`.
    fn tcp_packet(sport: u16, dport: u16, seq: u32) -> Vec<u8> {
        let mut b = vec![0u8; 40];
        b[0] = 0x45;
        b[9] = 6;
        b[20..22].copy_from_slice(&sport.to_be_bytes());
        b[22..24].copy_from_slice(&dport.to_be_bytes());
        b[24..28].copy_from_slice(&seq.to_be_bytes());
        b
    }

    #[test]
    fn flows_are_told_apart_by_port() {
        let data = tcp_packet(40003, 5001, 77);
        assert_eq!(tcp_flow(&data, true, 40000, 10), Some((3, 77)));
        let ack = tcp_packet(5001, 40003, 9);
        assert_eq!(tcp_flow(&ack, false, 40000, 10), Some((3, 9)));
        // out of range, below the base, not TCP, not IPv4
        assert_eq!(tcp_flow(&tcp_packet(40010, 5001, 0), true, 40000, 10), None);
        assert_eq!(tcp_flow(&tcp_packet(1234, 5001, 0), true, 40000, 10), None);
        let mut udp = tcp_packet(40001, 5001, 0);
        udp[9] = 17;
        assert_eq!(tcp_flow(&udp, true, 40000, 10), None);
        let mut v6 = tcp_packet(40001, 5001, 0);
        v6[0] = 0x60;
        assert_eq!(tcp_flow(&v6, true, 40000, 10), None);
    }

    #[test]
    fn lateness_quantiles_are_bucket_bounds() {
        let mut l = Lateness::default();
        for _ in 0..98 {
            l.add(500); // < 1 µs
        }
        l.add(3_000); // 3 µs: bucket [2, 4)
        l.add(1_500_000); // 1.5 ms: bucket [1024, 2048)
        assert_eq!(l.quantile_us(0.5), 1);
        assert_eq!(l.quantile_us(0.99), 4);
        assert_eq!(l.quantile_us(1.0), 2048);
        assert_eq!(l.max_ns, 1_500_000);
    }
}
