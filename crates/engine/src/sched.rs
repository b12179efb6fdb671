//! The event queue, ordered by (time, insertion order), so
//! simultaneous events run first-scheduled-first (as ns-2's scheduler does)
//! and every run is deterministic.
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
}

/// `key` = time << 64 | insertion sequence: one integer comparison orders
/// by time, then first-scheduled-first.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
        o.key.cmp(&self.key)
    }
}

const NIL: u32 = u32::MAX;

/// An event in a calendar bucket; buckets are singly linked lists sorted by
/// (time, seq), threaded through one arena of nodes.
#[derive(Clone, Copy, Debug)]
struct Node {
    time: SimTime,
    seq: u64,
    event: Event,
    next: u32,
}

impl Node {
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// Pops per adaptation epoch (see `Scheduler::adapt`).
const EPOCH: u32 = 4096;

/// The event queue: a calendar queue (Brown 1988) for the near future and a
/// binary heap for the far future.
///
/// The near future is `[floor, floor + buckets·width)`, cut into `buckets`
/// windows of `width` ns; window k holds its events in a sorted list. The
/// current window's first event is the earliest of all, so a pop takes it
/// or steps to the next window; an insert walks its window's short list.
/// Both cost O(1) when `width` is about the gap between events — a heap's
/// pop and push cost O(log n) each, and they were 40 % of the engine's
/// instructions. Events beyond the near future (retransmission timers, mostly)
/// wait in the heap and move into their window when the calendar reaches it.
///
/// `width` and the number of buckets adapt every `EPOCH` pops to what the
/// run does (many empty windows stepped over: wider; long lists: narrower;
/// many events beyond the horizon: more buckets). The order of events is
/// (time, seq) whatever the shape, so adapting never changes results.
pub struct Scheduler {
    nodes: Vec<Node>,
    free: u32,
    heads: Vec<u32>,
    /// Last node of each window's list (meaningful only where `heads` is
    /// not NIL): events mostly come in time order, and these append at once.
    tails: Vec<u32>,
    /// log2 of the window width, ns.
    shift: u32,
    /// Start of the current window; every pending event is at or after it.
    floor: SimTime,
    cur: usize,
    /// Events in the calendar (the rest are in `far`).
    near: usize,
    /// `heads.len() - 1`.
    mask: usize,
    /// End of the near future (exclusive); 0 while the calendar is off.
    horizon: SimTime,
    /// Off while few events are pending: then the heap alone is cheaper.
    calendar: bool,
    far: BinaryHeap<Entry>,
    next_seq: u64,
    /// Events popped so far (for the events/s figure of the benchmarks).
    pub popped: u64,
    epoch_pops: u32,
    epoch_skips: u64,
    epoch_walk: u64,
    epoch_inserts: u64,
    epoch_far: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        Scheduler {
            nodes: Vec::new(),
            free: NIL,
            heads: vec![NIL; 64],
            tails: vec![NIL; 64],
            shift: 20, // 1 ms windows until the first adaptation
            floor: 0,
            cur: 0,
            near: 0,
            mask: 63,
            horizon: 0,
            calendar: false,
            far: BinaryHeap::new(),
            next_seq: 0,
            popped: 0,
            epoch_pops: 0,
            epoch_skips: 0,
            epoch_walk: 0,
            epoch_inserts: 0,
            epoch_far: 0,
        }
    }

    /// Set the start of the near future (and so its end).
    #[inline(always)]
    fn set_floor(&mut self, floor: SimTime) {
        self.floor = floor;
        self.horizon = floor.saturating_add((self.heads.len() as SimTime) << self.shift);
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if time < self.floor {
            // Earlier than the calendar's start: possible only after a
            // `pop_until` that found nothing due (the simulator stops then).
            self.reshape(time, self.shift, self.heads.len());
        }
        if time < self.horizon {
            self.insert_near(time, seq, event);
        } else {
            self.epoch_far += 1;
            self.far.push(Entry {
                key: ((time as u128) << 64) | seq as u128,
                event,
            });
        }
    }

