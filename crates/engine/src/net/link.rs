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

use super::packet::{Kind, Packet};
use super::queue::Queue;
use crate::rng::Rng;
use crate::time::{tx_time_ns, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Every loss: the queue's drops and the impairment's losses.
    pub drops: u64,
    /// Losses to the link's impairment (included in `drops`).
    pub errors: u64,
    pub admitted: u64,
    pub admitted_bytes: u64,
    /// Serializer time of every admitted packet.
    pub busy_ns: u64,
}

/// Random losses on a link, decided as a packet arrives (before the queue).
pub enum Impairment {
    None,
    /// Each packet is lost with probability `per`.
    Bernoulli {
        per: f64,
        rng: Rng,
    },
}

impl Impairment {
    /// Is the packet arriving now lost?
    #[inline]
    fn loses(&mut self) -> bool {
        match self {
            Impairment::None => false,
            Impairment::Bernoulli { per, rng } => rng.uniform() < *per,
        }
    }
}

pub struct Link {
    pub rate_bps: f64,
    pub impairment: Impairment,
    pub delay_ns: SimTime,
    pub queue: Queue,
    /// The serializer is busy until this time.
    busy_until: SimTime,
    /// Start times (and sizes) of admitted packets still waiting.
    waiting: VecDeque<(SimTime, u32, Kind)>,
    /// Every admitted packet not yet at the next hop, with its arrival time there.
    pipe: VecDeque<(SimTime, Packet)>,
    /// Cached transmission times of the two common sizes.
    tx_cache: [(u32, SimTime); 2],
    pub counters: LinkCounters,
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
    /// Admitted; `schedule` is Some(t) when the link had no pending delivery
    /// and one must be scheduled at t. `wait` is Some(start) when it waits
    /// in the buffer until `start`.
    Admitted {
        schedule: Option<SimTime>,
        wait: Option<SimTime>,
    },
}

impl Link {
    pub fn new(rate_bps: f64, delay_ns: SimTime, queue: Queue) -> Self {
        Link {
            rate_bps,
            impairment: Impairment::None,
            delay_ns,
            queue,
            busy_until: 0,
            waiting: VecDeque::new(),
            pipe: VecDeque::new(),
            tx_cache: [
                (40, tx_time_ns(40, rate_bps)),
                (1000, tx_time_ns(1000, rate_bps)),
            ],
            counters: LinkCounters::default(),
        }
    }

    #[inline]
    fn tx_time(&mut self, bytes: u32) -> SimTime {
        for &(b, t) in &self.tx_cache {
            if b == bytes {
                return t;
            }
        }
        let t = tx_time_ns(bytes, self.rate_bps);
        self.tx_cache[1] = (bytes, t);
        t
    }

    /// Packets waiting in the buffer at `now` (not counting the one in transmission).
    #[inline]
    pub fn waiting(&mut self, now: SimTime) -> usize {
        while let Some(&(start, _, _)) = self.waiting.front() {
            if start <= now {
                self.waiting.pop_front();
            } else {
                break;
            }
        }
        self.waiting.len()
    }

    /// A packet arrives at the link's input at `now`: the queue discipline
    /// decides; if admitted, the packet's start of transmission and its
    /// arrival time at the next hop follow at once. Returns the cause if
    /// dropped, else (arrival at next hop, Some(start) if it waits in the buffer).
    #[inline]
    fn admit(
        &mut self,
        pkt: &Packet,
        now: SimTime,
    ) -> Result<(SimTime, Option<SimTime>), DropCause> {
        self.counters.arrivals += 1;
        if self.impairment.loses() {
            self.counters.drops += 1;
            self.counters.errors += 1;
            return Err(DropCause::Error);
        }
        let must_wait = self.busy_until > now;
        if let Queue::DropTail { limit } = self.queue {
            if must_wait && self.waiting(now) >= limit as usize {
                self.counters.drops += 1;
                return Err(DropCause::Overflow);
            }
        } else if let Err(cause) = self.managed_admit(pkt, now, must_wait) {
            self.counters.drops += 1;
            return Err(cause);
        }
        let tx = self.tx_time(pkt.size_bytes);
        let start = self.busy_until.max(now);
        let end = start + tx;
        self.busy_until = end;
        self.counters.admitted += 1;
        self.counters.admitted_bytes += pkt.size_bytes as u64;
        self.counters.busy_ns += tx;
        let wait = if start > now {
            self.waiting.push_back((start, pkt.size_bytes, pkt.kind));
            Some(start)
        } else {
            None
        };
        Ok((end + self.delay_ns, wait))
    }

