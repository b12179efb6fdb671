//! The simulator: builds the network from a [`Plan`](crate::plan::Plan) (links, and each flow's
//! routes as lists of link ids), runs the event loop, and reports per-flow
//! and per-link counters over the measurement window (warmup, end].
//!
//! * `build.rs` — links, agents and routes from the Plan (and the builders the
//!   linux engine and the exporters share: links, UDP sources, schedules);
//! * `forward.rs` — a packet along its route: hops, the no-event shortcut,
//!   drops, the threshold dropper's call for a victim;
//! * `agents.rs` — what TCP and UDP agents and applications do at their events;
//! * `measure.rs` — the warm-up snapshot and the report.

mod agents;
mod build;
mod forward;
mod measure;
#[cfg(test)]
mod tests;

pub use build::{build_link, link_outages, udp_departures, udp_source_of};
pub use measure::{rates_bps, FlowResult, LinkResult, RunOutput, RunSummary};

use crate::net::link::{Link, LinkSnapshot};
use crate::net::packet::Packet;
use crate::plan::{FlowKind, Variant};
use crate::record::Recorder;
use crate::sched::{prefetch, Event, Order, Scheduler};
use crate::tcp::sender::TcpSender;
use crate::tcp::sink::TcpSink;
use crate::time::SimTime;
use crate::traffic::app::CbrApp;
use crate::traffic::udp::UdpSource;
use forward::Hop;
use measure::FlowCount;

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
    /// A UDP source that sends up to [`SENDS_AHEAD`] packets in one event
    /// (see `Sim::udp_send`).
    sends_ahead: bool,
}

/// How many packets a UDP source that sends ahead puts on its links in
/// one event (a bound on what it adds to its first links' delay lines).
const SENDS_AHEAD: u32 = 16;

pub struct LinkInfo {
    pub name: String,
    pub direction: &'static str,
}

pub struct Sim {
    end: SimTime,
    warmup: SimTime,
    reference_bps: f64,
    sched: Scheduler,
    links: Vec<Link>,
    link_info: Vec<LinkInfo>,
    /// Every route's hops, route after route; a flow's route of direction
    /// `d` is `hops[hot[flow].route[d].0 ..][.. hot[flow].route[d].1]`.
    hops: Vec<Hop>,
    /// Per flow: what its packets read at every crossing (`FlowHot`).
    hot: Vec<FlowHot>,
    flows: Vec<FlowInfo>,
    agents: Vec<Agent>,
    /// Per flow: the application of a TCP flow that is not a bulk transfer.
    apps: Vec<Option<CbrApp>>,
    out: Vec<Packet>,
    rec: Recorder,
    flow_drops: Vec<u64>,
    /// Drops decided before the warm-up snapshot for instants after it (a
    /// chained link decides a packet's fate when it enters the chain): they
    /// belong to the window, as a link's `Late` counts do.
    late_drops: Vec<u64>,
    /// The warm-up snapshot has been taken (or there is none).
    warm_done: bool,
    warm_flows: Option<Vec<FlowCount>>,
    warm_links: Option<Vec<LinkSnapshot>>,
    /// Some threshold dropper needs the sim to pick its victims.
    selectors: bool,
    /// Per link: the TCP flows crossing it, with their selection weights
    /// (empty unless the link has a threshold dropper).
    candidates: Vec<Vec<(u32, f64)>>,
    /// `Event::Spill`s popped (left out of the reported event count).
    spills: u64,
    /// Per flow: its pacer's pending event, which a sender that takes acks
    /// without an event may run ahead of the clock (`Sim::pace_until`).
    pacers: Vec<Pacer>,
    /// Senders that take acks without an event run their pacer's events
    /// ahead of the clock too (`Sim::pace_until`; off only in tests).
    pace_ahead: bool,
    /// `Sim::drain_to_senders` is running (it is not entered again).
    draining: bool,
}

/// A TCP sender's pending pacer event: its time is the sender's
/// `pace_entry`; its [`Order`] is kept here. A sender that takes acks
/// without an event (`Next::Sender`) runs that event ahead of the clock when
/// an ack it takes comes after it (`Sim::pace_until`), so the event queue's
/// `Event::Pace` for the flow may be earlier than the pending event (never
/// later): when it fires early it goes on to the pending one, or is dropped
/// if there is none (`Sim::pace_event`).
#[derive(Clone, Copy)]
struct Pacer {
    /// The order of the pending pacer event.
    order: Order,
    /// The time of the flow's `Event::Pace` in the event queue
    /// (`SimTime::MAX`: none).
    queued: SimTime,
}

