//! A link: a serializer at `rate_bps`, a buffer governed by a queue
//! discipline, and a constant propagation delay.
//!
//! Because service is FIFO at a constant rate, a packet's whole future on the
//! link is known when it is admitted: it starts transmission when the
//! serializer frees up, finishes `size / rate` later, and reaches the next hop
//! `delay` after that. So the link keeps one FIFO of (arrival at next hop,
//! packet) and needs ONE pending event — for the head of that FIFO — however
//! many packets it holds. Occupancy of the buffer at time t is the number of
//! admitted packets whose transmission starts after t, kept in a second small
//! FIFO of start times.

use super::packet::{Packet, CE, ECT};
use super::queue::Queue;
use super::ring::Ring;
use crate::rng::Rng;
use crate::sched::Order;
use crate::time::{tx_time_ns, SimTime};

/// (What every admission writes first: they share a cache line with the
/// transmission-time cache, see [`Link`].)
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct LinkCounters {
    /// Every arrival: admitted or lost (so the admitted are `arrivals -
    /// drops`, [`LinkCounters::admitted`], not counted apart).
    pub arrivals: u64,
    /// Serializer time of every admitted packet.
    pub busy_ns: u64,
    /// Every loss: the queue's drops and the impairment's losses.
    pub drops: u64,
    /// Losses to the link's impairment (included in `drops`).
    pub errors: u64,
}

impl LinkCounters {
    /// Arrivals admitted (every arrival not lost: an arrival is counted
    /// once, and a loss once, both in [`Link::admit`]).
    #[inline]
    pub fn admitted(&self) -> u64 {
        self.arrivals - self.drops
    }
}

/// Random losses on a link, decided as a packet arrives (before the queue).
pub enum Impairment {
    None,
    /// Each packet is lost with probability `per`.
    Bernoulli {
        per: f64,
        rng: Rng,
    },
    /// Gilbert–Elliott: per arriving packet, first a Markov step (good → bad
    /// with `p_gb`, bad → good with `p_bg`), then a loss with the new
    /// state's probability — the order of ns-2's `ErrorModel/MultiState`.
    /// Starts in the good state.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        per_good: f64,
        per_bad: f64,
        bad: bool,
        rng: Rng,
    },
    /// Deterministic: the arrivals numbered in `drops` (sorted) are lost.
    List {
        drops: Box<[u64]>,
        /// Index in `drops` of the next loss.
        next: usize,
        /// Arrivals so far.
        count: u64,
    },
}

impl Impairment {
    /// Is the packet arriving now lost?
    #[inline]
    fn loses(&mut self) -> bool {
        match self {
            Impairment::None => false,
            Impairment::Bernoulli { per, rng } => rng.uniform() < *per,
            Impairment::GilbertElliott {
                p_gb,
                p_bg,
                per_good,
                per_bad,
                bad,
                rng,
            } => {
                let u = rng.uniform();
                *bad = if *bad { u >= *p_bg } else { u < *p_gb };
                let per = if *bad { *per_bad } else { *per_good };
                per >= 1.0 || (per > 0.0 && rng.uniform() < per)
            }
            Impairment::List { drops, next, count } => {
                let lost = drops.get(*next) == Some(count);
                *next += lost as usize;
                *count += 1;
                lost
            }
        }
    }
}

/// A link's outage state: the schedule and the interval it is in or waits for.
struct Outages {
    schedule: Box<dyn Iterator<Item = (SimTime, SimTime)> + Send>,
    /// End of the current (or next) outage.
    until: SimTime,
}

/// A link direction. Laid out by what a packet touches (`repr(C)`, cache
/// lines of 64 bytes): everything a plain DropTail link's crossing reads or
/// writes is in the first three lines — the first what a delivery reads
/// (the delay line, the pending flag) and an admission's time checks; the
/// second the counters and the transmission time of the last packet size,
/// then the waiting list and the ns-2 order of the last start, into the
/// third. What only other disciplines, impairments, outages and snapshots
/// read comes after, from the third line on. At 10^4 flows (four links each) a crossing misses the cache on
/// every line it touches; the fields used to be spread over seven or eight
/// lines, then four.
#[repr(C, align(64))]
pub struct Link {
    // line 0
    /// Every admitted packet not yet at the next hop, with its arrival time
    /// there and the [`Order`] of that arrival (see [`Link::admit`]).
    pipe: Ring<(SimTime, Order, Packet)>,
    /// The serializer is busy until this time.
    busy_until: SimTime,
    pub delay_ns: SimTime,
    /// The first of `marks` (what an admission compares with).
    first_mark: SimTime,
    /// The packet size whose transmission times are `tx_ns`, `tx_txt` and
    /// `tx_txt_delay` (the last size seen; the one before is `tx_spare`).
    tx_bytes: u32,
    /// A delivery event for this link is in the event queue.
    delivery_pending: bool,
    /// The link is not a plain DropTail FIFO: it has outages, an
    /// impairment or another discipline, and its arrivals take
    /// [`Link::special_admit`]; a plain link's admission is one compare
    /// against `limit` (see [`Link::update_special`]).
    special: bool,
    /// The link has an impairment (`impairment` is not `None`).
    impaired: bool,
    /// A plain link's DropTail limit (the discipline's, copied here beside
    /// the fields an admission reads).
    limit: u32,
    // line 1
    pub counters: LinkCounters,
    /// [`Tx::ns`] and [`Tx::txt`] of `tx_bytes`.
    tx_ns: SimTime,
    tx_txt: f64,
    // lines 1 and 2
    /// Admitted packets still waiting: when each starts, its size, and the
    /// [`Order`] of the event that starts it (see [`Link::waiting`]).
    waiting: Ring<Waiting>,
    /// The [`Order`] of the event that starts the last packet admitted (it
    /// may still wait), and its transmission time as ns-2 computes it (a
    /// double): ns-2 schedules the start of the next packet (the queue's
    /// resume) in that event, that much later (see [`Link::waiting`]).
    last: (Order, f64),
    /// [`Tx::txt_delay`] of `tx_bytes`.
    tx_txt_delay: f64,
    // cold
    pub queue: Queue,
    /// Arrivals from this time on are checked against the outage schedule
    /// (the next outage's start; `SimTime::MAX` on a link without outages,
    /// so such a link pays one predictable branch per packet). Read only by
    /// a link that is `special`.
    down_from: SimTime,
    /// The transmission times of the size seen before `tx_bytes` (a link
    /// carries one or two sizes: data, acks).
    tx_spare: Tx,
    /// The instants counters are snapshot at (warm-up, end), earliest first;
    /// `SimTime::MAX` for none (see [`Link::set_marks`]).
    marks: [SimTime; 2],
    pub rate_bps: f64,
    /// The delay in seconds as ns-2 has it (a double).
    delay_s: f64,
    /// Per mark, what was admitted before the snapshot but belongs after the
    /// mark (a packet handed on at a future instant).
    late: [Late; 2],
    outages: Option<Box<Outages>>,
    impairment: Impairment,
}

