//! Queue disciplines: which arrivals a link's buffer admits. The link keeps
//! the packets (a FIFO); a discipline only decides.
//!
//! * DropTail: a hard limit on waiting packets (the hot path: one compare).
//! * RED with ns-2 2.35's semantics (`queue/red.cc`), see [`Red`].
//! * Paper C's threshold dropper, see [`ThresholdDropper`] (`threshold.rs`, with the
//!   choice of the connection it signals).

mod threshold;

pub use threshold::ThresholdDropper;

use super::link::DropCause;
use crate::plan::{QueuePlan, RedMode, RedParams};
use crate::rng::Rng;
use crate::time::{secs, SimTime};

#[derive(Clone, Debug)]
pub enum Queue {
    /// Admit while fewer than `limit` packets wait (the one in transmission
    /// is not counted; ns-2's `queue-limit` is `limit + 1`).
    DropTail {
        limit: u32,
    },
    Red(Box<Red>),
    Threshold(Box<ThresholdDropper>),
}

impl Queue {
    pub fn droptail(limit: u32) -> Self {
        Queue::DropTail { limit }
    }

    /// The discipline of a planned link of `rate_bps` whose buffer holds
    /// `buffer` waiting packets; `rng` is its own stream.
    pub fn from_plan(q: &QueuePlan, rate_bps: f64, buffer: u32, rng: Rng) -> Self {
        match q {
            QueuePlan::DropTail => Queue::droptail(buffer),
            QueuePlan::Red(p) => Queue::Red(Box::new(Red::new(p, rate_bps, buffer, rng))),
            QueuePlan::Threshold(t) => {
                Queue::Threshold(Box::new(ThresholdDropper::new(t, buffer, rng)))
            }
        }
    }

    /// Does the threshold dropper wait for the simulator to pick a victim?
    #[inline]
    pub fn wants_victim(&self) -> bool {
        matches!(self, Queue::Threshold(t) if t.wants_victim)
    }
}

/// Random Early Detection as ns-2 2.35 runs it (`REDQueue::enque`), with
/// ns-2's defaults for what the scenario does not set: `use_mark_p_` true
/// and `setbit_` false (with `ecn`, an early drop of an ECN-capable packet
/// marks it instead, as `setbit_` true does) (so an average above max_thresh drops through the
/// early-drop path, as ns-2 does by default), `drop_tail_` (the arrival is
/// the victim), not adaptive, not cautious.
///
/// Queue lengths are what ns-2's `q_->length()` sees: packets (or bytes)
/// waiting, not the one in transmission, before this arrival.
#[derive(Clone, Debug)]
pub struct Red {
    /// Thresholds and hard limit in queue units (packets, or bytes).
    th_min: f64,
    th_max: f64,
    limit: f64,
    max_p: f64,
    q_w: f64,
    wait: bool,
    gentle: bool,
    bytes: bool,
    mean_pktsize: f64,
    /// ns-2 `ptc`: the link's rate in mean-size packets per second.
    ptc: f64,
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
    /// The average queue (ns-2 `v_ave`).
    pub ave: f64,
    /// Mark ECN-capable packets instead of dropping them early (`setbit_`).
    pub ecn: bool,
    /// ECN marks set so far.
    pub marks: u64,
    /// Arrivals since the last drop (ns-2 `count`, `count_bytes`).
    count: i64,
    count_bytes: i64,
    /// The average was above min_thresh with a queue at the last arrival (ns-2 `old`).
    old: bool,
    rng: RedRng,
}

/// Where RED's random numbers come from: a stream of the scenario's seed,
/// or ns-2's default generator seeded as `red.seed` says.
#[derive(Clone, Debug)]
enum RedRng {
    Own(Rng),
    Ns2(crate::rng::Ns2Rng),
}

impl RedRng {
    #[inline]
    fn uniform(&mut self) -> f64 {
        match self {
            RedRng::Own(r) => r.uniform(),
            RedRng::Ns2(r) => r.uniform(),
        }
    }
}

impl Red {
    /// RED for a link of `rate_bps` whose buffer holds `buffer` waiting packets.
    pub fn new(p: &RedParams, rate_bps: f64, buffer: u32, rng: Rng) -> Self {
        let bytes = p.mode == RedMode::Byte;
        let mean = p.mean_packet_size as f64;
        let unit = if bytes { mean } else { 1.0 };
        let (th_min, th_max) = (p.min_thresh * unit, p.max_thresh * unit);
        // red.cc reset(): the linear pieces of the drop probability
        let th_diff = if th_max == th_min {
            1.0
        } else {
            th_max - th_min
        };
        Red {
            th_min,
            th_max,
            limit: buffer as f64 * unit,
            max_p: p.max_p,
            q_w: p.weight,
            wait: p.wait,
            gentle: p.gentle,
            bytes,
            mean_pktsize: mean,
            ptc: rate_bps / (8.0 * mean),
            v_a: 1.0 / th_diff,
            v_b: -th_min / th_diff,
            v_c: (1.0 - p.max_p) / th_max,
            v_d: 2.0 * p.max_p - 1.0,
            ave: 0.0,
            ecn: p.ecn,
            marks: 0,
            count: 0,
            count_bytes: 0,
            old: false,
            rng: match p.seed {
                Some(k) => RedRng::Ns2(crate::rng::Ns2Rng::new(k)),
                None => RedRng::Own(rng),
            },
        }
    }

    /// Is the queue measured in bytes?
    pub fn counts_bytes(&self) -> bool {
        self.bytes
    }

