//! The event queue: a binary heap ordered by (time, insertion order), so
//! simultaneous events run first-scheduled-first (as ns-2's scheduler does)
//! and every run is deterministic.
//!
//! The queue stays small: each link keeps at most one pending delivery, each
//! TCP connection at most one live timer entry (see `tcp::sender`), so the
//! heap holds O(links + flows) entries, not O(packets in flight).

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

#[derive(Default)]
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    /// Events popped so far (for the events/s figure of the benchmarks).
    pub popped: u64,
}

impl Scheduler {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            key: ((time as u128) << 64) | seq as u128,
            event,
        });
    }

    /// The earliest event at or before `until`, removed from the queue.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let top = self.heap.peek()?;
        let time = (top.key >> 64) as SimTime;
        if time > until {
            return None;
        }
        let event = top.event;
        self.heap.pop();
        self.popped += 1;
        Some((time, event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