/// An idle link keeps at most this many slots in each ring, unless the ring
/// has more than [`RING_RELEASED`] (see [`Link::release_idle`]).
const RING_KEPT: usize = 32;

/// Rings larger than this are kept even when empty: they belong to links
/// many flows share (few of them), and a buffer of this size is mapped
/// from the system afresh each time, so giving it back and growing it again
/// at every drain of a shared queue costs page faults (+15-20 % CPU at 10
/// flows, measured).
const RING_RELEASED: usize = 1024;

/// A packet waiting in the buffer.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    /// When its transmission starts.
    start: SimTime,
    /// The [`Order`] of the event that starts it: the queue's resume that
    /// the previous packet's start scheduled (computed at admission, where
    /// the chain of starts is known).
    order: Order,
    bytes: u32,
}

/// A packet size's transmission time: in integer nanoseconds, and as ns-2
/// computes it (`LinkDelay::txtime`, a double), alone and plus the link's
/// delay (the two sums ns-2 schedules with).
#[derive(Clone, Copy, Debug)]
struct Tx {
    bytes: u32,
    ns: SimTime,
    /// `8 · bytes / rate`, seconds.
    txt: f64,
    /// `txt + delay`, seconds.
    txt_delay: f64,
}

impl Tx {
    fn new(bytes: u32, rate_bps: f64, delay_s: f64) -> Tx {
        let txt = 8.0 * bytes as f64 / rate_bps;
        Tx {
            bytes,
            ns: tx_time_ns(bytes, rate_bps),
            txt,
            txt_delay: txt + delay_s,
        }
    }
}

/// The order of the resume that a start of order `o`, sending for `txt`
/// seconds, schedules (ns-2's `LinkDelay::recv`: `schedule(h, &intr_, txt)`).
#[inline]
fn resume((o, txt): (Order, f64)) -> Order {
    o.then(txt)
}

/// Counts that belong after a snapshot instant though they were made before
/// it: arrivals at later instants, transmissions starting later, the part of
/// a transmission after it.
#[derive(Clone, Copy, Debug, Default)]
struct Late {
    arrivals: u64,
    drops: u64,
    errors: u64,
    started: u64,
    busy_ns: u64,
}

/// A link's cumulative counters at one instant; results over a window are
/// the difference of two snapshots.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkSnapshot {
    pub arrivals: u64,
    pub drops: u64,
    pub errors: u64,
    /// Packets whose transmission ended by then.
    pub sent_packets: u64,
    /// Serializer time used by then.
    pub busy_ns: u64,
}

/// Why a packet was lost (the `cause` column of the drops trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropCause {
    /// The buffer was full (DropTail, or a discipline's hard limit).
    Overflow = 0,
    /// RED's early drop.
    Red = 1,
    /// Paper C's threshold dropper.
    Threshold = 2,
    /// A random error model (Bernoulli, Gilbert–Elliott).
    Error = 3,
    /// The link was down (a handoff or outage).
    Outage = 4,
}

