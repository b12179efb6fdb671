//! The event queue, ordered by (time, [`Order`], insertion order), so
//! simultaneous events run as ns-2's scheduler runs them and every run is
//! deterministic.
//!
//! ns-2 keeps time in a double, `clock_ + delay` for each event scheduled,
//! and runs events of equal time in the order they were scheduled; an event
//! is scheduled while an earlier one runs, so of two events of equal time the
//! one whose scheduling event ran first goes first, and so on back. Events
//! that are simultaneous in exact arithmetic (frequent when links share one
//! rate: times fall on a lattice) may differ in the last bits of ns-2's
//! doubles, and then the smaller double goes first whatever the scheduling
//! order. tcplab's events are not one for one ns-2's (a link holds one
//! delivery event for all its packets and schedules it when the previous
//! packet arrives, not when the packet starts out), so each event carries
//! its [`Order`] — ns-2's double clock for it, and the clocks of the event
//! that scheduled it and of that one's scheduler — and equal times are
//! ordered by it before the order of insertion.
//!
//! The queue stays small: each link keeps at most one pending delivery, each
//! TCP connection at most one live timer entry (see `tcp::sender`), so it
//! holds O(links + flows) entries, not O(packets in flight).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens when an event fires. Targets are indices into the
/// simulator's component vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of link `i`'s delay line reaches the next hop.
    LinkDeliver(u32),
    /// Retransmission timer of TCP flow `i` (may be stale; the sender checks).
    Rto(u32),
    /// The pacer of TCP flow `i` lets its next packet go (one pending per flow).
    Pace(u32),
    /// Delayed-ack timer of the receiver of TCP flow `i`.
    DelAck(u32),
    /// UDP flow `i` sends its next packet.
    UdpSend(u32),
    /// The application of TCP flow `i` writes (CBR over TCP).
    AppWrite(u32),
    /// The playback reader of TCP flow `i` reads.
    PlaybackRead(u32),
    /// Flow `i` starts sending.
    FlowStart(u32),
    /// Flow `i` stops sending.
    FlowStop(u32),
    /// End of the warm-up: snapshot the counters.
    Warmup,
    /// Periodic trace sample.
    Sample,
    /// Write out the traces streamed to files (`Sim::spill_traces`).
    Spill,
}

/// An event's place among events of the same nanosecond, as ns-2 orders
/// them: ns-2's clock (a double) at the event, then the clocks of the event
/// that scheduled it and of that one's scheduler. Doubles are kept as their
/// bits, which order as the values do for the non-negative times of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Order {
    pub clock: u64,
    pub cause: [u64; 2],
}

// Lexicographic, as derived, but the clocks first and alone: they decide
// nearly every comparison, and the derived form compares the causes
// through a slice comparison.
impl PartialOrd for Order {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
    #[inline]
    fn lt(&self, o: &Self) -> bool {
        self.clock < o.clock
            || (self.clock == o.clock
                && (self.cause[0] < o.cause[0]
                    || (self.cause[0] == o.cause[0] && self.cause[1] < o.cause[1])))
    }
    #[inline]
    fn gt(&self, o: &Self) -> bool {
        o.lt(self)
    }
    #[inline]
    fn le(&self, o: &Self) -> bool {
        !o.lt(self)
    }
    #[inline]
    fn ge(&self, o: &Self) -> bool {
        !self.lt(o)
    }
}

impl Ord for Order {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        self.clock
            .cmp(&o.clock)
            .then(self.cause[0].cmp(&o.cause[0]))
            .then(self.cause[1].cmp(&o.cause[1]))
    }
}

impl Order {
    /// ns-2's clock at the event.
    #[inline]
    pub fn clock(&self) -> f64 {
        f64::from_bits(self.clock)
    }

    /// The order of an event that this one, running at `now`, schedules at
    /// `at`: `at - now` in seconds ahead, as [`Order::then`] takes it (the
    /// scheduler's own `schedule`, and agents that run ahead of its clock).
    #[inline]
    pub fn after(&self, now: SimTime, at: SimTime) -> Order {
        self.then(Order::delay_s(now, at))
    }

    /// The delay in seconds, as ns-2's double clock takes it, of an event at
    /// `at` scheduled at `now` ([`Order::after`] is `then` of it; a sine
    /// schedule keeps it per departure).
    #[inline(always)]
    pub fn delay_s(now: SimTime, at: SimTime) -> f64 {
        crate::time::ns_f64(at.saturating_sub(now)) / 1e9
    }

