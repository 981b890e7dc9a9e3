//! Protocol timestamps: emitted as `YYYY-MM-DDTHH:MM:SS.sssZ`, parsed from any RFC 3339 / ISO 8601 form.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDateTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, always UTC, with millisecond precision on the wire.
///
/// Its years are those the wire form can write, 0000 to 9999 (RFC 3339 gives the year four
/// digits): a time outside them is refused where it is read, so every timestamp that is written
/// reads back.
///
/// ```
/// use agentwire_types::Timestamp;
///
/// let t: Timestamp = "2025-04-02T16:59:25.331844".parse().unwrap();
/// assert_eq!(t.to_string(), "2025-04-02T16:59:25.331Z");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The current time, truncated to milliseconds so that what is stored equals what is sent.
    pub fn now() -> Self {
        let now = Utc::now();
        Self::from_millis(now.timestamp_millis()).unwrap_or(Self(now))
    }

    /// Milliseconds since the Unix epoch.
    pub fn as_millis(&self) -> i64 {
        self.0.timestamp_millis()
    }

    /// Builds a timestamp from milliseconds since the Unix epoch, or `None` outside the years
    /// 0000 to 9999.
    pub fn from_millis(millis: i64) -> Option<Self> {
        DateTime::from_timestamp_millis(millis).and_then(Self::within_years)
    }

    fn within_years(t: DateTime<Utc>) -> Option<Self> {
        (0..=9999).contains(&t.year()).then_some(Self(t))
    }
}

impl TryFrom<DateTime<Utc>> for Timestamp {
    type Error = InvalidTimestamp;

    /// Refuses a time outside the years 0000 to 9999, which the wire form cannot write.
    fn try_from(value: DateTime<Utc>) -> Result<Self, Self::Error> {
        Self::within_years(value).ok_or_else(|| InvalidTimestamp(value.to_rfc3339_opts(SecondsFormat::Millis, true)))
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(value: Timestamp) -> Self {
        value.0
    }
}

impl Timestamp {
    /// The wire form written into a fixed buffer: every response carries timestamps, and chrono's
    /// general formatter allocates. The year is within 0..=9999 (see `within_years`).
    fn to_fixed_text(self) -> [u8; 24] {
        let t = self.0;
        let year = u32::try_from(t.year()).unwrap_or_default();
        let mut out = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for i in (at..at + width).rev() {
                out[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, t.month());
        put(8, 2, t.day());
        put(11, 2, t.hour());
        put(14, 2, t.minute());
        // chrono keeps a leap second in the nanoseconds (1e9 and up); it is shown as :60, as
        // chrono shows it.
        let (leap, nanos) = (t.nanosecond() / 1_000_000_000, t.nanosecond() % 1_000_000_000);
        put(17, 2, t.second() + leap);
        put(20, 3, nanos / 1_000_000);
        out
    }

    fn with_text<R>(self, f: impl FnOnce(&str) -> R) -> R {
        // The buffer holds only ASCII digits and separators.
        f(std::str::from_utf8(&self.to_fixed_text()).unwrap_or_default())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// The text was not a recognisable ISO 8601 date-time, or its year is outside 0000 to 9999.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid timestamp {0:?}: expected ISO 8601 with a year from 0000 to 9999, e.g. 2025-01-01T00:00:00.000Z")]
pub struct InvalidTimestamp(String);

impl std::str::FromStr for Timestamp {
    type Err = InvalidTimestamp;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let parsed = DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).or_else(|_| {
            // Older examples omit the zone designator; such times are taken as UTC.
            NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").map(|naive| naive.and_utc())
        });
        parsed.ok().and_then(Self::within_years).ok_or_else(|| InvalidTimestamp(s.to_owned()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with_text(|text| serializer.serialize_str(text))
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_milliseconds_and_z() {
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(t.to_string(), "2026-01-01T00:00:00.000Z");
    }

    #[test]
    fn the_fixed_form_matches_chrono() {
        let texts = [
            "0001-02-03T04:05:06.007Z",
            "1999-12-31T23:59:59.999Z",
            "2026-11-21T18:02:19.120Z",
            "2016-12-31T23:59:60.500Z",
        ];
        for text in texts {
            let t: Timestamp = text.parse().unwrap();
            assert_eq!(t.to_string(), text);
            assert_eq!(t.to_string(), t.0.to_rfc3339_opts(SecondsFormat::Millis, true));
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{text}\""));
        }
        let last = "9999-12-31T23:59:59.999Z".parse::<Timestamp>().unwrap();
        assert_eq!(last.to_string(), last.0.to_rfc3339_opts(SecondsFormat::Millis, true));
    }

    #[test]
    fn years_the_wire_form_cannot_write_are_refused_where_they_are_read() {
        // A signed year, which chrono's `%Y` reads, once decoded into a timestamp whose written
        // form ("-0025-…") no decoder reads back.
        for text in ["-025-04-02T16:59:25.331844", "-0025-04-02T16:59:25.331Z", "+10000-01-01T00:00:00"] {
            let refused = text.parse::<Timestamp>().unwrap_err();
            assert!(refused.to_string().contains("0000 to 9999"), "{refused}");
        }
        assert!(Timestamp::from_millis(400_000_000_000_000).is_none());
        assert!(Timestamp::from_millis(-62_167_219_200_001).is_none(), "a millisecond before year 0");
        assert!(Timestamp::from_millis(-62_167_219_200_000).is_some(), "year 0 starts here");
        let far = DateTime::from_timestamp(400_000_000_000, 0).unwrap();
        assert!(Timestamp::try_from(far).is_err());
    }

    #[test]
    fn parses_offsets_and_fractions() {
        let t: Timestamp = "2026-01-01T02:00:00.123456789+02:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-01-01T00:00:00.123Z");
        assert!("yesterday".parse::<Timestamp>().is_err());
    }
}