impl DropCause {
    /// Names in code order, as the drops trace reports them.
    pub const NAMES: [&'static str; 5] = ["overflow", "red", "threshold", "error", "outage"];
}

/// What happened to an arrival.
pub enum Admit {
    /// Lost, and why.
    Dropped(DropCause),
    /// Admitted; `schedule` is Some((t, cause)) when the link had no pending
    /// delivery event and one must be scheduled at t. `wait` is Some(start)
    /// when it waits in the buffer until `start`.
    Admitted {
        schedule: Option<(SimTime, Order)>,
        wait: Option<SimTime>,
    },
}

/// An admitted packet: when it reaches the next hop, the [`Order`] of that
/// arrival, and Some(start) if it waits in the buffer until `start`.
pub type Admitted = (SimTime, Order, Option<SimTime>);

impl Link {
    pub fn new(rate_bps: f64, delay_ns: SimTime, queue: Queue) -> Self {
        let delay_s = delay_ns as f64 / 1e9;
        let data = Tx::new(1000, rate_bps, delay_s);
        let mut link = Link {
            pipe: Ring::default(),
            busy_until: 0,
            delay_ns,
            first_mark: SimTime::MAX,
            tx_bytes: data.bytes,
            delivery_pending: false,
            special: true, // (`update_special` below)
            impaired: false,
            limit: match queue {
                Queue::DropTail { limit } => limit,
                _ => 0,
            },
            counters: LinkCounters::default(),
            tx_ns: data.ns,
            tx_txt: data.txt,
            waiting: Ring::default(),
            last: (Order::default(), 0.0),
            tx_txt_delay: data.txt_delay,
            queue,
            down_from: SimTime::MAX,
            tx_spare: Tx::new(40, rate_bps, delay_s),
            marks: [SimTime::MAX; 2],
            rate_bps,
            delay_s,
            late: [Late::default(); 2],
            outages: None,
            impairment: Impairment::None,
        };
        link.update_special();
        link
    }

    /// Lose packets on arrival as `impairment` decides.
    pub fn set_impairment(&mut self, impairment: Impairment) {
        self.impaired = !matches!(impairment, Impairment::None);
        self.impairment = impairment;
        self.update_special();
    }

    /// Decide whether arrivals take [`Link::special_admit`] (after a change
    /// of impairment or outages; the discipline is the one `new` was given).
    fn update_special(&mut self) {
        self.special = self.impaired
            || self.outages.is_some()
            || !matches!(self.queue, Queue::DropTail { .. });
    }

    /// The instants [`Link::snapshot`] will be asked for, in order (a run's
    /// warm-up and end). A link hands packets on to the next link at the
    /// instant they reach it, which may be after the simulator's now: such
    /// arrivals, drops and transmissions are set aside per mark, so a snapshot
    /// at a mark counts exactly what happened before it.
    pub fn set_marks(&mut self, first: SimTime, second: SimTime) {
        self.marks = [first.min(second), first.max(second)];
        self.first_mark = self.marks[0];
    }

    /// Set aside an arrival at `now`, and its transmission [start, end) if it
    /// was admitted, for every mark it falls after (rare: only near a mark).
    #[cold]
    #[inline(never)]
    fn count_late(
        &mut self,
        now: SimTime,
        admitted: Option<(SimTime, SimTime)>,
        cause: Option<DropCause>,
    ) {
        for (m, late) in self.marks.iter().zip(self.late.iter_mut()) {
            if now > *m {
                late.arrivals += 1;
                if let Some(c) = cause {
                    late.drops += 1;
                    late.errors += matches!(c, DropCause::Error | DropCause::Outage) as u64;
                }
            }
            if let Some((start, end)) = admitted {
                if start > *m {
                    late.started += 1;
                }
                if end > *m {
                    late.busy_ns += end - start.max(*m);
                }
            }
        }
    }

    /// Take the link down on `schedule`'s outages, [start, end) merged and
    /// increasing (a plan's list, or a lazy `OutageSchedule`; see
    /// [`Link::outage_loses`]).
    pub fn set_outages(
        &mut self,
        mut schedule: Box<dyn Iterator<Item = (SimTime, SimTime)> + Send>,
    ) {
        let (from, until) = schedule.next().unwrap_or((SimTime::MAX, SimTime::MAX));
        self.down_from = from;
        self.outages = Some(Box::new(Outages { schedule, until }));
        self.update_special();
    }

    /// Is a packet arriving at `now` lost to an outage? It is if it arrives
    /// while the link is down, or if it would still be on the link (waiting,
    /// in transmission or propagating) when the next outage begins: ns-2's
    /// dynamic link drops its queue and everything in transit as it goes
    /// down (`Link down` resets every connector), and so does this one —
    /// decided at arrival, because the link's FIFO future is known then.
    /// Arrivals behind a packet lost that way are lost too (FIFO). A lost
    /// packet never occupies the serializer, so the link is idle when it
    /// comes back up. Called only when `now` may be affected (see `down_from`).
    #[cold]
    #[inline(never)]
    fn outage_loses(&mut self, bytes: u32, now: SimTime) -> bool {
        let Some(o) = self.outages.as_mut() else {
            return false;
        };
        while now >= o.until {
            let (f, u) = o.schedule.next().unwrap_or((SimTime::MAX, SimTime::MAX));
            self.down_from = f;
            o.until = u;
        }
        if now >= self.down_from {
            return true;
        }
        let tx = self.tx(bytes).ns;
        if self
            .busy_until
            .max(now)
            .saturating_add(tx)
            .saturating_add(self.delay_ns)
            > self.down_from
        {
            // still on the link when it goes down: lost, and so is every later arrival
            self.down_from = now;
            return true;
        }
        false
    }

    /// The transmission times of `bytes` (cached for the two last sizes:
    /// the last one's in the lines a crossing reads anyway).
    #[inline]
    fn tx(&mut self, bytes: u32) -> Tx {
        if self.tx_bytes == bytes {
            return Tx {
                bytes,
                ns: self.tx_ns,
                txt: self.tx_txt,
                txt_delay: self.tx_txt_delay,
            };
        }
        self.tx_other(bytes)
    }

