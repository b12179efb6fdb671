//! Time, rates and frequencies, and the unit strings scenarios use for them.
//!
//! Simulated time is an integer number of nanoseconds (`u64`): exact, ordered,
//! and the same on every machine. Scenario files write quantities as strings
//! with units (`"5ms"`, `"1.5Mbps"`, `"0.4Hz"`); a plain number is SI (seconds,
//! bits per second, hertz).

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Simulated time in nanoseconds since the start of the run.
pub type SimTime = u64;

pub const NS_PER_S: u64 = 1_000_000_000;

/// The longest time a scenario may write: 10⁹ s (about 31.7 years), 10¹⁸ ns.
/// The clock (`u64` ns) holds 1.8·10¹⁹ ns, so any sum of up to 18 such
/// times (start + jitter + delay + timeout, ...) cannot wrap; a larger value
/// used to be capped at 2⁶⁴ − 1 ns and wrap in the first addition.
pub const MAX_TIME_NS: SimTime = 1_000_000_000 * NS_PER_S;

/// The fastest rate a scenario may write: 10 Tbit/s. A 1500-byte packet then
/// takes 1.2 ns, the clock's resolution; faster links would transmit in no
/// time at all (and a source that fast sends without time advancing).
pub const MAX_RATE_BPS: f64 = 1e13;

/// The highest frequency a scenario may write: 1 GHz, a period of the
/// clock's 1 ns resolution.
pub const MAX_FREQ_HZ: f64 = 1e9;

/// The largest amount of data a scenario may write: 1 TB (10¹² bytes; a
/// buffer or a playback read that large is already far beyond any memory).
pub const MAX_BYTES: u64 = 1_000_000_000_000;

/// Seconds (f64) from nanoseconds.
#[inline]
pub fn secs(t_ns: SimTime) -> f64 {
    t_ns as f64 / 1e9
}

/// `t as f64` for a time below 2⁶³ ns, 292 years (every time an event can
/// run at is: runs end by `MAX_TIME_NS`): the same value by the signed
/// conversion, one instruction on x86-64 where the unsigned one takes
/// several. Hot paths only; at or above 2⁶³ it is wrong (negative).
#[inline(always)]
pub fn ns_f64(t: SimTime) -> f64 {
    t as i64 as f64
}

/// A time in ns, `y`, split into its whole ns and their fraction by
/// truncation, where that is exact (0 ≤ y < 2^52, which a run's times are);
/// None elsewhere. `floor` and `round` are library calls on the baseline
/// x86-64 target.
#[inline(always)]
pub fn whole_and_fraction_ns(y: f64) -> Option<(SimTime, f64)> {
    (0.0..4.5e15).contains(&y).then(|| {
        let t = y as SimTime;
        (t, y - t as f64)
    })
}

/// `y.round() as SimTime`, the same value, without the library's `round`
/// for the times of a run (`whole_and_fraction_ns`).
#[inline(always)]
pub fn round_ns(y: f64) -> SimTime {
    match whole_and_fraction_ns(y) {
        Some((t, frac)) => t + (frac >= 0.5) as SimTime,
        None => y.round() as SimTime,
    }
}

/// Nanoseconds from seconds, rounded to the nearest nanosecond.
#[inline]
pub fn from_secs(s: f64) -> SimTime {
    (s * 1e9).round().max(0.0) as SimTime
}

/// Split "1.5Mbps" into (1.5, "Mbps"). Accepts exponents ("1e6bps").
fn split_number(s: &str) -> Option<(f64, &str)> {
    let (number, unit) = split_quantity(s)?;
    Some((number.parse().ok()?, unit))
}