    /// The order of an event this one schedules `delay` seconds ahead
    /// (ns-2's `clock_ + delay`).
    #[inline]
    pub fn then(&self, delay: f64) -> Order {
        Order {
            clock: (self.clock() + delay).to_bits(),
            cause: [self.clock, self.cause[0]],
        }
    }
}

/// Ordered by time, order, then first-inserted-first.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    order: Order,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> (SimTime, Order, u64) {
        (self.time, self.order, self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// Software prefetch: a hint that the cache line holding `p` will be read
/// soon (into every level), so that its load from memory overlaps with the
/// work in between (the event loop's lookahead, `Sim::events`). It reads
/// nothing and faults on no address, so it cannot change results;
/// elsewhere than x86-64 it does nothing. (Here, at the bottom of the
/// layers, for the links' and the simulator's use too.)
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect (it neither reads
    // into a register nor faults), whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const NIL: u32 = u32::MAX;

/// The tail of every empty window: a node of time 0 and the least order,
/// so an insert compares with it as with a last event and appends (its
/// `next` is written then, and never read).
const SENTINEL: u32 = 0;

/// An event in a calendar window's list. Each window's list is singly linked
/// and sorted by time. Events of equal time keep the order they were
/// scheduled in because an insert goes after every node of its time and
/// order (see `Scheduler::insert_near`).
#[derive(Clone, Copy, Debug)]
struct Node {
    time: SimTime,
    order: Order,
    next: u32,
    event: Event,
}

/// A calendar window: its list's first node (NIL when the list is empty)
/// and last node (`SENTINEL` when the list is empty). An insert into an empty
/// window touches no other node: with ~1 event per window (what `adapt`
/// aims at), the list used to start at the window's last popped node, long
/// out of the cache at 10^4 flows, read and written at every insert.
#[derive(Clone, Copy, Debug)]
struct Window {
    first: u32,
    tail: u32,
}

/// Pops per adaptation epoch (see `Scheduler::adapt`).
const EPOCH: u32 = 4096;

/// The event queue: a calendar queue (Brown 1988) for the near future and a
/// binary heap for the far future.
///
/// The near future is `[floor, floor + span)`, cut into windows of 2^`shift`
/// ns, one list per window (a ring of `windows.len()` windows). The current
/// window's first event is the earliest of all, so a pop takes it or steps to
/// the next window; an insert appends at its window's tail (events mostly
/// come in time order) or walks its window's short list. Both cost O(1) when
/// the window is about the gap between events — a heap's pop and push cost
/// O(log n) each, and they were 40 % of the engine's instructions. Events
/// beyond the near future (retransmission timers, mostly) wait in the heap
/// and move into their window when the calendar reaches it.
///
/// The window width and the number of windows adapt every `EPOCH` pops to
/// what the run does (many empty windows stepped over: wider; long walks:
/// narrower; many events beyond the horizon: more windows). Events come out
/// in (time, scheduling order) whatever the shape, so adapting never changes
/// results.
///
/// Invariant between calls: every event in the calendar is earlier than
/// `floor + span`, every event in the heap is at or after it, and nothing
/// pending is earlier than `floor`.
pub struct Scheduler {
    nodes: Vec<Node>,
    free: u32,
    /// The ring of windows.
    windows: Vec<Window>,
    /// log2 of the window width, ns.
    shift: u32,
    /// `windows.len() - 1`.
    mask: usize,
    /// Start of the current window; every pending event is at or after it.
    floor: SimTime,
    /// Length of the near future: `windows.len() << shift`.
    span: SimTime,
    cur: usize,
    /// Events in the calendar (the rest are in `far`).
    near: usize,
    far: BinaryHeap<Entry>,
    /// The heap's earliest time (`SimTime::MAX` if empty).
    far_min: SimTime,
    /// Insertion order of the heap's entries (the calendar's lists keep
    /// theirs by position).
    next_seq: u64,
    /// The time of the event popped last (the one running).
    now: SimTime,
    /// The node of the event popped last: it is freed at the next pop, so
    /// its order is read there rather than copied out at every pop (and the
    /// next insert reuses it, in the cache). Before the first pop, and
    /// after a re-shape (which rebuilds the nodes), a node that holds the
    /// order only.
    running_node: u32,
    /// Whole epochs popped, and pops left in this one.
    epochs: u64,
    epoch_left: u32,
    epoch_skips: u64,
    epoch_walk: u64,
    epoch_far: u64,
    /// `near` at the start of the epoch (inserts = its growth + pops).
    epoch_near: usize,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        let mut s = Scheduler {
            nodes: Vec::new(),
            free: NIL,
            windows: Vec::new(),
            shift: 0,
            mask: 0,
            floor: 0,
            span: 0,
            cur: 0,
            near: 0,
            far: BinaryHeap::new(),
            far_min: SimTime::MAX,
            next_seq: 0,
            now: 0,
            running_node: NIL,
            epochs: 0,
            epoch_left: EPOCH,
            epoch_skips: 0,
            epoch_walk: 0,
            epoch_far: 0,
            epoch_near: 0,
        };
        s.reshape(0, 20, 64); // 1 ms windows until the first adaptation
        s
    }

    /// Events popped so far (for the events/s figure of the benchmarks).
    pub fn popped(&self) -> u64 {
        self.epochs * EPOCH as u64 + (EPOCH - self.epoch_left) as u64
    }

    /// The order of the event running now (the one popped last).
    #[inline]
    pub fn running(&self) -> Order {
        self.node(self.running_node).order
    }

    /// Schedule `event` at `time` from the event running now.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        self.schedule_ordered(time, event, self.running().after(self.now, time));
    }

    /// Schedule a measurement (warm-up snapshot, trace sample, spill) at
    /// `time`: before every simulated event of that nanosecond, as ns-2 has
    /// no such event to order.
    #[inline]
    pub fn schedule_measure(&mut self, time: SimTime, event: Event) {
        self.schedule_ordered(time, event, Order::default());
    }

    /// Schedule `event` at `time` in the order given (an event ns-2 would
    /// have scheduled at another instant than now, or from another clock).
    #[inline(always)]
    pub fn schedule_ordered(&mut self, time: SimTime, event: Event, order: Order) {
        if time.wrapping_sub(self.floor) < self.span {
            self.insert_near(time, order, event);
        } else {
            self.schedule_far(time, order, event);
        }
    }

    /// Events beyond the horizon go to the heap; one before the floor
    /// (possible only after a `pop_until` that found nothing due, which
    /// ends the run) re-shapes the calendar around it.
    #[inline(never)]
    fn schedule_far(&mut self, time: SimTime, order: Order, event: Event) {
        if time < self.floor {
            self.reshape(time, self.shift, self.windows.len());
            return self.schedule_ordered(time, event, order);
        }
        self.epoch_far += 1;
        self.push_far(time, order, event);
    }

    #[inline]
    fn push_far(&mut self, time: SimTime, order: Order, event: Event) {
        self.far_min = self.far_min.min(time);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.far.push(Entry {
            time,
            order,
            seq,
            event,
        });
    }

    /// Put an event of the near future into its window's sorted list, after
    /// every event of the same time and order (so ties pop by order, then
    /// first-scheduled-first).
    /// The common cases — a free node at hand, and an empty window or the
    /// event at or after its window's last one — are done here, calling
    /// nothing (so no registers to save); the rest is `insert_slow`.
    #[inline(always)]
    fn insert_near(&mut self, time: SimTime, order: Order, event: Event) {
        let b = (time >> self.shift) as usize & self.mask;
        let Window { first, tail } = *self.window(b);
        let i = self.free;
        let t = self.node(tail);
        if i == NIL || t.time > time || (t.time == time && t.order > order) {
            return self.insert_slow(b, time, order, event);
        }
        self.free = self.node(i).next;
        *self.node_mut(i) = Node {
            time,
            order,
            next: NIL,
            event,
        };
        self.node_mut(tail).next = i;
        *self.window_mut(b) = Window {
            first: if first == NIL { i } else { first },
            tail: i,
        };
        self.near += 1;
    }

    /// `insert_near` without a free node, or before the window's tail: link
    /// it in walking from the first node. Calls nothing on the walk's path.
    #[inline(never)]
    fn insert_slow(&mut self, b: usize, time: SimTime, order: Order, event: Event) {
        let i = self.free;
        if i == NIL {
            return self.grow_then_insert(time, order, event);
        }
        self.free = self.node(i).next;
        *self.node_mut(i) = Node {
            time,
            order,
            next: NIL,
            event,
        };
        self.near += 1;
        let Window { first, tail } = *self.window(b);
        let key = (time, order);
        if first == NIL {
            *self.window_mut(b) = Window { first: i, tail: i };
            return;
        }
        if (self.node(tail).time, self.node(tail).order) <= key {
            // append
            self.node_mut(tail).next = i;
            self.window_mut(b).tail = i;
            return;
        }
        // (the walk's length counts the nodes passed, plus one)
        if (self.node(first).time, self.node(first).order) > key {
            self.node_mut(i).next = first;
            self.window_mut(b).first = i;
            self.epoch_walk += 1;
            return;
        }
        let mut walk = 2;
        let mut prev = first;
        let mut at = self.node(first).next;
        // the tail is later than `key`: the walk stops at it at the latest
        while (self.node(at).time, self.node(at).order) <= key {
            prev = at;
            at = self.node(at).next;
            walk += 1;
        }
        self.node_mut(i).next = at;
        self.node_mut(prev).next = i;
        self.epoch_walk += walk;
    }

    /// Add free nodes (as many as there are nodes), then insert.
    #[cold]
    #[inline(never)]
    fn grow_then_insert(&mut self, time: SimTime, order: Order, event: Event) {
        let n = self.nodes.len();
        let blank = Node {
            time: 0,
            order: Order::default(),
            next: NIL,
            event: Event::Warmup,
        };
        self.nodes.resize(2 * n.max(16), blank);
        for i in n..self.nodes.len() {
            self.nodes[i].next = if i + 1 < self.nodes.len() {
                (i + 1) as u32
            } else {
                self.free
            };
        }
        self.free = n as u32;
        self.insert_near(time, order, event);
    }

    /// Move the heap's events that the near future now covers into it.
    #[inline(always)]
    fn migrate(&mut self) {
        if self.far_min.wrapping_sub(self.floor) < self.span {
            self.migrate_some();
        }
    }

    #[inline(never)]
    fn migrate_some(&mut self) {
        while let Some(top) = self.far.peek() {
            let time = top.time;
            if time.wrapping_sub(self.floor) >= self.span {
                self.far_min = time;
                return;
            }
            let e = self.far.pop().expect("peeked");
            self.insert_near(time, e.order, e.event);
        }
        self.far_min = SimTime::MAX;
    }

    /// The two events that pop next unless others are scheduled before
    /// them (each looked for in its predecessor's window and the window
    /// after; None where those are empty), and a prefetch of the third's
    /// node, so that the next call reads nodes in the cache.
    #[inline(always)]
    pub fn lookahead(&self) -> (Option<Event>, Option<Event>) {
        let (a, wa) = match self.after(NIL, self.cur) {
            Some(x) => x,
            None => return (None, None),
        };
        let e1 = self.node(a).event;
        let (b, wb) = match self.after(a, wa) {
            Some(x) => x,
            None => return (Some(e1), None),
        };
        let e2 = self.node(b).event;
        if let Some((c, _)) = self.after(b, wb) {
            prefetch(self.nodes.as_ptr().wrapping_add(c as usize));
        }
        (Some(e1), Some(e2))
    }

    /// The node after `i` (in window `w`; NIL: the window's first), looked
    /// for in `w` and the window after; with its window.
    #[inline(always)]
    fn after(&self, i: u32, w: usize) -> Option<(u32, usize)> {
        let n = if i == NIL {
            self.window(w).first
        } else {
            self.node(i).next
        };
        if n != NIL {
            return Some((n, w));
        }
        let w = (w + 1) & self.mask;
        match self.window(w).first {
            NIL => None,
            n => Some((n, w)),
        }
    }

    /// The earliest event at or before `until`, removed from the queue.
    #[inline(always)]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        loop {
            let first = self.window(self.cur).first;
            if first != NIL {
                let n = self.node(first);
                let (time, event, next) = (n.time, n.event, n.next);
                if time > until {
                    return None;
                }
                let w = self.window_mut(self.cur);
                w.first = next;
                if next == NIL {
                    w.tail = SENTINEL;
                }
                // the event that ran last is done: its node is free
                let done = self.running_node;
                self.node_mut(done).next = self.free;
                self.free = done;
                self.near -= 1;
                self.epoch_left -= 1;
                self.running_node = first;
                if self.epoch_left == 0 {
                    self.adapt(time);
                }
                self.now = time;
                return Some((time, event));
            }
            if !self.advance(until) {
                return None;
            }
        }
    }

    /// The current window is empty: move to the next window that can hold
    /// an event at or before `until`. False if there is none.
    #[inline(always)]
    fn advance(&mut self, until: SimTime) -> bool {
        if self.near == 0 {
            return self.jump(until);
        }
        let next = self.floor + (1 << self.shift);
        if next > until {
            return false;
        }
        self.floor = next;
        self.cur = (self.cur + 1) & self.mask;
        self.epoch_skips += 1;
        self.migrate();
        true
    }

    /// Nothing near: jump to the heap's earliest event.
    #[inline(never)]
    fn jump(&mut self, until: SimTime) -> bool {
        if self.far.is_empty() || self.far_min > until {
            return false;
        }
        let time = self.far_min;
        self.floor = (time >> self.shift) << self.shift;
        self.cur = (time >> self.shift) as usize & self.mask;
        self.migrate();
        true
    }

    /// Re-shape the calendar from the last epoch's costs; `now` is the time
    /// of the event just popped (nothing pending is earlier).
    #[cold]
    fn adapt(&mut self, now: SimTime) {
        let pops = EPOCH as u64;
        self.epochs += 1;
        let inserts = (self.near + pops as usize - self.epoch_near) as u64;
        let (skips, walk, far) = (self.epoch_skips, self.epoch_walk, self.epoch_far);
        self.reset_epoch();
        let pending = self.len();
        let mut shift = self.shift;
        let mut buckets = self.windows.len();
        if skips > pops && walk <= inserts && shift < 40 {
            shift += 1; // mostly empty windows: wider
        } else if walk > inserts && skips <= pops && shift > 0 {
            shift -= 1; // long lists: narrower
        }
        let schedules = inserts + far;
        if far * 64 > schedules && buckets < 1 << 16 {
            // > 1/64 of the events beyond the horizon: a longer calendar (each
            // costs a heap push, pop and a second insert)
            buckets *= 2;
        } else if far * 128 < schedules && pending * 16 < buckets && buckets > 64 {
            buckets /= 2; // a long calendar, nearly empty
        }
        if shift != self.shift || buckets != self.windows.len() {
            self.reshape(now, shift, buckets);
        }
    }

    fn reset_epoch(&mut self) {
        self.epoch_left = EPOCH;
        self.epoch_skips = 0;
        self.epoch_walk = 0;
        self.epoch_far = 0;
        self.epoch_near = self.near;
    }

    /// Rebuild the calendar with windows of 2^`shift` ns and `buckets`
    /// windows, starting at the window of `now` (nothing pending is
    /// earlier).
    #[cold]
    fn reshape(&mut self, now: SimTime, shift: u32, buckets: usize) {
        // The calendar's events in (time, order) within each time: the
        // lists hold each time's events in order, and no time is in two
        // lists.
        let running = match self.running_node {
            NIL => Order::default(), // (`new`)
            r => self.nodes[r as usize].order,
        };
        let mut pending = Vec::with_capacity(self.near);
        for w in &self.windows {
            let mut at = w.first;
            while at != NIL {
                let n = self.nodes[at as usize];
                pending.push((n.time, n.order, n.event));
                at = n.next;
            }
        }
        self.nodes.clear();
        self.nodes.push(Node {
            time: 0,
            order: Order::default(),
            next: NIL,
            event: Event::Warmup,
        });
        self.nodes.push(Node {
            time: now,
            order: running,
            next: NIL,
            event: Event::Warmup,
        });
        self.running_node = 1;
        self.free = NIL;
        self.windows = vec![
            Window {
                first: NIL,
                tail: SENTINEL
            };
            buckets
        ];
        self.mask = buckets - 1;
        self.shift = shift;
        self.span = (buckets as SimTime) << shift;
        self.floor = (now >> shift) << shift;
        self.cur = (now >> shift) as usize & self.mask;
        self.near = 0;
        for (time, order, event) in pending {
            if time.wrapping_sub(self.floor) < self.span {
                self.insert_near(time, order, event);
            } else {
                // Later than every event of the calendar and earlier than
                // every event of the heap: a fresh seq keeps the order.
                self.push_far(time, order, event);
            }
        }
        self.migrate();
        self.epoch_walk = 0;
        self.epoch_near = self.near;
    }

    // Unchecked access on the hot paths (bounds checks there cost ~6 % of
    // the whole engine's instructions, mostly by keeping `insert_near` from
    // being inlined). SAFETY, the invariants that make it sound:
    // - every node index held anywhere (`free`, `running_node`, a window's
    //   `first`/`tail`, a node's `next` other than NIL) is < `nodes.len()`:
    //   nodes are only added (`grow_then_insert`), and `reshape` clears and
    //   rebuilds every index, with `SENTINEL` as node 0; callers never pass
    //   NIL;
    // - every window index is `x & mask` with `mask = windows.len() - 1`,
    //   `windows.len()` a power of two ≥ 1 (`reshape`).
    // The debug assertions check both in the (debug-built) unit tests.

    #[inline(always)]
    fn node(&self, i: u32) -> &Node {
        debug_assert!((i as usize) < self.nodes.len());
        unsafe { self.nodes.get_unchecked(i as usize) }
    }

    #[inline(always)]
    fn node_mut(&mut self, i: u32) -> &mut Node {
        debug_assert!((i as usize) < self.nodes.len());
        unsafe { self.nodes.get_unchecked_mut(i as usize) }
    }

    #[inline(always)]
    fn window(&self, b: usize) -> &Window {
        debug_assert!(b < self.windows.len());
        unsafe { self.windows.get_unchecked(b) }
    }

    #[inline(always)]
    fn window_mut(&mut self, b: usize) -> &mut Window {
        debug_assert!(b < self.windows.len());
        unsafe { self.windows.get_unchecked_mut(b) }
    }

    pub fn len(&self) -> usize {
        self.near + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut s = Scheduler::new();
        s.schedule_ordered(20, Event::Rto(0), Order::default());
        s.schedule_ordered(10, Event::Rto(1), Order::default());
        s.schedule_ordered(10, Event::Rto(2), Order::default());
        s.schedule_ordered(30, Event::Rto(3), Order::default());
        let order: Vec<_> = std::iter::from_fn(|| s.pop_until(25)).collect();
        assert_eq!(
            order,
            vec![
                (10, Event::Rto(1)),
                (10, Event::Rto(2)),
                (20, Event::Rto(0))
            ]
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s.pop_until(SimTime::MAX), Some((30, Event::Rto(3))));
        assert_eq!(s.pop_until(SimTime::MAX), None);
        assert_eq!(s.popped(), 4);
    }

    /// Events of equal time pop by their [`Order`] (ns-2's double clock,
    /// then the clocks of their scheduling events), whatever the insertion
    /// order; a full tie, first inserted first.
    #[test]
    fn equal_times_pop_by_order_then_insertion() {
        let o = |clock: f64, sched: f64| Order {
            clock: clock.to_bits(),
            cause: [sched.to_bits(), 0],
        };
        let mut s = Scheduler::new();
        let t = 0.3f64;
        let below = f64::from_bits(t.to_bits() - 1);
        s.schedule_ordered(300, Event::Rto(0), o(t, 0.2));
        s.schedule_ordered(300, Event::Rto(1), o(t, 0.1));
        s.schedule_ordered(300, Event::Rto(2), o(below, 0.25));
        s.schedule_ordered(300, Event::Rto(3), o(t, 0.1));
        let got: Vec<_> = std::iter::from_fn(|| s.pop_until(SimTime::MAX))
            .map(|e| e.1)
            .collect();
        assert_eq!(
            got,
            [Event::Rto(2), Event::Rto(1), Event::Rto(3), Event::Rto(0)]
        );
        // an event scheduled by the one running is ordered from its clock
        assert_eq!(s.running(), o(t, 0.2));
        s.schedule(400, Event::Rto(4));
        s.pop_until(SimTime::MAX);
        assert_eq!(f64::from_bits(s.running().cause[0]), t);
    }

    /// The same check with events scheduled before the last one popped
    /// (into the current window, before a window's first event, and before
    /// the calendar's floor), bursts large enough to re-shape the calendar
    /// with ties pending, and the pop count.
    #[test]
    fn past_events_and_ties_across_reshapes() {
        let mut rng = crate::rng::Rng::stream(11, 0, 0);
        let mut s = Scheduler::new();
        let mut reference: Vec<(SimTime, u64, Event)> = Vec::new();
        let mut seq = 0u64;
        let mut now: SimTime = 1 << 40;
        let mut pops = 0u64;
        let mut shapes = std::collections::HashSet::new();
        for i in 0..200_000u32 {
            let r = rng.uniform();
            // a burst of inserts, then a slow drain down to a few events
            let burst = i % 40_000 < 5_000;
            let insert_bias = if burst { 0.7 } else { 0.45 };
            if r < insert_bias {
                let t = match rng.uniform() {
                    u if u < 0.05 => now.saturating_sub((rng.uniform() * 1e9) as SimTime),
                    u if u < 0.10 => now.saturating_sub((rng.uniform() * 1e3) as SimTime),
                    u if u < 0.50 => now + (rng.uniform() * 4.0) as SimTime * 1000,
                    u if u < 0.95 => now + (rng.uniform() * 1e6) as SimTime,
                    _ => now + (rng.uniform() * 1e10) as SimTime,
                };
                s.schedule_ordered(t, Event::UdpSend(i), Order::default());
                reference.push((t, seq, Event::UdpSend(i)));
                seq += 1;
            } else {
                let reach = if !burst || rng.uniform() < 0.05 {
                    1e11
                } else {
                    2e6
                };
                let until = now + (rng.uniform() * reach) as SimTime;
                if let Some(t) = pop_and_check(&mut s, &mut reference, until, i) {
                    now = t;
                    pops += 1;
                }
            }
            assert_eq!(s.len(), reference.len());
            shapes.insert((s.shift, s.windows.len()));
        }
        assert_eq!(s.popped(), pops);
        assert!(shapes.len() >= 4, "the calendar re-shaped ({shapes:?})");
    }

    /// The order of the running event is the popped event's, read from its
    /// node, through re-shapes (which rebuild the nodes) and schedules into
    /// the past (one before the floor re-shapes too).
    #[test]
    fn running_is_the_popped_events_order() {
        let mut rng = crate::rng::Rng::stream(5, 0, 0);
        let mut s = Scheduler::new();
        let order = |i: u32| Order {
            clock: i as u64,
            cause: [3 * i as u64, 7],
        };
        let mut now: SimTime = 1 << 30;
        let mut running = Order::default();
        let mut pops = 0;
        for i in 0..200_000u32 {
            if rng.uniform() < 0.5 {
                let t = match rng.uniform() {
                    u if u < 0.05 => now.saturating_sub((rng.uniform() * 1e7) as SimTime),
                    u if u < 0.95 => now + (rng.uniform() * 1e5) as SimTime,
                    _ => now + (rng.uniform() * 1e10) as SimTime,
                };
                s.schedule_ordered(t, Event::Rto(i), order(i));
            } else if let Some((t, Event::Rto(j))) =
                s.pop_until(now + (rng.uniform() * 1e6) as SimTime)
            {
                now = t;
                running = order(j);
                pops += 1;
            }
            assert_eq!(s.running(), running, "step {i}");
        }
        assert!(pops > 50_000 && s.epochs > 10);
    }

    /// Pop from `s` up to `until` and check it against the reference's
    /// earliest (time, seq) entry, which is removed; the popped time, if any.
    fn pop_and_check(
        s: &mut Scheduler,
        reference: &mut Vec<(SimTime, u64, Event)>,
        until: SimTime,
        step: u32,
    ) -> Option<SimTime> {
        let got = s.pop_until(until);
        let first = reference
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| (e.0, e.1))
            .map(|(j, e)| (j, *e));
        match first {
            Some((j, e)) if e.0 <= until => {
                assert_eq!(got, Some((e.0, e.2)), "step {step}");
                reference.remove(j);
                Some(e.0)
            }
            _ => {
                assert_eq!(got, None, "step {step}");
                None
            }
        }
    }

    /// Against a reference (a sorted list of (time, seq)): events at random
    /// horizons (many ties, some far beyond the calendar), popped with
    /// random limits, come out in (time, insertion) order, through every
    /// re-shaping of the calendar.
    #[test]
    fn same_order_as_a_sorted_list() {
        let mut rng = crate::rng::Rng::stream(7, 0, 0);
        let mut s = Scheduler::new();
        let mut reference: Vec<(SimTime, u64, Event)> = Vec::new();
        let mut seq = 0u64;
        let mut now: SimTime = 0;
        let mut shapes = std::collections::HashSet::new();
        for i in 0..300_000u32 {
            // phases of dense and sparse traffic make the calendar adapt
            let scale = [50.0, 5e3, 5e6, 5e9][(i / 20_000) as usize % 4];
            let r = rng.uniform();
            if r < 0.5 {
                let far = if rng.uniform() < 0.1 { 1000.0 } else { 1.0 };
                let t = now + (rng.uniform() * scale * far) as SimTime;
                s.schedule_ordered(t, Event::Rto(i), Order::default());
                reference.push((t, seq, Event::Rto(i)));
                seq += 1;
            } else {
                if i % 64 == 0 {
                    reference.sort_by_key(|e| (e.0, e.1));
                }
                let until = now + (rng.uniform() * scale) as SimTime;
                if let Some(t) = pop_and_check(&mut s, &mut reference, until, i) {
                    now = t;
                }
            }
            assert_eq!(s.len(), reference.len());
            shapes.insert((s.shift, s.windows.len()));
        }
        assert!(shapes.len() >= 4, "the calendar re-shaped ({shapes:?})");
    }

    /// What the randomized reference test needs of a queue.
    trait Queue {
        fn fresh() -> Self;
        fn put(&mut self, t: SimTime, e: Event, o: Order);
        fn take(&mut self, until: SimTime) -> Option<(SimTime, Event)>;
        fn order_now(&self) -> Order;
        fn size(&self) -> usize;
    }
    macro_rules! queue {
        ($t:ty) => {
            impl Queue for $t {
                fn fresh() -> Self {
                    <$t>::new()
                }
                fn put(&mut self, t: SimTime, e: Event, o: Order) {
                    self.schedule_ordered(t, e, o)
                }
                fn take(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
                    self.pop_until(until)
                }
                fn order_now(&self) -> Order {
                    self.running()
                }
                fn size(&self) -> usize {
                    self.len()
                }
            }
        };
    }
    queue!(Scheduler);

    /// Against a `BinaryHeap` of (time, Order, seq): equal times with
    /// orders drawn from a few (full ties, ties decided by the clock, by
    /// either cause), same-ns bursts, events at the running time and
    /// before it, far-future events, phases of dense and sparse traffic
    /// (the calendar re-shapes), pops with random limits; the running
    /// order checked after every pop.
    fn matches_a_heap_of_full_keys<Q: Queue>(seed: u64) {
        use std::cmp::Reverse;
        let mut rng = crate::rng::Rng::stream(seed, 0, 0);
        let mut q = Q::fresh();
        let mut heap: BinaryHeap<Reverse<(SimTime, Order, u64, u32)>> = BinaryHeap::new();
        let orders: Vec<Order> = (0..6)
            .map(|k| Order {
                clock: [5u64, 5, 5, 7, 7, 9][k],
                cause: [[1, 2], [1, 3], [2, 0], [1, 2], [0, 9], [0, 0]][k],
            })
            .collect();
        let mut now: SimTime = 1 << 32;
        let mut seq = 0u64;
        let mut ties = 0u64;
        for i in 0..400_000u32 {
            let scale = [30.0, 3e3, 3e6, 3e9][(i / 25_000) as usize % 4];
            let o = orders[(rng.uniform() * orders.len() as f64) as usize];
            if rng.uniform() < 0.52 {
                let burst = if rng.uniform() < 0.05 { 8 } else { 1 };
                let t = match rng.uniform() {
                    u if u < 0.02 => now.saturating_sub((rng.uniform() * scale) as SimTime),
                    u if u < 0.15 => now,
                    u if u < 0.95 => now + (rng.uniform() * scale) as SimTime,
                    _ => now + (rng.uniform() * scale * 1e4) as SimTime,
                };
                for k in 0..burst {
                    let o = if k % 2 == 0 {
                        o
                    } else {
                        orders[k % orders.len()]
                    };
                    q.put(t, Event::Rto(i), o);
                    heap.push(Reverse((t, o, seq, i)));
                    seq += 1;
                }
            } else {
                let until = now + (rng.uniform() * scale * 2.0) as SimTime;
                let want = heap.peek().map(|r| r.0).filter(|e| e.0 <= until);
                let got = q.take(until);
                match want {
                    Some((t, o, _, id)) => {
                        heap.pop();
                        if heap.peek().is_some_and(|r| r.0 .0 == t) {
                            ties += 1;
                        }
                        assert_eq!(got, Some((t, Event::Rto(id))), "step {i}");
                        assert_eq!(q.order_now(), o, "step {i}");
                        now = t;
                    }
                    None => assert_eq!(got, None, "step {i}"),
                }
            }
            assert_eq!(q.size(), heap.len());
        }
        while let Some(Reverse((t, _, _, id))) = heap.pop() {
            assert_eq!(q.take(SimTime::MAX), Some((t, Event::Rto(id))));
        }
        assert_eq!(q.take(SimTime::MAX), None);
        assert!(ties > 10_000, "ties exercised ({ties})");
    }

    #[test]
    fn calendar_matches_a_heap_of_full_keys() {
        matches_a_heap_of_full_keys::<Scheduler>(3);
        matches_a_heap_of_full_keys::<Scheduler>(4);
    }
}
