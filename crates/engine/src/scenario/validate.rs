//! Checks of a scenario's values; every error names the key path.

use super::*;
use crate::time::Freq;

impl ErrorSpec {
    pub(crate) fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let (name, allowed, required): (&str, &[&str], &[&str]) = match self.model {
            ErrorModelKind::Bernoulli => ("bernoulli", &["per"], &["per"]),
            ErrorModelKind::GilbertElliott => (
                "gilbert-elliott",
                &["p_gb", "p_bg", "per_good", "per_bad"],
                &["p_gb", "p_bg"],
            ),
            ErrorModelKind::List => ("list", &[], &[]),
        };
        match (&self.packets, self.model) {
            (Some(_), m) if m != ErrorModelKind::List => {
                return Err(err(
                    format!("{path}.packets"),
                    format!("does not apply to model = \"{name}\" (only to \"list\")"),
                ))
            }
            (None, ErrorModelKind::List) => {
                return Err(err(
                    format!("{path}.packets"),
                    "missing; a list of arrival numbers to lose (from 0, strictly increasing)",
                ))
            }
            (Some(p), _) => {
                if let Some(i) = p.windows(2).position(|w| w[1] <= w[0]) {
                    return Err(err(
                        format!("{path}.packets[{}]", i + 1),
                        format!(
                            "must be greater than the one before ({} after {}): the list is strictly increasing",
                            p[i + 1], p[i]
                        ),
                    ));
                }
            }
            _ => {}
        }
        let keys = [
            ("per", self.per),
            ("p_gb", self.p_gb),
            ("p_bg", self.p_bg),
            ("per_good", self.per_good),
            ("per_bad", self.per_bad),
        ];
        for (k, v) in keys {
            match v {
                Some(_) if !allowed.contains(&k) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        format!(
                            "does not apply to model = \"{name}\" (it takes {})",
                            allowed.join(", ")
                        ),
                    ))
                }
                Some(x) if !(0.0..=1.0).contains(&x) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        format!("must be a probability in [0, 1], got {x}"),
                    ))
                }
                None if required.contains(&k) => {
                    return Err(err(
                        format!("{path}.{k}"),
                        "missing; a probability in [0, 1]",
                    ))
                }
                _ => {}
            }
        }
        if self.model == ErrorModelKind::GilbertElliott && self.p_bg == Some(0.0) {
            return Err(err(
                format!("{path}.p_bg"),
                "must be positive (with p_bg = 0 the bad state never ends)",
            ));
        }
        Ok(())
    }
}

impl OutageSpec {
    pub(crate) fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err(format!("{path}.duration"), "must be positive"));
        }
        match (&self.every, &self.at) {
            (Some(_), Some(_)) => Err(err(
                format!("{path}.at"),
                "give either every (periodic) or at (a list), not both",
            )),
            (None, None) => Err(err(
                path,
                "needs every (e.g. every = \"5s\") or at (e.g. at = [\"10s\", \"30s\"])",
            )),
            (Some(every), None) => {
                if every.0 == 0 {
                    return Err(err(format!("{path}.every"), "must be positive"));
                }
                if self.distribution == OutageDistribution::Fixed && self.duration.0 >= every.0 {
                    return Err(err(
                        format!("{path}.duration"),
                        "must be shorter than every (the link would never come up)",
                    ));
                }
                Ok(())
            }
            (None, Some(at)) => {
                if self.start.is_some() {
                    return Err(err(
                        format!("{path}.start"),
                        "applies to a periodic schedule (every); a list gives its times in at",
                    ));
                }
                if at.is_empty() {
                    return Err(err(format!("{path}.at"), "needs at least one time"));
                }
                for (i, w) in at.windows(2).enumerate() {
                    if w[1].0 <= w[0].0 {
                        return Err(err(format!("{path}.at[{}]", i + 1), "times must increase"));
                    }
                }
                Ok(())
            }
        }
    }
}