    /// The average after an arrival that sees `q` (queue units) waiting,
    /// `idle_ns` after the queue went idle (0 if it is not idle): ns-2
    /// pretends m = ⌊ptc · idle⌋ packets arrived to an empty queue meanwhile
    /// (`enque`, `estimator`): ave ← ave·(1−w)^(m+1) + w·q.
    #[inline]
    pub fn update_average(&mut self, q: f64, idle_ns: Option<SimTime>) {
        if let Some(d) = idle_ns {
            // ns-2 multiplies m times, one factor at a time (the same
            // rounding; a zero average stays zero)
            let m = (self.ptc * secs(d)) as i64;
            for _ in 0..m {
                if self.ave == 0.0 {
                    break;
                }
                self.ave *= 1.0 - self.q_w;
            }
        }
        self.ave = self.ave * (1.0 - self.q_w) + self.q_w * q;
    }

    /// The drop probability for the current average, before the count
    /// correction (`calculate_p_new`).
    pub fn base_p(&self) -> f64 {
        let v = self.ave;
        let p = if self.gentle && v >= self.th_max {
            self.v_c * v + self.v_d
        } else if !self.gentle && v >= self.th_max {
            1.0
        } else {
            (self.v_a * v + self.v_b) * self.max_p
        };
        p.min(1.0)
    }

    /// The count correction (`modify_p`): with `wait`, no drop until 1/p
    /// arrivals since the last one, then p/(2 − count·p) (inter-drop gaps
    /// uniform on [1/p, 2/p]); without, p/(1 − count·p) (uniform on [1, 1/p]).
    pub fn modify_p(&self, p: f64, size: u32) -> f64 {
        let count1 = if self.bytes {
            // integer division, as ns-2
            (self.count_bytes / self.mean_pktsize as i64) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.wait {
            if count1 * p < 1.0 {
                0.0
            } else if count1 * p < 2.0 {
                p / (2.0 - count1 * p)
            } else {
                1.0
            }
        } else if count1 * p < 1.0 {
            p / (1.0 - count1 * p)
        } else {
            1.0
        };
        if self.bytes && p < 1.0 {
            p = p * size as f64 / self.mean_pktsize;
        }
        p.min(1.0)
    }

    /// An arrival of `size` bytes that finds `q_pkts` packets (`q_bytes`
    /// bytes) waiting; `idle_ns` is Some(time since the link went idle) when
    /// nothing is being sent. Err(Red) for an early drop, Err(Overflow) when
    /// the hard limit is reached.
    pub fn arrive(
        &mut self,
        q_pkts: usize,
        q_bytes: u64,
        idle_ns: Option<SimTime>,
        size: u32,
    ) -> Result<(), DropCause> {
        // (through i64: one conversion instruction instead of the unsigned
        // sequence; exact, a queue is far below 2^53)
        let q = if self.bytes {
            q_bytes as i64 as f64
        } else {
            q_pkts as i64 as f64
        };
        // An arrival to an empty queue with an average of exactly +0 (a RED
        // link that never queues, such as the dumbbell's ack path) leaves
        // it +0: the idle decay stops at a zero average, and
        // 0·(1 − w) + w·0 is +0. So the update is skipped there.
        if q != 0.0 || self.ave.to_bits() != 0 {
            self.update_average(q, idle_ns);
        }
        self.count += 1;
        self.count_bytes += size as i64;
        let mut early = false;
        if self.ave >= self.th_min && q_pkts > 1 {
            // With use_mark_p_ (ns-2's default) there is no forced drop on
            // the average: above max_thresh p is 1 in the early path.
            if !self.old {
                // The average just crossed min_thresh (or the queue just became non-empty).
                self.count = 1;
                self.count_bytes = size as i64;
                self.old = true;
            } else {
                let p = self.modify_p(self.base_p(), size);
                if self.rng.uniform() <= p {
                    self.count = 0;
                    self.count_bytes = 0;
                    early = true;
                }
            }
        } else {
            self.old = false;
        }
        if q >= self.limit {
            // forced drop of the arrival (drop_tail_); ns-2 resets the count (not ns1_compat_)
            self.count = 0;
            self.count_bytes = 0;
            return Err(DropCause::Overflow);
        }
        if early {
            Err(DropCause::Red)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arrival to an empty queue with a zero average skips the average's
    /// update (`Red::arrive`): the average must come out as the update
    /// leaves it, +0 bit for bit, idle or not, packets or bytes, until the
    /// first arrival that finds a queue.
    #[test]
    fn an_empty_queue_keeps_a_zero_average_as_the_update_does() {
        for (mode, weight) in [(RedMode::Packet, 0.002), (RedMode::Byte, 1.0)] {
            let p = RedParams {
                min_thresh: 5.0,
                max_thresh: 15.0,
                max_p: 0.1,
                weight,
                wait: true,
                gentle: true,
                mode,
                mean_packet_size: 500,
                ecn: false,
                seed: None,
            };
            let mut red = Red::new(&p, 10e6, 20, Rng::stream(7, 0, 0));
            let mut twin = red.clone();
            for (i, idle) in [Some(3_000_000), None, Some(0), Some(10), None]
                .into_iter()
                .enumerate()
            {
                assert_eq!(red.arrive(0, 0, idle, 40), Ok(()));
                twin.update_average(0.0, idle);
                assert_eq!(red.ave.to_bits(), twin.ave.to_bits(), "arrival {i}");
                assert_eq!(red.ave.to_bits(), 0);
            }
            assert_eq!(red.count, 5);
            // the first arrival that finds a queue moves the average as before
            let mut twin = red.clone();
            red.arrive(1, 500, None, 500).unwrap();
            let q = if mode == RedMode::Byte { 500.0 } else { 1.0 };
            twin.update_average(q, None);
            assert_eq!(red.ave.to_bits(), twin.ave.to_bits());
            assert!(red.ave > 0.0);
        }
    }
}