    /// Put an event of the near future into its window's sorted list.
    #[inline]
    fn insert_near(&mut self, time: SimTime, seq: u64, event: Event) {
        let b = (time >> self.shift) as usize & self.mask;
        let mut node = Node {
            time,
            seq,
            event,
            next: NIL,
        };
        let key = node.key();
        let head = self.heads[b];
        let tail = self.tails[b];
        let mut walk = 0;
        if head == NIL || self.nodes[tail as usize].key() < key {
            // empty window, or later than its last event: append
            let i = self.alloc(node);
            if head == NIL {
                self.heads[b] = i;
            } else {
                self.nodes[tail as usize].next = i;
            }
            self.tails[b] = i;
        } else {
            // somewhere before the tail: walk (never past the tail)
            let mut prev = NIL;
            let mut at = head;
            while self.nodes[at as usize].key() < key {
                prev = at;
                at = self.nodes[at as usize].next;
                walk += 1;
            }
            node.next = at;
            let i = self.alloc(node);
            if prev == NIL {
                self.heads[b] = i;
            } else {
                self.nodes[prev as usize].next = i;
            }
        }
        self.near += 1;
        self.epoch_walk += walk;
        self.epoch_inserts += 1;
    }

    #[inline(always)]
    fn alloc(&mut self, node: Node) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Move the heap's events that the near future now covers into it.
    #[inline]
    fn migrate(&mut self) {
        let h = self.horizon;
        while let Some(top) = self.far.peek() {
            let time = (top.key >> 64) as SimTime;
            if time >= h {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.insert_near(time, e.key as u64, e.event);
        }
    }

    /// The earliest event at or before `until`, removed from the queue.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        loop {
            if self.near == 0 {
                // Nothing near: jump to the heap's earliest event.
                let time = (self.far.peek()?.key >> 64) as SimTime;
                if time > until {
                    return None;
                }
                if !self.calendar {
                    let e = self.far.pop().expect("peeked");
                    self.popped += 1;
                    self.epoch_pops += 1;
                    if self.epoch_pops == EPOCH {
                        self.adapt(time);
                    }
                    return Some((time, e.event));
                }
                self.set_floor((time >> self.shift) << self.shift);
                self.cur = (time >> self.shift) as usize & self.mask;
                self.migrate();
                continue;
            }
            let head = self.heads[self.cur];
            if head != NIL {
                let n = self.nodes[head as usize];
                if n.time > until {
                    return None;
                }
                self.heads[self.cur] = n.next;
                self.nodes[head as usize].next = self.free;
                self.free = head;
                self.near -= 1;
                self.popped += 1;
                self.epoch_pops += 1;
                if self.epoch_pops == EPOCH {
                    self.adapt(n.time);
                }
                return Some((n.time, n.event));
            }
            // The current window is empty: step to the next one.
            let next = self.floor + (1 << self.shift);
            if next > until {
                return None;
            }
            self.set_floor(next);
            self.cur = (self.cur + 1) & self.mask;
            self.epoch_skips += 1;
            self.migrate();
        }
    }

    /// Re-shape the calendar from the last epoch's costs; `now` is the time
    /// of the event just popped (nothing pending is earlier).
    #[cold]
    fn adapt(&mut self, now: SimTime) {
        let pops = self.epoch_pops as u64;
        let pending = self.near + self.far.len();
        if self.calendar != (pending >= 32) && (pending < 16 || pending >= 32) {
            // Few events: a small heap is cheaper than stepping over windows.
            let (shift, buckets) = (self.shift, self.heads.len());
            self.calendar = pending >= 32;
            self.reset_epoch();
            return self.reshape(now, shift, buckets);
        }
        if !self.calendar {
            return self.reset_epoch();
        }
        let mut shift = self.shift;
        let mut buckets = self.heads.len();
        let (skips, walk) = (self.epoch_skips, self.epoch_walk);
        if skips > pops && walk <= self.epoch_inserts && shift < 40 {
            shift += 1; // mostly empty windows: wider
        } else if walk > self.epoch_inserts && skips <= pops && shift > 0 {
            shift -= 1; // long lists: narrower
        }
        let schedules = self.epoch_inserts + self.epoch_far;
        if self.epoch_far * 16 > schedules && buckets < 1 << 16 {
            buckets *= 2; // many events beyond the horizon: a longer calendar
        } else if self.epoch_far * 128 < schedules
            && (self.near + self.far.len()) * 16 < buckets
            && buckets > 64
        {
            buckets /= 2; // a long calendar, nearly empty
        }
        self.reset_epoch();
        if shift != self.shift || buckets != self.heads.len() {
            self.reshape(now, shift, buckets);
        }
    }

    fn reset_epoch(&mut self) {
        self.epoch_pops = 0;
        self.epoch_skips = 0;
        self.epoch_walk = 0;
        self.epoch_inserts = 0;
        self.epoch_far = 0;
    }

    /// Rebuild the calendar with windows of 2^`shift` ns and `buckets`
    /// buckets, starting at the window of `now` (nothing pending is earlier).
    #[cold]
    fn reshape(&mut self, now: SimTime, shift: u32, buckets: usize) {
        let mut pending = Vec::with_capacity(self.near);
        for &h in &self.heads {
            let mut at = h;
            while at != NIL {
                let n = self.nodes[at as usize];
                pending.push(n);
                at = n.next;
            }
        }
        self.nodes.clear();
        self.free = NIL;
        self.heads = vec![NIL; buckets];
        self.tails = vec![NIL; buckets];
        self.mask = buckets - 1;
        self.shift = shift;
        if self.calendar {
            self.set_floor((now >> shift) << shift);
        } else {
            (self.floor, self.horizon) = (0, 0);
        }
        self.cur = (now >> shift) as usize & self.mask;
        self.near = 0;
        for n in pending {
            if n.time < self.horizon {
                self.insert_near(n.time, n.seq, n.event);
            } else {
                self.far.push(Entry {
                    key: n.key(),
                    event: n.event,
                });
            }
        }
        self.migrate();
        self.epoch_walk = 0;
        self.epoch_inserts = 0;
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
        s.schedule(20, Event::Rto(0));
        s.schedule(10, Event::Rto(1));
        s.schedule(10, Event::Rto(2));
        s.schedule(30, Event::Rto(3));
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
        let mut modes = [false; 2];
        for i in 0..300_000u32 {
            // phases of dense and sparse traffic make the calendar adapt
            let scale = [50.0, 5e3, 5e6, 5e9][(i / 20_000) as usize % 4];
            let r = rng.uniform();
            if r < 0.5 {
                let far = if rng.uniform() < 0.1 { 1000.0 } else { 1.0 };
                let t = now + (rng.uniform() * scale * far) as SimTime;
                s.schedule(t, Event::Rto(i));
                reference.push((t, seq, Event::Rto(i)));
                seq += 1;
            } else {
                if i % 64 == 0 {
                    reference.sort_by_key(|e| (e.0, e.1));
                }
                let until = now + (rng.uniform() * scale) as SimTime;
                let got = s.pop_until(until);
                let first = reference
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, e)| (e.0, e.1))
                    .map(|(j, e)| (j, *e));
                match first {
                    Some((j, e)) if e.0 <= until => {
                        assert_eq!(got, Some((e.0, e.2)));
                        reference.remove(j);
                        now = e.0;
                    }
                    _ => assert_eq!(got, None),
                }
            }
            assert_eq!(s.len(), reference.len());
            modes[s.calendar as usize] = true;
        }
        assert_eq!(modes, [true, true], "both the heap and the calendar ran");
    }
}