    /// [`Link::tx`] of a size other than the last: the spare's, or
    /// computed; it becomes the last, and the last the spare. (The values
    /// depend only on the size, so what is cached where changes nothing.)
    #[cold]
    #[inline(never)]
    fn tx_other(&mut self, bytes: u32) -> Tx {
        let t = if self.tx_spare.bytes == bytes {
            self.tx_spare
        } else {
            Tx::new(bytes, self.rate_bps, self.delay_s)
        };
        self.tx_spare = Tx {
            bytes: self.tx_bytes,
            ns: self.tx_ns,
            txt: self.tx_txt,
            txt_delay: self.tx_txt_delay,
        };
        self.tx_bytes = t.bytes;
        self.tx_ns = t.ns;
        self.tx_txt = t.txt;
        self.tx_txt_delay = t.txt_delay;
        t
    }

    /// Packets waiting in the buffer at `now` (not counting the one in
    /// transmission), as an arrival of order `arriving` finds it (None: no
    /// arrival, a packet that starts at `now` has started).
    ///
    /// A tie — the arrival at the instant the next waiting packet starts — is
    /// decided as ns-2 decides it (see [`crate::sched`]): the arrival was
    /// scheduled when the link it comes from started sending it
    /// (`LinkDelay::recv`; a packet from an agent, in the event the agent
    /// sends in), the queue's resume that starts the next packet when the
    /// current one started (the waiting packet's `order`), each in ns-2's
    /// double clock. The one of smaller [`Order`] goes first; a full tie,
    /// the departure.
    #[inline]
    pub fn waiting(&mut self, now: SimTime, arriving: Option<Order>) -> usize {
        while let Some(w) = self.waiting.front() {
            if w.start < now || (w.start == now && !arriving.is_some_and(|o| o < w.order)) {
                self.waiting.pop_front();
            } else {
                break;
            }
        }
        self.waiting.len()
    }

    /// A packet arrives at the link's input at `now`, in an event of order
    /// `order`: the queue discipline decides; if admitted, the packet's start
    /// of transmission and its arrival time at the next hop follow at once.
    /// Returns the cause if dropped, else the [`Admitted`] triple. The
    /// arrival at the next hop is ordered as ns-2 schedules it: by the event
    /// that starts the packet — the arriving one if the link is idle, else
    /// the resume the previous packet's start scheduled — transmission time
    /// plus delay later.
    #[inline(always)]
    fn admit(
        &mut self,
        pkt: &mut Packet,
        now: SimTime,
        order: Order,
    ) -> Result<Admitted, DropCause> {
        self.counters.arrivals += 1;
        let must_wait = self.busy_until > now;
        let ends_now = self.busy_until == now;
        if self.special {
            if let Err(why) = self.special_admit(pkt, now, must_wait, order) {
                return Err(self.dropped(now, why));
            }
        } else if must_wait && self.waiting(now, Some(order)) >= self.limit as usize {
            return Err(self.dropped(now, DropCause::Overflow));
        }
        let Tx {
            ns: tx,
            txt,
            txt_delay,
            ..
        } = self.tx(pkt.size_bytes);
        let start = self.busy_until.max(now);
        // saturating: a link slower than the run is long stays busy "forever"
        let end = start.saturating_add(tx);
        self.busy_until = end;
        self.counters.busy_ns += tx;
        let wait = if start > now {
            let order = resume(self.last);
            self.waiting.push_back(Waiting {
                start,
                order,
                bytes: pkt.size_bytes,
            });
            self.last = (order, txt);
            Some(start)
        } else {
            // Every packet admitted before has started. If the last one ends
            // now, ns-2's link is still blocked until its resume runs: an
            // arrival before that resume is queued, and the resume starts it.
            self.waiting.clear();
            let r = resume(self.last);
            let by = if ends_now && order < r { r } else { order };
            self.last = (by, txt);
            None
        };
        if end > self.first_mark {
            self.count_late(now, Some((start, end)), None);
        }
        let next = self.last.0.then(txt_delay);
        Ok((end.saturating_add(self.delay_ns), next, wait))
    }

    /// The admission of a link that is not a plain DropTail FIFO: outages,
    /// then the impairment, then the discipline (in that order: the
    /// impairment's and RED's random draws depend on it).
    #[inline(never)]
    fn special_admit(
        &mut self,
        pkt: &mut Packet,
        now: SimTime,
        must_wait: bool,
        order: Order,
    ) -> Result<(), DropCause> {
        if self.down_from != SimTime::MAX && self.outage_loses(pkt.size_bytes, now) {
            return Err(DropCause::Outage);
        }
        if self.impaired && self.impairment.loses() {
            return Err(DropCause::Error);
        }
        if matches!(self.queue, Queue::DropTail { .. }) {
            if must_wait && self.waiting(now, Some(order)) >= self.limit as usize {
                return Err(DropCause::Overflow);
            }
            Ok(())
        } else {
            self.managed_admit(pkt, now, must_wait, order)
        }
    }

    /// Count a loss of an arrival at `now`.
    #[inline]
    fn dropped(&mut self, now: SimTime, cause: DropCause) -> DropCause {
        self.counters.drops += 1;
        if matches!(cause, DropCause::Error | DropCause::Outage) {
            self.counters.errors += 1;
        }
        if now > self.first_mark {
            self.count_late(now, None, Some(cause));
        }
        cause
    }

