//! A packet along its route: from link to link (at once where the next link
//! has no other input, by a delivery event otherwise), to the agent at its
//! end; drops; and the threshold dropper's call for the connection to signal.

use super::{Agent, Sim};
use crate::net::link::{Admit, DropCause, Link};
use crate::net::packet::{Kind, Packet, FORWARD};
use crate::net::queue::Queue;
use crate::sched::{Event, Order};
use crate::time::SimTime;

/// One hop of a route: the link, and how a packet leaving it goes on (see
/// `forward`).
#[derive(Clone, Copy)]
pub(super) struct Hop {
    pub(super) link: u32,
    pub(super) next: Next,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// By a delivery event of the link.
    Event,
    /// At once to the next link of the route, which has no other input.
    Link,
    /// Last hop, forward: at once to a receiver that may take a packet as
    /// soon as the packet's arrival time is known, when the link holds
    /// nothing else.
    Receiver,
    /// Last hop, reverse: at once to a sender that may take an ack as soon
    /// as the ack's arrival time is known, when the link holds nothing else
    /// and nothing of the sender's comes first (see `Sim::sender_takes`).
    Sender,
}

impl Sim {
    /// Flow `flow`'s route of direction `dir`: where its hops start in
    /// `hops`, and how many.
    #[inline(always)]
    fn route(&self, flow: u32, dir: u8) -> (u32, u32) {
        debug_assert!((flow as usize) < self.hot.len() && dir < 2);
        // SAFETY: every packet is made by its flow's agent with the flow's
        // id, and `Sim::new` (build.rs) asserts that flow ids are their
        // indexes and pushes one `hot` entry per flow;
        // `dir` is FORWARD or REVERSE (packet.rs), and the entry has both.
        unsafe {
            *self
                .hot
                .get_unchecked(flow as usize)
                .route
                .get_unchecked(dir as usize)
        }
    }

    /// Hop `i` of `hops`, for `i` inside a route (`route`).
    #[inline(always)]
    fn hop(&self, i: u32) -> Hop {
        debug_assert!((i as usize) < self.hops.len());
        // SAFETY: `forward` reads hops from `route`'s start up to its end
        // (exclusive), and `Sim::new` (build.rs) records each route's
        // (start, length) as it pushes exactly that many hops.
        unsafe { *self.hops.get_unchecked(i as usize) }
    }

    /// Link `l`, for a link id read from a hop (or a link's own delivery
    /// event, which carries one).
    #[inline(always)]
    pub(super) fn link(&mut self, l: u32) -> &mut Link {
        debug_assert!((l as usize) < self.links.len());
        // SAFETY: a hop's link comes from a plan route; `Sim::new`
        // (build.rs, `link_inputs`) indexes vectors of `links.len()` entries,
        // checked, by every route's links before any hop is made, so a hop's
        // link id is below `links.len()`; the links are never added or
        // removed after.
        unsafe { self.links.get_unchecked_mut(l as usize) }
    }

    /// After the warm-up snapshot: the receivers' links that held packets
    /// over the warm-up instant (see `forward`) hand them all on now, so
    /// that these receivers take packets without events again (their
    /// delivery events, still queued, find nothing left).
    pub(super) fn release_held(&mut self, end: SimTime) {
        for r in 0..self.hot.len() {
            let (at, len) = self.hot[r].route[FORWARD as usize];
            let last = self.hops[(at + len - 1) as usize];
            if last.next != Next::Receiver {
                continue;
            }
            let l = last.link as usize;
            while let Some((at, order, p)) = self.links[l].pop_arrived(end) {
                self.forward(p, at, order);
            }
        }
    }

