//! Building the simulator from a Plan: links (queue, impairment, outages),
//! agents and applications, routes as hops; and the builders other engines
//! and exporters share (a link, a UDP source, its departures, a link's
//! outages).

use super::forward::{Hop, Next};
use super::{Agent, FlowHot, FlowInfo, LinkInfo, RtoArm, Sim};
use crate::net::link::{Impairment, Link};
use crate::net::packet::FORWARD;
use crate::net::queue::Queue;
use crate::plan::{Direction, ErrorModelKind, FlowKind, FlowPlan, LinkPlan, Plan, Selection};
use crate::record::Recorder;
use crate::rng::{stream, Rng};
use crate::sched::{Event, Order, Scheduler};
use crate::tcp::sender::TcpSender;
use crate::tcp::sink::TcpSink;
use crate::time::SimTime;
use crate::traffic::app::CbrApp;
use crate::traffic::shape::Shape;
use crate::traffic::udp::UdpSource;

/// A planned link direction, built: its queue discipline draws from the
/// link's own stream (its id), and so do its packet errors (forward
/// direction only); its outages are the plan's list. (The linux engine's
/// emulated links are built here too.)
pub fn build_link(l: &LinkPlan, seed: u64) -> Link {
    let queue = Queue::from_plan(
        &l.queue,
        l.rate_bps,
        l.buffer_pkts,
        Rng::stream(seed, stream::QUEUE, l.id as u64),
    );
    let mut link = Link::new(l.rate_bps, l.delay_ns, queue);
    if let Some(e) = &l.errors {
        let rng = Rng::stream(seed, stream::LINK_ERRORS, l.id as u64);
        link.set_impairment(match e.model {
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
        });
    }
    if !l.outages.is_empty() {
        link.set_outages(Box::new(l.outages.clone().into_iter()));
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
        let mut links: Vec<Link> = plan.links.iter().map(|l| build_link(l, seed)).collect();
        // the report's snapshots (a warm-up of 0 takes none)
        let warm_mark = if plan.warmup_ns > 0 {
            plan.warmup_ns
        } else {
            SimTime::MAX
        };
        for l in &mut links {
            l.set_marks(warm_mark, end);
        }
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
            // every per-flow vector is indexed by flow id, and `forward`
            // reads a packet's route by it unchecked (see `Sim::route`)
            assert_eq!(id as usize, agents.len(), "flow ids are their indexes");
            let agent = match (&f.tcp, &f.udp) {
                (Some(t), _) => {
                    let p = t.params;
                    Agent::Tcp {
                        snd: Box::new(TcpSender::new(id, p, t.boot_time_s)),
                        sink: TcpSink::new(id, &p, t.payload_bytes),
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
                    .map(|(a, t)| CbrApp::new(a, t.payload_bytes)),
            );
            flows.push(FlowInfo {
                group: f.group.clone(),
                kind: f.kind,
                variant: f.tcp.map(|t| t.params.variant),
                start: f.start_ns,
                stop: f.stop_ns,
                packet_size: f.packet_size,
                sends_ahead: false,
            });
            // a flow whose start falls after its stop never sends
            if f.start_ns < f.stop_ns {
                sched.schedule(f.start_ns, Event::FlowStart(id));
                if f.stop_ns < end {
                    sched.schedule(f.stop_ns, Event::FlowStop(id));
                }
            }
        }
        let mut rec = Recorder::new(&plan.trace);
        if apps.iter().any(Option::is_some) {
            rec.playback = Some(Default::default());
        }
        if plan.warmup_ns > 0 {
            sched.schedule_measure(plan.warmup_ns, Event::Warmup);
        }
        if rec.interval_ns > 0 && (rec.tcp.is_some() || rec.rtt.is_some()) {
            sched.schedule_measure(0, Event::Sample);
        }
        let nflows = flows.len();
        let (single_input, uses) = link_inputs(links.len(), &plan.flows);
        let candidates = victim_candidates(&links, &plan.flows);
        let selection = |f: fn(Selection) -> bool| {
            links
                .iter()
                .any(|l| matches!(&l.queue, Queue::Threshold(t) if f(t.selection)))
        };
        let selectors = selection(Selection::chooses);
        // senders may take acks without an event (see `Sim::sender_takes`)
        // unless something looks at them between events: traces, a threshold
        // dropper choosing its victim by their windows (largest-rate). A
        // rate-independent choice reads no sender: its candidates are the
        // flows running at the arrival's time, its draw the dropper's own
        // stream, in the order of the link's arrivals — which a sender's
        // early acks do not change (what it sends early enters no one else's
        // queue), so it leaves the shortcut on.
        let senders_chained = !selection(Selection::reads_windows)
            && !rec.tcp_every_change
            && rec.tcp.is_none()
            && rec.sends.is_none()
            && rec.queue.is_none()
            && rec.drops.is_none()
            && rec.rtt.is_none();
        // UDP sources may send ahead of their events unless something
        // records their packets' crossings as they happen (the queue's and
        // the drops' traces, in time order) or looks at the queues' flows
        let sends_ahead =
            !selectors && rec.sends.is_none() && rec.queue.is_none() && rec.drops.is_none();
        let mut hops = Vec::new();
        let mut hot = Vec::with_capacity(nflows);
        for (f, a) in plan.flows.iter().zip(&agents) {
            // the receiver takes packets without an event (see `forward`)
            let sink_chained = match a {
                Agent::Tcp { sink, .. } => !sink.delayed_ack() && apps[f.id as usize].is_none(),
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
            // the sender takes acks without an event: a bulk TCP sender whose
            // first link carries nothing else (what it sends early enters no
            // one else's queue), on a forward route with an event somewhere
            // (else a flow's whole loop would be one recursive chain)
            let (fwd, rev) = (at[FORWARD as usize], at[1 - FORWARD as usize]);
            let sender_chained = senders_chained
                && matches!(a, Agent::Tcp { .. })
                && apps[f.id as usize].is_none()
                && rev.1 > 0
                && f.route
                    .forward
                    .first()
                    .is_some_and(|&l| uses[l as usize] == 1)
                && hops[fwd.0 as usize..][..fwd.1 as usize]
                    .iter()
                    .any(|h| h.next == Next::Event);
            if sender_chained {
                hops[(rev.0 + rev.1 - 1) as usize].next = Next::Sender;
            }
            // a UDP source sends ahead of its events (see `Sim::udp_send`)
            // when what it sends first enters links only it feeds: its first
            // link carries nothing else, and the hops up to the first merge
            // (`Next::Event`) go on to links with that one upstream
            let prefix = &hops[fwd.0 as usize..][..fwd.1 as usize];
            flows[f.id as usize].sends_ahead = sends_ahead
                && matches!(a, Agent::Udp { .. })
                && f.route
                    .forward
                    .first()
                    .is_some_and(|&l| uses[l as usize] == 1)
                && prefix
                    .iter()
                    .position(|h| h.next != Next::Link)
                    .is_some_and(|i| prefix[i].next == Next::Event);
            hot.push(FlowHot {
                route: at,
                stop: f.stop_ns,
                rto: RtoArm {
                    deadline: SimTime::MAX,
                    armed_at: 0,
                    by: Order::default(),
                },
            });
        }
        let hops = lay_out_by_line(hops, &mut hot);
        let warmup = plan.warmup_ns;
        Sim {
            end,
            warmup,
            reference_bps: plan.reference_bps,
            sched,
            links,
            link_info,
            hops,
            hot,
            flows,
            agents,
            apps,
            out: Vec::with_capacity(64),
            rec,
            flow_drops: vec![0; nflows],
            late_drops: vec![0; nflows],
            warm_done: warmup == 0,
            warm_flows: None,
            warm_links: None,
            selectors,
            candidates,
            spills: 0,
            pacers: vec![
                super::Pacer {
                    order: Order::default(),
                    queued: SimTime::MAX,
                };
                nflows
            ],
            pace_ahead: true,
            draining: false,
        }
    }
}

/// The hops again, each flow's (its two routes, one after the other) in
/// one cache line when they fit in one and would straddle two (blank hops
/// between flows; the routes' starts in `hot` moved to match): a packet
/// reads its route's hops at every crossing, and at 10^4 flows they are
/// out of the cache each time (the dumbbell's six hops, 48 bytes, used to
/// straddle two lines every other flow).
fn lay_out_by_line(hops: Vec<Hop>, hot: &mut [FlowHot]) -> Vec<Hop> {
    const LINE: usize = 64 / std::mem::size_of::<Hop>();
    let blank = Hop {
        link: 0,
        next: Next::Event,
    };
    // (room for every pad, so the buffer, and where its lines start, stays)
    let mut out = Vec::with_capacity(hops.len() + LINE * (hot.len() + 1));
    let off = out.as_ptr() as usize % 64 / std::mem::size_of::<Hop>();
    out.resize((LINE - off) % LINE, blank);
    for h in hot.iter_mut() {
        let [(fwd, nf), (rev, nr)] = h.route;
        debug_assert!(rev == fwd + nf);
        let n = (nf + nr) as usize;
        if n <= LINE && out.len() % LINE + n > LINE {
            out.resize(out.len().next_multiple_of(LINE), blank);
        }
        let at = out.len() as u32;
        out.extend_from_slice(&hops[fwd as usize..][..n]);
        h.route = [(at, nf), (at + nf, nr)];
    }
    debug_assert!(out.capacity() == hops.len() + LINE * (hot.len() + 1));
    out
}

/// Per link of `n`: whether it has exactly one upstream link and no agent
/// feeding it, and how many routes cross it. Every route's links are
/// indexed here, checked, before any hop is made (`Sim::link` relies on it).
///
/// A UDP flow's reverse route carries nothing (its receiver sends no
/// acks): it is checked but neither feeds nor uses a link, so an ack
/// path that shares its links only with UDP flows' reverse routes is
/// still single-input (paper A's dumbbell: the reverse bottleneck).
fn link_inputs(n: usize, flows: &[FlowPlan]) -> (Vec<bool>, Vec<u32>) {
    const AGENT: u32 = u32::MAX;
    let mut upstream: Vec<Option<u32>> = vec![None; n];
    let mut shared = vec![false; n];
    let mut uses = vec![0u32; n];
    for (r, carries) in flows.iter().flat_map(|f| {
        [
            (&f.route.forward, true),
            (&f.route.reverse, f.tcp.is_some()),
        ]
    }) {
        for (hop, &l) in r.iter().enumerate() {
            assert!((l as usize) < n, "a route's link is a link of the plan");
            if !carries {
                continue;
            }
            uses[l as usize] += 1;
            let up = if hop == 0 { AGENT } else { r[hop - 1] };
            match upstream[l as usize] {
                None => upstream[l as usize] = Some(up),
                Some(u) if u != up => shared[l as usize] = true,
                _ => {}
            }
        }
    }
    let single = (0..n)
        .map(|l| !shared[l] && matches!(upstream[l], Some(u) if u != AGENT))
        .collect();
    (single, uses)
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

/// The UDP source of a planned UDP flow (also the linux engine's
/// background sources): its shape's and its jitter's random streams derive
/// from the seed and the flow id.
pub fn udp_source_of(f: &FlowPlan, seed: u64) -> UdpSource {
    let u = f.udp.as_ref().expect("a UDP flow has its source");
    UdpSource::new(
        f.id,
        Shape::from_plan(&u.shape, seed, f.id),
        f.packet_size,
        u.send_jitter_ns,
        seed,
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
