//! Probes: traces recorded into columnar buffers, only when the scenario
//! asks for them (a disabled probe is one predictable branch).

use crate::net::link::DropCause;
use crate::scenario::{TraceKind, TraceSpec};
use crate::time::{secs, SimTime};

/// With the `no-probes` feature every probe is compiled out (traces come out
/// empty): a build to measure what the disabled probes of a normal build
/// cost, nothing else (bench/NOTES.md).
const PROBES_COMPILED_OUT: bool = cfg!(feature = "no-probes");

/// Run a probe's recording out of line, so that in the simulator's hot code
/// a probe is only its `Option` check (the pushes inlined there made the
/// disabled probes cost ~5 % of all instructions, by crowding out inlining).
#[cold]
#[inline(never)]
fn cold(f: impl FnOnce()) {
    f()
}

/// One column of a trace table.
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
}

/// A named table of equally long columns.
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

#[derive(Default)]
pub struct TcpStateLog {
    t: Vec<f64>,
    flow: Vec<i64>,
    cwnd: Vec<f64>,
    ssthresh: Vec<f64>,
    inflight: Vec<i64>,
    ack: Vec<i64>,
}

#[derive(Default)]
pub struct RttLog {
    t: Vec<f64>,
    flow: Vec<i64>,
    srtt: Vec<f64>,
    rttvar: Vec<f64>,
    rto: Vec<f64>,
    backoff: Vec<i64>,
    /// Last (srtt, rttvar, rto) recorded per flow: record changes only.
    last: Vec<(f64, f64, f64)>,
}

#[derive(Default)]
pub struct SendLog {
    t: Vec<f64>,
    flow: Vec<i64>,
    seq: Vec<i64>,
    rtx: Vec<i64>,
}

#[derive(Default)]
pub struct QueueLog {
    /// (time, link, class (0 TCP data/acks, 1 UDP), +1 / −1)
    events: Vec<(SimTime, u32, u8, i8)>,
}

#[derive(Default)]
pub struct DropLog {
    t: Vec<f64>,
    link: Vec<i64>,
    flow: Vec<i64>,
    seq: Vec<i64>,
    cause: Vec<i64>,
}

#[derive(Default)]
pub struct UdpLog {
    t: Vec<f64>,
    flow: Vec<i64>,
    seq: Vec<i64>,
}

/// Reads of the playback buffers of CBR-over-TCP flows (always recorded
/// when a scenario has such a flow: one row per flow per read interval).
#[derive(Default)]
pub struct PlaybackLog {
    t: Vec<f64>,
    flow: Vec<i64>,
    read_bytes: Vec<i64>,
    wanted_bytes: Vec<i64>,
    arrived_bytes: Vec<i64>,
    buffered_bytes: Vec<i64>,
    dropped_writes: Vec<i64>,
}

#[derive(Default)]
pub struct Recorder {
    pub tcp_every_change: bool,
    pub tcp: Option<TcpStateLog>,
    pub sends: Option<SendLog>,
    pub queue: Option<QueueLog>,
    pub drops: Option<DropLog>,
    pub udp: Option<UdpLog>,
    pub rtt: Option<RttLog>,
    pub playback: Option<PlaybackLog>,
    pub interval_ns: SimTime,
}

impl Recorder {
    pub fn new(spec: &TraceSpec) -> Self {
        let has = |k| spec.series.contains(&k);
        let tcp = has(TraceKind::Cwnd) || has(TraceKind::Inflight) || has(TraceKind::Seq);
        let rtt = has(TraceKind::Rtt);
        Recorder {
            tcp_every_change: (tcp || rtt) && spec.interval.0 == 0,
            tcp: tcp.then(TcpStateLog::default),
            rtt: rtt.then(RttLog::default),
            sends: has(TraceKind::Seq).then(SendLog::default),
            queue: has(TraceKind::Queue).then(QueueLog::default),
            drops: has(TraceKind::Drops).then(DropLog::default),
            udp: has(TraceKind::Udp).then(UdpLog::default),
            playback: None,
            interval_ns: spec.interval.0,
        }
    }

    #[inline]
    pub fn tcp_state(
        &mut self,
        now: SimTime,
        flow: u32,
        cwnd: f64,
        ssthresh: i64,
        inflight: i64,
        ack: i64,
    ) {
        if PROBES_COMPILED_OUT {
            return;
        }
        if let Some(l) = &mut self.tcp {
            cold(|| {
                l.t.push(secs(now));
                l.flow.push(flow as i64);
                l.cwnd.push(cwnd);
                l.ssthresh.push(ssthresh as f64);
                l.inflight.push(inflight);
                l.ack.push(ack);
            })
        }
    }

    /// The RTT estimator's state (seconds); every sample when sampling at an
    /// interval, else only when it changed.
    #[inline]
    pub fn rtt(&mut self, now: SimTime, flow: u32, srtt: f64, rttvar: f64, rto: f64, backoff: u32) {
        let sampled = self.interval_ns > 0;
        if let Some(l) = &mut self.rtt {
            let i = flow as usize;
            if l.last.len() <= i {
                l.last.resize(i + 1, (f64::NAN, f64::NAN, f64::NAN));
            }
            let now_state = (srtt, rttvar, rto);
            if !sampled && l.last[i] == now_state {
                return;
            }
            l.last[i] = now_state;
            l.t.push(secs(now));
            l.flow.push(flow as i64);
            l.srtt.push(srtt);
            l.rttvar.push(rttvar);
            l.rto.push(rto);
            l.backoff.push(backoff as i64);
        }
    }

    #[inline]
    pub fn send(&mut self, now: SimTime, flow: u32, seq: u32, rtx: bool) {
        if PROBES_COMPILED_OUT {
            return;
        }
        if let Some(l) = &mut self.sends {
            cold(|| {
                l.t.push(secs(now));
                l.flow.push(flow as i64);
                l.seq.push(seq as i64);
                l.rtx.push(rtx as i64);
            })
        }
    }

