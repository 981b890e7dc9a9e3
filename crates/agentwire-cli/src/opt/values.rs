//! How option values are read: listen addresses, durations and sizes.

use std::net::SocketAddr;
use std::time::Duration;

/// Where to listen: an address, or a port on the host of another listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listen {
    Address(SocketAddr),
    Port(u16),
}

impl Listen {
    /// The address, taking the host of `beside` for a port alone.
    pub(crate) fn beside(self, beside: SocketAddr) -> SocketAddr {
        match self {
            Listen::Address(address) => address,
            Listen::Port(port) => SocketAddr::new(beside.ip(), port),
        }
    }
}

/// `HOST:PORT`, or `PORT` alone.
pub(super) fn parse_listen(text: &str) -> Result<Listen, String> {
    if let Ok(port) = text.trim().parse::<u16>() {
        return Ok(Listen::Port(port));
    }
    text.trim()
        .parse()
        .map(Listen::Address)
        .map_err(|_| format!("{text:?} is not an address such as 127.0.0.1:9464, or a port such as 9464"))
}

/// A duration: a number followed by `ms`, `s`, `m`, `h` or `d` (seconds without a unit).
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("{text:?} is not a duration such as 90s, 15m, 2h or 7d"))?;
    let millis = match unit.trim().to_ascii_lowercase().as_str() {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        other => return Err(format!("unknown duration unit {other:?}; use ms, s, m, h or d")),
    };
    number.checked_mul(millis).map(Duration::from_millis).ok_or_else(|| format!("{text:?} is too long"))
}

/// A duration, or none (`off`): its own type, since clap takes an `Option` field for an option
/// that may be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MaybeDuration(pub(crate) Option<Duration>);

/// A [duration](parse_duration), or `off` for none.
pub(super) fn parse_optional_duration(text: &str) -> Result<MaybeDuration, String> {
    match text.trim() {
        "off" | "none" => Ok(MaybeDuration(None)),
        text => parse_duration(text).map(|duration| MaybeDuration(Some(duration))),
    }
}

/// A size in bytes: a number, optionally followed by `KiB`, `MiB` or `GiB` (or `K`, `M`, `G`).
pub(super) fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: usize = number.parse().map_err(|_| format!("{text:?} is not a size such as 4MiB or 65536"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        other => return Err(format!("unknown size unit {other:?}; use KiB, MiB or GiB")),
    };
    number.checked_mul(scale).ok_or_else(|| format!("{text:?} is too large"))
}
