//! What agents do at their events: a TCP sender's output and timer, flow
//! start, a CBR application's writes and its reader, a UDP source's sends,
//! and the TCP state traces.

use super::{Agent, FlowInfo, Sim, SENDS_AHEAD};
use crate::net::packet::Packet;
use crate::sched::{Event, Order};
use crate::time::{secs, SimTime};

impl Sim {
    /// Send what the sender produced in an event of order `order`, keep its
    /// timer in the event queue, trace.
    #[inline(never)]
    pub(super) fn after_sender(
        &mut self,
        f: u32,
        now: SimTime,
        out: &mut Vec<Packet>,
        order: Order,
    ) {
        self.send_all(f, now, out, order);
        self.timers_after_sending(f, now, order);
    }

    /// Trace and forward what the sender of flow `f` produced (`out`,
    /// emptied) in an event of order `order`.
    #[inline]
    pub(super) fn send_all(&mut self, f: u32, now: SimTime, out: &mut Vec<Packet>, order: Order) {
        // (indexed, then cleared: most events send nothing or one packet,
        // and a `drain` costs more to set up and drop than that)
        for i in 0..out.len() {
            let p = out[i];
            self.trace_send(now, f, &p);
            self.forward(p, now, order);
        }
        out.clear();
    }

    /// The sends trace's row for packet `p` of flow `f`, if it is kept
    /// (the trace out of line: its columns' addresses are not worked out
    /// in `forward`, which sends without it).
    #[inline(always)]
    pub(super) fn trace_send(&mut self, now: SimTime, f: u32, p: &Packet) {
        #[cold]
        #[inline(never)]
        fn traced(sim: &mut Sim, now: SimTime, f: u32, p: &Packet) {
            sim.rec.send(now, f, p.seq, p.rtx);
        }
        if self.rec.sends.is_some() {
            traced(self, now, f, p);
        }
    }

    /// After the sender of flow `f` ran in an event of order `order` and
    /// what it sent has gone on: keep its timer in the event queue, trace.
    #[inline(never)]
    pub(super) fn sender_timers(&mut self, f: u32, now: SimTime, order: Order) {
        self.timers_after_sending(f, now, order)
    }

    /// `sender_timers`' body (inlined into `after_sender`).
    #[inline(always)]
    fn timers_after_sending(&mut self, f: u32, now: SimTime, order: Order) {
        debug_assert!((f as usize) < self.agents.len() && (f as usize) < self.hot.len());
        // SAFETY: `f` is the id of the flow whose sender ran; `Sim::new`
        // (build.rs) asserts that flow ids are their indexes and makes one
        // agent and one `FlowHot` per flow.
        let mut queued = false;
        if let Agent::Tcp { snd, .. } = unsafe { self.agents.get_unchecked_mut(f as usize) } {
            queued = snd.acks_queued();
            if let Some(d) = snd.rto_deadline() {
                // SAFETY: as above, one `FlowHot` per flow (`Sim::new`)
                let armed = unsafe { &mut self.hot.get_unchecked_mut(f as usize).rto };
                if armed.deadline != d {
                    // (re)armed in this event: ns-2 reschedules its timer now
                    *armed = super::RtoArm {
                        deadline: d,
                        armed_at: now,
                        by: order,
                    };
                }
                if d < snd.rto_entry() {
                    snd.note_rto_entry(d);
                    self.sched.schedule_ordered(d, Event::Rto(f), armed.order());
                }
            }
            // the pacer: at most one pending event per flow
            if let Some(d) = snd.pace_deadline() {
                if snd.pace_unscheduled() {
                    snd.note_pace_entry(d);
                    // (from `now` and `order`, not the scheduler's: an ack
                    // the sender took early runs ahead of the clock)
                    let o = order.after(now, d);
                    // SAFETY: as above, one `Pacer` per flow (`Sim::new`)
                    let pacer = unsafe { self.pacers.get_unchecked_mut(f as usize) };
                    pacer.order = o;
                    // (an earlier `Event::Pace` still queued, left by a
                    // pacer event run ahead of the clock, goes on to this one
                    // when it fires: `pace_event`)
                    if pacer.queued == SimTime::MAX {
                        pacer.queued = d;
                        self.sched.schedule_ordered(d, Event::Pace(f), o);
                    }
                }
            }
        }
        if self.rec.tcp_every_change {
            self.trace_tcp(f, now);
        }
        if queued {
            self.drain_to_senders(f);
        }
    }