    #[inline]
    pub fn queue_wait(&mut self, now: SimTime, start: SimTime, link: u32, class: u8) {
        if PROBES_COMPILED_OUT {
            return;
        }
        if let Some(q) = &mut self.queue {
            cold(|| {
                q.events.push((now, link, class, 1));
                q.events.push((start, link, class, -1));
            })
        }
    }

    #[inline]
    pub fn drop(&mut self, now: SimTime, link: u32, flow: u32, seq: u32, cause: DropCause) {
        if PROBES_COMPILED_OUT {
            return;
        }
        if let Some(d) = &mut self.drops {
            cold(|| {
                d.t.push(secs(now));
                d.link.push(link as i64);
                d.flow.push(flow as i64);
                d.seq.push(seq as i64);
                d.cause.push(cause as i64);
            })
        }
    }

    #[inline]
    pub fn udp_delivered(&mut self, now: SimTime, flow: u32, seq: u32) {
        if PROBES_COMPILED_OUT {
            return;
        }
        if let Some(l) = &mut self.udp {
            cold(|| {
                l.t.push(secs(now));
                l.flow.push(flow as i64);
                l.seq.push(seq as i64);
            })
        }
    }

    pub fn playback_read(&mut self, now: SimTime, flow: u32, r: &crate::traffic::app::Read) {
        if let Some(l) = &mut self.playback {
            l.t.push(secs(now));
            l.flow.push(flow as i64);
            l.read_bytes.push(r.got as i64);
            l.wanted_bytes.push(r.wanted as i64);
            l.arrived_bytes.push(r.arrived as i64);
            l.buffered_bytes.push(r.buffered as i64);
            l.dropped_writes.push(r.dropped_writes as i64);
        }
    }

    /// Turn the logs into tables.
    pub fn finish(self, end: SimTime) -> Vec<Table> {
        let mut out = Vec::new();
        if let Some(l) = self.tcp {
            out.push(Table {
                name: "tcp",
                columns: vec![
                    ("t", Column::F64(l.t)),
                    ("flow", Column::I64(l.flow)),
                    ("cwnd", Column::F64(l.cwnd)),
                    ("ssthresh", Column::F64(l.ssthresh)),
                    ("inflight", Column::I64(l.inflight)),
                    ("ack", Column::I64(l.ack)),
                ],
            });
        }
        if let Some(l) = self.rtt {
            out.push(Table {
                name: "rtt",
                columns: vec![
                    ("t", Column::F64(l.t)),
                    ("flow", Column::I64(l.flow)),
                    ("srtt", Column::F64(l.srtt)),
                    ("rttvar", Column::F64(l.rttvar)),
                    ("rto", Column::F64(l.rto)),
                    ("backoff", Column::I64(l.backoff)),
                ],
            });
        }
        if let Some(l) = self.sends {
            out.push(Table {
                name: "sends",
                columns: vec![
                    ("t", Column::F64(l.t)),
                    ("flow", Column::I64(l.flow)),
                    ("seq", Column::I64(l.seq)),
                    ("rtx", Column::I64(l.rtx)),
                ],
            });
        }
        if let Some(mut q) = self.queue {
            // Occupancy step function per link: sort the ±1 events, accumulate.
            q.events.retain(|e| e.0 <= end);
            // At one instant a departure (−1) frees the slot an arrival (+1)
            // then takes: order −1 first, so occupancy never shows buffer + 1.
            q.events.sort_by_key(|e| (e.1, e.0, e.3));
            let (mut t, mut link, mut tcp, mut udp) = (vec![], vec![], vec![], vec![]);
            let mut cur_link = u32::MAX;
            let (mut n_tcp, mut n_udp) = (0i64, 0i64);
            for (time, l, class, d) in q.events {
                if l != cur_link {
                    cur_link = l;
                    n_tcp = 0;
                    n_udp = 0;
                }
                if class == 1 {
                    n_udp += d as i64;
                } else {
                    n_tcp += d as i64;
                }
                t.push(secs(time));
                link.push(l as i64);
                tcp.push(n_tcp);
                udp.push(n_udp);
            }
            out.push(Table {
                name: "queue",
                columns: vec![
                    ("t", Column::F64(t)),
                    ("link", Column::I64(link)),
                    ("tcp", Column::I64(tcp)),
                    ("udp", Column::I64(udp)),
                ],
            });
        }
        if let Some(d) = self.drops {
            out.push(Table {
                name: "drops",
                columns: vec![
                    ("t", Column::F64(d.t)),
                    ("link", Column::I64(d.link)),
                    ("flow", Column::I64(d.flow)),
                    ("seq", Column::I64(d.seq)),
                    ("cause", Column::I64(d.cause)),
                ],
            });
        }
        if let Some(l) = self.playback {
            out.push(Table {
                name: "playback",
                columns: vec![
                    ("t", Column::F64(l.t)),
                    ("flow", Column::I64(l.flow)),
                    ("read_bytes", Column::I64(l.read_bytes)),
                    ("wanted_bytes", Column::I64(l.wanted_bytes)),
                    ("arrived_bytes", Column::I64(l.arrived_bytes)),
                    ("buffered_bytes", Column::I64(l.buffered_bytes)),
                    ("dropped_writes", Column::I64(l.dropped_writes)),
                ],
            });
        }
        if let Some(u) = self.udp {
            out.push(Table {
                name: "udp",
                columns: vec![
                    ("t", Column::F64(u.t)),
                    ("flow", Column::I64(u.flow)),
                    ("seq", Column::I64(u.seq)),
                ],
            });
        }
        out
    }
}