/// What the simulator reads of flow f at every packet and ack (`forward`,
/// `sender_takes`, `after_sender`), in one cache line: at 10^4 flows these
/// were three vectors (routes, the flows' stop times, the timers' orders),
/// each a cache miss per packet.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct FlowHot {
    /// The flow's routes (FORWARD, REVERSE): where their hops start in
    /// `Sim::hops`, and how many.
    route: [(u32, u32); 2],
    /// The flow's stop (`FlowInfo::stop`).
    stop: SimTime,
    /// A TCP flow's retransmission deadline and the event that armed it.
    rto: RtoArm,
}

/// A retransmission deadline, and the [`Order`] and time of the event that
/// armed it: ns-2 orders the timer's expiry by `clock_ + rtt_timeout()` of
/// that event, computed here only when the timer goes into the event queue
/// (a deadline is re-armed at nearly every ack, and scheduled rarely).
#[derive(Clone, Copy)]
struct RtoArm {
    deadline: SimTime,
    armed_at: SimTime,
    by: Order,
}

impl RtoArm {
    /// The order of the timer's expiry.
    #[inline]
    fn order(&self) -> Order {
        self.by.after(self.armed_at, self.deadline)
    }
}

/// How often (simulated time) a run that streams its traces writes them
/// out ([`Sim::spill_traces`]): every 10 ms, what a 100 Gb/s bottleneck
/// traces in that time is a few tens of MB.
const SPILL_EVERY_NS: SimTime = 10_000_000;

/// Above this much per-flow and per-link state (`Sim::state_bytes`) the
/// event loop prefetches (see `Sim::events`): measured on the scale
/// dumbbell (a host with 2 MB of L2 per core), a gain at 10^4 flows
/// (~29 MB), 3 000 (~8.6 MB) and 2 000 (~5.7 MB), a loss at 1 000
/// (~2.9 MB), at 10 and on the bench cases, whose state is in the caches.
const PREFETCH_ABOVE: usize = 4 << 20;

impl Sim {
    /// Run to the end and report.
    pub fn run(self) -> RunOutput {
        self.run_until_stopped(|| false)
            .expect("a run that is never stopped ends")
    }

    /// Stream the traces to files in `dir` as the run goes instead of
    /// holding them until the end ([`crate::record::Spill`]): the run's
    /// memory stays flat in its duration, and the output's tables name their
    /// files.
    ///
    /// The tables are written at an event every 10 ms of simulated time (a
    /// table once it holds `rows` rows), so a run that does not stream its
    /// traces does no work for it; those events change neither the order of
    /// the others (a measurement goes before the simulated events of its
    /// nanosecond and schedules none of them) nor the reported event count.
    pub fn spill_traces(mut self, dir: std::path::PathBuf, rows: usize) -> Self {
        self.rec.spill_to(dir, rows);
        if self.rec.spill.is_some() {
            self.sched
                .schedule_measure(SPILL_EVERY_NS.min(self.end), Event::Spill);
        }
        self
    }

    /// Write out the streamed traces; true if that failed (the run ends,
    /// and its output says why).
    #[cold]
    #[inline(never)]
    fn spill(&mut self, now: SimTime) -> bool {
        self.spills += 1;
        if self.rec.spill(now) {
            return true;
        }
        self.sched
            .schedule_measure(now + SPILL_EVERY_NS, Event::Spill);
        false
    }

    /// Prefetch hints (no effect on results) for the packets link `l`
    /// delivers next, while this event delivers its front one, in stages,
    /// each reading only what the stage before asked for: three places
    /// behind the front, the flow's `FlowHot` and agent; two places, its
    /// route's hops and, for an ack, its sender; one place, the next link
    /// on its route and the first of the way back.
    #[inline(always)]
    fn prefetch_ahead(&self, l: u32) {
        let link = &self.links[l as usize];
        if let Some(p) = link.ahead(3) {
            let f = p.flow as usize;
            prefetch(self.hot.as_ptr().wrapping_add(f));
            prefetch(self.agents.as_ptr().wrapping_add(f));
        }
        if let Some(p) = link.ahead(2) {
            let f = p.flow as usize;
            if let Some(h) = self.hot.get(f) {
                let (at, _) = h.route[(p.dir & 1) as usize];
                prefetch(
                    self.hops
                        .as_ptr()
                        .wrapping_add((at + p.hop as u32) as usize),
                );
            }
            if p.dir != crate::net::packet::FORWARD {
                if let Some(Agent::Tcp { snd, .. }) = self.agents.get(f) {
                    let s: *const TcpSender = &**snd;
                    prefetch(s);
                    prefetch((s as *const u8).wrapping_add(64));
                }
            }
        }
        if let Some(p) = link.ahead(1) {
            if let Some((there, back)) = self.next_links(p) {
                self.prefetch_link(there);
                self.prefetch_link(back);
            }
        }
    }