    /// RED and the threshold dropper see every arrival, including those to
    /// an idle link (RED's average decays over idle time).
    fn managed_admit(
        &mut self,
        pkt: &mut Packet,
        now: SimTime,
        must_wait: bool,
        order: Order,
    ) -> Result<(), DropCause> {
        // (pops the packets that have started, so the deque is what waits)
        let waiting = self.waiting(now, Some(order));
        match &mut self.queue {
            Queue::DropTail { .. } => Ok(()),
            Queue::Red(red) => {
                let idle = if must_wait {
                    None
                } else {
                    Some(now - self.busy_until)
                };
                let bytes = if red.counts_bytes() {
                    self.waiting.iter().map(|w| w.bytes as u64).sum()
                } else {
                    0
                };
                match red.arrive(waiting, bytes, idle, pkt.size_bytes) {
                    // RFC 3168 §5 (ns-2's setbit_): an ECN-capable packet is
                    // marked instead of dropped early; a full buffer drops
                    Err(DropCause::Red) if red.ecn && pkt.ecn & ECT != 0 => {
                        pkt.ecn |= CE;
                        red.marks += 1;
                        Ok(())
                    }
                    r => r,
                }
            }
            Queue::Threshold(t) => t.arrive(waiting, pkt.flow, now),
        }
    }

    /// A packet arrives at `now`, in an event scheduled at `now` (after any
    /// departure of the same instant), and stays on the link until it
    /// reaches the next hop, which needs an event then.
    #[inline]
    pub fn arrive(&mut self, pkt: Packet, now: SimTime) -> Admit {
        let at = (crate::time::ns_f64(now) / 1e9).to_bits();
        let order = Order {
            clock: at,
            cause: [at, at],
        };
        self.arrive_ordered(pkt, now, order)
    }

    /// [`Link::arrive`] in an event of order `order` (a tie with a departure
    /// depends on it: `waiting`).
    #[inline]
    pub fn arrive_ordered(&mut self, mut pkt: Packet, now: SimTime, order: Order) -> Admit {
        match self.admit(&mut pkt, now, order) {
            Err(why) => Admit::Dropped(why),
            Ok((at, next, wait)) => Admit::Admitted {
                schedule: self.hold(pkt, at, next),
                wait,
            },
        }
    }

    /// A packet arrives at `now` and is handed straight on: the caller
    /// admits it to the next link at the returned arrival time, without an
    /// event. Valid when that next link has this link as its only input —
    /// this link's output is FIFO, so the next link still sees its arrivals
    /// in time order. Returns the cause if dropped, else [`Admitted`].
    #[inline]
    pub fn pass(
        &mut self,
        pkt: &mut Packet,
        now: SimTime,
        order: Order,
    ) -> Result<Admitted, DropCause> {
        self.admit(pkt, now, order)
    }

    /// Keep an admitted packet until it reaches the next hop at `at`, by an
    /// arrival of order `order`. Returns the time (and order) a delivery
    /// event must be scheduled for, if the link has none pending (then it has
    /// one from now on).
    #[inline]
    pub fn hold(&mut self, pkt: Packet, at: SimTime, order: Order) -> Option<(SimTime, Order)> {
        self.pipe.push_back((at, order, pkt));
        if self.delivery_pending {
            return None;
        }
        self.delivery_pending = true;
        self.next_delivery_caused()
    }

    /// Prefetch hint (no effect on results): the delay line's front slot,
    /// what this link's next delivery reads first.
    #[inline(always)]
    pub fn prefetch_front(&self) {
        if !self.pipe.is_empty() {
            crate::sched::prefetch(self.pipe.front_ptr());
        }
    }

    /// Prefetch hint (no effect on results): the three lines a crossing of
    /// the link at `link` reads (the layout above). A pointer, not a
    /// reference: a hint needs no bounds check, and reads nothing.
    #[inline(always)]
    pub fn prefetch_crossing(link: *const Link) {
        let p = link as *const u8;
        crate::sched::prefetch(p);
        crate::sched::prefetch(p.wrapping_add(64));
        crate::sched::prefetch(p.wrapping_add(128));
    }

    /// The packet `k` places behind the front of the delay line, if any
    /// (for prefetching what its delivery will touch).
    #[inline(always)]
    pub fn ahead(&self, k: u32) -> Option<&Packet> {
        self.pipe.get(k).map(|e| &e.2)
    }

    /// The link's delivery event fired: what arrives now is popped, and
    /// [`Link::delivered`] tells when the next event is due. Packets the
    /// delivered ones cause to come back to this link (a chain of hops from
    /// the sender through the receiver and back) schedule it themselves.
    #[inline]
    pub fn delivering(&mut self) {
        self.delivery_pending = false;
    }

    /// After [`Link::delivering`] and the pops: the time of the next delivery
    /// event to schedule, if one is needed and not already pending.
    #[inline]
    pub fn delivered(&mut self) -> Option<(SimTime, Order)> {
        if self.delivery_pending {
            return None;
        }
        let next = self.next_delivery_caused();
        self.delivery_pending = next.is_some();
        if next.is_none() {
            self.pipe.rewind();
            if self.pipe.capacity() > RING_KEPT {
                self.release_idle();
            }
        }
        next
    }

    /// Give back the slots of empty rings larger than [`RING_KEPT`] (and
    /// not larger than [`RING_RELEASED`]): at 10^4 flows the access links'
    /// delay lines, doubled by slow-start bursts and never used at that size
    /// again, were half the run's memory. Called when the delay line empties.
    #[cold]
    #[inline(never)]
    fn release_idle(&mut self) {
        let idle = |len: usize, cap: usize| len == 0 && RING_KEPT < cap && cap <= RING_RELEASED;
        if idle(self.pipe.len(), self.pipe.capacity()) {
            self.pipe.release();
        }
        if idle(self.waiting.len(), self.waiting.capacity()) {
            self.waiting.release();
        }
    }

