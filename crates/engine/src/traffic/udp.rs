//! A UDP source sending fixed-size packets paced by a rate shape, and its
//! sink, which only counts.

use std::sync::Arc;

use super::schedule::{self, Found, Schedule};
use super::shape::Shape;
use crate::net::packet::{Kind, Packet};
use crate::rng::{stream, Rng};
use crate::time::{ns_f64, SimTime};

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
    /// A schedule an earlier run of this process recorded, and how many of
    /// its departures have been taken.
    Replay(Arc<Schedule>, usize),
    /// Solved by the shape and recorded: the schedule's key, the departures'
    /// gaps, and whether the shape has given its last.
    Record(Vec<u64>, Vec<f64>, bool),
    /// Solved by the shape (a shape whose schedules are not kept, a
    /// jittered source).
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
        match self.grid_origin {
            // (`div_ceil` as a rounded-up quotient: one multiplication by
            // the reciprocal instead of the quotient, its remainder and a
            // test; exact while t - o + 999 fits, as a run's times do)
            Some(o) if t > o => o + (t - o + 999) / 1_000 * 1_000,
            _ => t,
        }
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
        self.memo = match key {
            Some(key) => match schedule::find(&key) {
                Found::Replay(s) => Memo::Replay(s, 0),
                Found::Record => Memo::Record(key, Vec::new(), false),
                Found::Solve => Memo::Off,
            },
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

    /// The departure after the one at `now`, and its gap in seconds:
    /// replayed, or solved (and recorded).
    #[inline]
    fn next_departure(&mut self, now: SimTime) -> Option<(SimTime, f64)> {
        if let Memo::Replay(s, i) = &mut self.memo {
            if let Some((d, g)) = s.departure(*i) {
                *i += 1;
                // (`now` is the departure before: every caller emits at
                // the time the last emit gave)
                return Some((now + d, g));
            }
            self.past_the_replay()?;
        }
        // one call site, so that the shape's solve stays inlined
        let Some(n) = self
            .shape
            .next_departure(self.nominal, self.packet_size as f64 * 8.0)
        else {
            if let Memo::Record(_, _, ended) = &mut self.memo {
                *ended = true;
            }
            return None;
        };
        self.nominal = n;
        let t = (n + self.jitter()).max(now);
        let t = self.on_grid(t);
        let g = ns_f64(t - now) / 1e9;
        if let Memo::Record(_, gaps, _) = &mut self.memo {
            gaps.push(g);
            if schedule::ns_of(g) != t - now {
                // a gap whose time would not come back exactly: not kept
                self.memo = Memo::Off;
            }
        }
        Some((t, g))
    }

    /// The replay ran out: the shape as it was after the schedule's last
    /// departure goes on, and this run records the longer schedule (None if
    /// that shape had no more).
    #[cold]
    fn past_the_replay(&mut self) -> Option<()> {
        let Memo::Replay(s, _) = std::mem::replace(&mut self.memo, Memo::Off) else {
            unreachable!("called on a replay")
        };
        self.shape = s.after.clone()?;
        self.nominal = s.nominal;
        self.memo = Memo::Record(s.key().to_vec(), s.gaps().to_vec(), false);
        Some(())
    }
}

impl Drop for UdpSource {
    /// A recorded schedule is kept for the next run of this process.
    fn drop(&mut self) {
        if let Memo::Record(key, gaps, ended) = std::mem::replace(&mut self.memo, Memo::Off) {
            let after = (!ended).then(|| self.shape.clone());
            schedule::keep(key, gaps, self.nominal, after);
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
