//! Packets, links and queues.

pub mod link;
pub mod packet;
pub mod queue;
