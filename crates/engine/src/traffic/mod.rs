//! Traffic: rate shapes and the UDP sources they drive; applications over TCP.

pub mod app;
pub mod schedule;
pub mod shape;
pub mod udp;