    /// The head packet, its arrival time at the next hop and that arrival's
    /// order, if it arrives by `now`.
    #[inline]
    pub fn pop_arrived(&mut self, now: SimTime) -> Option<(SimTime, Order, Packet)> {
        match self.pipe.front() {
            Some(&(at, _, _)) if at <= now => self.pipe.pop_front(),
            _ => None,
        }
    }

    /// The counters at `now` (what a report subtracts at warm-up and at the end).
    /// At a mark (see [`Link::set_marks`]) exact; the mark is then used up.
    pub fn snapshot(&mut self, now: SimTime) -> LinkSnapshot {
        if now == self.marks[0] {
            let late = self.late[0];
            let c = &self.counters;
            let snap = LinkSnapshot {
                arrivals: c.arrivals - late.arrivals,
                drops: c.drops - late.drops,
                errors: c.errors - late.errors,
                sent_packets: c.admitted() - late.started,
                busy_ns: c.busy_ns - late.busy_ns,
            };
            self.marks = [self.marks[1], SimTime::MAX];
            self.first_mark = self.marks[0];
            self.late = [self.late[1], Late::default()];
            return snap;
        }
        LinkSnapshot {
            arrivals: self.counters.arrivals,
            drops: self.counters.drops,
            errors: self.counters.errors,
            sent_packets: self.sent_packets_until(now),
            busy_ns: self.busy_ns_until(now),
        }
    }

    /// The head packet, its arrival time at the next hop and that arrival's
    /// order, whenever it arrives (`Sim`'s senders take acks ahead of the
    /// clock: `drain_to_senders`).
    #[inline]
    pub fn front(&self) -> Option<&(SimTime, Order, Packet)> {
        self.pipe.front()
    }

    /// Pop the head packet (after [`Link::front`]).
    #[inline]
    pub fn pop_front(&mut self) -> Option<(SimTime, Order, Packet)> {
        self.pipe.pop_front()
    }

    /// When the next delivery is due, if any packet is on the link.
    #[inline]
    pub fn next_delivery(&self) -> Option<SimTime> {
        self.pipe.front().map(|&(at, _, _)| at)
    }

    /// [`Link::next_delivery`] with the arrival's order.
    #[inline]
    fn next_delivery_caused(&self) -> Option<(SimTime, Order)> {
        self.pipe.front().map(|&(at, c, _)| (at, c))
    }

    /// Serializer time spent up to `now` (exact: the serializer's busy periods
    /// are known once packets are admitted).
    pub fn busy_ns_until(&self, now: SimTime) -> u64 {
        self.counters.busy_ns - self.busy_until.saturating_sub(now)
    }

