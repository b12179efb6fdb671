//! Outage schedules: when a link is down (handoffs, paper B4).
//!
//! A schedule yields the link's outages as merged, increasing intervals
//! [start, end) in nanoseconds, lazily, so a long run with frequent outages
//! costs no memory up front. Durations are drawn from the link's own random
//! stream (`rng::stream::LINK_OUTAGES`), so both directions of a duplex link,
//! and every exporter that asks (`sim::link_outages`), see the same schedule.

use crate::plan::{OutageDistribution, OutagePlan};
use crate::rng::Rng;
use crate::time::SimTime;

pub struct OutageSchedule {
    /// Next raw outage start: periodic (`next`, advancing by `every`) or from `list`.
    next: SimTime,
    every: SimTime,
    list: Vec<SimTime>,
    list_pos: usize,
    periodic: bool,
    duration_ns: SimTime,
    exponential: bool,
    rng: Rng,
    /// A raw interval drawn but not yet merged into what `next()` returned.
    pending: Option<(SimTime, SimTime)>,
    /// The run ends here: an outage that reaches it is returned as soon as
    /// it does (the link stays down to the end; whatever follows cannot
    /// matter), and is the last. Without it, outages that overlap forever
    /// (durations longer than the period) would merge without end.
    horizon: SimTime,
    done: bool,
}

impl OutageSchedule {
    /// The schedule of `plan` with the given random stream, for a run that
    /// ends at `horizon` ns.
    pub fn new(plan: &OutagePlan, rng: Rng, horizon: SimTime) -> Self {
        OutageSchedule {
            next: plan.start_ns,
            every: plan.every_ns.unwrap_or(0),
            list: plan.at_ns.clone(),
            list_pos: 0,
            periodic: plan.every_ns.is_some(),
            duration_ns: plan.duration_ns,
            exponential: plan.distribution == OutageDistribution::Exponential,
            rng,
            pending: None,
            horizon,
            done: false,
        }
    }

    /// The next outage as it was scheduled (before merging), if any.
    fn raw(&mut self) -> Option<(SimTime, SimTime)> {
        let start = if self.periodic {
            let s = self.next;
            self.next = s.checked_add(self.every)?;
            s
        } else {
            let s = *self.list.get(self.list_pos)?;
            self.list_pos += 1;
            s
        };
        let d = if self.exponential {
            self.rng.exponential(self.duration_ns as f64).round() as SimTime
        } else {
            self.duration_ns
        };
        Some((start, start.saturating_add(d)))
    }
}

impl Iterator for OutageSchedule {
    type Item = (SimTime, SimTime);

    /// The next outage [start, end), overlapping ones merged; zero-length
    /// draws are skipped. Merging stops once the outage reaches the horizon.
    fn next(&mut self) -> Option<(SimTime, SimTime)> {
        if self.done {
            return None;
        }
        let (start, mut end) = loop {
            let r = self.pending.take().or_else(|| self.raw())?;
            if r.1 > r.0 {
                break r;
            }
        };
        loop {
            if end >= self.horizon {
                self.done = true;
                return Some((start, end));
            }
            match self.pending.take().or_else(|| self.raw()) {
                Some((s, e)) if s <= end => end = end.max(e),
                other => {
                    self.pending = other;
                    return Some((start, end));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(every: Option<u64>, at: Option<Vec<u64>>, dur: u64, exp: bool) -> OutagePlan {
        OutagePlan {
            start_ns: every.unwrap_or(0),
            every_ns: every,
            at_ns: at.unwrap_or_default(),
            duration_ns: dur,
            distribution: if exp {
                OutageDistribution::Exponential
            } else {
                OutageDistribution::Fixed
            },
        }
    }

    #[test]
    fn fixed_periodic_outages_repeat_exactly() {
        let s = OutageSchedule::new(
            &spec(Some(5), None, 1, false),
            Rng::stream(1, 3, 0),
            SimTime::MAX,
        );
        let v: Vec<_> = s.take(3).collect();
        assert_eq!(v, vec![(5, 6), (10, 11), (15, 16)]);
    }

    #[test]
    fn overlapping_outages_merge() {
        let s = OutageSchedule::new(
            &spec(None, Some(vec![10, 12, 30]), 5, false),
            Rng::stream(1, 3, 0),
            SimTime::MAX,
        );
        let v: Vec<_> = s.collect();
        assert_eq!(v, vec![(10, 17), (30, 35)]);
    }

    #[test]
    fn exponential_durations_have_the_mean() {
        // 20 000 periodic outages, mean 1 s, period 1000 s (no merging):
        // the sample mean of Exp(1) has σ = 1/√20000 ≈ 0.007; allow 4σ.
        let s = OutageSchedule::new(
            &spec(Some(1_000_000_000_000), None, 1_000_000_000, true),
            Rng::stream(9, 3, 4),
            SimTime::MAX,
        );
        let v: Vec<_> = s.take(20_000).collect();
        let mean = v.iter().map(|(a, b)| (b - a) as f64).sum::<f64>() / v.len() as f64 / 1e9;
        assert!((mean - 1.0).abs() < 4.0 * 0.0071, "{mean}");
    }

    /// Outages longer than their period overlap for ever: the schedule
    /// returns the merged outage as soon as it reaches the run's end, and
    /// nothing after it (it used to merge draws until time overflowed).
    #[test]
    fn endless_overlap_stops_at_the_horizon() {
        // every 5 s, Exp(1 h) long: down for good from 5 s
        let s = OutageSchedule::new(
            &spec(Some(5_000_000_000), None, 3_600_000_000_000, true),
            Rng::stream(1, 3, 0),
            100_000_000_000,
        );
        let v: Vec<_> = s.collect();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].0, 5_000_000_000);
        assert!(v[0].1 >= 100_000_000_000);
        // an outage that ends before the horizon is followed by the next
        let s = OutageSchedule::new(&spec(Some(5), None, 1, false), Rng::stream(1, 3, 0), 12);
        assert_eq!(s.collect::<Vec<_>>(), vec![(5, 6), (10, 11), (15, 16)]);
    }
}
