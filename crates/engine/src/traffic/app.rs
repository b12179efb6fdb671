//! Applications over TCP other than the bulk transfer: a constant-bit-rate
//! writer (ns-2 Application/Traffic/CBR attached to a TCP agent) and, at the
//! receiver, a playback reader (paper B7).
//!
//! The writer hands the sender one packet's payload every payload·8/rate
//! seconds (ns-2 `sendmsg`: `curseq_` grows by a packet and the sender
//! sends what its window allows). With `syn = true` the first write goes
//! out as the 40-byte SYN, as in ns-2's one-way TCP. A send buffer of B
//! packets bounds the unacknowledged + unsent data: a blocked writer (the
//! default) waits, which is the same as a window of min(window, B) with the
//! waiting data held by the application, so the simulator caps the window;
//! a dropping writer discards the write.
//!
//! The reader: everything delivered in order goes into a playback buffer;
//! every `interval` after the flow's start the reader takes up to `read`
//! bytes from it. What it gets depends only on the bytes delivered by the
//! read instants, so any engine that reports delivered bytes at those
//! instants yields the same reads.

use crate::plan::{AppPlan, WhenFull};
use crate::tcp::sender::TcpSender;
use crate::time::{SimTime, NS_PER_S};

pub struct CbrApp {
    /// Seconds between writes.
    gap_s: f64,
    start: SimTime,
    /// Writes so far (accepted or dropped).
    pub writes: u64,
    /// Writes discarded because the send buffer was full (`when_full = "drop"`).
    pub dropped: u64,
    /// Drop policy's limit, packets (None: never full / blocked writer).
    drop_limit: Option<i64>,
    pub read_bytes: u64,
    pub interval_ns: SimTime,
    reads: u64,
    /// Bytes taken by the reader so far.
    pub read_total: u64,
    /// Bytes delivered at the previous read.
    delivered_at_read: u64,
    dropped_at_read: u64,
}

/// One read of the playback buffer.
pub struct Read {
    pub got: u64,
    pub wanted: u64,
    /// Delivered in order since the previous read.
    pub arrived: u64,
    /// Left in the playback buffer after this read.
    pub buffered: u64,
    /// Writes discarded since the previous read.
    pub dropped_writes: u64,
}

impl CbrApp {
    pub fn new(plan: &AppPlan, payload_bytes: u32) -> Self {
        let drop_limit = match plan.when_full {
            Some(WhenFull::Drop) => plan.send_buffer_pkts.map(|b| b as i64),
            _ => None,
        };
        CbrApp {
            gap_s: payload_bytes as f64 * 8.0 / plan.rate_bps,
            start: 0,
            writes: 0,
            dropped: 0,
            drop_limit,
            read_bytes: plan.read_bytes,
            interval_ns: plan.interval_ns,
            reads: 0,
            read_total: 0,
            delivered_at_read: 0,
            dropped_at_read: 0,
        }
    }

    pub fn start(&mut self, now: SimTime) {
        self.start = now;
    }

    /// When the next write happens: write k at start + k·gap (no drift).
    pub fn next_write(&self) -> SimTime {
        self.start
            .saturating_add((self.writes as f64 * self.gap_s * NS_PER_S as f64).round() as SimTime)
    }

    /// Write one packet's payload; the sender sends what its window allows.
    pub fn write(
        &mut self,
        snd: &mut TcpSender,
        now: SimTime,
        out: &mut Vec<crate::net::packet::Packet>,
    ) {
        self.writes += 1;
        if let Some(limit) = self.drop_limit {
            if snd.buffered() >= limit {
                self.dropped += 1;
                return;
            }
        }
        snd.app_write(1, now, out);
    }

    /// When the next read happens.
    pub fn next_read(&self) -> SimTime {
        self.start + (self.reads + 1) * self.interval_ns
    }

    /// Read up to `read_bytes` given `delivered` bytes delivered in order so far.
    pub fn read(&mut self, delivered: u64) -> Read {
        self.reads += 1;
        let available = delivered - self.read_total;
        let got = available.min(self.read_bytes);
        self.read_total += got;
        let r = Read {
            got,
            wanted: self.read_bytes,
            arrived: delivered - self.delivered_at_read,
            buffered: available - got,
            dropped_writes: self.dropped - self.dropped_at_read,
        };
        self.delivered_at_read = delivered;
        self.dropped_at_read = self.dropped;
        r
    }
}