    /// Packets whose transmission has started by `now` (one starting at
    /// `now` included).
    pub fn sent_packets_until(&mut self, now: SimTime) -> u64 {
        self.counters.admitted() - self.waiting(now, None) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;

    fn pkt(seq: u32) -> Packet {
        Packet::new(Kind::Data, 0, seq, 1000)
    }

    #[test]
    fn packets_leave_at_line_rate_after_the_delay() {
        // 1 Mb/s: a 1000-byte packet takes 8 ms; delay 5 ms.
        let mut l = Link::new(1e6, 5_000_000, Queue::droptail(10));
        assert!(matches!(
            l.arrive(pkt(0), 0),
            Admit::Admitted {
                schedule: Some((13_000_000, _)),
                wait: None
            }
        ));
        assert!(matches!(
            l.arrive(pkt(1), 0),
            Admit::Admitted {
                schedule: None,
                wait: Some(8_000_000)
            }
        ));
        assert_eq!(l.next_delivery(), Some(13_000_000));
        assert!(l.pop_arrived(12_999_999).is_none());
        assert_eq!(l.pop_arrived(13_000_000).unwrap().2.seq, 0);
        assert_eq!(l.next_delivery(), Some(21_000_000));
    }

    #[test]
    fn droptail_buffer_counts_waiting_packets_only() {
        // Buffer 2: one in transmission plus two waiting are admitted; the fourth is dropped.
        let mut l = Link::new(1e6, 0, Queue::droptail(2));
        for s in 0..3 {
            assert!(matches!(l.arrive(pkt(s), 0), Admit::Admitted { .. }));
        }
        assert!(matches!(l.arrive(pkt(3), 0), Admit::Dropped(_)));
        // After the first packet finishes (8 ms), one slot frees up.
        assert_eq!(l.waiting(8_000_000, None), 1);
        assert!(matches!(
            l.arrive(pkt(4), 8_000_000),
            Admit::Admitted { .. }
        ));
        assert_eq!(l.counters.drops, 1);
    }

    /// An event at ns-2 clock `clock` s, scheduled in an event at `sched` s.
    fn at(clock: f64, sched: f64) -> Order {
        Order {
            clock: clock.to_bits(),
            cause: [sched.to_bits(), 0],
        }
    }

    /// ns-2 runs events of equal time in the order they were scheduled, and
    /// keeps time in doubles. An arrival at the instant the next waiting
    /// packet starts was scheduled when its upstream link started sending it;
    /// the start, when the packet now in transmission started. Buffer 2 at
    /// 1 Mb/s: packets 0, 1, 2 arrive at 10 ms (0 sends, 1 and 2 wait); at
    /// 18 ms 1 starts, by a resume 0's start scheduled at 10 ms.
    #[test]
    fn a_tie_goes_to_whichever_ns2_runs_first() {
        let full = || {
            let mut l = Link::new(1e6, 0, Queue::droptail(2));
            for s in 0..3 {
                assert!(matches!(
                    l.arrive(pkt(s), 10_000_000),
                    Admit::Admitted { .. }
                ));
            }
            l
        };
        // scheduled at 5 ms, before the start: it finds 1 and 2 waiting and is dropped
        let mut l = full();
        assert!(matches!(
            l.arrive_ordered(pkt(3), 18_000_000, at(0.010 + 0.008, 0.005)),
            Admit::Dropped(_)
        ));
        // scheduled at 17.92 ms, after: 1 has left
        let mut l = full();
        assert!(matches!(
            l.arrive_ordered(pkt(3), 18_000_000, at(0.010 + 0.008, 0.01792)),
            Admit::Admitted { .. }
        ));
        // scheduled later, but its double clock is one bit below the start's
        // (0.010 + 0.008): it runs first
        let mut l = full();
        let below = f64::from_bits((0.010f64 + 0.008).to_bits() - 1);
        assert!(matches!(
            l.arrive_ordered(pkt(3), 18_000_000, at(below, 0.01792)),
            Admit::Dropped(_)
        ));
        // from an event scheduled at the instant: after the start
        let mut l = full();
        assert!(matches!(
            l.arrive_ordered(pkt(3), 18_000_000, at(0.010 + 0.008, 0.010 + 0.008)),
            Admit::Admitted { .. }
        ));
        // counters count a packet that starts at the instant as started
        let mut l = full();
        assert_eq!(l.sent_packets_until(18_000_000), 2);
    }

    /// The arrival at the next hop is ordered by the event that started the
    /// packet: the arriving one on an idle link; on a link whose last packet
    /// ends at the instant, the queue's resume if the arrival runs before it
    /// (ns-2's queue is still blocked: the packet waits for the resume).
    #[test]
    fn a_packet_is_started_by_the_event_ns2_starts_it_in() {
        let mut l = Link::new(1e6, 5_000_000, Queue::droptail(10));
        // the order of the arrival at the next hop of a packet admitted at once
        let mut next = |s: u32, ms: SimTime, o: Order| {
            l.pop_arrived(SimTime::MAX);
            l.delivering();
            match l.arrive_ordered(pkt(s), ms * 1_000_000, o) {
                Admit::Admitted {
                    schedule: Some((_, next)),
                    wait: None,
                } => next,
                _ => panic!("admitted at once"),
            }
        };
        let a = at(0.010, 0.001);
        assert_eq!(next(0, 10, a), a.then(0.008 + 0.005));
        // 18 ms: packet 0 ends; the resume is (0.010 + 0.008, scheduled at 0.010)
        let resume = a.then(0.008);
        let early = at(resume.clock(), 0.009);
        assert_eq!(next(1, 18, early), resume.then(0.008 + 0.005));
        // 26 ms: packet 1 ends; an arrival scheduled after the resume finds the link idle
        let late = at(resume.then(0.008).clock(), 0.025);
        assert_eq!(next(2, 26, late), late.then(0.008 + 0.005));
    }

    #[test]
    fn zero_buffer_admits_only_into_an_idle_serializer() {
        let mut l = Link::new(1e6, 0, Queue::droptail(0));
        assert!(matches!(l.arrive(pkt(0), 0), Admit::Admitted { .. }));
        assert!(matches!(l.arrive(pkt(1), 1), Admit::Dropped(_)));
        assert!(matches!(
            l.arrive(pkt(2), 8_000_000),
            Admit::Admitted { .. }
        ));
    }

    fn ge(p_gb: f64, p_bg: f64, per_good: f64, per_bad: f64) -> Impairment {
        Impairment::GilbertElliott {
            p_gb,
            p_bg,
            per_good,
            per_bad,
            bad: false,
            rng: Rng::stream(11, 2, 7),
        }
    }

    #[test]
    fn gilbert_elliott_loses_the_stationary_rate_in_bursts_of_one_over_p_bg() {
        // per_bad = 1, per_good = 0: losses are the bad state. π_bad =
        // p_gb/(p_gb+p_bg) = 0.0323. Consecutive packets are correlated
        // (ρ = 1 − p_gb − p_bg = 0.69), so σ of the rate over n = 4·10⁶ is
        // √(π(1−π)(1+ρ)/(1−ρ)/n) ≈ 0.00021; allow 4σ. ≈ 9 700 bursts with
        // geometric lengths (σ = √(1−p_bg)/p_bg = 2.79): σ of the mean burst
        // ≈ 0.028; allow 4σ.
        let (p_gb, p_bg) = (0.01, 0.3);
        let mut imp = ge(p_gb, p_bg, 0.0, 1.0);
        let n = 4_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = imp.loses();
            lost += l as u64;
            bursts += (l && !prev) as u64;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        let pi_bad = p_gb / (p_gb + p_bg);
        assert!((rate - pi_bad).abs() < 4.0 * 0.00021, "{rate} vs {pi_bad}");
        let mean_burst = lost as f64 / bursts as f64;
        assert!(
            (mean_burst - 1.0 / p_bg).abs() < 4.0 * 0.028,
            "{mean_burst}"
        );
    }

    #[test]
    fn a_loss_list_loses_exactly_the_listed_arrivals() {
        let mut l = Link::new(1e9, 0, Queue::droptail(100));
        l.set_impairment(Impairment::List {
            drops: vec![0, 3, 4, 9].into_boxed_slice(),
            next: 0,
            count: 0,
        });
        let lost: Vec<u32> = (0..12u32)
            .filter(|&i| {
                let mut p = Packet::new(Kind::Data, 0, i, 1000);
                l.admit(&mut p, i as SimTime * 1_000_000, Order::default()) == Err(DropCause::Error)
            })
            .collect();
        assert_eq!(lost, [0, 3, 4, 9]);
        assert_eq!((l.counters.arrivals, l.counters.errors), (12, 4));
    }

    #[test]
    fn gilbert_elliott_with_noisy_states_loses_the_stationary_mix() {
        // loss = π_good·per_good + π_bad·per_bad = 0.0171; σ ≈ 1.2e-4 (state
        // correlation plus the per-packet coin); allow 4σ.
        let mut imp = ge(0.01, 0.3, 0.001, 0.5);
        let n = 4_000_000;
        let lost = (0..n).filter(|_| imp.loses()).count();
        let rate = lost as f64 / n as f64;
        let bad = 0.01 / (0.01 + 0.3);
        let expected = (1.0 - bad) * 0.001 + bad * 0.5;
        assert!((rate - expected).abs() < 4.0 * 1.2e-4, "{rate}");
    }

    #[test]
    fn an_outage_loses_arrivals_and_what_is_still_on_the_link() {
        use crate::net::outage::OutageSchedule;
        use crate::plan::{OutageDistribution, OutagePlan};
        // 1 Mb/s (8 ms per packet), 5 ms delay; down over [20, 30) ms.
        let mut l = Link::new(1e6, 5_000_000, Queue::droptail(10));
        let spec = OutagePlan {
            start_ns: 0,
            every_ns: None,
            at_ns: vec![20_000_000],
            duration_ns: 10_000_000,
            distribution: OutageDistribution::Fixed,
        };
        l.set_outages(Box::new(OutageSchedule::new(
            &spec,
            Rng::stream(1, 3, 0),
            SimTime::MAX,
        )));
        let ms = 1_000_000;
        // leaves the link at 13 ms: delivered
        assert!(matches!(l.arrive(pkt(0), 0), Admit::Admitted { .. }));
        // would reach the next hop at 21 ms, after the link went down: lost
        assert!(matches!(
            l.arrive(pkt(1), 8 * ms),
            Admit::Dropped(DropCause::Outage)
        ));
        // behind a lost packet (FIFO), and during the outage: lost
        assert!(matches!(
            l.arrive(pkt(2), 9 * ms),
            Admit::Dropped(DropCause::Outage)
        ));
        assert!(matches!(
            l.arrive(pkt(3), 29 * ms),
            Admit::Dropped(DropCause::Outage)
        ));
        // back up at 30 ms with an idle serializer: sent at once
        assert!(matches!(
            l.arrive(pkt(4), 30 * ms),
            Admit::Admitted {
                schedule: None,
                wait: None
            }
        ));
        assert_eq!(l.counters.errors, 3);
        assert_eq!(l.pop_arrived(13 * ms).unwrap().2.seq, 0);
        assert_eq!(l.next_delivery(), Some(43 * ms));
    }

    /// What a plain link's crossing touches is in the first three cache
    /// lines (see [`Link`]).
    #[test]
    fn the_hot_fields_fill_three_cache_lines() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Link>(), 64);
        // a plain link's crossing reads and writes only lines 0 to 2
        assert!(offset_of!(Link, special) < 64 && offset_of!(Link, limit) + 4 <= 64);
        assert!(offset_of!(Link, delivery_pending) < 64 && offset_of!(Link, tx_bytes) + 4 <= 64);
        assert_eq!(offset_of!(Link, counters), 64);
        assert!(offset_of!(Link, waiting) > offset_of!(Link, tx_txt));
        assert!(offset_of!(Link, last) > offset_of!(Link, waiting));
        assert!(offset_of!(Link, tx_txt_delay) > offset_of!(Link, last));
        assert_eq!(offset_of!(Link, queue), offset_of!(Link, tx_txt_delay) + 8);
        assert!(offset_of!(Link, queue) <= 192);
    }

