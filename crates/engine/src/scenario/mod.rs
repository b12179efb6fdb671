//! The one definition of a scenario. Scenario files are TOML; Python loads
//! them into a dict, applies `--set` overrides and hands the engine JSON.
//!
//! - `schema.rs`: the serde structs; unknown keys are rejected
//!   (`deny_unknown_fields`).
//! - `defaults.rs`: every default, named once, each with its origin (ns-2
//!   2.35's `tcl/lib/ns-default.tcl` wherever the papers depend on it).
//! - `validate.rs`: every check; each error names the key path and the
//!   expected form.
//! - this file: [`Scenario::from_json`] and [`Scenario::resolve`] (defaults
//!   filled in, as results record the scenario).
//! - `plan.rs`: [`Plan::from_scenario`], the scenario resolved into what a
//!   run will do — what every engine reads (the Plan's types are
//!   `crate::plan`'s, re-exported here).
//! - `topology/`: the layout of a scenario's topology into links and each
//!   flow's routes.

pub mod defaults;
mod plan;
mod schema;
#[cfg(test)]
mod tests;
pub mod topology;
mod validate;

pub use crate::plan::*;
pub use defaults::*;
pub use plan::*;
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

impl ErrorSpec {
    /// Long-run fraction of arrivals lost: `per`, or for Gilbert–Elliott
    /// π_good·per_good + π_bad·per_bad with π_bad = p_gb / (p_gb + p_bg).
    pub fn loss_rate(&self) -> f64 {
        match self.model {
            ErrorModelKind::Bernoulli => self.per.unwrap_or(0.0),
            ErrorModelKind::GilbertElliott => {
                let (gb, bg) = (self.p_gb.unwrap_or(0.0), self.p_bg.unwrap_or(0.0));
                let bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
                (1.0 - bad) * self.per_good.unwrap_or(GE_PER_GOOD)
                    + bad * self.per_bad.unwrap_or(GE_PER_BAD)
            }
            // not a rate: the losses depend on how many packets arrive
            ErrorModelKind::List => 0.0,
        }
    }

