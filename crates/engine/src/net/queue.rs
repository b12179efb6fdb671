//! Queue disciplines: which arrivals a link's buffer admits. The link keeps
//! the packets (a FIFO); a discipline only decides. RED and the threshold
//! dropper of paper C join here as further variants.

use crate::scenario::QueueKind;

#[derive(Clone, Debug)]
pub enum Queue {
    /// Admit while fewer than `limit` packets wait (the one in transmission
    /// is not counted; ns-2's `queue-limit` is `limit + 1`).
    DropTail { limit: u32 },
}

impl Queue {
    pub fn new(kind: QueueKind, buffer: u32) -> Self {
        match kind {
            QueueKind::DropTail => Queue::DropTail { limit: buffer },
        }
    }

    /// Admit an arrival that must wait, given how many packets wait already.
    #[inline]
    pub fn admit(&mut self, waiting: usize) -> bool {
        match self {
            Queue::DropTail { limit } => waiting < *limit as usize,
        }
    }
}
