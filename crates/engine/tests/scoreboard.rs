//! The SACK scoreboard (a bitmap, `tcp::recovery::sack::Scoreboard`) against
//! the plain model it replaced: a deque of one flag per packet above the
//! cumulative ack. Random cumulative acks, SACK blocks (overlapping, below
//! the ack, far above it), clears and retransmission pointers: the same
//! packets SACKed, the same newly SACKed packets in the same order, the same
//! `changed`, totals and holes, and the same first unsacked packet from each.
//! The model is the deque as fixed in 9f69bbe: a cumulative ack drops the
//! packets up to it and keeps what lies above.

use std::collections::VecDeque;
use tcplab_engine::net::packet::SackBlock;
use tcplab_engine::rng::Rng;
use tcplab_engine::tcp::recovery::sack::Scoreboard;

#[derive(Default)]
struct Model {
    base: i64,
    sacked: VecDeque<bool>,
    total: usize,
    next_retran: i64,
    changed: bool,
}

impl Model {
    fn clear(&mut self) {
        self.sacked.clear();
        self.total = 0;
    }

    fn is_sacked(&self, seq: i64) -> bool {
        seq >= self.base && self.sacked.get((seq - self.base) as usize) == Some(&true)
    }

    fn update_with(&mut self, last_ack: i64, blocks: &[SackBlock], mut newly: impl FnMut(i64)) {
        let old_total = self.total;
        self.changed = false;
        if self.base <= last_ack {
            let shift = (last_ack + 1 - self.base) as usize;
            if self.total > 0 {
                self.changed = true;
            }
            if shift >= self.sacked.len() {
                self.sacked.clear();
                self.total = 0;
            } else {
                for _ in 0..shift {
                    if self.sacked.pop_front() == Some(true) {
                        self.total -= 1;
                    }
                }
            }
            self.base = last_ack + 1;
        }
        for b in blocks {
            let lo = (b.start as i64).max(self.base);
            for seq in lo..b.end as i64 {
                let i = (seq - self.base) as usize;
                if i >= self.sacked.len() {
                    self.sacked.resize(i + 1, false);
                }
                if !self.sacked[i] {
                    self.sacked[i] = true;
                    self.total += 1;
                    newly(seq);
                }
            }
        }
        self.changed = self.changed || old_total != self.total;
    }

    fn next_retran(&mut self) -> Option<i64> {
        if self.next_retran < self.base {
            self.next_retran = self.base;
        }
        let start = (self.next_retran - self.base) as usize;
        let hole = (start..self.sacked.len()).find(|&i| !self.sacked[i])?;
        let seq = self.base + hole as i64;
        self.next_retran = self.next_retran.max(seq);
        Some(seq)
    }

    fn mark_retran(&mut self, seq: i64) {
        if seq >= self.next_retran {
            self.next_retran = seq + 1;
        }
    }
}

#[test]
fn the_bitmap_scoreboard_matches_the_flag_per_packet_model() {
    let mut rng = Rng::stream(3, 0, 0);
    for run in 0..60 {
        let mut m = Model::default();
        let mut s = Scoreboard::default();
        let mut ack: i64 = -1;
        // some runs move in small steps, some in jumps past the whole board
        let jump = [10.0, 100.0, 400.0][run % 3];
        for step in 0..2000 {
            let u = rng.uniform();
            if u < 0.03 {
                m.clear();
                s.clear();
            } else if u < 0.1 {
                let hole = m.next_retran();
                assert_eq!(s.next_retran(), hole, "run {run} step {step}");
                if let Some(h) = hole {
                    if rng.uniform() < 0.5 {
                        m.mark_retran(h);
                        s.mark_retran(h);
                    }
                }
            } else {
                if rng.uniform() < 0.3 {
                    ack += (rng.uniform() * jump) as i64;
                }
                let n = (rng.uniform() * 4.0) as usize;
                let blocks: Vec<SackBlock> = (0..n)
                    .map(|_| {
                        let start = (ack - 5 + (rng.uniform() * 300.0) as i64).max(0) as u32;
                        let len = (rng.uniform() * 150.0) as u32;
                        SackBlock {
                            start,
                            end: start + len,
                        }
                    })
                    .collect();
                let (mut a, mut b) = (vec![], vec![]);
                m.update_with(ack, &blocks, |k| a.push(k));
                s.update_with(ack, &blocks, |k| b.push(k));
                assert_eq!(b, a, "run {run} step {step}: newly SACKed");
                assert_eq!(s.changed(), m.changed, "run {run} step {step}");
            }
            assert_eq!(s.total(), m.total as i64, "run {run} step {step}");
            for k in ack - 3..ack + 500 {
                assert_eq!(
                    s.is_sacked(k),
                    m.is_sacked(k),
                    "run {run} step {step} packet {k}"
                );
                let first = (k..).find(|&j| !m.is_sacked(j)).unwrap();
                assert_eq!(s.unsacked_from(k), first, "run {run} step {step} from {k}");
            }
        }
    }
}
