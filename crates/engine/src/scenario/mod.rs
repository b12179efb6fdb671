//! The one definition of a scenario. Scenario files are TOML; Python loads
//! them into a dict, applies `--set` overrides and hands the engine JSON. The
//! schema below rejects unknown keys (`deny_unknown_fields`), and every error
//! names the key path and the expected form.
//!
//! Defaults follow ns-2 2.35 (`tcl/lib/ns-default.tcl`) wherever the papers
//! depend on them; each says where it comes from.

mod defaults;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

pub use defaults::*;
pub use schema::*;

use crate::time::{Duration, SimTime};
use std::fmt;

/// A scenario error: where (dotted key path) and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub(crate) fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.into(),
        message: message.into(),
    }
}

impl RedSpec {
    /// Apply the preset and ns-2 2.35's defaults for a link of `rate_bps`,
    /// `delay_ns` and `buffer` packets.
    pub fn params(&self, rate_bps: f64, delay_ns: SimTime, buffer: u32) -> RedParams {
        let (mut min, mut max, mut max_p, mut weight, mut wait, mut gentle, mut mode) =
            (None, None, None, None, None, None, None);
        if let Some(RedPreset::PaperC) = self.preset {
            min = Some(0.6 * buffer as f64);
            max = Some(0.8 * buffer as f64);
            max_p = Some(0.1);
            weight = Some(0.001);
            wait = Some(true);
            gentle = Some(true);
            mode = Some(RedMode::Packet);
        }
        let mean = self.mean_packet_size.unwrap_or(500);
        // ns-2 red.cc reset(): ptc, the link's rate in mean-size packets per second
        let ptc = rate_bps / (8.0 * mean as f64);
        let min_thresh = self
            .min_thresh
            .or(min)
            .unwrap_or_else(|| (0.005 * ptc / 2.0).max(5.0));
        let max_thresh = self.max_thresh.or(max).unwrap_or(3.0 * min_thresh);
        let weight = self.weight.or(weight).unwrap_or_else(|| {
            let rtt = (3.0 * (crate::time::secs(delay_ns) + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        });
        RedParams {
            min_thresh,
            max_thresh,
            max_p: self.max_p.or(max_p).unwrap_or(0.1),
            weight,
            wait: self.wait.or(wait).unwrap_or(true),
            gentle: self.gentle.or(gentle).unwrap_or(true),
            mode: self.mode.or(mode).unwrap_or(RedMode::Packet),
            mean_packet_size: mean,
        }
    }
}

impl ErrorSpec {
    /// Long-run fraction of arrivals lost: `per`, or for Gilbert–Elliott
    /// π_good·per_good + π_bad·per_bad with π_bad = p_gb / (p_gb + p_bg).
    pub fn loss_rate(&self) -> f64 {
        match self.model {
            ErrorModelKind::Bernoulli => self.per.unwrap_or(0.0),
            ErrorModelKind::GilbertElliott => {
                let (gb, bg) = (self.p_gb.unwrap_or(0.0), self.p_bg.unwrap_or(0.0));
                let bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
                (1.0 - bad) * self.per_good.unwrap_or(0.0) + bad * self.per_bad.unwrap_or(1.0)
            }
            // not a rate: the losses depend on how many packets arrive
            ErrorModelKind::List => 0.0,
        }
    }

    pub(crate) fn resolved(mut self) -> ErrorSpec {
        if self.model == ErrorModelKind::GilbertElliott {
            self.per_good.get_or_insert(0.0);
            self.per_bad.get_or_insert(1.0);
        }
        self
    }
}

impl OutageSpec {
    pub(crate) fn resolved(mut self) -> OutageSpec {
        if let (None, Some(e)) = (self.start, self.every) {
            self.start = Some(e);
        }
        self
    }
}

impl LinkSpec {
    pub fn with(&self, o: &Option<LinkOverride>) -> LinkSpec {
        let mut l = self.clone();
        if let Some(o) = o {
            if let Some(r) = o.rate {
                l.rate = r;
            }
            if let Some(d) = o.delay {
                l.delay = d;
            }
            if let Some(b) = o.buffer {
                l.buffer = b;
            }
            if let Some(e) = &o.errors {
                l.errors = Some(e.clone());
            }
            if let Some(x) = &o.outages {
                l.outages = Some(x.clone());
            }
        }
        l
    }
}

impl RateShape {
    /// Long-run mean rate in bit/s (of the clipped shape; on/off: its
    /// expectation, rate·E[on]/(E[on] + E[off])).
    pub fn mean_bps(&self) -> f64 {
        match self {
            RateShape::Constant(r) => r.0,
            RateShape::Shaped(_) => crate::traffic::shape::Shape::from_spec(self, 0, 0).mean_bps(),
        }
    }

    /// Check a shape table's keys and values; `path` is the key path of `rate`.

    /// Mean rate over simulation time [a, b] (bit/s): exact for piecewise
    /// tables (which need not repeat), the long-run mean otherwise.
    pub fn mean_bps_over(&self, a: SimTime, b: SimTime) -> f64 {
        match self {
            RateShape::Shaped(t) if t.shape == ShapeKind::Piecewise && b > a => {
                crate::traffic::shape::Piecewise::from_spec(t).mean_between(a, b)
            }
            _ => self.mean_bps(),
        }
    }
}

/// The steps of a join or leave schedule before `end`: (time, active flows after it).
fn schedule_steps(
    mut n: u32,
    at: SimTime,
    every: SimTime,
    end: SimTime,
    step: impl Fn(u32) -> u32,
) -> Vec<(SimTime, u32)> {
    let mut out = Vec::new();
    let mut t = at;
    while t < end {
        let next = step(n);
        if next == n {
            break;
        }
        n = next;
        out.push((t, n));
        t += every;
    }
    out
}

impl FlowGroup {
    /// Flow `j` of this group (0-based within the group): (when it may
    /// start before jitter, when it stops), for a run ending at `end`.
    pub fn flow_window(&self, j: u32, end: SimTime) -> (SimTime, SimTime) {
        let mut start = self.start.0;
        let mut stop = self.stop.map_or(end, |s| s.0).min(end);
        if let Some(js) = &self.joins {
            if j >= js.initial {
                let count = self.count;
                let f = js.factor;
                let steps = schedule_steps(js.initial, js.at.0, js.every.0, end, |n| {
                    ((n as f64 * f).ceil() as u32).clamp(n, count)
                });
                start = steps
                    .iter()
                    .find(|&&(_, n)| n > j)
                    .map_or(SimTime::MAX, |&(t, _)| t);
            }
        }
        if let Some(ls) = &self.leaves {
            let f = ls.factor;
            let min = ls.min;
            let steps = schedule_steps(self.count, ls.at.0, ls.every.0, end, |n| {
                ((n as f64 * f).floor() as u32).max(min).min(n)
            });
            if let Some(&(t, _)) = steps.iter().find(|&&(_, n)| n <= j) {
                stop = stop.min(t);
            }
        }
        (start, stop)
    }
}

impl FlowGroup {
    /// The resolved TCP parameters (call after [`Scenario::resolve`]).
    pub fn tcp_params(&self) -> TcpParams {
        TcpParams {
            variant: self.variant.unwrap_or(Variant::Reno),
            alpha: self.alpha.unwrap_or(1.0),
            beta: self.beta.unwrap_or(0.5),
            window: self.window.unwrap_or(DEFAULT_WINDOW),
            max_cwnd: self.max_cwnd.unwrap_or(0),
            initial_cwnd: self.initial_cwnd.unwrap_or(2),
            initial_ssthresh: self.initial_ssthresh.unwrap_or(0),
            initial_rto_ns: self.initial_rto.map(|d| d.0).unwrap_or(3_000_000_000),
            min_rto_ns: self.min_rto.map(|d| d.0).unwrap_or(200_000_000),
            max_rto_ns: self.max_rto.map(|d| d.0).unwrap_or(60_000_000_000),
            tick_ns: self.tick.map(|d| d.0).unwrap_or(10_000_000),
            dupack_threshold: self.dupack_threshold.unwrap_or(3),
            limited_transmit: self.limited_transmit.unwrap_or(true),
            bug_fix: self.bug_fix.unwrap_or(true),
            syn: self.syn.unwrap_or(true),
            header_size: self.header_size.unwrap_or(40),
            packet_size: self.packet_size,
            delayed_ack: self.delayed_ack.unwrap_or(false),
            delack_interval_ns: self.delack_interval.map(|d| d.0).unwrap_or(100_000_000),
        }
    }
}

impl Scenario {
    /// Parse JSON (from Python) or any serde source; errors carry the key path.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let mut msg = e.into_inner().to_string();
            // serde_json appends the position in the JSON text, which the user never saw
            if let Some(i) = msg.find(" at line ") {
                msg.truncate(i);
            }
            err(path, msg)
        })?;
        Ok(sc)
    }

    /// Fill defaults, check values, and return the scenario as it will run.
    pub fn resolve(mut self) -> Result<Scenario, ScenarioError> {
        self.validate()?;
        let end = self.duration;
        let topo = &mut self.topology;
        for l in [
            &mut topo.bottleneck,
            &mut topo.access,
            &mut topo.sink_access,
        ] {
            l.errors = l.errors.take().map(ErrorSpec::resolved);
            l.outages = l.outages.take().map(OutageSpec::resolved);
        }
        for g in self.flows.values_mut() {
            for o in [g.access.as_mut(), g.sink_access.as_mut()]
                .into_iter()
                .flatten()
            {
                o.errors = o.errors.take().map(ErrorSpec::resolved);
                o.outages = o.outages.take().map(OutageSpec::resolved);
            }
            if g.stop.is_none() && g.leaves.is_none() {
                g.stop = Some(end);
            }
            if g.kind == FlowKind::Tcp {
                let p = g.tcp_params();
                g.variant = Some(p.variant);
                g.alpha = Some(p.alpha);
                g.beta = Some(p.beta);
                g.window = Some(p.window);
                g.max_cwnd = Some(p.max_cwnd);
                g.initial_cwnd = Some(p.initial_cwnd);
                g.initial_ssthresh = Some(p.initial_ssthresh);
                g.initial_rto = Some(Duration(p.initial_rto_ns));
                g.min_rto = Some(Duration(p.min_rto_ns));
                g.max_rto = Some(Duration(p.max_rto_ns));
                g.tick = Some(Duration(p.tick_ns));
                g.dupack_threshold = Some(p.dupack_threshold);
                g.limited_transmit = Some(p.limited_transmit);
                g.bug_fix = Some(p.bug_fix);
                g.syn = Some(p.syn);
                g.header_size = Some(p.header_size);
                g.delayed_ack = Some(p.delayed_ack);
                g.delack_interval = Some(Duration(p.delack_interval_ns));
                if let Some(app) = &mut g.app {
                    if app.send_buffer.is_some() {
                        app.when_full.get_or_insert(WhenFull::Block);
                    }
                }
            }
        }
        for l in [
            &mut self.topology.bottleneck,
            &mut self.topology.access,
            &mut self.topology.sink_access,
        ] {
            resolve_queue(l);
        }
        // Group links inherit the resolved values; check them again at their buffers.
        self.validate()?;
        let mut series = std::mem::take(&mut self.trace.series);
        series.sort();
        series.dedup();
        self.trace.series = series;
        Ok(self)
    }
}