    pub(super) fn rto_event(&mut self, f: u32, now: SimTime) {
        let mut out = std::mem::take(&mut self.out);
        if let Agent::Tcp { snd, .. } = &mut self.agents[f as usize] {
            if now != snd.rto_entry() {
                self.out = out;
                return; // stale entry
            }
            snd.note_rto_entry(SimTime::MAX);
            match snd.rto_deadline() {
                Some(d) if d <= now => snd.on_timeout(now, &mut out),
                Some(d) => {
                    snd.note_rto_entry(d);
                    self.sched
                        .schedule_ordered(d, Event::Rto(f), self.hot[f as usize].rto.order());
                }
                None => {}
            }
        }
        self.after_sender(f, now, &mut out, self.sched.running());
        self.out = out;
    }

    /// The flow's `Event::Pace` fired: run the pacer's pending event if it
    /// is this one; else the sender ran it ahead of the clock
    /// (`Sim::pace_until`), and the queue's entry goes on to the pending
    /// event, in that event's order, or is dropped if none is pending.
    pub(super) fn pace_event(&mut self, f: u32, now: SimTime) {
        let pacer = &mut self.pacers[f as usize];
        pacer.queued = SimTime::MAX;
        let Agent::Tcp { snd, .. } = &self.agents[f as usize] else {
            return;
        };
        let due = snd.pace_entry();
        debug_assert!(due >= now, "a pacer event went past the clock");
        if due != now {
            if due != SimTime::MAX {
                pacer.queued = due;
                self.sched
                    .schedule_ordered(due, Event::Pace(f), pacer.order);
            }
            return;
        }
        let order = pacer.order;
        debug_assert!(order == self.sched.running());
        self.pace_fire(f, now, order);
    }

    /// The pacer's event at `now`, of order `order` (on the clock, or ahead
    /// of it: `Sim::pace_until`): send what the window and the pacer allow.
    #[inline(always)]
    pub(super) fn pace_fire(&mut self, f: u32, now: SimTime, order: Order) {
        let mut out = std::mem::take(&mut self.out);
        self.pace_fire_into(f, now, order, &mut out);
        self.out = out;
    }

    /// [`Sim::pace_fire`] with the send buffer taken out of `self.out`
    /// by the caller (`Sim::pace_until` takes it once for all the pacer
    /// events it runs); `out` is empty again when it returns.
    #[inline(always)]
    pub(super) fn pace_fire_into(
        &mut self,
        f: u32,
        now: SimTime,
        order: Order,
        out: &mut Vec<Packet>,
    ) {
        debug_assert!(out.is_empty());
        debug_assert!((f as usize) < self.agents.len());
        // SAFETY: `f` is the flow of a pacer event (`pace_event`,
        // `Sim::pace_until`); `Sim::new` asserts that flow ids are their
        // indexes and makes one agent per flow.
        if let Agent::Tcp { snd, .. } = unsafe { self.agents.get_unchecked_mut(f as usize) } {
            snd.pace_fired();
            snd.send_much(now, 0, out);
            if out.is_empty() && snd.pace_deadline().is_none() && !self.rec.tcp_every_change {
                // the window kept the packet in (a quarter of BBR's pacer
                // events on b_sack10): nothing sent, no timer moved, so
                // nothing for `after_sender` to do
                return;
            }
        }
        // `after_sender`'s body, inlined here: once per paced packet
        self.send_all(f, now, out, order);
        self.timers_after_sending(f, now, order);
    }