    pub(crate) fn resolved(mut self) -> ErrorSpec {
        if self.model == ErrorModelKind::GilbertElliott {
            self.per_good.get_or_insert(GE_PER_GOOD);
            self.per_bad.get_or_insert(GE_PER_BAD);
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

impl Topology {
    /// Every link spec of `[topology]` with its key path, in a fixed order
    /// (bottleneck, access, sink_access, links[0], links[1], …).
    pub fn specs(&self) -> Vec<(String, &LinkSpec)> {
        let named = [
            ("bottleneck", &self.bottleneck),
            ("access", &self.access),
            ("sink_access", &self.sink_access),
        ];
        let mut out: Vec<(String, &LinkSpec)> = named
            .into_iter()
            .filter_map(|(k, l)| l.as_ref().map(|l| (format!("topology.{k}"), l)))
            .collect();
        out.extend(
            self.links
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("topology.links[{i}]"), l)),
        );
        out
    }

    /// The same links, to resolve in place.
    pub fn specs_mut(&mut self) -> impl Iterator<Item = &mut LinkSpec> {
        [
            &mut self.bottleneck,
            &mut self.access,
            &mut self.sink_access,
        ]
        .into_iter()
        .flatten()
        .chain(self.links.iter_mut())
    }

    /// The dumbbell's bottleneck (validated present for a dumbbell).
    pub fn bottleneck(&self) -> &LinkSpec {
        self.bottleneck
            .as_ref()
            .expect("a dumbbell has a bottleneck (validated)")
    }

    /// Access links' defaults (validated present for a dumbbell or a parking lot).
    pub fn access(&self) -> &LinkSpec {
        self.access.as_ref().expect("access links (validated)")
    }

    /// Sink links' defaults (validated present for a dumbbell or a parking lot).
    pub fn sink_access(&self) -> &LinkSpec {
        self.sink_access.as_ref().expect("sink links (validated)")
    }

    /// The rate `measure.reference = "capacity"` means, bit/s: the
    /// dumbbell's bottleneck; the slowest link of a path or parking lot.
    pub fn capacity_bps(&self) -> f64 {
        match self.kind {
            TopologyKind::Dumbbell => self.bottleneck().rate.0,
            TopologyKind::Path | TopologyKind::ParkingLot => self
                .links
                .iter()
                .map(|l| l.rate.0)
                .fold(f64::INFINITY, f64::min),
        }
    }
}

impl LinkSpec {
    /// The reverse direction of this duplex link: `reverse`'s rate, delay
    /// and buffer where it gives them, the forward direction's otherwise.
    pub fn reversed(&self) -> LinkSpec {
        let mut l = self.clone();
        if let Some(r) = self.reverse.as_ref() {
            l.rate = r.rate.unwrap_or(l.rate);
            l.delay = r.delay.unwrap_or(l.delay);
            l.buffer = r.buffer.unwrap_or(l.buffer);
        }
        l.reverse = None;
        l
    }

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

impl FlowGroup {
    /// The resolved TCP parameters (call after [`Scenario::resolve`]).
    pub fn tcp_params(&self) -> TcpParams {
        // the profile's defaults (ns-2 2.35's, or the paper era's) for the
        // keys a profile changes; the rest from defaults.rs
        let profile = self.profile.unwrap_or_default();
        let d = profile.defaults();
        TcpParams {
            cc: self.cc.unwrap_or_default(),
            profile,
            variant: self.variant.unwrap_or(d.variant),
            alpha: self.alpha.unwrap_or(ALPHA),
            beta: self.beta.unwrap_or(BETA),
            window: self.window.unwrap_or(DEFAULT_WINDOW),
            max_cwnd: self.max_cwnd.unwrap_or(MAX_CWND),
            initial_cwnd: self.initial_cwnd.unwrap_or(d.initial_cwnd),
            initial_ssthresh: self.initial_ssthresh.unwrap_or(INITIAL_SSTHRESH),
            initial_rto_ns: self.initial_rto.map(|x| x.0).unwrap_or(d.initial_rto_ns),
            min_rto_ns: self.min_rto.map(|x| x.0).unwrap_or(d.min_rto_ns),
            max_rto_ns: self.max_rto.map(|x| x.0).unwrap_or(d.max_rto_ns),
            tick_ns: self.tick.map(|x| x.0).unwrap_or(d.tick_ns),
            tick_seed: self.tick_seed,
            dupack_threshold: self.dupack_threshold.unwrap_or(DUPACK_THRESHOLD),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            bug_fix: self.bug_fix.unwrap_or(BUG_FIX),
            syn: self.syn.unwrap_or(d.syn),
            header_size: self.header_size.unwrap_or(d.header_size),
            packet_size: self.packet_size,
            delayed_ack: self.delayed_ack.unwrap_or(d.delayed_ack),
            delack_interval_ns: self
                .delack_interval
                .map(|x| x.0)
                .unwrap_or(d.delack_interval_ns),
            syn_immediate_ack: d.syn_immediate_ack,
            // DCTCP is ECN by definition (RFC 8257 §3)
            ecn: self.ecn.unwrap_or(self.cc == Some(Cc::Dctcp)),
        }
    }
}

/// serde's message with Rust's type names said as a reader would: "invalid
/// value: integer `-5`, expected u32" becomes "expected a whole number from 0
/// to 4294967295, got -5".
fn plain_type_names(msg: &str) -> String {
    let Some((head, expected)) = msg.rsplit_once(", expected ") else {
        return msg.to_string();
    };
    let plain = match expected {
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "u64" | "usize" => format!("a whole number from 0 to {}", u64::MAX),
        "i32" | "i64" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        _ => return msg.to_string(),
    };
    // "invalid value: integer `-5`" / "invalid type: floating point `1.5`"
    let got = head
        .split_once(": ")
        .map(|(_, what)| what.replace('`', ""))
        .unwrap_or_else(|| head.to_string());
    format!("expected {plain}, got {got}")
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
            err(path, plain_type_names(&msg))
        })?;
        Ok(sc)
    }

    /// Fill defaults, check values, and return the scenario as it will run.
    pub fn resolve(mut self) -> Result<Scenario, ScenarioError> {
        self.validate()?;
        let end = self.duration;
        for l in self.topology.specs_mut() {
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
                // cc and profile too: a resolved group says everything, so no
                // consumer keeps a fallback of its own
                g.cc = Some(p.cc);
                g.profile = Some(p.profile);
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
                g.ecn = Some(p.ecn);
                if let Some(app) = &mut g.app {
                    if app.send_buffer.is_some() {
                        app.when_full.get_or_insert(WhenFull::Block);
                    }
                }
            }
        }
        for l in self.topology.specs_mut() {
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
    /// Resolved scenario as JSON (defaults filled in, units normalized).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }
}

/// Fill a link's RED table with the values it will run with.
fn resolve_queue(l: &mut LinkSpec) {
    if l.queue == QueueKind::Red {
        let spec = l.red.take().unwrap_or_default();
        let p = red_params(&spec, l.rate.0, l.delay.0, l.buffer);
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
            ecn: Some(p.ecn),
            seed: p.seed,
        });
    }
}