    /// Move a packet to its next link, or hand it to the agent at the end of
    /// its route. A link whose successor on the route has no other input
    /// hands the packet on at once (see `Link::pass`), and so do a
    /// receiver's and a sender's last links when they may (`Next`): the
    /// packet costs an event only where it meets other traffic — two per
    /// data packet and its ack on the dumbbell.
    ///
    /// `order` is the [`Order`] of the event the packet arrives in (or is
    /// sent in, by an agent): as ns-2 orders events, it decides ties with
    /// other events of the same instant (see [`crate::sched`]).
    #[inline]
    pub(super) fn forward(&mut self, mut p: Packet, mut now: SimTime, mut order: Order) {
        // (a loop over packets: the receiver's ack, the last thing done for
        // a data packet, goes on in this call rather than a recursive one;
        // and so does the last packet a sender sends on an ack, its timers
        // then set once the packet has gone as far as it goes, as
        // `after_sender` sets them after its sends: `timers`)
        let mut timers: Option<(u32, SimTime, Order)> = None;
        'packet: loop {
            let (base, len) = self.route(p.flow, p.dir);
            let end = base + len;
            let mut i = base + p.hop as u32;
            while i < end {
                let Hop { link: l, next } = self.hop(i);
                i += 1;
                // Chained: the next link has no other input, or this is the last
                // hop and the receiver takes the packet at once (it would be the
                // link's only pending delivery, so nothing it holds can overtake).
                let chained = match next {
                    Next::Link => true,
                    Next::Event => false,
                    Next::Receiver | Next::Sender => self.link(l).next_delivery().is_none(),
                };
                if chained {
                    match self.link(l).pass(&mut p, now, order) {
                        Err(why) => {
                            self.dropped(&p, l, now, why);
                            break 'packet;
                        }
                        Ok((at, next_order, wait)) => {
                            if let Some(start) = wait {
                                self.rec
                                    .queue_wait(now, start, l, (p.kind == Kind::Udp) as u8);
                            }
                            if self.selectors && self.link(l).queue.wants_victim() {
                                self.select_victim(l, now);
                            }
                            let held = match next {
                                Next::Receiver => self.past_a_pending_mark(at),
                                Next::Sender => !self.sender_takes(p.flow, at, next_order),
                                _ => false,
                            };
                            if held {
                                if next == Next::Sender {
                                    self.acks_queue_behind(p.flow);
                                }
                                // It reaches the receiver after the run, or after a
                                // warm-up snapshot still to be taken (or the sender
                                // after something of its own): an event delivers it
                                // then (or never), as for any packet.
                                p.hop = (i - base) as u8;
                                if let Some((t, c)) = self.link(l).hold(p, at, next_order) {
                                    self.sched.schedule_ordered(t, Event::LinkDeliver(l), c);
                                }
                                break 'packet;
                            }
                            now = at;
                            order = next_order;
                            continue;
                        }
                    }
                }
                // where the packet goes on when the link delivers it
                p.hop = (i - base) as u8;
                match self.link(l).arrive_ordered(p, now, order) {
                    Admit::Dropped(why) => self.dropped(&p, l, now, why),
                    Admit::Admitted { schedule, wait } => {
                        if let Some((at, c)) = schedule {
                            self.sched.schedule_ordered(at, Event::LinkDeliver(l), c);
                        }
                        if let Some(start) = wait {
                            self.rec
                                .queue_wait(now, start, l, (p.kind == Kind::Udp) as u8);
                        }
                        if self.selectors && self.link(l).queue.wants_victim() {
                            self.select_victim(l, now);
                        }
                    }
                }
                break 'packet;
            }
            let f = p.flow as usize;
            debug_assert!(f < self.agents.len());
            // SAFETY: a packet's flow id indexes the per-flow vectors (see
            // `Sim::route`: `Sim::new` asserts that flow ids are their indexes
            // and pushes one agent per flow).
            match unsafe { self.agents.get_unchecked_mut(f) } {
                Agent::Tcp { sink, snd } => {
                    if p.dir == FORWARD {
                        let before = sink.delack_deadline();
                        let ack = sink.on_data(&p, now);
                        if sink.delack_deadline() != before {
                            if let Some(d) = sink.delack_deadline() {
                                self.sched.schedule(d, Event::DelAck(p.flow));
                            }
                        }
                        if let Some(a) = sink.take_prior_ack() {
                            self.forward(a, now, order);
                        }
                        if let Some(a) = ack {
                            // what remains of this call is forwarding it
                            p = a;
                            continue 'packet;
                        }
                    } else {
                        let mut out = std::mem::take(&mut self.out);
                        snd.on_ack(&p, sink.take_sack(&p), now, &mut out);
                        if timers.is_none() {
                            if let Some(last) = out.pop() {
                                self.send_all(p.flow, now, &mut out, order);
                                self.out = out;
                                self.trace_send(now, p.flow, &last);
                                timers = Some((p.flow, now, order));
                                p = last;
                                continue 'packet;
                            }
                        }
                        self.after_sender(p.flow, now, &mut out, order);
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
            break 'packet;
        }
        if let Some((f, at, o)) = timers {
            self.sender_timers(f, at, o);
        }
    }

    /// An ack on its way to the sender of flow `f` is held on the sender's
    /// last link (`Next::Sender`): acks that come after it queue there too.
    #[cold]
    #[inline(never)]
    fn acks_queue_behind(&mut self, f: u32) {
        if let Agent::Tcp { snd, .. } = &mut self.agents[f as usize] {
            snd.note_acks_queued(true);
        }
    }

    /// The sender of flow `f` has done what it does at an event (its
    /// timers set: `timers_after_sending`), and acks may be queued on its
    /// last link (`Next::Sender`) behind one held there
    /// (`acks_queue_behind`), each to be delivered by an event: hand them
    /// on ahead of the clock, from the front, each as the chain would have
    /// (`sender_takes`: at its arrival time and order) while their senders
    /// may take them. The link's delivery event, running or pending, then
    /// finds the rest, if any (or nothing, and only schedules the next).
    /// Without this, one held ack made every ack behind it wait for an event
    /// too, for as long as acks kept coming less than the link's delay
    /// apart (a paced sender's acks nearly always do).
    #[cold]
    #[inline(never)]
    pub(super) fn drain_to_senders(&mut self, f: u32) {
        if self.draining {
            return;
        }
        let (at, len) = self.route(f, 1 - FORWARD);
        let l = self.hop(at + len - 1).link;
        self.draining = true;
        while let Some(&(at, order, p)) = self.link(l).front() {
            let (base, len) = self.route(p.flow, p.dir);
            let last = self.hop(base + len - 1);
            if p.hop as u32 != len || last.next != Next::Sender || last.link != l {
                break;
            }
            if !self.sender_takes(p.flow, at, order) {
                break;
            }
            self.link(l).pop_front();
            self.forward(p, at, order);
        }
        if self.link(l).front().is_none() {
            if let Agent::Tcp { snd, .. } = &mut self.agents[f as usize] {
                snd.note_acks_queued(false);
            }
        }
        self.draining = false;
    }

    /// Does a packet reaching its agent at `at` come after a mark the
    /// simulator's clock has not passed yet — the run's end, or a warm-up
    /// snapshot still to be taken? Then an event must deliver it, so that the
    /// mark sees the agent as it was (or the run never does).
    #[inline(always)]
    pub(super) fn past_a_pending_mark(&self, at: SimTime) -> bool {
        at > self.end || (!self.warm_done && at >= self.warmup)
    }

    /// May the sender of TCP flow `f` take an ack at `at` (of order
    /// `order`), before the simulator's clock gets there? Only if nothing
    /// that reads or changes the sender comes first: the run's end, a warm-up
    /// snapshot still to be taken, its stop, its retransmission deadline
    /// (`at` strictly before each, so no tie with them is decided
    /// differently) — and its pacer's pending event, unless that event can
    /// itself run first, ahead of the clock (`pace_until`).
    /// The timer's entry in the event queue may come first when it is stale
    /// (earlier than the deadline, which nearly every ack moves on): it then
    /// finds the deadline this ack set and goes there, in the order of the
    /// event that armed it (`RtoArm`) — where it would have gone one stale
    /// firing later. What the sender sends enters its own first link at `at`
    /// (no other input, see `build`), and what it schedules carries the
    /// order of the ack's arrival (`after_sender`), as the delivery event's
    /// would have.
    #[inline]
    fn sender_takes(&mut self, f: u32, at: SimTime, order: Order) -> bool {
        if self.past_a_pending_mark(at) {
            return false;
        }
        debug_assert!((f as usize) < self.agents.len() && (f as usize) < self.hot.len());
        // SAFETY: `f` is a packet's flow id; `Sim::new` asserts that flow ids
        // are their indexes and pushes one agent and one `FlowHot` per flow.
        let (agent, hot) = unsafe {
            (
                self.agents.get_unchecked(f as usize),
                self.hot.get_unchecked(f as usize),
            )
        };
        let Agent::Tcp { snd, .. } = agent else {
            return false;
        };
        if at >= hot.stop {
            return false;
        }
        if snd.pace_entry() <= at {
            return self.pace_ahead && self.pace_until(f, at, order);
        }
        snd.rto_deadline().map_or(true, |d| at < d)
    }

    /// The sender of TCP flow `f` is about to take an ack at `at`, of order
    /// `order`, ahead of the clock (`sender_takes`: before the run's end, a
    /// pending warm-up snapshot and its stop), and its pacer's pending event
    /// comes first: run that event now, ahead of the clock too, and any
    /// that follow it before the ack, each at its time and in its order
    /// (`Pacer`), as the event queue would have run them; then may the
    /// sender take the ack (its retransmission deadline after it)?
    ///
    /// Nothing else reaches the sender before the ack: the acks before it
    /// came down the same links (one input each after the last merge, so in
    /// the order they left it) and have reached the sender already; the
    /// run's end, a snapshot and the stop are after the ack; a pacer event
    /// runs only strictly before the retransmission deadline (a stale timer
    /// entry before it goes on to the deadline, see `sender_takes`). What a
    /// pacer event sends enters the sender's own first link (no other input),
    /// in time order. Events of the same nanosecond go in ns-2's order, as
    /// the queue orders them (on the cost guard's BBR case, ~125 ties in
    /// 600 s; reversing it changes results); of an ack and a pacer event of
    /// the same order too (never seen), the pacer's goes first, as when the
    /// sender queued its pacer event before the ack's delivery event was.
    #[inline(never)]
    fn pace_until(&mut self, f: u32, at: SimTime, order: Order) -> bool {
        debug_assert!((f as usize) < self.agents.len() && (f as usize) < self.pacers.len());
        // the send buffer, taken once for the pacer events the loop runs
        // (each leaves it empty; nothing the loop reads between them uses it)
        let mut out = std::mem::take(&mut self.out);
        let takes = self.pace_loop(f, at, order, &mut out);
        self.out = out;
        takes
    }

    /// `pace_until`'s loop, with the send buffer taken.
    #[inline(always)]
    fn pace_loop(&mut self, f: u32, at: SimTime, order: Order, out: &mut Vec<Packet>) -> bool {
        loop {
            // SAFETY: `f` is a packet's flow id (`sender_takes`); `Sim::new`
            // asserts that flow ids are their indexes and makes one agent
            // and one `Pacer` per flow.
            let Agent::Tcp { snd, .. } = (unsafe { self.agents.get_unchecked(f as usize) }) else {
                return false;
            };
            let due = snd.pace_entry();
            let rto = snd.rto_deadline().unwrap_or(SimTime::MAX);
            if due > at {
                return at < rto;
            }
            // (the pacer's order is read only when it is needed: a tie, or
            // the event to run)
            // SAFETY: as above
            let o = unsafe { self.pacers.get_unchecked(f as usize) }.order;
            if due == at && o > order {
                return at < rto;
            }
            if due >= rto {
                return false;
            }
            self.pace_fire_into(f, due, o, out);
        }
    }

    /// A threshold dropper on link `l` started a congestion event: it picks
    /// the connection to signal (`ThresholdDropper::choose`) among the TCP
    /// flows crossing the link that are running now.
    fn select_victim(&mut self, l: u32, now: SimTime) {
        let Queue::Threshold(t) = &mut self.links[l as usize].queue else {
            return;
        };
        let (flows, agents) = (&self.flows, &self.agents);
        let running = self.candidates[l as usize].iter().filter(|&&(f, _)| {
            let info = &flows[f as usize];
            info.start <= now && now < info.stop
        });
        let candidates = running.filter_map(|&(f, w)| match &agents[f as usize] {
            Agent::Tcp { snd, .. } => Some((f, w, snd.cwnd())),
            Agent::Udp { .. } => None,
        });
        let victim = t.choose(candidates);
        t.select(victim, now);
    }

    /// Packet `p` is lost on link `l` at instant `now` — which may be after the
    /// simulator's clock: a chained link decides at once (see `forward`). A
    /// flow's drop counts, like a link's (`Link::set_marks`), hold what happened
    /// by each mark: a drop after the run's end is not the run's, and one after
    /// the warm-up mark decided before its snapshot is set aside for it.
    pub(super) fn dropped(&mut self, p: &Packet, l: u32, now: SimTime, cause: DropCause) {
        let f = p.flow as usize;
        if now <= self.end {
            self.flow_drops[f] += 1;
            if !self.warm_done && now > self.warmup {
                self.late_drops[f] += 1;
            }
        }
        self.rec.drop(now, l, p.flow, p.seq, cause);
    }
}
