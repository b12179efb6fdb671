//! TCP default profiles: whose defaults a flow group starts from
//! (`profile = "ns2-2.35"`, the default, `"ns2-2001"`, or `"linux"`). A key
//! the scenario sets always wins over its profile's value — that is how a
//! paper's own value (a tick, a maximum RTO, a window) is stated.
//!
//! `"linux"` is a current Linux sender and receiver (see [`Profile::Linux`]);
//! the two ns-2 profiles follow.
//!
//! Sources, all from ns-2's own tree (release 2.35, 2011, as mirrored on
//! GitHub): `tcl/lib/ns-default.tcl` (each default's comment dates its last
//! change), `CHANGES.html` (the change log, which names old and new values),
//! and `tcl/test/test-suite-tcp.tcl` (rev. 1.42), whose header restores the
//! old defaults so the validation traces of the early 2000s still match.
//!
//! `"ns2-2001"` is ns-2 before the TCP default changes of May 2001, i.e. the
//! ns-2.1b releases the 1999–2001 papers could have used. Defaults that
//! changed after 2000 and that tcplab models:
//!
//! | ns-2 variable   | 2001  | 2.35 | changed    |
//! |-----------------|-------|------|------------|
//! | `windowInit_`   | 1     | 2    | 2001/5/26  |
//! | `syn_`, `delay_growth_` | false | true | 2001/5/17 |
//! | `singledup_`    | 0     | 1    | 2001/11/28 |
//! | `tcpTick_`      | 0.1 s | 0.01 s | 2002/03/07 |
//! | `minrto_`       | none (0) | 0.2 s | added 2001/5 at 1 s; 0.2 s on 2004/10/14 |
//! | `rtxcur_init_`  | 6 s   | 3 s  | 2006/01/21 |
//! | `maxrto_`       | 64 s  | 60 s | 2007/03/28 |
//! | DelAck sink's `SYN_immediate_ack_` | false | true | 2010/02 |
//!
//! Defaults that changed after 2000 but are not modelled, so both engines keep
//! ns-2 2.35's behaviour under either profile (the ns-2 export does not write
//! them): `precisionReduce_` (false until 2006/1/24: window reductions rounded
//! down to whole packets; tcplab reduces in floating point, as 2.35),
//! `timerfix_` (added 2001/05/11 as true; the old order re-armed the timer
//! before the RTT update), `rfc2988_` (true since 2002/03/07; with no minimum
//! RTO both of its branches give RTO·backoff, so it matters only where a
//! scenario sets `min_rto`), and `useHeaders_` (2001/11/28; tcplab's
//! `packet_size` is always on the wire, so the reading of a paper's packet
//! size decides).

use super::defaults as d;
use crate::plan::Variant;
use crate::time::SimTime;

/// Whose defaults a flow group starts from (defined with the Plan's types).
pub use crate::plan::Profile;

/// The TCP defaults a profile changes (the others are the same in both).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpDefaults {
    pub variant: Variant,
    pub initial_cwnd: u32,
    pub syn: bool,
    pub limited_transmit: bool,
    pub tick_ns: SimTime,
    pub min_rto_ns: SimTime,
    pub initial_rto_ns: SimTime,
    pub max_rto_ns: SimTime,
    pub delayed_ack: bool,
    pub delack_interval_ns: SimTime,
    pub syn_immediate_ack: bool,
    pub header_size: u32,
}

const MS: SimTime = 1_000_000;
const S: SimTime = 1_000 * MS;

