//! The Rust types code generated with typed formats gives a string `format`, each behind a
//! feature of this crate (and of `perago`) named after the crate that has the type:
//!
//! | `format` | type | feature |
//! |---|---|---|
//! | `uuid` | `Uuid` (`uuid::Uuid`) | `uuid` |
//! | `date-time` | `DateTime<FixedOffset>` (chrono's; a leap second kept) | `chrono` |
//! | `date` | `NaiveDate` (chrono's) | `chrono` |
//!
//! Each function here reads a string the format's check (`check::format`) has accepted; what
//! it cannot read is reported as that format's violation (`reader::Parsed`), so a bug here
//! shows as a disagreement with the interpreter, never as a wrong value.

#[cfg(feature = "chrono")]
pub use chrono::{DateTime, FixedOffset, NaiveDate};
#[cfg(feature = "uuid")]
pub use uuid::Uuid;

/// `format: uuid`: the 8-4-4-4-12 hexadecimal form.
#[cfg(feature = "uuid")]
pub fn uuid(s: &str) -> Option<Uuid> {
    Uuid::try_parse(s).ok()
}

/// The number the ASCII digits `b` write.
#[cfg(feature = "chrono")]
fn number(b: &[u8]) -> Option<u32> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// `format: date`: `YYYY-MM-DD`.
#[cfg(feature = "chrono")]
pub fn date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 {
        return None;
    }
    let year = i32::try_from(number(&b[0..4])?).ok()?;
    NaiveDate::from_ymd_opt(year, number(&b[5..7])?, number(&b[8..10])?)
}

/// `format: date-time`: RFC 3339's `date-time`. A leap second (`:60`) is chrono's leap
/// second; fractional digits past the ninth (nanoseconds) are dropped.
#[cfg(feature = "chrono")]
pub fn date_time(s: &str) -> Option<DateTime<FixedOffset>> {
    use chrono::{NaiveTime, TimeZone};
    let b = s.as_bytes();
    let day = date(s.get(..10)?)?;
    let t = b.get(11..)?;
    let (hour, minute, second) = (
        number(t.get(0..2)?)?,
        number(t.get(3..5)?)?,
        number(t.get(6..8)?)?,
    );
    let mut rest = &t[8..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        let kept = &frac[..n.min(9)];
        nanos = number(kept)? * 10u32.pow(9 - kept.len() as u32);
        rest = &frac[n..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [sign, h1, h2, b':', m1, m2] => {
            let minutes = i32::try_from(number(&[*h1, *h2])? * 60 + number(&[*m1, *m2])?).ok()?;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    // chrono writes a leap second as the 59th second and a nanosecond count past 10^9.
    let (second, nanos) = match second {
        60 => (59, nanos + 1_000_000_000),
        s => (s, nanos),
    };
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    FixedOffset::east_opt(offset * 60)?
        .from_local_datetime(&day.and_time(time))
        .single()
}

#[cfg(all(test, feature = "chrono", feature = "uuid"))]
mod tests {
    use super::*;

    /// Every string the format checks accept reads, and writes back as the same instant.
    #[test]
    fn formats_read_what_their_checks_accept() {
        use crate::check::Format;
        for s in [
            "1963-06-19T08:30:06.283185Z",
            "1998-12-31T23:59:60Z",
            "1998-12-31T15:59:60.123-08:00",
            "2026-02-28t10:00:00.1234567891z",
            "0000-01-01T00:00:00+23:59",
        ] {
            assert!(Format::DateTime.is_valid(s), "{s}");
            let t = date_time(s).unwrap_or_else(|| panic!("{s} reads"));
            let back = serde_json::to_value(t).unwrap();
            let again = date_time(back.as_str().unwrap()).unwrap();
            assert_eq!(t, again, "{s} → {back}");
        }
        assert_eq!(
            date_time("1998-12-31T23:59:60Z").map(|t| t.to_rfc3339()),
            Some("1998-12-31T23:59:60+00:00".to_owned())
        );
        for s in ["2020-02-29", "0000-12-31"] {
            assert!(Format::Date.is_valid(s) && date(s).is_some(), "{s}");
        }
        let id = "2EB8AA08-AA98-11EA-B4AA-73B441D16380";
        assert!(Format::Uuid.is_valid(id));
        assert_eq!(uuid(id).map(|u| u.to_string()), Some(id.to_lowercase()));
    }
}
