//! The simulator: builds the network from a [`Plan`] (links, and each flow's
//! routes as lists of link ids), runs the event loop, and reports per-flow
//! and per-link counters over the measurement window (warmup, end].

use crate::net::link::{Admit, DropCause, Impairment, Link, LinkSnapshot};
use crate::net::packet::{Kind, Packet, FORWARD};
use crate::net::queue::Queue;
use crate::record::{Recorder, Table};
use crate::rng::{stream, Rng};
use crate::scenario::{
    outage_schedule, Direction, ErrorModelKind, FlowKind, FlowPlan, LinkPlan, LinkSpec, Plan,
    QueuePlan, RateShape, Scenario, Selection, Variant,
};
use crate::sched::{Event, Scheduler};
use crate::tcp::sender::TcpSender;
use crate::tcp::sink::TcpSink;
use crate::time::{secs, SimTime};
use crate::traffic::app::CbrApp;
use crate::traffic::shape::Shape;
use crate::traffic::udp::UdpSource;

pub use crate::scenario::flow_times;
use serde::Serialize;

enum Agent {
    Tcp {
        snd: Box<TcpSender>,
        sink: TcpSink,
    },
    Udp {
        src: UdpSource,
        received_packets: u64,
        received_bytes: u64,
    },
}

struct FlowInfo {
    group: String,
    kind: FlowKind,
    variant: Option<Variant>,
    start: SimTime,
    stop: SimTime,
    packet_size: u32,
}

#[derive(Clone, Copy, Default)]
struct FlowCount {
    delivered_packets: u64,
    delivered_bytes: u64,
    sent: u64,
    retransmissions: u64,
    timeouts: u64,
    fast_retransmits: u64,
    drops: u64,
}

pub struct LinkInfo {
    pub name: String,
    pub direction: &'static str,
}