    /// A delay line that a burst grew is given back once it is empty, and
    /// the link goes on as before.
    #[test]
    fn an_emptied_delay_line_gives_its_slots_back() {
        let mut l = Link::new(1e9, 1_000_000, Queue::droptail(1000));
        for s in 0..100 {
            l.arrive(pkt(s), 0);
        }
        assert!(l.pipe.capacity() > RING_KEPT);
        l.delivering();
        let mut seqs = Vec::new();
        while let Some((_, _, p)) = l.pop_arrived(SimTime::MAX) {
            seqs.push(p.seq);
        }
        assert_eq!(l.delivered(), None);
        assert_eq!(l.pipe.capacity(), 0);
        assert!(seqs.into_iter().eq(0..100));
        assert!(matches!(
            l.arrive(pkt(100), 10_000_000),
            Admit::Admitted {
                schedule: Some((11_008_000, _)),
                wait: None
            }
        ));
    }

    #[test]
    fn utilization_is_exact() {
        let mut l = Link::new(1e6, 0, Queue::droptail(10));
        l.arrive(pkt(0), 0);
        l.arrive(pkt(1), 0);
        assert_eq!(l.busy_ns_until(4_000_000), 4_000_000);
        assert_eq!(l.busy_ns_until(100_000_000), 16_000_000);
    }
}
