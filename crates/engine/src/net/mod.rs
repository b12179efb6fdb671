//! Packets, links and queues.

pub mod link;
pub mod outage;
pub mod packet;
pub mod queue;
pub mod ring;