impl RateShape {
    pub(crate) fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let RateShape::Shaped(t) = self else {
            return Ok(());
        };
        let allowed: &[&str] = match t.shape {
            ShapeKind::Sine => &["mean", "amplitude", "frequency", "phase"],
            ShapeKind::Sines => &["offset", "components"],
            ShapeKind::Piecewise => &["points", "repeat", "file"],
            ShapeKind::OnOff => &["rate", "on", "off"],
        };
        let present = [
            ("mean", t.mean.is_some()),
            ("amplitude", t.amplitude.is_some()),
            ("frequency", t.frequency.is_some()),
            ("phase", t.phase.is_some()),
            ("offset", t.offset.is_some()),
            ("components", t.components.is_some()),
            ("points", t.points.is_some()),
            ("repeat", t.repeat.is_some()),
            ("file", t.file.is_some()),
            ("rate", t.rate.is_some()),
            ("on", t.on.is_some()),
            ("off", t.off.is_some()),
        ];
        let shape_name = match t.shape {
            ShapeKind::Sine => "sine",
            ShapeKind::Sines => "sines",
            ShapeKind::Piecewise => "piecewise",
            ShapeKind::OnOff => "onoff",
        };
        if let Some((k, _)) = present.iter().find(|(k, set)| *set && !allowed.contains(k)) {
            return Err(err(
                format!("{path}.{k}"),
                format!(
                    "does not apply to shape = \"{shape_name}\" (it takes {})",
                    allowed.join(", ")
                ),
            ));
        }
        let check_freq = |p: String, f: &Option<Freq>| -> Result<(), ScenarioError> {
            match f {
                None => Err(err(p, "missing; e.g. \"0.4Hz\"")),
                Some(f) if !(f.0 > 0.0 && f.0.is_finite()) => Err(err(p, "must be positive")),
                _ => Ok(()),
            }
        };
        match t.shape {
            ShapeKind::Sine => {
                match t.mean {
                    None => return Err(err(format!("{path}.mean"), "missing; e.g. \"0.5Mbps\"")),
                    Some(m) if !(m.0 > 0.0) => {
                        return Err(err(format!("{path}.mean"), "must be positive"))
                    }
                    _ => {}
                }
                if t.amplitude.is_none() {
                    return Err(err(
                        format!("{path}.amplitude"),
                        "missing; e.g. \"0.5Mbps\" (amplitude > mean is clipped at 0)",
                    ));
                }
                check_freq(format!("{path}.frequency"), &t.frequency)?;
                if !t.phase.unwrap_or(0.0).is_finite() {
                    return Err(err(
                        format!("{path}.phase"),
                        "must be a finite number of radians",
                    ));
                }
            }
            ShapeKind::Sines => {
                let Some(comps) = &t.components else {
                    return Err(err(
                        format!("{path}.components"),
                        "missing; e.g. [{ amplitude = \"0.25Mbps\", frequency = \"0.4Hz\" }]",
                    ));
                };
                if comps.is_empty() {
                    return Err(err(format!("{path}.components"), "needs at least one sine"));
                }
                for (i, c) in comps.iter().enumerate() {
                    check_freq(
                        format!("{path}.components[{i}].frequency"),
                        &Some(c.frequency),
                    )?;
                    if !c.phase.is_finite() {
                        return Err(err(
                            format!("{path}.components[{i}].phase"),
                            "must be a finite number of radians",
                        ));
                    }
                }
                let offset = t.offset.map_or(0.0, |o| o.0);
                if !(offset > 0.0) {
                    return Err(err(
                        format!("{path}.offset"),
                        "must be positive (the long-run mean before clipping)",
                    ));
                }
            }
            ShapeKind::Piecewise => validate_points(path, t)?,
            ShapeKind::OnOff => {
                match t.rate {
                    None => return Err(err(format!("{path}.rate"), "missing; e.g. \"1Mbps\"")),
                    Some(r) if !(r.0 > 0.0 && r.0.is_finite()) => {
                        return Err(err(format!("{path}.rate"), "must be positive"))
                    }
                    _ => {}
                }
                for (k, p) in [("on", &t.on), ("off", &t.off)] {
                    let pp = format!("{path}.{k}");
                    let Some(p) = p else {
                        return Err(err(
                            pp,
                            "missing; e.g. { distribution = \"exponential\", mean = \"1s\" }",
                        ));
                    };
                    if p.mean.0 == 0 {
                        return Err(err(format!("{pp}.mean"), "must be positive"));
                    }
                    match (p.distribution, p.alpha) {
                        (PeriodDistribution::Pareto, None) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                "missing; the Pareto shape, > 1 (e.g. 1.5)",
                            ))
                        }
                        (PeriodDistribution::Pareto, Some(a)) if !(a > 1.0 && a.is_finite()) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                format!("must exceed 1 (the mean is infinite otherwise), got {a}"),
                            ))
                        }
                        (PeriodDistribution::Pareto, _) => {}
                        (_, Some(_)) => {
                            return Err(err(
                                format!("{pp}.alpha"),
                                "applies only to distribution = \"pareto\"",
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

/// A piecewise table: points present (a `file` must have been read by the
/// loader), first time 0, times nondecreasing, rates finite, some positive.
fn validate_points(path: &str, t: &ShapeSpec) -> Result<(), ScenarioError> {
    let Some(points) = &t.points else {
        if t.file.is_some() {
            return Err(err(
                format!("{path}.file"),
                "a trace file is read by tcplab's scenario loader (tcplab.load_scenario, \
                 `tcplab run`), which puts its rows into `points`; the engine takes only points",
            ));
        }
        return Err(err(
            format!("{path}.points"),
            "missing; e.g. [[\"0s\", \"1Mbps\"], [\"10s\", \"3Mbps\"]], or file = \"trace.csv\"",
        ));
    };
    if t.file.is_some() {
        return Err(err(
            format!("{path}.file"),
            "give either file or points, not both",
        ));
    }
    if points.is_empty() {
        return Err(err(
            format!("{path}.points"),
            "needs at least one [time, rate] point",
        ));
    }
    if points[0].0 .0 != 0 {
        return Err(err(
            format!("{path}.points[0]"),
            "the first point must be at time 0 (times are simulation time)",
        ));
    }
    for (i, w) in points.windows(2).enumerate() {
        if w[1].0 .0 < w[0].0 .0 {
            return Err(err(
                format!("{path}.points[{}]", i + 1),
                "times must not decrease (two equal times make a step)",
            ));
        }
    }
    for (i, p) in points.iter().enumerate() {
        if !p.1 .0.is_finite() {
            return Err(err(format!("{path}.points[{i}]"), "rate must be finite"));
        }
    }
    if !points.iter().any(|p| p.1 .0 > 0.0) {
        return Err(err(
            format!("{path}.points"),
            "every rate is 0: nothing would be sent",
        ));
    }
    if t.repeat == Some(true) && points.last().unwrap().0 .0 == 0 {
        return Err(err(
            format!("{path}.repeat"),
            "a repeating table needs a last time > 0 (its period)",
        ));
    }
    Ok(())
}

impl Scenario {
    /// The kernel's congestion control and defaults were once keys of the
    /// `[linux]` table; they are the flow group's `cc` and `profile` now, so
    /// one key means one thing on every engine.
    fn check_moved_linux_keys(&self) -> Result<(), ScenarioError> {
        let Some(lx) = &self.linux else {
            return Ok(());
        };
        if let Some(cc) = &lx.cc {
            return Err(err(
                "linux.cc",
                format!(
                    "moved to the flow groups: set cc = \"{cc}\" on each TCP group \
                     (flows.<label>.cc; every engine reads it)"
                ),
            ));
        }
        if let Some(gc) = &lx.group_cc {
            let (label, cc) = gc
                .iter()
                .next()
                .map(|(l, c)| (l.as_str(), c.as_str()))
                .unwrap_or(("<label>", "cubic"));
            return Err(err(
                "linux.group_cc",
                format!("moved to the flow groups: set flows.{label}.cc = \"{cc}\""),
            ));
        }
        if let Some(p) = &lx.profile {
            let new = match p {
                super::LinuxProfile::Linux => "profile = \"linux\"",
                super::LinuxProfile::Ns2 => "profile = \"ns2-2.35\" (the default: leave it unset)",
            };
            return Err(err(
                "linux.profile",
                format!(
                    "moved to the flow groups: set {new} on each TCP group (flows.<label>.profile)"
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        if self.duration.0 == 0 {
            return Err(err("duration", "must be positive"));
        }
        if self.warmup.0 >= self.duration.0 {
            return Err(err("warmup", "must be shorter than duration"));
        }
        self.check_moved_linux_keys()?;
        self.check_topology()?;
        for (which, l) in self.topology.specs() {
            check_link(&which, l, which == "topology.bottleneck")?;
            if l.reverse.is_some() {
                check_link(&format!("{which}.reverse"), &l.reversed(), false)?;
            }
        }
        for (which, l) in self.topology.specs() {
            let bias = l.threshold.as_ref().and_then(|t| t.bias.as_ref());
            if let Some(g) = bias.and_then(|b| b.keys().find(|g| !self.flows.contains_key(*g))) {
                return Err(err(
                    format!("{which}.threshold.bias.{g}"),
                    format!(
                        "no flow group {g:?} (groups: {})",
                        self.flows.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        if self.flows.is_empty() {
            return Err(err(
                "flows",
                "needs at least one flow group, e.g. [flows.tcp] kind = \"tcp\"",
            ));
        }
        for (name, g) in &self.flows {
            let p = format!("flows.{name}");
            if g.count == 0 {
                return Err(err(format!("{p}.count"), "must be at least 1"));
            }
            if let Starts::Each(v) = &g.start {
                if v.len() != g.count as usize {
                    return Err(err(
                        format!("{p}.start"),
                        format!(
                            "a list gives one start per flow: count is {}, the list has {}",
                            g.count,
                            v.len()
                        ),
                    ));
                }
                if g.joins.is_some() {
                    return Err(err(
                        format!("{p}.start"),
                        "a list of starts cannot be combined with joins (the schedule sets each flow's start)",
                    ));
                }
            }
            if let Some(stop) = g.stop {
                if stop.0 <= g.start.latest() {
                    return Err(err(format!("{p}.stop"), "must be after start"));
                }
            }
            check_dynamics(&p, g)?;
            for (which, o, base) in [
                ("access", &g.access, &self.topology.access),
                ("sink_access", &g.sink_access, &self.topology.sink_access),
            ] {
                match base {
                    Some(base) => check_link(&format!("{p}.{which}"), &base.with(o), false)?,
                    None if o.is_some() => {
                        return Err(err(
                            format!("{p}.{which}"),
                            format!(
                                "a {} has no {which} links (only a dumbbell or a parking lot)",
                                self.topology.kind_name()
                            ),
                        ))
                    }
                    None => {}
                }
            }
            if let Some(hops) = &g.hops {
                let k = self.topology.links.len() as u32;
                if self.topology.kind != TopologyKind::ParkingLot {
                    return Err(err(
                        format!("{p}.hops"),
                        "only a parking lot's flows choose their bottlenecks",
                    ));
                }
                if let Hops::Each(v) = hops {
                    if v.len() != g.count as usize {
                        return Err(err(
                            format!("{p}.hops"),
                            format!(
                                "a list of pairs gives one [first, last] per flow: count is {}, \
                                 the list has {}",
                                g.count,
                                v.len()
                            ),
                        ));
                    }
                }
                if let Some(&[first, last]) = hops.pairs().iter().find(|&&[f, l]| f > l || l >= k) {
                    return Err(err(
                        format!("{p}.hops"),
                        format!(
                            "must be [first, last] bottleneck indices with first ≤ last < {k} \
                             (the number of topology.links), got [{first}, {last}]"
                        ),
                    ));
                }
            }
            match g.kind {
                FlowKind::Udp => {
                    let Some(rate) = &g.rate else {
                        return Err(err(
                            format!("{p}.rate"),
                            "a UDP flow needs a rate, e.g. rate = \"0.5Mbps\"",
                        ));
                    };
                    rate.validate(&format!("{p}.rate"))?;
                    let piecewise =
                        matches!(rate, RateShape::Shaped(t) if t.shape == ShapeKind::Piecewise);
                    if !piecewise && !rate.has_positive_mean() {
                        return Err(err(format!("{p}.rate"), "must be positive"));
                    }
                    if g.packet_size == 0 {
                        return Err(err(format!("{p}.packet_size"), "must be positive"));
                    }
                    let tcp_only = [
                        ("cc", g.cc.is_some()),
                        ("variant", g.variant.is_some()),
                        ("profile", g.profile.is_some()),
                        ("alpha", g.alpha.is_some()),
                        ("beta", g.beta.is_some()),
                        ("window", g.window.is_some()),
                        ("max_cwnd", g.max_cwnd.is_some()),
                        ("initial_cwnd", g.initial_cwnd.is_some()),
                        ("initial_ssthresh", g.initial_ssthresh.is_some()),
                        ("initial_rto", g.initial_rto.is_some()),
                        ("min_rto", g.min_rto.is_some()),
                        ("max_rto", g.max_rto.is_some()),
                        ("tick", g.tick.is_some()),
                        ("tick_seed", g.tick_seed.is_some()),
                        ("dupack_threshold", g.dupack_threshold.is_some()),
                        ("limited_transmit", g.limited_transmit.is_some()),
                        ("bug_fix", g.bug_fix.is_some()),
                        ("syn", g.syn.is_some()),
                        ("header_size", g.header_size.is_some()),
                        ("delayed_ack", g.delayed_ack.is_some()),
                        ("delack_interval", g.delack_interval.is_some()),
                        ("ecn", g.ecn.is_some()),
                        ("app", g.app.is_some()),
                    ];
                    if let Some((key, _)) = tcp_only.iter().find(|(_, set)| *set) {
                        return Err(err(
                            format!("{p}.{key}"),
                            "is a TCP option; this group has kind = \"udp\"",
                        ));
                    }
                }
                FlowKind::Tcp => {
                    if g.rate.is_some() {
                        return Err(err(
                            format!("{p}.rate"),
                            "is a UDP option; a TCP flow sends as fast as its window allows \
                             (or as its app writes)",
                        ));
                    }
                    if g.send_jitter.is_some() {
                        return Err(err(format!("{p}.send_jitter"), "is a UDP option"));
                    }
                    if let Some(app) = &g.app {
                        let ap = format!("{p}.app");
                        if !(app.rate.0 > 0.0 && app.rate.0.is_finite()) {
                            return Err(err(format!("{ap}.rate"), "must be positive"));
                        }
                        if app.send_buffer == Some(0) {
                            return Err(err(
                                format!("{ap}.send_buffer"),
                                "must be at least 1 packet (leave it out for no limit)",
                            ));
                        }
                        if app.when_full.is_some() && app.send_buffer.is_none() {
                            return Err(err(
                                format!("{ap}.when_full"),
                                "needs a send_buffer (without one the buffer is never full)",
                            ));
                        }
                        if app.read.0 == 0 {
                            return Err(err(format!("{ap}.read"), "must be positive"));
                        }
                        if app.interval.0 == 0 {
                            return Err(err(format!("{ap}.interval"), "must be positive"));
                        }
                    }
                    let t = g.tcp_params();
                    if !(t.alpha > 0.0 && t.alpha.is_finite()) {
                        return Err(err(
                            format!("{p}.alpha"),
                            "must be a positive number of packets per RTT",
                        ));
                    }
                    if !(t.beta > 0.0 && t.beta < 1.0) {
                        return Err(err(format!("{p}.beta"), "must be in (0, 1)"));
                    }
                    // TCP(α, β) is ns-2's Reno agent; Linux's Reno and CUBIC
                    // have their own constants (resolve fills the defaults in)
                    let linux = t.profile == Profile::Linux;
                    if t.cc != Cc::Reno || linux {
                        for (key, v, d) in [("alpha", t.alpha, ALPHA), ("beta", t.beta, BETA)] {
                            if v != d {
                                return Err(err(
                                    format!("{p}.{key}"),
                                    format!(
                                        "applies to cc = \"reno\" under an ns-2 profile (TCP(α, β)); \
                                         this group has cc = \"{}\"{}",
                                        t.cc.name(),
                                        if linux { " and profile = \"linux\"" } else { "" }
                                    ),
                                ));
                            }
                        }
                    }
                    // BBR as tcplab runs it (tcp_bbr.c) reads delivery-rate samples
                    // and Linux's count of packets in flight, which only Linux's SACK
                    // recovery keeps: under ns-2's recovery (go-back-N after a timeout,
                    // SACK blocks ignored outside recovery) its samples count a
                    // recovery's packets at once and it overshoots, then stalls on
                    // packets that left before the timeout (measured: 4 % of the link
                    // on c-parallel-sack, 0.01 % for one flow). ns-2 itself has no BBR.
                    if t.cc == Cc::Bbr {
                        if !linux {
                            return Err(err(
                                format!("{p}.cc"),
                                format!(
                                    "\"bbr\" runs under profile = \"linux\" only (this group has profile = \"{}\"): \
                                     BBR paces by delivery-rate samples and Linux's count of packets in flight, \
                                     which ns-2's loss recovery does not keep; add profile = \"linux\"",
                                    t.profile.name()
                                ),
                            ));
                        }
                        if t.variant != Variant::Sack {
                            return Err(err(
                                format!("{p}.variant"),
                                format!(
                                    "cc = \"bbr\" needs variant = \"sack\" (this group has \"{}\"): \
                                     tcplab's BBR counts what SACKs report as delivered",
                                    t.variant.name()
                                ),
                            ));
                        }
                    }
                    // CUBIC over Reno's or NewReno's recovery: one CUBIC flow on a clean
                    // dumbbell with a one-BDP buffer kept the link 64-78 % busy with
                    // 0.5-3.5 % losses (SACK and Tahoe: 97-100 %, 0.03-0.2 %). Traced
                    // (10 Mb/s, 1 BDP, ns2-2001, NewReno): CUBIC's convex growth overran
                    // the pipe by 6 packets in one round trip, 6 drops 21 packets apart;
                    // NewReno repairs one per round trip, so the recovery outlasted the
                    // retransmission timer; after the timeout one cumulative ack of 400
                    // packets took the window from 1 to 97 and its burst lost 40. Linux
                    // runs CUBIC with SACK, which repairs every hole in one round trip.
                    if t.cc == Cc::Cubic && matches!(t.variant, Variant::Reno | Variant::NewReno) {
                        return Err(err(
                            format!("{p}.variant"),
                            format!(
                                "cc = \"cubic\" runs with variant = \"sack\" (or \"tahoe\"), not \"{}\": \
                                 CUBIC's growth overruns the pipe by several packets at once, Reno's and \
                                 NewReno's recovery repair one loss per round trip and end in timeouts \
                                 (one flow kept a clean link only 64-78 % busy; docs/matrix.md)",
                                t.variant.name()
                            ),
                        ));
                    }
                    if t.packet_size <= t.header_size {
                        return Err(err(
                            format!("{p}.packet_size"),
                            format!("must exceed the {}-byte header", t.header_size),
                        ));
                    }
                    if t.window == 0 {
                        return Err(err(format!("{p}.window"), "must be at least 1 packet"));
                    }
                    if t.initial_cwnd == 0 {
                        return Err(err(
                            format!("{p}.initial_cwnd"),
                            "must be at least 1 packet",
                        ));
                    }
                    if t.dupack_threshold == 0 {
                        return Err(err(format!("{p}.dupack_threshold"), "must be at least 1"));
                    }
                    if t.tick_ns == 0 {
                        return Err(err(format!("{p}.tick"), "must be positive"));
                    }
                    if t.min_rto_ns > t.max_rto_ns {
                        return Err(err(format!("{p}.min_rto"), "must not exceed max_rto"));
                    }
                    if let Some(k) = t.tick_seed {
                        // ns-2's RNG takes raw seeds in 1..2^31-1; flow j uses k + j
                        if k == 0 || k as u64 + g.count.max(1) as u64 > (1u64 << 31) - 1 {
                            return Err(err(
                                format!("{p}.tick_seed"),
                                "must be at least 1, and tick_seed + count at most 2^31 - 1",
                            ));
                        }
                    }
                }
            }
        }
        match self.measure.reference.as_str() {
            "capacity" | "free" => {}
            other => {
                crate::time::parse_rate(other).map_err(|_| {
                    err("measure.reference", format!("expected \"capacity\", \"free\" or a rate such as \"0.5Mbps\", got {other:?}"))
                })?;
            }
        }
        Ok(())
    }
}

pub(crate) fn check_link(
    path: &str,
    l: &LinkSpec,
    _is_bottleneck: bool,
) -> Result<(), ScenarioError> {
    if !(l.rate.0 > 0.0) {
        return Err(err(
            format!("{path}.rate"),
            "must be positive, e.g. \"10Mbps\"",
        ));
    }
    check_queue(path, l)?;
    if let Some(e) = &l.errors {
        e.validate(&format!("{path}.errors"))?;
    }
    if let Some(o) = &l.outages {
        o.validate(&format!("{path}.outages"))?;
    }
    Ok(())
}

/// Join and leave schedules of group `g` (key path `p`).
pub(crate) fn check_dynamics(p: &str, g: &FlowGroup) -> Result<(), ScenarioError> {
    if g.joins.is_some() && g.leaves.is_some() {
        return Err(err(
            format!("{p}.leaves"),
            "a group either joins or leaves; put the two schedules in two groups",
        ));
    }
    if let Some(j) = &g.joins {
        let q = format!("{p}.joins");
        if !(j.factor > 1.0 && j.factor.is_finite()) {
            return Err(err(
                format!("{q}.factor"),
                format!(
                    "must be greater than 1 (2 doubles the active flows), got {}",
                    j.factor
                ),
            ));
        }
        if j.initial == 0 {
            return Err(err(format!("{q}.initial"), "must be at least 1"));
        }
        if j.initial > g.count {
            return Err(err(
                format!("{q}.initial"),
                format!("must not exceed count ({}), got {}", g.count, j.initial),
            ));
        }
        if j.every.0 == 0 {
            return Err(err(format!("{q}.every"), "must be positive"));
        }
        if j.at.0 <= g.start.latest() {
            return Err(err(format!("{q}.at"), "must be after the group's start"));
        }
        if let Some(stop) = g.stop {
            if j.at.0 >= stop.0 {
                return Err(err(format!("{q}.at"), "must be before the group's stop"));
            }
        }
    }
    if let Some(l) = &g.leaves {
        let q = format!("{p}.leaves");
        if g.stop.is_some() {
            return Err(err(
                format!("{p}.stop"),
                "cannot be combined with leaves (the schedule sets each flow's stop)",
            ));
        }
        if !(l.factor > 0.0 && l.factor < 1.0) {
            return Err(err(
                format!("{q}.factor"),
                format!(
                    "must be in (0, 1) (0.5 halves the active flows), got {}",
                    l.factor
                ),
            ));
        }
        if l.min > g.count {
            return Err(err(
                format!("{q}.min"),
                format!("must not exceed count ({}), got {}", g.count, l.min),
            ));
        }
        if l.every.0 == 0 {
            return Err(err(format!("{q}.every"), "must be positive"));
        }
        if l.at.0 <= g.start.latest() {
            return Err(err(format!("{q}.at"), "must be after the group's start"));
        }
    }
    Ok(())
}

/// The queue discipline's table matches `queue` and its values make sense
/// for this link.
pub(crate) fn check_queue(path: &str, l: &LinkSpec) -> Result<(), ScenarioError> {
    let kind = match l.queue {
        QueueKind::DropTail => "droptail",
        QueueKind::Red => "red",
        QueueKind::Threshold => "threshold",
    };
    if l.red.is_some() && l.queue != QueueKind::Red {
        return Err(err(
            format!("{path}.red"),
            format!("applies only with queue = \"red\" (this link has queue = \"{kind}\")"),
        ));
    }
    if l.threshold.is_some() && l.queue != QueueKind::Threshold {
        return Err(err(
            format!("{path}.threshold"),
            format!("applies only with queue = \"threshold\" (this link has queue = \"{kind}\")"),
        ));
    }
    let b = l.buffer;
    match l.queue {
        QueueKind::DropTail => {}
        QueueKind::Red => {
            let p = red_params(&l.red.clone().unwrap_or_default(), l.rate.0, l.delay.0, b);
            let at = |k: &str| format!("{path}.red.{k}");
            if !(p.min_thresh > 0.0 && p.min_thresh.is_finite()) {
                return Err(err(
                    at("min_thresh"),
                    "must be a positive number of packets",
                ));
            }
            // equal thresholds are a step (DCTCP's marking at K; ns-2's red.cc
            // takes th_diff = 1 then)
            if !(p.max_thresh >= p.min_thresh && p.max_thresh.is_finite()) {
                return Err(err(
                    at("min_thresh"),
                    format!(
                        "must not exceed max_thresh (got min_thresh {} and max_thresh {})",
                        p.min_thresh, p.max_thresh
                    ),
                ));
            }
            if p.max_thresh > b as f64 {
                return Err(err(
                    at("max_thresh"),
                    format!(
                        "{} exceeds the buffer ({b} packets); RED's thresholds must fit in it",
                        p.max_thresh
                    ),
                ));
            }
            if !(p.max_p > 0.0 && p.max_p <= 1.0) {
                return Err(err(
                    at("max_p"),
                    format!("must be in (0, 1], got {}", p.max_p),
                ));
            }
            if !(p.weight > 0.0 && p.weight <= 1.0) {
                return Err(err(
                    at("weight"),
                    format!("must be in (0, 1], got {}", p.weight),
                ));
            }
            if p.mean_packet_size == 0 {
                return Err(err(at("mean_packet_size"), "must be at least 1 byte"));
            }
            if let Some(k) = p.seed {
                // ns-2's RNG takes seeds 1 .. 2^31 - 2 (0 would mean "from the clock")
                if !(1..=2_147_483_646).contains(&k) {
                    return Err(err(
                        at("seed"),
                        format!("must be in 1 .. 2^31 - 2 (an ns-2 generator seed), got {k}"),
                    ));
                }
            }
        }
        QueueKind::Threshold => {
            let Some(t) = &l.threshold else {
                return Err(err(
                    format!("{path}.threshold"),
                    "queue = \"threshold\" needs its table, e.g. threshold = { threshold = 3, immunity = \"240ms\" }",
                ));
            };
            let at = |k: &str| format!("{path}.threshold.{k}");
            if t.threshold == 0 {
                return Err(err(at("threshold"), "must be at least 1 packet"));
            }
            if t.threshold >= b {
                return Err(err(
                    at("threshold"),
                    format!(
                        "{} is not below the buffer ({b} packets), the dropper's hard limit; make the buffer large",
                        t.threshold
                    ),
                ));
            }
            if t.immunity.0 == 0 {
                return Err(err(
                    at("immunity"),
                    "must be positive (paper C: a factor of the RTT)",
                ));
            }
            if let Some(bias) = &t.bias {
                if t.selection != Selection::RateIndependent {
                    return Err(err(
                        at("bias"),
                        "applies only with selection = \"rate-independent\"",
                    ));
                }
                if let Some((g, w)) = bias.iter().find(|(_, w)| !(**w > 0.0 && w.is_finite())) {
                    return Err(err(
                        format!("{}.{g}", at("bias")),
                        format!("must be a positive weight, got {w}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

impl Topology {
    /// The kind's name as a scenario spells it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::Path => "path",
            TopologyKind::ParkingLot => "parking-lot",
        }
    }
}

impl Scenario {
    /// Each topology kind has the keys it needs and none it would ignore.
    fn check_topology(&self) -> Result<(), ScenarioError> {
        let t = &self.topology;
        let kind = t.kind_name();
        let (needs, refuses): (&[&str], &[&str]) = match t.kind {
            TopologyKind::Dumbbell => (&["bottleneck", "access", "sink_access"], &["links"]),
            TopologyKind::Path => (&["links"], &["bottleneck", "access", "sink_access"]),
            TopologyKind::ParkingLot => (&["links", "access", "sink_access"], &["bottleneck"]),
        };
        let has = |k: &str| match k {
            "bottleneck" => t.bottleneck.is_some(),
            "access" => t.access.is_some(),
            "sink_access" => t.sink_access.is_some(),
            _ => !t.links.is_empty(),
        };
        if let Some(k) = needs.iter().find(|k| !has(k)) {
            let example = if *k == "links" {
                "links = [{ rate = \"10Mbps\", delay = \"2ms\", buffer = 100 }, …]"
            } else {
                "{ rate = \"10Mbps\", delay = \"5ms\", buffer = 100 }"
            };
            return Err(err(
                format!("topology.{k}"),
                format!("a {kind} needs it, e.g. {example}"),
            ));
        }
        if let Some(k) = refuses.iter().find(|k| has(k)) {
            return Err(err(
                format!("topology.{k}"),
                format!("a {kind} has no such key (it needs {})", needs.join(", ")),
            ));
        }
        // the longest route: every link of a path; a parking lot's long flow
        // with its access and sink-access links
        let longest = t.links.len()
            + if t.kind == TopologyKind::ParkingLot {
                2
            } else {
                0
            };
        if longest > MAX_ROUTE_LINKS {
            return Err(err(
                "topology.links",
                format!(
                    "a route crosses at most {MAX_ROUTE_LINKS} links (a packet keeps its place \
                     on its route in one byte); this {kind}'s longest crosses {longest}"
                ),
            ));
        }
        Ok(())
    }
}

/// The most links one route may cross (`Packet::hop` is a byte).
pub const MAX_ROUTE_LINKS: usize = u8::MAX as usize;