/// The grammar of a quantity: "1.5Mbps" → ("1.5", "Mbps"), the number's text
/// as written (it parses as an f64; exponents allowed) and the unit suffix,
/// both trimmed. The one grammar of unit strings: Python splits what a user
/// types with it (`_core.split_quantity`) and keeps the number's exact text.
pub fn split_quantity(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || ((c == 'e' || c == 'E')
                    && s[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+')))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    s[..end].parse::<f64>().ok()?;
    Some((&s[..end], s[end..].trim()))
}

/// The unit suffixes of durations and their scale in nanoseconds ("" is
/// seconds). The one table of them: Python reads it (`_core.unit_tables`).
pub const DURATION_UNITS: &[(&str, f64)] = &[
    ("", 1e9),
    ("s", 1e9),
    ("sec", 1e9),
    ("ms", 1e6),
    ("us", 1e3),
    ("µs", 1e3),
    ("ns", 1.0),
    ("min", 60e9),
    ("h", 3600e9),
];
/// Rates: scale in bit/s.
pub const RATE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("bps", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Kb/s", 1e3),
    ("Mbps", 1e6),
    ("mbps", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("gbps", 1e9),
    ("Gb/s", 1e9),
];
/// Frequencies: scale in Hz.
pub const FREQ_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("Hz", 1.0),
    ("hz", 1.0),
    ("kHz", 1e3),
    ("khz", 1e3),
    ("mHz", 1e-3),
];
/// Amounts of data: scale in bytes.
pub const BYTES_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
];

fn scale_of(table: &[(&str, f64)], unit: &str) -> Option<f64> {
    table.iter().find(|(u, _)| *u == unit).map(|&(_, k)| k)
}

/// Parse a duration: "5ms", "1.5s", "100us", "250ns", "2min", "1h", or plain seconds.
pub fn parse_duration(s: &str) -> Result<SimTime, String> {
    let (v, unit) = split_number(s).ok_or_else(|| duration_expected(s))?;
    let scale = scale_of(DURATION_UNITS, unit).ok_or_else(|| duration_expected(s))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative duration, got {s:?}"));
    }
    let ns = (v * scale).round();
    if ns > MAX_TIME_NS as f64 {
        return Err(format!(
            "{s:?} is beyond the longest time the engine represents, 1e9 s (about 31.7 years)"
        ));
    }
    Ok(ns as SimTime)
}

fn duration_expected(s: &str) -> String {
    format!("expected a duration such as \"5ms\", \"1.5s\" or a number of seconds, got {s:?}")
}

/// Parse a rate in bits per second: "1.5Mbps", "10Mb/s", "500kbps", "1Gbps", or plain bit/s.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let expected = || {
        format!("expected a rate such as \"1.5Mbps\", \"500kbps\" or a number of bit/s, got {s:?}")
    };
    let (v, unit) = split_number(s).ok_or_else(expected)?;
    let scale = scale_of(RATE_UNITS, unit).ok_or_else(expected)?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative rate, got {s:?}"));
    }
    let bps = v * scale;
    if bps > MAX_RATE_BPS {
        return Err(format!(
            "{s:?} is beyond the fastest rate the engine represents, 10000Gbps (1e13 bit/s)"
        ));
    }
    Ok(bps)
}

/// Parse a frequency in hertz: "0.4Hz", "2kHz", or plain hertz.
pub fn parse_freq(s: &str) -> Result<f64, String> {
    let expected =
        || format!("expected a frequency such as \"0.4Hz\" or a number of hertz, got {s:?}");
    let (v, unit) = split_number(s).ok_or_else(expected)?;
    let scale = scale_of(FREQ_UNITS, unit).ok_or_else(expected)?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative frequency, got {s:?}"));
    }
    let hz = v * scale;
    if hz > MAX_FREQ_HZ {
        return Err(format!(
            "{s:?} is beyond the highest frequency the engine represents, 1e9Hz (a 1 ns period)"
        ));
    }
    Ok(hz)
}

