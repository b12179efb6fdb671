//! Paper C's threshold dropper: the queue discipline, and the choice of the
//! connection a congestion event signals.

use crate::net::link::DropCause;
use crate::plan::{Selection, ThresholdParams};
use crate::rng::Rng;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// Paper C's threshold dropper (Sec. V.D), which enforces assumption ONE —
/// one connection signalled per congestion event — in a packet simulation.
///
/// Our reading of the paper: from a time with at most Th packets queued, the
/// first arrival that finds Th waiting (it would make Th + 1) starts a
/// congestion event, and one connection is selected for it. With
/// `first-arrival` the selected connection is the arriving packet's and that
/// packet is dropped — the paper's literal wording, rate-proportional in
/// effect (a connection's packets arrive in proportion to its rate). The
/// paper's other policies choose by the loss policy (rate-independent: with
/// fixed probabilities; largest-rate: the largest window); that choice needs
/// the senders' state, so the simulator makes it ([`wants_victim`] is raised,
/// the sim calls [`select`]): it stays selected for τ, and its first packet
/// to arrive above the threshold in that time is dropped. If it sends none
/// (a connection waiting out a retransmission timeout), the selection lapses
/// and the next arrival above Th starts a new event. Nothing else is dropped
/// while a connection is selected, nor for τ after a drop (by the threshold;
/// the hard limit still applies). So drops are at least τ apart, each
/// signals one connection, and no drop ever happens with fewer than Th
/// packets waiting.
///
/// [`wants_victim`]: ThresholdDropper::wants_victim
/// [`select`]: ThresholdDropper::select
#[derive(Clone, Debug)]
pub struct ThresholdDropper {
    pub threshold: usize,
    limit: usize,
    immunity_ns: SimTime,
    pub selection: Selection,
    /// No new congestion event before this time.
    until: SimTime,
    /// The connection whose next arrival above the threshold is dropped.
    victim: Option<u32>,
    /// A congestion event started and the simulator must pick its connection.
    pub wants_victim: bool,
    /// Congestion events so far.
    pub events: u64,
    /// Selections whose connection sent nothing above Th while selected.
    pub lapsed: u64,
    /// Breaks ties and draws rate-independent choices.
    pub rng: Rng,
    /// Selection weights by flow group (rate-independent; default 1).
    bias: BTreeMap<String, f64>,
}

impl ThresholdDropper {
    pub fn new(p: &ThresholdParams, buffer: u32, rng: Rng) -> Self {
        ThresholdDropper {
            threshold: p.threshold_pkts as usize,
            limit: buffer as usize,
            immunity_ns: p.immunity_ns,
            selection: p.selection,
            until: 0,
            victim: None,
            wants_victim: false,
            events: 0,
            lapsed: 0,
            rng,
            bias: p.bias.clone(),
        }
    }

    /// The selection weight of a flow of `group`.
    pub fn weight(&self, group: &str) -> f64 {
        self.bias.get(group).copied().unwrap_or(1.0)
    }

    /// An arrival of `flow` that finds `waiting` packets queued at `now`.
    pub fn arrive(&mut self, waiting: usize, flow: u32, now: SimTime) -> Result<(), DropCause> {
        if waiting >= self.limit {
            return Err(DropCause::Overflow);
        }
        if waiting < self.threshold {
            return Ok(());
        }
        if let Some(v) = self.victim {
            if now < self.until {
                // the event's connection is signalled by its first packet above Th
                if v == flow {
                    self.victim = None;
                    self.until = now + self.immunity_ns;
                    return Err(DropCause::Threshold);
                }
                return Ok(());
            }
            // it sent nothing above Th while selected: the selection lapses
            self.victim = None;
            self.lapsed += 1;
        }
        if now < self.until {
            return Ok(());
        }
        // a new congestion event
        self.events += 1;
        if self.selection == Selection::FirstArrival {
            self.until = now + self.immunity_ns;
            return Err(DropCause::Threshold);
        }
        self.wants_victim = true;
        Ok(())
    }

    /// Pick the connection the current congestion event signals, among the
    /// `candidates` (flow, selection weight, window) — the TCP flows crossing
    /// the link that are running now: the largest window (ties at random), or
    /// at random with the fixed weights (rate-independent, paper C's bias σ).
    /// None if there is none. The simulator then calls [`Self::select`].
    pub fn choose(
        &mut self,
        candidates: impl Iterator<Item = (u32, f64, f64)> + Clone,
    ) -> Option<u32> {
        let mut victim = None;
        match self.selection {
            Selection::LargestRate => {
                let (mut best, mut ties) = (f64::NEG_INFINITY, 0u32);
                for (f, _, w) in candidates {
                    if w > best {
                        (best, ties, victim) = (w, 1, Some(f));
                    } else if w == best {
                        // reservoir: each of the tied flows equally likely
                        ties += 1;
                        if self.rng.uniform() * (ties as f64) < 1.0 {
                            victim = Some(f);
                        }
                    }
                }
            }
            Selection::RateIndependent | Selection::FirstArrival => {
                let total: f64 = candidates.clone().map(|(_, w, _)| w).sum();
                let mut u = self.rng.uniform() * total;
                for (f, w, _) in candidates {
                    victim = Some(f);
                    if u < w {
                        break;
                    }
                    u -= w;
                }
            }
        }
        victim
    }

    /// The simulator's choice for the current congestion event (None: no
    /// eligible connection).
    pub fn select(&mut self, victim: Option<u32>, now: SimTime) {
        self.wants_victim = false;
        self.victim = victim;
        self.until = now + self.immunity_ns;
    }
}