    /// RED and the threshold dropper see every arrival, including those to
    /// an idle link (RED's average decays over idle time).
    fn managed_admit(
        &mut self,
        pkt: &Packet,
        now: SimTime,
        must_wait: bool,
    ) -> Result<(), DropCause> {
        // (pops the packets that have started, so the deque is what waits)
        let waiting = self.waiting(now);
        match &mut self.queue {
            Queue::DropTail { .. } => Ok(()),
            Queue::Red(red) => {
                let idle = if must_wait {
                    None
                } else {
                    Some(now - self.busy_until)
                };
                let bytes = if red.counts_bytes() {
                    self.waiting.iter().map(|w| w.1 as u64).sum()
                } else {
                    0
                };
                red.arrive(waiting, bytes, idle, pkt.size_bytes)
            }
            Queue::Threshold(t) => t.arrive(waiting, pkt.flow, now),
        }
    }

    /// A packet arrives at `now` and stays on the link until it reaches the
    /// next hop, which needs an event then.
    #[inline]
    pub fn arrive(&mut self, pkt: Packet, now: SimTime) -> Admit {
        match self.admit(&pkt, now) {
            Err(cause) => Admit::Dropped(cause),
            Ok((at, wait)) => {
                let was_empty = self.pipe.is_empty();
                self.pipe.push_back((at, pkt));
                Admit::Admitted {
                    schedule: if was_empty { Some(at) } else { None },
                    wait,
                }
            }
        }
    }

    /// A packet arrives at `now` and is handed straight on: the caller
    /// admits it to the next link at the returned arrival time, without an
    /// event. Valid when that next link has this link as its only input —
    /// this link's output is FIFO, so the next link still sees its arrivals
    /// in time order. Returns the cause if dropped, else (arrival time, wait).
    #[inline]
    pub fn pass(
        &mut self,
        pkt: &Packet,
        now: SimTime,
    ) -> Result<(SimTime, Option<SimTime>), DropCause> {
        self.admit(pkt, now)
    }

    /// The head packet if it has reached the next hop by `now`.
    #[inline]
    pub fn pop_arrived(&mut self, now: SimTime) -> Option<Packet> {
        match self.pipe.front() {
            Some(&(at, _)) if at <= now => self.pipe.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    /// When the next delivery is due, if any packet is on the link.
    #[inline]
    pub fn next_delivery(&self) -> Option<SimTime> {
        self.pipe.front().map(|&(at, _)| at)
    }

    /// Serializer time spent up to `now` (exact: the serializer's busy periods
    /// are known once packets are admitted).
    pub fn busy_ns_until(&self, now: SimTime) -> u64 {
        self.counters.busy_ns - self.busy_until.saturating_sub(now)
    }

    /// Packets whose transmission has started by `now`.
    pub fn sent_packets_until(&mut self, now: SimTime) -> u64 {
        let w = self.waiting(now) as u64;
        self.counters.admitted - w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                schedule: Some(13_000_000),
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
        assert_eq!(l.pop_arrived(13_000_000).unwrap().seq, 0);
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
        assert_eq!(l.waiting(8_000_000), 1);
        assert!(matches!(
            l.arrive(pkt(4), 8_000_000),
            Admit::Admitted { .. }
        ));
        assert_eq!(l.counters.drops, 1);
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

    #[test]
    fn utilization_is_exact() {
        let mut l = Link::new(1e6, 0, Queue::droptail(10));
        l.arrive(pkt(0), 0);
        l.arrive(pkt(1), 0);
        assert_eq!(l.busy_ns_until(4_000_000), 4_000_000);
        assert_eq!(l.busy_ns_until(100_000_000), 16_000_000);
    }
}
