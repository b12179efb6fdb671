//! Probes: traces recorded into columnar buffers, only when the scenario
//! asks for them (a disabled probe is one predictable branch).

use crate::net::link::DropCause;
use crate::plan::{TraceKind, TracePlan};
use crate::time::{secs, SimTime};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

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
    /// The columns; empty (of their type) when the rows were spilled.
    pub columns: Vec<(&'static str, Column)>,
    /// When the run streamed its traces to files ([`Recorder::spill_to`]):
    /// the table's parts in row order, (file stem, rows), each column of a
    /// part in `<dir>/<stem>.<column>` ([`Spill`]).
    pub spilled: Option<Parts>,
}

/// A spilled table's parts in row order: (file stem, rows).
pub type Parts = Vec<(String, u64)>;

/// A log of rows: how many, and its columns taken out (the log left empty).
trait Log {
    fn len(&self) -> usize;
    fn take_columns(&mut self) -> Vec<(&'static str, Column)>;
}

/// [`Log`] for a struct of column vectors: the listed fields, in order,
/// with their column types.
macro_rules! log_columns {
    ($ty:ident { $first:ident: $fk:ident $(, $field:ident: $kind:ident)* $(,)? }) => {
        impl Log for $ty {
            fn len(&self) -> usize {
                self.$first.len()
            }
            fn take_columns(&mut self) -> Vec<(&'static str, Column)> {
                vec![
                    (stringify!($first), Column::$fk(std::mem::take(&mut self.$first))),
                    $((stringify!($field), Column::$kind(std::mem::take(&mut self.$field))),)*
                ]
            }
        }
    };
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

log_columns!(TcpStateLog {
    t: F64,
    flow: I64,
    cwnd: F64,
    ssthresh: F64,
    inflight: I64,
    ack: I64
});
log_columns!(RttLog {
    t: F64,
    flow: I64,
    srtt: F64,
    rttvar: F64,
    rto: F64,
    backoff: I64
});
log_columns!(SendLog {
    t: F64,
    flow: I64,
    seq: I64,
    rtx: I64
});
log_columns!(DropLog {
    t: F64,
    link: I64,
    flow: I64,
    seq: I64,
    cause: I64
});
log_columns!(UdpLog {
    t: F64,
    flow: I64,
    seq: I64
});
log_columns!(PlaybackLog {
    t: F64,
    flow: I64,
    read_bytes: I64,
    wanted_bytes: I64,
    arrived_bytes: I64,
    buffered_bytes: I64,
    dropped_writes: I64,
});

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
    /// Where the tables go as the run goes, if they are streamed to files.
    pub spill: Option<Spill>,
}

impl Recorder {
    pub fn new(plan: &TracePlan) -> Self {
        let has = |k| plan.series.contains(&k);
        let tcp = has(TraceKind::Cwnd) || has(TraceKind::Inflight) || has(TraceKind::Seq);
        let rtt = has(TraceKind::Rtt);
        Recorder {
            tcp_every_change: (tcp || rtt) && plan.interval_ns == 0,
            tcp: tcp.then(TcpStateLog::default),
            rtt: rtt.then(RttLog::default),
            sends: has(TraceKind::Seq).then(SendLog::default),
            queue: has(TraceKind::Queue).then(QueueLog::default),
            drops: has(TraceKind::Drops).then(DropLog::default),
            udp: has(TraceKind::Udp).then(UdpLog::default),
            playback: None,
            interval_ns: plan.interval_ns,
            spill: None,
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

    /// Stream the trace tables to files in `dir` as the run goes (see
    /// [`Spill`]): a table's rows go to disk once it holds `rows` of them
    /// (at the simulator's next `Event::Spill`). Playback reads
    /// stay in memory (the run's metrics read them).
    /// (Nothing is streamed, and no folder made, when no trace is recorded.)
    pub fn spill_to(&mut self, dir: PathBuf, rows: usize) {
        let traced = self.tcp.is_some()
            || self.rtt.is_some()
            || self.sends.is_some()
            || self.queue.is_some()
            || self.drops.is_some()
            || self.udp.is_some();
        if !traced {
            return;
        }
        self.spill = Some(Spill {
            made: false,
            dir,
            rows: rows.max(1),
            error: None,
            occupancy: Vec::new(),
            queue_rows: BTreeMap::new(),
            rows_written: Vec::new(),
        });
    }

    /// Write every table that holds `rows` rows or more to its files, and
    /// the queue's rows that are final: every future queue event happens at
    /// `now` or later (the simulator's clock), so the occupancy rows before
    /// `now` are those of the whole-run table. Called between events; true
    /// once writing failed (the run should end: the error is in the output).
    pub fn spill(&mut self, now: SimTime) -> bool {
        let Some(s) = &mut self.spill else {
            return false;
        };
        if s.error.is_some() {
            return true;
        }
        let r = s.spill_logs(
            now,
            false,
            &mut self.tcp,
            &mut self.rtt,
            &mut self.sends,
            &mut self.queue,
            &mut self.drops,
            &mut self.udp,
        );
        if let Err(e) = r {
            s.error = Some(e);
            return true;
        }
        false
    }

    /// Turn the logs into tables (in memory, or the rest written to their
    /// files when spilling), and the error that stopped the spilling if any.
    pub fn finish(mut self, end: SimTime) -> (Vec<Table>, Option<std::io::Error>) {
        let mut error = None;
        let mut spilled: Option<Vec<(&'static str, Parts)>> = None;
        if let Some(mut s) = self.spill.take() {
            let r = match s.error.take() {
                Some(e) => Err(e),
                None => s.spill_logs(
                    end,
                    true,
                    &mut self.tcp,
                    &mut self.rtt,
                    &mut self.sends,
                    &mut self.queue,
                    &mut self.drops,
                    &mut self.udp,
                ),
            };
            match r {
                Ok(()) => spilled = Some(s.parts()),
                Err(e) => error = Some(e),
            }
        }
        let parts_of = |name: &str| {
            spilled
                .as_ref()
                .and_then(|v| v.iter().find(|(n, _)| *n == name).map(|(_, p)| p.clone()))
        };
        let mut out = Vec::new();
        let mut push = |name: &'static str, columns| {
            out.push(Table {
                name,
                columns,
                spilled: parts_of(name),
            })
        };
        if let Some(mut l) = self.tcp.take() {
            push("tcp", l.take_columns());
        }
        if let Some(mut l) = self.rtt.take() {
            push("rtt", l.take_columns());
        }
        if let Some(mut l) = self.sends.take() {
            push("sends", l.take_columns());
        }
        if let Some(mut q) = self.queue.take() {
            // Occupancy step function per link: sort the ±1 events, accumulate.
            q.events.retain(|e| e.0 <= end);
            q.sort();
            push("queue", occupancy_rows(&q.events, &mut Vec::new()));
        }
        if let Some(mut l) = self.drops.take() {
            push("drops", l.take_columns());
        }
        if let Some(mut l) = self.playback.take() {
            push("playback", l.take_columns());
        }
        if let Some(mut l) = self.udp.take() {
            push("udp", l.take_columns());
        }
        (out, error)
    }
}

impl QueueLog {
    /// Sort the events by link, then time; at one instant a departure (−1)
    /// frees the slot an arrival (+1) then takes: −1 first, so occupancy
    /// never shows buffer + 1. Stable: events equal in all three keep the
    /// order they were recorded in.
    fn sort(&mut self) {
        self.events.sort_by_key(|e| (e.1, e.0, e.3));
    }
}

/// The queue table's rows of `events` (sorted by [`QueueLog::sort`]): per
/// event, the occupancy of its link after it, counted on from `occupancy`
/// (per link: TCP, UDP packets; updated).
fn occupancy_rows(
    events: &[(SimTime, u32, u8, i8)],
    occupancy: &mut Vec<(i64, i64)>,
) -> Vec<(&'static str, Column)> {
    let n = events.len();
    let (mut t, mut link, mut tcp, mut udp) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for &(time, l, class, d) in events {
        if occupancy.len() <= l as usize {
            occupancy.resize(l as usize + 1, (0, 0));
        }
        let o = &mut occupancy[l as usize];
        if class == 1 {
            o.1 += d as i64;
        } else {
            o.0 += d as i64;
        }
        t.push(secs(time));
        link.push(l as i64);
        tcp.push(o.0);
        udp.push(o.1);
    }
    vec![
        ("t", Column::F64(t)),
        ("link", Column::I64(link)),
        ("tcp", Column::I64(tcp)),
        ("udp", Column::I64(udp)),
    ]
}

/// A table's rows written out, column by column: `<dir>/<part>.<column>`
/// holds the column's values of that part as raw little-endian 8-byte
/// numbers (f64 or i64, as the table's in-memory column), in row order; a
/// table is the concatenation of its parts (one part, the table's name, for
/// every table but the queue's, which has one part per link, `queue.<link>`,
/// in link order: its rows are sorted by link).
pub struct Spill {
    dir: PathBuf,
    /// `dir` exists (made at the first write).
    made: bool,
    rows: usize,
    error: Option<std::io::Error>,
    /// Per link: the occupancy (TCP, UDP) after the last queue row written.
    occupancy: Vec<(i64, i64)>,
    /// Links with queue rows written, and how many.
    queue_rows: BTreeMap<u32, u64>,
    /// Rows written per table.
    rows_written: Vec<(&'static str, u64)>,
}

impl Spill {
    /// Append columns (equally long) to `<dir>/<part>.<column>`.
    fn append(&self, part: &str, columns: &[(&'static str, Column)]) -> std::io::Result<()> {
        for (name, col) in columns {
            let bytes: Vec<u8> = match col {
                Column::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                Column::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.dir.join(format!("{part}.{name}")))?;
            f.write_all(&bytes)?;
        }
        Ok(())
    }

    fn table<L: Log>(
        &mut self,
        name: &'static str,
        log: &mut Option<L>,
        all: bool,
    ) -> std::io::Result<()> {
        let Some(l) = log else { return Ok(()) };
        let n = l.len();
        let known = self.rows_written.iter().any(|(t, _)| *t == name);
        if !(all || n >= self.rows) || (n == 0 && known) {
            return Ok(());
        }
        // (a table with no rows at all still gets its files, empty)
        self.append(name, &l.take_columns())?;
        match self.rows_written.iter_mut().find(|(t, _)| *t == name) {
            Some((_, k)) => *k += n as u64,
            None => self.rows_written.push((name, n as u64)),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn spill_logs(
        &mut self,
        now: SimTime,
        all: bool,
        tcp: &mut Option<TcpStateLog>,
        rtt: &mut Option<RttLog>,
        sends: &mut Option<SendLog>,
        queue: &mut Option<QueueLog>,
        drops: &mut Option<DropLog>,
        udp: &mut Option<UdpLog>,
    ) -> std::io::Result<()> {
        if !self.made {
            std::fs::create_dir_all(&self.dir)?;
            self.made = true;
        }
        self.table("tcp", tcp, all)?;
        self.table("rtt", rtt, all)?;
        self.table("sends", sends, all)?;
        self.table("drops", drops, all)?;
        self.table("udp", udp, all)?;
        if let Some(q) = queue {
            if all || q.events.len() >= self.rows {
                if all {
                    q.events.retain(|e| e.0 <= now);
                }
                q.sort();
                // final: before `now` (all of them at the end); each link's
                // final events are a prefix of its run in the sorted order,
                // and what stays is still sorted, ahead of later events as
                // the stable sort of the whole run has it
                let (done, rest): (Vec<_>, Vec<_>) =
                    q.events.drain(..).partition(|e| all || e.0 < now);
                q.events = rest;
                for chunk in done.chunk_by(|a, b| a.1 == b.1) {
                    let link = chunk[0].1;
                    let columns = occupancy_rows(chunk, &mut self.occupancy);
                    self.append(&format!("queue.{link}"), &columns)?;
                    *self.queue_rows.entry(link).or_default() += chunk.len() as u64;
                }
            }
        }
        Ok(())
    }

    /// Per table written: its parts (file stem, rows) in order.
    fn parts(&self) -> Vec<(&'static str, Parts)> {
        let mut out: Vec<_> = self
            .rows_written
            .iter()
            .map(|&(t, n)| (t, vec![(t.to_string(), n)]))
            .collect();
        out.push((
            "queue",
            self.queue_rows
                .iter()
                .map(|(l, n)| (format!("queue.{l}"), *n))
                .collect(),
        ));
        out
    }
}