    /// The link packet `p` crosses next (the one after the link delivering
    /// it; the last one again if there is none) and the first of its way
    /// back.
    #[inline(always)]
    fn next_links(&self, p: &Packet) -> Option<(u32, u32)> {
        let h = self.hot.get(p.flow as usize)?;
        let (at, len) = h.route[(p.dir & 1) as usize];
        let (back, blen) = h.route[(p.dir & 1 ^ 1) as usize];
        let hop = (p.hop as u32).min(len.wrapping_sub(1));
        let there = self.hops.get((at + hop) as usize)?.link;
        let back = if blen > 0 {
            self.hops.get(back as usize)?.link
        } else {
            there
        };
        Some((there, back))
    }

    /// Prefetch what a crossing of link `l` reads.
    #[inline(always)]
    fn prefetch_link(&self, l: u32) {
        Link::prefetch_crossing(self.links.as_ptr().wrapping_add(l as usize));
    }

    /// Run to the end and report, asking `stop` every 2^15 events (a few
    /// milliseconds of work) whether to give up; None if it said so (Ctrl-C).
    pub fn run_until_stopped(mut self, mut stop: impl FnMut() -> bool) -> Option<RunOutput> {
        let ran = if self.state_bytes() > PREFETCH_ABOVE {
            self.events::<true>(&mut stop)
        } else {
            self.events::<false>(&mut stop)
        };
        ran.then(|| self.report())
    }

    /// What the per-flow and per-link state takes (roughly: the links, the
    /// agents and TCP senders, `FlowHot`), against [`PREFETCH_ABOVE`].
    fn state_bytes(&self) -> usize {
        self.links.len() * std::mem::size_of::<Link>()
            + self.agents.len()
                * (std::mem::size_of::<Agent>()
                    + std::mem::size_of::<TcpSender>()
                    + std::mem::size_of::<FlowHot>())
    }

    /// The event loop, to the end (true) or until `stop` says so (false).
    /// With `PREFETCH`, each event asks for what the next ones will touch
    /// (`Scheduler::lookahead`, `Sim::prefetch_ahead`): that pays where the
    /// state is larger than the caches, and costs instructions and
    /// mispredictions where it is not.
    #[inline(always)]
    fn events<const PREFETCH: bool>(&mut self, stop: &mut impl FnMut() -> bool) -> bool {
        let end = self.end;
        let mut polls: u32 = 0;
        while let Some((now, ev)) = self.sched.pop_until(end) {
            polls = polls.wrapping_add(1);
            if polls % (1 << 15) == 0 && stop() {
                return false;
            }
            if PREFETCH {
                let (e1, e2) = self.sched.lookahead();
                if let Some(Event::LinkDeliver(n)) = e2 {
                    prefetch(self.links.as_ptr().wrapping_add(n as usize));
                }
                if let Some(Event::LinkDeliver(n)) = e1 {
                    self.link(n).prefetch_front();
                }
            }
            match ev {
                Event::LinkDeliver(l) => {
                    if PREFETCH {
                        self.prefetch_ahead(l);
                    }
                    self.link(l).delivering();
                    while let Some((_, order, p)) = self.link(l).pop_arrived(now) {
                        self.forward(p, now, order);
                    }
                    if let Some((at, order)) = self.link(l).delivered() {
                        self.sched
                            .schedule_ordered(at, Event::LinkDeliver(l), order);
                    }
                }
                Event::Rto(f) => self.rto_event(f, now),
                Event::Pace(f) => self.pace_event(f, now),
                Event::DelAck(f) => {
                    if let Agent::Tcp { sink, .. } = &mut self.agents[f as usize] {
                        if let Some(a) = sink.on_delack_timer(now) {
                            self.forward(a, now, self.sched.running());
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
                    self.warm_flows = Some(self.warm_flow_counts());
                    self.warm_links = Some(self.link_counts(now));
                    self.release_held(end);
                }
                Event::Spill => {
                    if self.spill(now) {
                        break; // the traces could not be written
                    }
                }
                Event::Sample => {
                    for f in 0..self.agents.len() {
                        self.trace_tcp(f as u32, now);
                    }
                    self.sched
                        .schedule_measure(now + self.rec.interval_ns, Event::Sample);
                }
            }
        }
        true
    }
}