    pub(super) fn start_flow(&mut self, f: u32, now: SimTime) {
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
                self.after_sender(f, now, &mut out, self.sched.running());
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
    pub(super) fn app_write(&mut self, f: u32, now: SimTime) {
        let (Agent::Tcp { snd, .. }, Some(app)) =
            (&mut self.agents[f as usize], &mut self.apps[f as usize])
        else {
            return;
        };
        if !snd.is_active() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        app.write(snd, now, &mut out);
        let next = app.next_write();
        if next < self.flows[f as usize].stop {
            self.sched.schedule(next, Event::AppWrite(f));
        }
        self.after_sender(f, now, &mut out, self.sched.running());
        self.out = out;
    }

    /// The playback reader of flow `f` takes up to its share from what has
    /// been delivered in order.
    pub(super) fn playback_read(&mut self, f: u32, now: SimTime) {
        let (Agent::Tcp { sink, .. }, Some(app)) =
            (&self.agents[f as usize], &mut self.apps[f as usize])
        else {
            return;
        };
        let r = app.read(sink.delivered_bytes());
        self.rec.playback_read(now, f, &r);
        let next = app.next_read();
        if next <= self.flows[f as usize].stop {
            self.sched.schedule(next, Event::PlaybackRead(f));
        }
    }

    /// UDP flow `f` sends its packet due at `now`, and schedules the next.
    ///
    /// A source whose first links only it feeds (`FlowInfo::sends_ahead`)
    /// sends its next packets in the same event, up to [`SENDS_AHEAD`] of
    /// them, each at its own departure time and in the [`Order`] its own
    /// event would have had (the previous send's, `clock_ + interval` later,
    /// as the scheduler computes it): its departures depend on nothing but
    /// the source, and those links' state on nothing but its packets, so the
    /// packets reach the first merge (a link's delivery event) exactly as
    /// they would have. It stops before a departure past a mark the clock
    /// has not reached (the warm-up snapshot reads what the source sent; the
    /// run's end) and schedules that one as an event, as always.
    pub(super) fn udp_send(&mut self, f: u32, mut now: SimTime) {
        let FlowInfo {
            stop, sends_ahead, ..
        } = self.flows[f as usize];
        let mut order = self.sched.running();
        let mut ahead = if sends_ahead { SENDS_AHEAD } else { 0 };
        loop {
            let Agent::Udp { src, .. } = &mut self.agents[f as usize] else {
                return;
            };
            if !src.active {
                return;
            }
            let (p, next) = src.emit_spaced(now);
            let mut go_on = None;
            if let Some((t, gap_s)) = next {
                if t < stop {
                    // (`order.after(now, t)`, its division done by the
                    // source: a replayed schedule keeps it)
                    let o = order.then(gap_s);
                    if ahead > 1 && !self.past_a_pending_mark(t) {
                        ahead -= 1;
                        go_on = Some((t, o));
                    } else {
                        self.sched.schedule_ordered(t, Event::UdpSend(f), o);
                    }
                }
            }
            self.forward(p, now, order);
            match go_on {
                Some((t, o)) => (now, order) = (t, o),
                None => return,
            }
        }
    }

    pub(super) fn trace_tcp(&mut self, f: u32, now: SimTime) {
        if let Agent::Tcp { snd, .. } = &self.agents[f as usize] {
            self.rec.tcp_state(
                now,
                f,
                snd.cwnd(),
                snd.ssthresh(),
                snd.in_flight(),
                snd.highest_ack(),
            );
            let r = snd.rtt();
            self.rec.rtt(
                now,
                f,
                r.srtt_s(),
                r.rttvar_s(),
                secs(r.timeout_ns()),
                r.backoff(),
            );
        }
    }
}
