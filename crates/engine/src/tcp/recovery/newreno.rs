//! TCP NewReno (ns-2 `Agent/TCP/Newreno`). RFC 6582 §3.2, step 3:
//!
//! > If this ACK does *not* acknowledge all of the data up to and
//! > including recover, then this is a partial ACK. In this case,
//! > retransmit the first unacknowledged segment. Deflate the congestion
//! > window by the amount of new data acknowledged by the Cumulative
//! > Acknowledgment field. If the partial ACK acknowledges at least one
//! > SMSS of new data, then add back SMSS bytes to the congestion window.
//! > [...] Send a new segment if permitted by the new value of cwnd. [...]
//! > For the first partial ACK that arrives during fast recovery, also
//! > reset the retransmit timer.
//!
//! ns-2 (`partial_window_deflation_` 1, `newreno_changes1_` 1) deflates the
//! inflation `dupwnd` first and cwnd only for the rest, and lets at most two
//! packets out per duplicate ack (`send_much(0, 0, 2)`). NewReno never
//! re-enters fast retransmit while in recovery (RFC 6582 §3.2 step 2's
//! "recover" check; ns-2 `allow_fast_retransmit` 0).

use super::{new_ack, reno, Action, Actions};
use crate::tcp::state::{CwndAction, TcpState};

#[derive(Default)]
pub struct State {
    firstpartial: bool,
}

impl State {
    #[inline]
    pub fn on_ack(&mut self, st: &mut TcpState, ack: i64, cwnd: f64, acts: &mut Actions) {
        let thresh = st.dupack_threshold();
        if ack > st.last_ack() {
            if ack >= st.recover() || st.last_cwnd_action() != CwndAction::Dupack {
                if st.dupwnd() > 0 {
                    st.end_inflation();
                    if st.last_cwnd_action() == CwndAction::Dupack {
                        st.note_cwnd_action(CwndAction::Exited);
                        acts.push(Action::ExitRecovery);
                    }
                }
                self.firstpartial = false;
                acts.push(new_ack(st, ack, true));
            } else {
                // RFC 6582 §3.2: "If this ACK does *not* acknowledge all of the data up to and
                // including recover, then this is a partial ACK."
                self.partial_ack(st, ack, acts);
            }
        } else if ack == st.last_ack() {
            st.count_dupack();
            if st.dupacks() == thresh {
                reno::dupack_action(st, cwnd, acts, false);
            } else if st.dupacks() > thresh && st.last_cwnd_action() == CwndAction::Dupack {
                st.inflate();
            } else if st.dupacks() < thresh && st.limited_transmit() {
                acts.push(Action::SendOne);
            }
        }
        if ack >= st.last_ack() {
            if st.dupacks() == 0 {
                acts.push(Action::SendMuch { maxburst: 0 });
            } else if st.dupacks() > thresh - 1 {
                acts.push(Action::SendMuch { maxburst: 2 });
            }
        }
    }

    /// A partial ack: deflate, retransmit the next hole, stay in recovery.
    fn partial_ack(&mut self, st: &mut TcpState, ack: i64, acts: &mut Actions) {
        if !self.firstpartial {
            self.firstpartial = true;
            acts.push(Action::Newtimer(ack));
        }
        let deflate = ack - st.last_ack();
        // RFC 6582 §3.2 (paraphrased): deflate the window by the new data the partial ack covers,
        // adding back one segment when it covers at least one.
        if let Some(rest) = st.deflate(deflate) {
            acts.push(Action::Deflate(rest));
        }
        st.partial_ack(ack);
        acts.push(Action::StopTiming(ack));
        // RFC 6582 §3.2: "In this case, retransmit the first unacknowledged segment."
        acts.push(Action::Retransmit(ack + 1));
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::Variant;
    use crate::tcp::dialogue::Dialogue;

    #[test]
    fn partial_ack_retransmits_the_next_hole_and_deflates() {
        // 0..15 out, cwnd 13; packets 3 and 11 are lost.
        let mut d = Dialogue::opened(Variant::NewReno);
        d.ack(130, 2).sent(&[16]);
        d.ack(131, 2).sent(&[17]);
        d.ack(132, 2).sent(&[3]).window(6.5, 6); // recover = 17
        d.ack(133, 2).sent(&[]); // dupwnd 4: usable 10, 18 > 2 + 10
                                 // partial ack for 3..10: retransmit 11 at once and stay in recovery;
                                 // 8 packets acked, 4 of them taken from the inflation, 4 from cwnd,
                                 // one added back (dupwnd 1)
        d.ack(200, 10).sent(&[11]).window(2.5, 6);
        assert_eq!(
            d.s.window(),
            3,
            "usable window: cwnd 2 + the one added back"
        );
        // the full ack ends recovery. RFC 6582 sets cwnd to ssthresh here
        // (or FlightSize + 1); ns-2 keeps the deflated cwnd and grows it:
        // slow start, since 2.5 < ssthresh
        d.ack(300, 17).sent(&[18, 19, 20]).window(3.5, 6);
        assert_eq!(d.s.counters().fast_retransmits, 1);
    }
}
