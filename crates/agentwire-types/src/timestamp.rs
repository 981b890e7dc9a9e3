//! Protocol timestamps: emitted as `YYYY-MM-DDTHH:MM:SS.sssZ`, parsed from any RFC 3339 / ISO 8601 form.

use std::fmt;

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, always UTC, with millisecond precision on the wire.
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

    /// Builds a timestamp from milliseconds since the Unix epoch.
    pub fn from_millis(millis: i64) -> Option<Self> {
        DateTime::from_timestamp_millis(millis).map(Self)
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(value: DateTime<Utc>) -> Self {
        Self(value)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(value: Timestamp) -> Self {
        value.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

/// The text was not a recognisable ISO 8601 date-time.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid timestamp {0:?}: expected ISO 8601, e.g. 2025-01-01T00:00:00.000Z")]
pub struct InvalidTimestamp(String);

impl std::str::FromStr for Timestamp {
    type Err = InvalidTimestamp;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(t) = DateTime::parse_from_rfc3339(s) {
            return Ok(Self(t.with_timezone(&Utc)));
        }
        // Older examples omit the zone designator; such times are taken as UTC.
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .map(|naive| Self(naive.and_utc()))
            .map_err(|_| InvalidTimestamp(s.to_owned()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
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
    fn parses_offsets_and_fractions() {
        let t: Timestamp = "2026-01-01T02:00:00.123456789+02:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-01-01T00:00:00.123Z");
        assert!("yesterday".parse::<Timestamp>().is_err());
    }
}
