//! TCP Tahoe (ns-2 `Agent/TCP`): on the third duplicate ack, or a timeout,
//! set ssthresh to half the window, cwnd to 1, and resend go-back-N from the
//! first unacknowledged packet — even packets the receiver already holds.
//! Paper D's triple slow-start depends on exactly this.
//!
//! RFC 5681 §3.2 describes the fast retransmit Tahoe introduced: "The TCP
//! sender SHOULD use the "fast retransmit" algorithm to detect and repair
//! loss, based on incoming duplicate ACKs. The fast retransmit algorithm uses
//! the arrival of 3 duplicate ACKs [...] as an indication that a segment has
//! been lost." Tahoe then slow-starts from one packet; ns-2 differs from a
//! retransmit-one-segment reading in that it resends everything from the
//! first hole (go-back-N: `t_seqno_ = highest_ack_ + 1`).
//!
//! With ns-2's `bugFix_`, duplicate acks for data sent before the last
//! retransmission (highest ack ≤ `recover`) trigger nothing (RFC 6582 §3.2's
//! "recover" check, which ns-2 applies to Tahoe too).

use super::{begin_recovery, fast_retransmit, new_ack, Action, Actions, FastRetransmit};
use crate::tcp::state::{CwndAction, TcpState};

#[inline]
pub fn on_ack(st: &mut TcpState, ack: i64, cwnd: f64, acts: &mut Actions) {
    if ack > st.last_ack() {
        acts.push(new_ack(st, ack, true));
    } else if ack == st.last_ack() {
        st.count_dupack();
        if st.dupacks() == st.dupack_threshold() {
            dupack_action(st, cwnd, acts);
        } else if st.dupacks() < st.dupack_threshold() && st.limited_transmit() {
            acts.push(Action::SendOne);
        }
    }
    if ack >= st.last_ack() {
        acts.push(Action::SendMuch { maxburst: 0 });
    }
}

fn dupack_action(st: &mut TcpState, cwnd: f64, acts: &mut Actions) {
    match fast_retransmit(st, false) {
        FastRetransmit::Reduce => begin_recovery(st, cwnd, acts, true),
        FastRetransmit::AfterEcn => {
            // the mark already set ssthresh for this window: restart from
            // one packet and keep it (ns-2 `slowdown(CLOSE_CWND_ONE)`)
            st.note_cwnd_action(CwndAction::Dupack);
            acts.push(Action::RepairAfterEcn { to_one: true });
        }
        FastRetransmit::No => return,
    }
    acts.push(Action::ResetTimer { mild: false });
}

#[cfg(test)]
mod tests {
    use crate::plan::Variant;
    use crate::tcp::dialogue::Dialogue;

    #[test]
    fn three_dupacks_restart_from_one_packet_go_back_n() {
        // 0..15 out, cwnd 13; packets 3 and 5 are lost.
        let mut d = Dialogue::opened(Variant::Tahoe);
        // dupacks 1 and 2: limited transmit, one new packet each (RFC 3042)
        d.ack(130, 2).sent(&[16]);
        d.ack(131, 2).sent(&[17]);
        // third: ssthresh = 13/2 (the first reduction halves), cwnd 1,
        // resend from the first unacked packet
        d.ack(132, 2).sent(&[3]).window(1.0, 6);
        assert_eq!(d.s.counters().fast_retransmits, 1);
        // 3 and 4 arrive: slow start to 2, and go-back-N resends 5 and 6 —
        // 6 although the receiver already holds it
        d.ack(200, 4).sent(&[5, 6]).window(2.0, 6);
    }
}