/// Per-flow results over the measurement window.
#[derive(Serialize, Debug, Clone)]
pub struct FlowResult {
    pub id: u32,
    pub group: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    pub start_s: f64,
    pub stop_s: f64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Payload bits delivered in order per second of the window.
    pub goodput_bps: f64,
    /// The same in bits on the wire (headers included).
    pub throughput_bps: f64,
    pub sent_packets: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub drops: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct LinkResult {
    pub id: u32,
    pub name: String,
    pub direction: &'static str,
    pub rate_bps: f64,
    pub arrivals: u64,
    /// Every loss on the link (queue drops and impairment losses).
    pub drops: u64,
    /// Losses to the link's impairment (errors, outages), included in `drops`.
    pub errors: u64,
    pub departures: u64,
    pub utilization: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct RunSummary {
    pub engine: &'static str,
    pub engine_version: &'static str,
    pub measured_s: f64,
    pub reference_bps: f64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
}

pub struct RunOutput {
    pub summary: RunSummary,
    pub traces: Vec<Table>,
}

pub struct Sim {
    end: SimTime,
    warmup: SimTime,
    reference_bps: f64,
    sched: Scheduler,
    links: Vec<Link>,
    link_info: Vec<LinkInfo>,
    /// Every route's hops, route after route; a flow's route of direction
    /// `d` is `hops[route_at[flow][d].0 ..][.. route_at[flow][d].1]`.
    hops: Vec<Hop>,
    route_at: Vec<[(u32, u32); 2]>,
    flows: Vec<FlowInfo>,
    agents: Vec<Agent>,
    /// Per flow: the application of a TCP flow that is not a bulk transfer.
    apps: Vec<Option<CbrApp>>,
    out: Vec<Packet>,
    rec: Recorder,
    flow_drops: Vec<u64>,
    /// The warm-up snapshot has been taken (or there is none).
    warm_done: bool,
    warm_flows: Option<Vec<FlowCount>>,
    warm_links: Option<Vec<LinkSnapshot>>,
    /// Some threshold dropper needs the sim to pick its victims.
    selectors: bool,
    /// Per link: the TCP flows crossing it, with their selection weights
    /// (empty unless the link has a threshold dropper).
    candidates: Vec<Vec<(u32, f64)>>,
}

/// One hop of a route: the link, and how a packet leaving it goes on (see
/// `forward`).
#[derive(Clone, Copy)]
struct Hop {
    link: u32,
    next: Next,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// By a delivery event of the link.
    Event,
    /// At once to the next link of the route, which has no other input.
    Link,
    /// Last hop, forward: at once to a receiver that may take a packet as
    /// soon as the packet's arrival time is known, when the link holds
    /// nothing else.
    Receiver,
}

/// A planned link direction, built: its queue discipline draws from the
/// link's own stream (its id), and so do its packet errors (forward
/// direction only); its outages are the plan's list.
pub fn build_link(l: &LinkPlan, seed: u64) -> Link {
    let mut link = new_link(l, seed);
    if !l.outages.is_empty() {
        link.set_outages(Box::new(l.outages.clone().into_iter()));
    }
    link
}

/// A planned link without its outages.
fn new_link(l: &LinkPlan, seed: u64) -> Link {
    let queue = Queue::from_plan(
        &l.queue,
        l.rate_bps,
        l.buffer_pkts,
        Rng::stream(seed, stream::QUEUE, l.id as u64),
    );
    let mut link = Link::new(l.rate_bps, l.delay_ns, queue);
    if let Some(e) = &l.errors {
        let rng = Rng::stream(seed, stream::LINK_ERRORS, l.id as u64);
        link.impairment = match e.model {
            ErrorModelKind::Bernoulli => match e.per.unwrap_or(0.0) {
                per if per > 0.0 => Impairment::Bernoulli { per, rng },
                _ => Impairment::None,
            },
            ErrorModelKind::GilbertElliott => Impairment::GilbertElliott {
                p_gb: e.p_gb.unwrap_or(0.0),
                p_bg: e.p_bg.unwrap_or(1.0),
                per_good: e.per_good.unwrap_or(0.0),
                per_bad: e.per_bad.unwrap_or(1.0),
                bad: false,
                rng,
            },
            ErrorModelKind::List => Impairment::List {
                drops: e.packets.clone().unwrap_or_default().into_boxed_slice(),
                next: 0,
                count: 0,
            },
        };
    }
    link
}

/// One direction of a duplex link built from its spec, outside a plan (the
/// linux engine's emulated links): link `index`, whose duplex link's
/// forward direction is `duplex`; its outages are drawn lazily, with no end.
pub fn make_link(l: &LinkSpec, forward: bool, seed: u64, index: usize, duplex: usize) -> Link {
    let plan = LinkPlan {
        id: index as u32,
        name: String::new(),
        direction: if forward {
            Direction::Forward
        } else {
            Direction::Reverse
        },
        duplex: duplex as u32,
        rate_bps: l.rate.0,
        delay_ns: l.delay.0,
        buffer_pkts: l.buffer,
        queue: QueuePlan::of(l),
        errors: if forward { l.errors.clone() } else { None },
        outages: Vec::new(),
    };
    let mut link = new_link(&plan, seed);
    if let Some(o) = &l.outages {
        link.set_outages(Box::new(outage_schedule(o, seed, duplex as u32)));
    }
    link
}

/// The outages [start, end) in ns that link `link` goes through before the
/// run ends (empty without outages; None if there is no such link): for
/// exporters that must play the same schedule.
pub fn link_outages(plan: &Plan, link: u32) -> Option<Vec<(SimTime, SimTime)>> {
    let l = plan.links.get(link as usize)?;
    Some(
        l.outages
            .iter()
            .copied()
            .take_while(|&(s, _)| s < plan.end_ns)
            .collect(),
    )
}

impl Sim {
    /// Build the network of a plan.
    pub fn new(plan: &Plan) -> Sim {
        let end = plan.end_ns;
        let seed = plan.seed;
        let links: Vec<Link> = plan.links.iter().map(|l| build_link(l, seed)).collect();
        let link_info = plan
            .links
            .iter()
            .map(|l| LinkInfo {
                name: l.name.clone(),
                direction: match l.direction {
                    Direction::Forward => "forward",
                    Direction::Reverse => "reverse",
                },
            })
            .collect();
        let mut flows = Vec::new();
        let mut agents = Vec::new();
        let mut apps = Vec::new();
        let mut sched = Scheduler::new();
        for f in &plan.flows {
            let id = f.id;
            let agent = match (&f.tcp, &f.udp) {
                (Some(t), _) => {
                    let p = t.params;
                    Agent::Tcp {
                        snd: Box::new(TcpSender::new(id, p, t.boot_time_s)),
                        sink: TcpSink::new(
                            id,
                            p.variant == Variant::Sack,
                            p.delayed_ack,
                            p.delack_interval_ns,
                            p.syn,
                            t.payload_bytes,
                        ),
                    }
                }
                (None, Some(_)) => Agent::Udp {
                    src: udp_source_of(f, seed),
                    received_packets: 0,
                    received_bytes: 0,
                },
                (None, None) => unreachable!("a flow is TCP or UDP"),
            };
            agents.push(agent);
            apps.push(
                f.app
                    .as_ref()
                    .zip(f.tcp.as_ref())
                    .map(|(a, t)| CbrApp::new(&a.spec(), t.payload_bytes)),
            );
            flows.push(FlowInfo {
                group: f.group.clone(),
                kind: f.kind,
                variant: f.tcp.map(|t| t.params.variant),
                start: f.start_ns,
                stop: f.stop_ns,
                packet_size: f.packet_size,
            });
            // a flow whose start falls after its stop never sends
            if f.start_ns < f.stop_ns {
                sched.schedule(f.start_ns, Event::FlowStart(id));
                if f.stop_ns < end {
                    sched.schedule(f.stop_ns, Event::FlowStop(id));
                }
            }
        }
        let mut rec = Recorder::new(&plan.trace.spec());
        if apps.iter().any(Option::is_some) {
            rec.playback = Some(Default::default());
        }
        if plan.warmup_ns > 0 {
            sched.schedule(plan.warmup_ns, Event::Warmup);
        }
        if rec.interval_ns > 0 && (rec.tcp.is_some() || rec.rtt.is_some()) {
            sched.schedule(0, Event::Sample);
        }
        let nflows = flows.len();
        let single_input = single_input_links(links.len(), &plan.flows);
        let candidates = victim_candidates(&links, &plan.flows);
        let mut hops = Vec::new();
        let mut route_at = Vec::with_capacity(nflows);
        for (f, a) in plan.flows.iter().zip(&agents) {
            // the receiver takes packets without an event (see `forward`)
            let sink_chained = match a {
                Agent::Tcp { sink, .. } => !sink.delayed_ack && apps[f.id as usize].is_none(),
                Agent::Udp { .. } => rec.udp.is_none(),
            };
            let mut at = [(0, 0); 2];
            for (d, route) in [&f.route.forward, &f.route.reverse].into_iter().enumerate() {
                // a packet keeps its place on the route in `Packet::hop`, a u8
                assert!(
                    route.len() <= u8::MAX as usize,
                    "a route has at most 255 links"
                );
                at[d] = (hops.len() as u32, route.len() as u32);
                for (h, &link) in route.iter().enumerate() {
                    let next = match route.get(h + 1) {
                        Some(&n) if single_input[n as usize] => Next::Link,
                        None if d == FORWARD as usize && sink_chained => Next::Receiver,
                        _ => Next::Event,
                    };
                    hops.push(Hop { link, next });
                }
            }
            route_at.push(at);
        }
        let selectors = links.iter().any(|l| match &l.queue {
            Queue::Threshold(t) => t.selection != Selection::FirstArrival,
            _ => false,
        });
        let warmup = plan.warmup_ns;
        Sim {
            end,
            warmup,
            reference_bps: plan.reference_bps,
            sched,
            links,
            link_info,
            hops,
            route_at,
            flows,
            agents,
            apps,
            out: Vec::with_capacity(64),
            rec,
            flow_drops: vec![0; nflows],
            warm_done: warmup == 0,
            warm_flows: None,
            warm_links: None,
            selectors,
            candidates,
        }
    }

    /// Run to the end and report.
    pub fn run(self) -> RunOutput {
        self.run_until_stopped(|| false)
            .expect("a run that is never stopped ends")
    }

    /// Run to the end and report, asking `stop` every 2^15 events (a few
    /// milliseconds of work) whether to give up; None if it said so (Ctrl-C).
    pub fn run_until_stopped(mut self, mut stop: impl FnMut() -> bool) -> Option<RunOutput> {
        let end = self.end;
        let mut polls: u32 = 0;
        while let Some((now, ev)) = self.sched.pop_until(end) {
            polls = polls.wrapping_add(1);
            if polls % (1 << 15) == 0 && stop() {
                return None;
            }
            match ev {
                Event::LinkDeliver(l) => {
                    self.links[l as usize].delivering();
                    while let Some((_, p)) = self.links[l as usize].pop_arrived(now) {
                        self.forward(p, now);
                    }
                    if let Some(at) = self.links[l as usize].delivered() {
                        self.sched.schedule(at, Event::LinkDeliver(l));
                    }
                }
                Event::Rto(f) => self.rto_event(f, now),
                Event::DelAck(f) => {
                    if let Agent::Tcp { sink, .. } = &mut self.agents[f as usize] {
                        if let Some(a) = sink.on_delack_timer(now) {
                            self.forward(a, now);
                        }
                    }
                }
                Event::UdpSend(f) => self.udp_send(f, now),
                Event::AppWrite(f) => self.app_write(f, now),
                Event::PlaybackRead(f) => self.playback_read(f, now),
                Event::FlowStart(f) => self.start_flow(f, now),
                Event::FlowStop(f) => match &mut self.agents[f as usize] {
                    // An application's last write is before the stop (no more
                    // are scheduled); what it wrote is still sent, as in ns-2.
                    Agent::Tcp { .. } if self.apps[f as usize].is_some() => {}
                    Agent::Tcp { snd, .. } => snd.stop(),
                    Agent::Udp { src, .. } => src.active = false,
                },
                Event::Warmup => {
                    self.warm_done = true;
                    self.warm_flows = Some(self.flow_counts());
                    self.warm_links = Some(self.link_counts(now));
                    self.release_held(end);
                }
                Event::Sample => {
                    for f in 0..self.agents.len() {
                        self.trace_tcp(f as u32, now);
                    }
                    self.sched
                        .schedule(now + self.rec.interval_ns, Event::Sample);
                }
            }
        }
        Some(self.report())
    }

    /// After the warm-up snapshot: the receivers' links that held packets
    /// over the warm-up instant (see `forward`) hand them all on now, so
    /// that these receivers take packets without events again (their
    /// delivery events, still queued, find nothing left).
    fn release_held(&mut self, end: SimTime) {
        for r in 0..self.route_at.len() {
            let (at, len) = self.route_at[r][FORWARD as usize];
            let last = self.hops[(at + len - 1) as usize];
            if last.next != Next::Receiver {
                continue;
            }
            let l = last.link as usize;
            while let Some((at, p)) = self.links[l].pop_arrived(end) {
                self.forward(p, at);
            }
        }
    }

    /// Move a packet to its next link, or hand it to the agent at the end of
    /// its route. A link whose successor on the route has no other input
    /// hands the packet on at once (see `Link::pass`): the packet costs an
    /// event only where it meets other traffic or an agent — four per data
    /// packet and its ack on the dumbbell.
    #[inline]
    fn forward(&mut self, mut p: Packet, mut now: SimTime) {
        let (base, len) = self.route_at[p.flow as usize][p.dir as usize];
        let class = (p.kind == Kind::Udp) as u8;
        let end = base + len;
        let mut i = base + p.hop as u32;
        while i < end {
            let Hop { link: l, next } = self.hops[i as usize];
            i += 1;
            // Chained: the next link has no other input, or this is the last
            // hop and the receiver takes the packet at once (it would be the
            // link's only pending delivery, so nothing it holds can overtake).
            let chained = match next {
                Next::Link => true,
                Next::Event => false,
                Next::Receiver => self.links[l as usize].next_delivery().is_none(),
            };
            if chained {
                match self.links[l as usize].pass(&p, now) {
                    Err(cause) => {
                        self.dropped(&p, l, now, cause);
                        return;
                    }
                    Ok((at, wait)) => {
                        if let Some(start) = wait {
                            self.rec.queue_wait(now, start, l, class);
                        }
                        if self.selectors && self.links[l as usize].queue.wants_victim() {
                            self.select_victim(l, now);
                        }
                        if next == Next::Receiver
                            && (at > self.end || (!self.warm_done && at >= self.warmup))
                        {
                            // It reaches the receiver after the run, or after a
                            // warm-up snapshot still to be taken: an event
                            // delivers it then (or never), as for any packet.
                            p.hop = (i - base) as u8;
                            if let Some(t) = self.links[l as usize].hold(p, at) {
                                self.sched.schedule(t, Event::LinkDeliver(l));
                            }
                            return;
                        }
                        now = at;
                        continue;
                    }
                }
            }
            // where the packet goes on when the link delivers it
            p.hop = (i - base) as u8;
            match self.links[l as usize].arrive(p, now) {
                Admit::Dropped(cause) => self.dropped(&p, l, now, cause),
                Admit::Admitted { schedule, wait } => {
                    if let Some(at) = schedule {
                        self.sched.schedule(at, Event::LinkDeliver(l));
                    }
                    if let Some(start) = wait {
                        self.rec.queue_wait(now, start, l, class);
                    }
                    if self.selectors && self.links[l as usize].queue.wants_victim() {
                        self.select_victim(l, now);
                    }
                }
            }
            return;
        }
        let f = p.flow as usize;
        match &mut self.agents[f] {
            Agent::Tcp { sink, snd } => {
                if p.dir == FORWARD {
                    let had_delack = sink.delack_deadline.is_some();
                    let ack = sink.on_data(&p, now);
                    if !had_delack {
                        if let Some(d) = sink.delack_deadline {
                            self.sched.schedule(d, Event::DelAck(p.flow));
                        }
                    }
                    if let Some(a) = ack {
                        self.forward(a, now);
                    }
                } else {
                    let mut out = std::mem::take(&mut self.out);
                    snd.on_ack(&p, sink.take_sack(&p), now, &mut out);
                    self.after_sender(p.flow, now, &mut out);
                    self.out = out;
                }
            }
            Agent::Udp {
                received_packets,
                received_bytes,
                ..
            } => {
                *received_packets += 1;
                *received_bytes += p.size_bytes as u64;
                self.rec.udp_delivered(now, p.flow, p.seq);
            }
        }
    }

    /// A threshold dropper on link `l` started a congestion event: pick the
    /// connection it signals, among the TCP flows crossing it that are
    /// running now — the largest window (ties at random), or at random with
    /// the fixed weights (rate-independent, paper C's bias σ).
    fn select_victim(&mut self, l: u32, now: SimTime) {
        let Queue::Threshold(t) = &mut self.links[l as usize].queue else {
            return;
        };
        let running = |f: u32| {
            let info = &self.flows[f as usize];
            info.start <= now && now < info.stop
        };
        let mut victim = None;
        match t.selection {
            Selection::LargestRate => {
                let (mut best, mut ties) = (f64::NEG_INFINITY, 0u32);
                for &(f, _) in &self.candidates[l as usize] {
                    let Agent::Tcp { snd, .. } = &self.agents[f as usize] else {
                        continue;
                    };
                    if !running(f) {
                        continue;
                    }
                    let w = snd.cwnd();
                    if w > best {
                        (best, ties, victim) = (w, 1, Some(f));
                    } else if w == best {
                        // reservoir: each of the tied flows equally likely
                        ties += 1;
                        if t.rng.uniform() * (ties as f64) < 1.0 {
                            victim = Some(f);
                        }
                    }
                }
            }
            Selection::RateIndependent | Selection::FirstArrival => {
                let total: f64 = self.candidates[l as usize]
                    .iter()
                    .filter(|&&(f, _)| running(f))
                    .map(|&(_, w)| w)
                    .sum();
                let mut u = t.rng.uniform() * total;
                for &(f, w) in self.candidates[l as usize]
                    .iter()
                    .filter(|&&(f, _)| running(f))
                {
                    victim = Some(f);
                    if u < w {
                        break;
                    }
                    u -= w;
                }
            }
        }
        t.select(victim, now);
    }

    fn dropped(&mut self, p: &Packet, l: u32, now: SimTime, cause: DropCause) {
        self.flow_drops[p.flow as usize] += 1;
        self.rec.drop(now, l, p.flow, p.seq, cause);
    }

    /// Send what the sender produced, keep its timer in the event queue, trace.
    fn after_sender(&mut self, f: u32, now: SimTime, out: &mut Vec<Packet>) {
        for p in out.drain(..) {
            self.rec.send(now, f, p.seq, p.rtx);
            self.forward(p, now);
        }
        if let Agent::Tcp { snd, .. } = &mut self.agents[f as usize] {
            if let Some(d) = snd.rto_deadline {
                if d < snd.rto_entry {
                    snd.rto_entry = d;
                    self.sched.schedule(d, Event::Rto(f));
                }
            }
        }
        if self.rec.tcp_every_change {
            self.trace_tcp(f, now);
        }
    }

    fn rto_event(&mut self, f: u32, now: SimTime) {
        let mut out = std::mem::take(&mut self.out);
        if let Agent::Tcp { snd, .. } = &mut self.agents[f as usize] {
            if now != snd.rto_entry {
                self.out = out;
                return; // stale entry
            }
            snd.rto_entry = SimTime::MAX;
            match snd.rto_deadline {
                Some(d) if d <= now => snd.on_timeout(now, &mut out),
                Some(d) => {
                    snd.rto_entry = d;
                    self.sched.schedule(d, Event::Rto(f));
                }
                None => {}
            }
        }
        self.after_sender(f, now, &mut out);
        self.out = out;
    }

    fn start_flow(&mut self, f: u32, now: SimTime) {
        match &mut self.agents[f as usize] {
            Agent::Tcp { snd, .. } => {
                if let Some(app) = &mut self.apps[f as usize] {
                    snd.start_app();
                    app.start(now);
                    let first_read = app.next_read();
                    if first_read <= self.flows[f as usize].stop {
                        self.sched.schedule(first_read, Event::PlaybackRead(f));
                    }
                    return self.app_write(f, now);
                }
                let mut out = std::mem::take(&mut self.out);
                snd.start(now, &mut out);
                self.after_sender(f, now, &mut out);
                self.out = out;
            }
            Agent::Udp { src, .. } => {
                src.active = true;
                let first = src.first_departure(now);
                if first == now {
                    self.udp_send(f, now);
                } else if first < self.flows[f as usize].stop {
                    self.sched.schedule(first, Event::UdpSend(f));
                }
            }
        }
    }

    /// The CBR application of TCP flow `f` writes one packet, and schedules
    /// its next write while the flow runs.
    fn app_write(&mut self, f: u32, now: SimTime) {
        let (Agent::Tcp { snd, .. }, Some(app)) =
            (&mut self.agents[f as usize], &mut self.apps[f as usize])
        else {
            return;
        };
        if !snd.active {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        app.write(snd, now, &mut out);
        let next = app.next_write();
        if next < self.flows[f as usize].stop {
            self.sched.schedule(next, Event::AppWrite(f));
        }
        self.after_sender(f, now, &mut out);
        self.out = out;
    }

    /// The playback reader of flow `f` takes up to its share from what has
    /// been delivered in order.
    fn playback_read(&mut self, f: u32, now: SimTime) {
        let (Agent::Tcp { sink, .. }, Some(app)) =
            (&self.agents[f as usize], &mut self.apps[f as usize])
        else {
            return;
        };
        let r = app.read(sink.delivered_bytes);
        self.rec.playback_read(now, f, &r);
        let next = app.next_read();
        if next <= self.flows[f as usize].stop {
            self.sched.schedule(next, Event::PlaybackRead(f));
        }
    }

    fn udp_send(&mut self, f: u32, now: SimTime) {
        let stop = self.flows[f as usize].stop;
        let Agent::Udp { src, .. } = &mut self.agents[f as usize] else {
            return;
        };
        if !src.active {
            return;
        }
        let (p, next) = src.emit(now);
        if let Some(t) = next {
            if t < stop {
                self.sched.schedule(t, Event::UdpSend(f));
            }
        }
        self.forward(p, now);
    }

    fn trace_tcp(&mut self, f: u32, now: SimTime) {
        if let Agent::Tcp { snd, .. } = &self.agents[f as usize] {
            self.rec.tcp_state(
                now,
                f,
                snd.cwnd(),
                snd.ssthresh(),
                snd.in_flight(),
                snd.highest_ack(),
            );
            let r = &snd.rtt;
            self.rec.rtt(
                now,
                f,
                r.srtt_s(),
                r.rttvar_s(),
                secs(r.timeout_ns),
                r.backoff,
            );
        }
    }

    fn flow_counts(&self) -> Vec<FlowCount> {
        self.agents
            .iter()
            .zip(&self.flow_drops)
            .map(|(a, &drops)| match a {
                Agent::Tcp { snd, sink } => FlowCount {
                    delivered_packets: sink.delivered_packets,
                    delivered_bytes: sink.delivered_bytes,
                    sent: snd.counters.sent,
                    retransmissions: snd.counters.retransmissions,
                    timeouts: snd.counters.timeouts,
                    fast_retransmits: snd.counters.fast_retransmits,
                    drops,
                },
                Agent::Udp {
                    src,
                    received_packets,
                    received_bytes,
                } => FlowCount {
                    delivered_packets: *received_packets,
                    delivered_bytes: *received_bytes,
                    sent: src.sent,
                    drops,
                    ..Default::default()
                },
            })
            .collect()
    }

    fn link_counts(&mut self, now: SimTime) -> Vec<LinkSnapshot> {
        self.links.iter_mut().map(|l| l.snapshot(now)).collect()
    }

    fn report(mut self) -> RunOutput {
        let end = self.end;
        let warm = self.warmup;
        let measured_s = secs(end - warm);
        let now_f = self.flow_counts();
        let now_l = self.link_counts(end);
        let zero_f = vec![FlowCount::default(); now_f.len()];
        let zero_l = vec![LinkSnapshot::default(); now_l.len()];
        let wf = self.warm_flows.take().unwrap_or(zero_f);
        let wl = self.warm_links.take().unwrap_or(zero_l);
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let (a, b) = (now_f[i], wf[i]);
                let pk = a.delivered_packets - b.delivered_packets;
                let by = a.delivered_bytes - b.delivered_bytes;
                FlowResult {
                    id: i as u32,
                    group: info.group.clone(),
                    kind: match info.kind {
                        FlowKind::Tcp => "tcp",
                        FlowKind::Udp => "udp",
                    },
                    variant: info.variant,
                    start_s: secs(info.start),
                    stop_s: secs(info.stop),
                    delivered_packets: pk,
                    delivered_bytes: by,
                    goodput_bps: by as f64 * 8.0 / measured_s,
                    throughput_bps: (pk * info.packet_size as u64) as f64 * 8.0 / measured_s,
                    sent_packets: a.sent - b.sent,
                    retransmissions: a.retransmissions - b.retransmissions,
                    timeouts: a.timeouts - b.timeouts,
                    fast_retransmits: a.fast_retransmits - b.fast_retransmits,
                    drops: a.drops - b.drops,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (a, b) = (now_l[i], wl[i]);
                LinkResult {
                    id: i as u32,
                    name: self.link_info[i].name.clone(),
                    direction: self.link_info[i].direction,
                    rate_bps: l.rate_bps,
                    arrivals: a.arrivals - b.arrivals,
                    drops: a.drops - b.drops,
                    errors: a.errors - b.errors,
                    departures: a.sent_packets - b.sent_packets,
                    utilization: (a.busy_ns - b.busy_ns) as f64 / (end - warm) as f64,
                }
            })
            .collect();
        let summary = RunSummary {
            engine: "packet",
            engine_version: crate::VERSION,
            measured_s,
            reference_bps: self.reference_bps,
            events: self.sched.popped(),
            flows,
            links,
        };
        RunOutput {
            summary,
            traces: self.rec.finish(end),
        }
    }
}

/// Which links have exactly one upstream link and no agent feeding them.
fn single_input_links(n: usize, flows: &[FlowPlan]) -> Vec<bool> {
    const AGENT: u32 = u32::MAX;
    let mut upstream: Vec<Option<u32>> = vec![None; n];
    let mut shared = vec![false; n];
    for r in flows
        .iter()
        .flat_map(|f| [&f.route.forward, &f.route.reverse])
    {
        for (hop, &l) in r.iter().enumerate() {
            let up = if hop == 0 { AGENT } else { r[hop - 1] };
            match upstream[l as usize] {
                None => upstream[l as usize] = Some(up),
                Some(u) if u != up => shared[l as usize] = true,
                _ => {}
            }
        }
    }
    (0..n)
        .map(|l| !shared[l] && matches!(upstream[l], Some(u) if u != AGENT))
        .collect()
}

/// Per link with a threshold dropper, the TCP flows whose route (either
/// direction) crosses it, each with its weight from the dropper's `bias`.
fn victim_candidates(links: &[Link], flows: &[FlowPlan]) -> Vec<Vec<(u32, f64)>> {
    let mut out = vec![Vec::new(); links.len()];
    for f in flows {
        if f.kind != FlowKind::Tcp {
            continue;
        }
        for &l in f.route.forward.iter().chain(&f.route.reverse) {
            let Queue::Threshold(t) = &links[l as usize].queue else {
                continue;
            };
            let w = t.weight(&f.group);
            if !out[l as usize].iter().any(|&(g, _)| g == f.id) {
                out[l as usize].push((f.id, w));
            }
        }
    }
    out
}

/// A UDP source of flow `id` (its shape's and its jitter's random streams
/// derive from the seed and the flow id).
fn new_udp_source(
    id: u32,
    shape: &RateShape,
    packet_size: u32,
    jitter_ns: SimTime,
    seed: u64,
) -> UdpSource {
    UdpSource::new(
        id,
        Shape::from_spec(shape, seed, id),
        packet_size,
        jitter_ns,
        seed,
    )
}

/// The UDP source of a planned UDP flow.
fn udp_source_of(f: &FlowPlan, seed: u64) -> UdpSource {
    let u = f.udp.as_ref().expect("a UDP flow has its source");
    new_udp_source(f.id, &u.shape, f.packet_size, u.send_jitter_ns, seed)
}

/// The UDP source of flow `id` of group `g` of a resolved scenario (the
/// linux engine's background sources).
pub fn udp_source(sc: &Scenario, g: &crate::scenario::FlowGroup, id: u32) -> UdpSource {
    new_udp_source(
        id,
        g.rate.as_ref().expect("validated"),
        g.packet_size,
        g.send_jitter.map_or(0, |d| d.0),
        sc.seed,
    )
}

/// Departure times of UDP flow `flow` of a plan (None if that flow is not
/// UDP): what the simulator sends, for exporters that must play the same
/// schedule (the ns-2 backend's trace-driven sources).
pub fn udp_departures(plan: &Plan, flow: u32) -> Option<Vec<SimTime>> {
    let f = plan.flows.get(flow as usize)?;
    f.udp.as_ref()?;
    Some(crate::traffic::udp::departures(
        udp_source_of(f, plan.seed),
        f.start_ns,
        f.stop_ns,
    ))
}

/// Parse, resolve, plan and run a scenario given as JSON; refused if beyond
/// [`crate::budget`]'s limits.
pub fn run_json(text: &str) -> Result<(Scenario, RunOutput), crate::scenario::ScenarioError> {
    let sc = Scenario::from_json(text)?.resolve()?;
    crate::budget::check(&sc, false)?;
    let plan = Plan::from_scenario(&sc)?;
    let out = Sim::new(&plan).run();
    Ok((sc, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(json: &str, chain: bool) -> RunOutput {
        let sc = Scenario::from_json(json).unwrap();
        let mut sim = Sim::new(&Plan::from_scenario(&sc).unwrap());
        if !chain {
            for &[(at, len), _] in &sim.route_at {
                sim.hops[(at + len - 1) as usize].next = Next::Event;
            }
        }
        sim.run()
    }

    /// Receivers that take packets as soon as their arrival is known (no
    /// event) must see exactly what event-driven receivers see — including
    /// packets still on their way when the warm-up snapshot is taken or when
    /// the run ends — and a chain that comes back to the link being
    /// delivered (sender → receiver → sender's access link) must not
    /// schedule that link twice.
    #[test]
    fn receivers_without_an_event_change_nothing_but_the_event_count() {
        for (tcp, warmup, end) in [(1, "3.0037s", "20.0011s"), (3, "2.5s", "15.0043s")] {
            let json = format!(
                r#"{{"duration": "{end}", "warmup": "{warmup}", "seed": 3,
                "topology": {{
                  "bottleneck": {{"rate": "1Mbps", "delay": "7ms", "buffer": 12}},
                  "access": {{"rate": "10Mbps", "delay": "3ms", "buffer": 100}},
                  "sink_access": {{"rate": "10Mbps", "delay": "4ms", "buffer": 100}}}},
                "flows": {{
                  "tcp": {{"kind": "tcp", "variant": "sack", "count": {tcp}, "start_jitter": "1s"}},
                  "udp": {{"kind": "udp", "rate": "0.2Mbps"}}}}}}"#
            );
            let (a, b) = (run(&json, true), run(&json, false));
            let (mut sa, mut sb) = (
                serde_json::to_value(&a.summary).unwrap(),
                serde_json::to_value(&b.summary).unwrap(),
            );
            assert!(
                a.summary.events < b.summary.events * 4 / 5,
                "{} vs {} events",
                a.summary.events,
                b.summary.events
            );
            sa["events"] = 0.into();
            sb["events"] = 0.into();
            assert_eq!(sa, sb);
        }
    }
}