impl Profile {
    /// The TCP defaults of this profile.
    pub fn defaults(self) -> TcpDefaults {
        match self {
            Profile::Ns2v235 => TcpDefaults {
                // tcp/defaults.rs holds ns-2 2.35's values, each with its origin
                variant: d::VARIANT,
                delayed_ack: d::DELAYED_ACK,
                delack_interval_ns: d::DELACK_INTERVAL_NS,
                header_size: d::HEADER_SIZE,
                initial_cwnd: d::INITIAL_CWND,         // windowInit_ 2
                syn: d::SYN,                           // syn_ true, delay_growth_ true
                limited_transmit: d::LIMITED_TRANSMIT, // singledup_ 1
                tick_ns: d::TICK_NS,                   // tcpTick_ 0.01
                min_rto_ns: d::MIN_RTO_NS,             // minrto_ 0.2
                initial_rto_ns: d::INITIAL_RTO_NS,     // rtxcur_init_ 3.0
                max_rto_ns: d::MAX_RTO_NS,             // maxrto_ 60
                // Agent/TCPSink/DelAck's SYN_immediate_ack_ true: test-suite-tcp.tcl
                // and its siblings restore false with "The default was changed to
                // true 2010/02"; it acks packet 0 at once (DelAckSink::recv)
                syn_immediate_ack: true,
            },
            Profile::Ns2v2001 => TcpDefaults {
                variant: d::VARIANT,
                delayed_ack: d::DELAYED_ACK,
                delack_interval_ns: d::DELACK_INTERVAL_NS,
                header_size: d::HEADER_SIZE,
                // test-suite-tcp.tcl: "Agent/TCPSink set SYN_immediate_ack_ false /
                // The default was changed to true 2010/02": a delayed-ack sink
                // delays packet 0's ack too
                syn_immediate_ack: false,
                // ns-default.tcl: "windowInit_ 2 ; default changed on 2001/5/26";
                // CHANGES.html (floyd, 2001/5/27) and test-suite-tcp.tcl
                // ("windowInit_ 1 / The default is being changed to 2").
                initial_cwnd: 1,
                // ns-default.tcl: "syn_ true ; default changed on 2001/5/17", same
                // date for delay_growth_; CHANGES.html 2001/5/27 "Changed the
                // defaults for ... syn_ and delay_growth_ to true";
                // test-suite-tcp.tcl sets both false. Without syn_ packet 0 is data.
                syn: false,
                // ns-default.tcl: "singledup_ 1 ; default changed on 2001/11/28";
                // CHANGES.html 2001/11/28 "changed the default for singledup_ ...
                // to 1, to enable Limited Transmit"; test-suite-tcp.tcl: 0.
                limited_transmit: false,
                // ns-default.tcl: "tcpTick_ 0.01 ; default changed on 2002/03/07";
                // CHANGES.html 2002/3/8 "from 0.1 to 0.01 seconds".
                tick_ns: 100 * MS,
                // CHANGES.html 2001/5/27 "Added minrto_ to TCP ... default of
                // 1 second" (ns-default.tcl: 200 ms since 2004/10/14). Before it
                // there was no floor; test-suite-tcp.tcl restores minrto_ 0.
                min_rto_ns: 0,
                // ns-default.tcl: "rtxcur_init_ 3.0 ; Default changed on
                // 2006/01/21"; CHANGES.html 2006/1/23 "from 6 seconds to 3".
                initial_rto_ns: 6 * S,
                // CHANGES.html (1997): "add a max bound on the TCP rto (maxrto_),
                // default is 64 sec (like bsd)"; ns-default.tcl: "maxrto_ 60 ;
                // default changed on 2007/03/28 to reflect RFC2988".
                max_rto_ns: 64 * S,
            },
            Profile::Linux => TcpDefaults {
                // net.ipv4.tcp_sack 1: SACK-based recovery, with RACK-TLP
                // loss detection (net.ipv4.tcp_recovery 1, the default
                // since 4.18; tcp::recovery::rack) in place of the
                // scoreboard's three-duplicate rule
                variant: Variant::Sack,
                // TCP_INIT_CWND 10 ("Initial window of 10 segments", RFC 6928)
                initial_cwnd: 10,
                // the handshake: data start once the SYN is acked
                syn: true,
                // with SACK, Linux sends new data on early duplicate acks
                // (packets in flight exclude the SACKed ones), as RFC 3042
                limited_transmit: true,
                // RTTs are measured in µs since 4.x; the estimator's tick
                tick_ns: MS,
                // TCP_RTO_MIN (HZ / 5): the floor of rttvar in Linux's RTO
                // = srtt + rttvar (tcp::rtt::LinuxRtt), not of the RTO
                min_rto_ns: 200 * MS,
                // TCP_TIMEOUT_INIT (1 * HZ), RFC 6298 §2.1
                initial_rto_ns: S,
                // TCP_RTO_MAX (120 * HZ)
                max_rto_ns: 120 * S,
                // tcp_send_delayed_ack: an ack per two full segments
                // (__tcp_ack_snd_check), else after the ato, which starts
                // at TCP_ATO_MIN = TCP_DELACK_MIN = HZ / 25 (40 ms). The
                // quick-ack mode of a connection's first segments is not
                // modelled.
                delayed_ack: true,
                delack_interval_ns: 40 * MS,
                // (the handshake's ack is immediate in Linux; the engine's
                // linux profile has not changed this yet)
                syn_immediate_ack: false,
                // net.ipv4.tcp_timestamps 1: every segment carries the
                // 12-byte timestamp option (10 bytes and 2 NOPs), so a
                // 1000-byte packet holds 948 bytes of payload
                header_size: 52,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_profile_is_ns2_235() {
        assert_eq!(Profile::default(), Profile::Ns2v235);
        let d = Profile::default().defaults();
        assert_eq!(
            (d.initial_cwnd, d.tick_ns, d.max_rto_ns),
            (2, 10 * MS, 60 * S)
        );
    }

    #[test]
    fn profiles_parse_by_their_names() {
        let p: Profile = serde_json::from_str("\"ns2-2001\"").unwrap();
        assert_eq!(p, Profile::Ns2v2001);
        assert!(serde_json::from_str::<Profile>("\"ns2-1999\"").is_err());
        let p: Profile = serde_json::from_str("\"linux\"").unwrap();
        assert_eq!(p, Profile::Linux);
        let d = p.defaults();
        assert_eq!(
            (d.initial_cwnd, d.min_rto_ns, d.variant, d.delayed_ack),
            (10, 200 * MS, Variant::Sack, true)
        );
    }
}
