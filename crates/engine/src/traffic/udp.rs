//! A UDP source sending fixed-size packets paced by a rate shape, and its
//! sink, which only counts.

use std::sync::Arc;

use super::schedule::{self, Chunk, Next, Schedule};
use super::shape::Shape;
use crate::net::packet::{Kind, Packet};
use crate::rng::{stream, Rng};
use crate::sched::Order;
use crate::time::SimTime;

/// Jitter draws come from the flow's UDP stream at this index offset, apart
/// from the on/off periods (index = flow).
const JITTER_STREAM: u64 = 1 << 32;

pub struct UdpSource {
    pub flow: u32,
    pub shape: Shape,
    pub packet_size: u32,
    pub active: bool,
    pub sent: u64,
    next_seq: u32,
    /// Each packet leaves U[0, jitter_ns] after its time by the shape.
    jitter_ns: SimTime,
    jitter_rng: Rng,
    /// The shape's time of the next packet (before jitter).
    nominal: SimTime,
    /// A shaped or jittered source sends on a grid of whole microseconds from its
    /// start (`Some(start)`): the ns-2 export replays its departures from a
    /// Tracefile, whose gaps are whole microseconds, so both engines send at the
    /// same instants. A constant source (ns-2's CBR) sends on its own schedule.
    grid_origin: Option<SimTime>,
    /// Where the nominal departures come from (`schedule`).
    memo: Memo,
}

enum Memo {
    /// Read from the process's schedule (`schedule`): the chunk being
    /// read, the next departure's index in it, and the next chunk's index.
    Shared(Arc<Schedule>, Chunk, usize, usize),
    /// Solved by the shape (a shape whose schedules are not kept, a
    /// jittered source, the process's first schedule).
    Off,
}

impl UdpSource {
    pub fn new(flow: u32, shape: Shape, packet_size: u32, jitter_ns: SimTime, seed: u64) -> Self {
        UdpSource {
            flow,
            shape,
            packet_size,
            active: false,
            sent: 0,
            next_seq: 0,
            jitter_ns,
            jitter_rng: Rng::stream(seed, stream::UDP_SOURCE, JITTER_STREAM + flow as u64),
            nominal: 0,
            grid_origin: None,
            memo: Memo::Off,
        }
    }

    /// `t` on the source's microsecond grid (the next grid point at or after it).
    #[inline]
    fn on_grid(&self, t: SimTime) -> SimTime {
        schedule::on_grid(self.grid_origin, t)
    }

    #[inline]
    fn jitter(&mut self) -> SimTime {
        if self.jitter_ns == 0 {
            0
        } else {
            (self.jitter_rng.uniform() * self.jitter_ns as f64) as SimTime
        }
    }

    /// The source starts at `start`: when its first packet leaves.
    pub fn first_departure(&mut self, start: SimTime) -> SimTime {
        self.nominal = start;
        let bits = self.packet_size as f64 * 8.0;
        let key = (self.jitter_ns == 0)
            .then(|| schedule::key_of(&self.shape, bits, start))
            .flatten();
        self.memo = match key.and_then(|k| schedule::find(k, &self.shape, bits, start)) {
            Some(s) => Memo::Shared(s, Chunk::from([]), 0, 0),
            None => Memo::Off,
        };
        let on_grid = !matches!(self.shape, Shape::Constant { .. }) || self.jitter_ns > 0;
        self.grid_origin = on_grid.then_some(start);
        let t = start + self.jitter();
        self.on_grid(t)
    }

    /// Emit one packet at `now`, the time of the source's last departure;
    /// returns it and when the next one is due (never before `now`: packets
    /// keep their order).
    pub fn emit(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let (p, next) = self.emit_spaced(now);
        (p, next.map(|(t, _)| t))
    }

    /// [`UdpSource::emit`], and the next departure's gap after `now` in
    /// seconds, `ns_f64(t − now) / 1e9`: the delay of the next send's event
    /// as ns-2 schedules it (`Order::then`).
    #[inline]
    pub fn emit_spaced(&mut self, now: SimTime) -> (Packet, Option<(SimTime, f64)>) {
        let p = Packet::new(Kind::Udp, self.flow, self.next_seq, self.packet_size);
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent += 1;
        (p, self.next_departure(now))
    }

    /// The departure after the one at `now`, and its gap in seconds: read
    /// from the shared schedule, or solved.
    #[inline]
    fn next_departure(&mut self, now: SimTime) -> Option<(SimTime, f64)> {
        if let Memo::Shared(_, chunk, i, _) = &mut self.memo {
            if let Some((d, g)) = schedule::departure(chunk, *i) {
                *i += 1;
                // (`now` is the departure before: every caller emits at
                // the time the last emit gave)
                return Some((now + d, g));
            }
            return self.next_chunk(now);
        }
        // one call site, so that the shape's solve stays inlined
        let n = self
            .shape
            .next_departure(self.nominal, self.packet_size as f64 * 8.0)?;
        Some(self.sent(n, now))
    }

    /// The departure at nominal time `n`, after the one at `now`: its time
    /// (jittered, on the grid, never before `now`) and gap in seconds.
    #[inline(always)]
    fn sent(&mut self, n: SimTime, now: SimTime) -> (SimTime, f64) {
        self.nominal = n;
        let t = (n + self.jitter()).max(now);
        let t = self.on_grid(t);
        (t, Order::delay_s(now, t))
    }

    /// The chunk read is done: the next departure, the first of the
    /// schedule's next chunk, or the first the source solves alone when the
    /// schedule cannot go on (`Next::Alone`).
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self, now: SimTime) -> Option<(SimTime, f64)> {
        let Memo::Shared(s, chunk, i, next) = &mut self.memo else {
            unreachable!("called on a shared schedule")
        };
        match s.chunk(*next) {
            Next::Chunk(c) => {
                *next += 1;
                *chunk = c;
                *i = 1;
                let (d, g) = schedule::departure(chunk, 0).expect("a chunk is never empty");
                Some((now + d, g))
            }
            Next::End => None,
            Next::Alone(shape, n) => {
                self.memo = Memo::Off;
                self.shape = shape;
                Some(self.sent(n, now))
            }
        }
    }
}

/// Every departure time of `src` started at `start` and stopped at `stop`:
/// the first packet leaves at the start (plus jitter), each next one when
/// the shape's integral since the previous reaches its size — exactly what
/// the simulator does, through the same code (the ns-2 export plays these
/// times from a trace file).
pub fn departures(mut src: UdpSource, start: SimTime, stop: SimTime) -> Vec<SimTime> {
    let mut out = Vec::new();
    let mut t = src.first_departure(start);
    while t < stop {
        out.push(t);
        match src.emit(t).1 {
            Some(n) => t = n,
            None => break,
        }
    }
    out
}