impl Scenario {
    /// The reference rate (bit/s) that throughput is normalized by.
    pub fn reference_bps(&self) -> f64 {
        let c = self.topology.bottleneck.rate.0;
        match self.measure.reference.as_str() {
            "capacity" => c,
            "free" => {
                let udp: f64 = self
                    .flows
                    .values()
                    .filter(|g| g.kind == FlowKind::Udp)
                    .map(|g| {
                        g.rate
                            .as_ref()
                            .map_or(0.0, |r| r.mean_bps_over(self.warmup.0, self.duration.0))
                            * g.count as f64
                    })
                    .sum();
                (c - udp).max(0.0)
            }
            other => crate::time::parse_rate(other).unwrap_or(c),
        }
    }

    /// Resolved scenario as JSON (defaults filled in, units normalized).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }
}

/// Fill a link's RED table with the values it will run with.
fn resolve_queue(l: &mut LinkSpec) {
    if l.queue == QueueKind::Red {
        let spec = l.red.take().unwrap_or_default();
        let p = spec.params(l.rate.0, l.delay.0, l.buffer);
        l.red = Some(RedSpec {
            preset: spec.preset,
            min_thresh: Some(p.min_thresh),
            max_thresh: Some(p.max_thresh),
            max_p: Some(p.max_p),
            weight: Some(p.weight),
            wait: Some(p.wait),
            gentle: Some(p.gentle),
            mode: Some(p.mode),
            mean_packet_size: Some(p.mean_packet_size),
        });
    }
}
