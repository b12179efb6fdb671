//! Traffic: rate shapes and the UDP sources they drive.

pub mod shape;
pub mod udp;