/// Format nanoseconds with the largest unit that keeps it exact ("5ms", "0.2s" → "200ms").
pub fn format_duration(ns: SimTime) -> String {
    if ns == 0 {
        "0s".into()
    } else if ns % NS_PER_S == 0 {
        format!("{}s", ns / NS_PER_S)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// Format a rate in bit/s with a readable exact unit where possible.
pub fn format_rate(bps: f64) -> String {
    for (scale, unit) in [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")] {
        let v = bps / scale;
        if v >= 1.0 && (v * 1e6).round() == v * 1e6 {
            return format!("{}{unit}", trim_float(v));
        }
    }
    // shortest form that reads back as the same f64 (a resolved scenario
    // must round-trip: 9 decimals turned 1e-10 bit/s into "0bps")
    format!("{bps}bps")
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

macro_rules! unit_newtype {
    ($name:ident, $inner:ty, $parse:path, $format:path, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
        pub struct $name(pub $inner);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if !v.is_finite() || v < 0.0 {
                            return Err(E::custom(format!(
                                "expected a non-negative {}, got {v}",
                                $what
                            )));
                        }
                        // a plain number is SI: the same parse, range check
                        // and rounding as a string without a unit (f64's
                        // shortest exponent form round-trips exactly)
                        $parse(&format!("{v:e}")).map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_newtype!(
    Duration,
    SimTime,
    parse_duration,
    format_duration,
    "a duration such as \"5ms\" or a number of seconds"
);
unit_newtype!(
    Rate,
    f64,
    parse_rate,
    format_rate,
    "a rate such as \"1.5Mbps\" or a number of bit/s"
);
unit_newtype!(
    Freq,
    f64,
    parse_freq,
    format_freq,
    "a frequency such as \"0.4Hz\" or a number of hertz"
);

/// Parse an amount of data in bytes: "125KB" (10³), "1.5MB" (10⁶), "64KiB"
/// (2¹⁰), "1000B", or a plain number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let expected = || {
        format!("expected an amount of data such as \"125KB\", \"64KiB\" or a number of bytes, got {s:?}")
    };
    let (v, unit) = split_number(s).ok_or_else(expected)?;
    let scale = scale_of(BYTES_UNITS, unit).ok_or_else(expected)?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("expected a non-negative amount of data, got {s:?}"));
    }
    let b = (v * scale).round();
    if b > MAX_BYTES as f64 {
        return Err(format!(
            "{s:?} is beyond the largest amount of data a scenario may give, 1e12 bytes (1 TB)"
        ));
    }
    Ok(b as u64)
}

/// Format bytes exactly ("125000" → "125KB").
pub fn format_bytes(b: u64) -> String {
    if b > 0 && b % 1_000_000 == 0 {
        format!("{}MB", b / 1_000_000)
    } else if b > 0 && b % 1000 == 0 {
        format!("{}KB", b / 1000)
    } else {
        format!("{b}B")
    }
}

unit_newtype!(
    Bytes,
    u64,
    parse_bytes,
    format_bytes,
    "an amount of data such as \"125KB\" or a number of bytes"
);

pub fn format_freq(hz: f64) -> String {
    format!("{hz}Hz")
}

/// Transmission time of `bytes` at `rate_bps`, rounded to the nearest nanosecond.
/// A rate so slow that the time exceeds [`MAX_TIME_NS`] gives MAX_TIME_NS
/// (never: the run ends first), so that adding it to a time cannot wrap.
#[inline]
pub fn tx_time_ns(bytes: u32, rate_bps: f64) -> SimTime {
    ((bytes as f64 * 8.0e9) / rate_bps)
        .round()
        .min(MAX_TIME_NS as f64) as SimTime
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ns_is_round() {
        let mut y = 0.0f64;
        let mut cases = vec![
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4503599627370495.5,
            4.5e15,
            1e16,
            -0.4,
        ];
        for _ in 0..100_000 {
            y = y * 1.37 + 0.123456789;
            if y > 1e13 {
                y = y.fract();
            }
            cases.extend([y, y.floor() + 0.5, y.floor() + 0.5 - f64::EPSILON * y]);
        }
        for y in cases {
            assert_eq!(round_ns(y), y.round() as SimTime, "{y}");
        }
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("5ms").unwrap(), 5_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("100us").unwrap(), 100_000);
        assert_eq!(parse_duration("0.01").unwrap(), 10_000_000);
        assert_eq!(parse_duration("2min").unwrap(), 120 * NS_PER_S);
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("1.5Mbps").unwrap(), 1.5e6);
        assert_eq!(parse_rate("10Mb/s").unwrap(), 1e7);
        assert_eq!(parse_rate("500kbps").unwrap(), 5e5);
        assert_eq!(parse_rate("1e6").unwrap(), 1e6);
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for s in ["5ms", "1s", "250us", "7ns", "0s"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
        for s in ["1.5Mbps", "10Mbps", "500kbps", "1Gbps", "300bps"] {
            assert_eq!(format_rate(parse_rate(s).unwrap()), s);
        }
    }

    #[test]
    fn out_of_range_quantities_are_rejected_not_capped() {
        // 1.9e10 s is beyond 2^64 ns: it used to become u64::MAX and wrap
        assert!(parse_duration("1.9e10s").unwrap_err().contains("1e9 s"));
        assert!(parse_duration("1e12s").is_err());
        assert!(parse_duration("16666667min").is_err());
        assert_eq!(parse_duration("1e9s").unwrap(), MAX_TIME_NS);
        assert!(parse_rate("1e300bps").unwrap_err().contains("10000Gbps"));
        assert!(parse_rate("1e15Gbps").is_err());
        assert_eq!(parse_rate("10Gbps").unwrap(), 1e10);
        assert!(parse_freq("1e300Hz").unwrap_err().contains("1e9Hz"));
        assert_eq!(parse_freq("1kHz").unwrap(), 1e3);
        assert!(parse_bytes("1e30B").is_err());
        assert!(parse_duration("1e999s").is_err()); // parses as inf
                                                    // sums of up to 18 maximal times cannot wrap
        assert!(MAX_TIME_NS.checked_mul(18).is_some());
    }

    #[test]
    fn plain_numbers_get_the_same_checks_and_rounding_as_strings() {
        let d = |v: serde_json::Value| serde_json::from_value::<Duration>(v);
        assert_eq!(d(serde_json::json!(0.25)).unwrap(), Duration(250_000_000));
        assert_eq!(d(serde_json::json!(5)).unwrap(), Duration(5 * NS_PER_S));
        assert_eq!(d(serde_json::json!(1e-7)).unwrap(), Duration(100));
        assert!(d(serde_json::json!(1.9e10)).is_err());
        assert!(d(serde_json::json!(u64::MAX)).is_err());
        assert!(d(serde_json::json!(-1)).is_err());
        let r = |v: serde_json::Value| serde_json::from_value::<Rate>(v);
        assert_eq!(r(serde_json::json!(1.5e6)).unwrap(), Rate(1.5e6));
        assert!(r(serde_json::json!(1e300)).is_err());
        let b = |v: serde_json::Value| serde_json::from_value::<Bytes>(v);
        assert_eq!(b(serde_json::json!(2.5)).unwrap(), Bytes(3));
        assert!(serde_json::from_value::<Freq>(serde_json::json!(1e300)).is_err());
    }

    #[test]
    fn a_transmission_slower_than_any_run_saturates_instead_of_wrapping() {
        assert_eq!(tx_time_ns(1500, 1e-300), MAX_TIME_NS);
        assert_eq!(tx_time_ns(1500, 0.0), MAX_TIME_NS);
    }

    #[test]
    fn tiny_and_odd_rates_and_frequencies_round_trip_exactly() {
        for v in [1e-10, 0.1 + 0.2, 123.456789012345, 1e9, 0.0] {
            assert_eq!(parse_rate(&format_rate(v)).unwrap(), v);
            assert_eq!(parse_freq(&format_freq(v)).unwrap(), v);
        }
        assert_eq!(parse_rate(&format_rate(1e13)).unwrap(), 1e13);
        assert_eq!(format_freq(0.4), "0.4Hz");
        assert_eq!(format_rate(300.0), "300bps");
    }

    #[test]
    fn a_1000_byte_packet_takes_8ms_at_1mbps() {
        assert_eq!(tx_time_ns(1000, 1e6), 8_000_000);
    }
}
