//! `--since`: the start of the time [`RunQuery::since_ms`] keeps runs
//! from, written as people write it: a span back from now (`7d`, `24h`,
//! `2 weeks`) or a local date, or date and time.
//!
//! [`RunQuery::since_ms`]: crate::RunQuery::since_ms

use jiff::tz::TimeZone;
use jiff::Timestamp;

/// A `--since` that names no time.
#[derive(Debug, thiserror::Error)]
pub enum SinceError {
    /// A span back from now before the start of time.
    #[error("--since {0} reaches too far back")]
    TooFarBack(String),
    /// Neither a date nor a span.
    #[error("--since '{0}' is neither a date nor a span: use 2026-11-01, \"2026-11-01 14:00\", 7d or 24h")]
    Unrecognised(String),
    /// A local time the time zone cannot place.
    #[error("--since {text}: {cause}")]
    Zone {
        /// What was given.
        text: String,
        /// Why it has no instant.
        cause: jiff::Error,
    },
}

/// The time `text` names, in ms since the Unix epoch (0 for earlier), in
/// the system's time zone, a span counted back from now.
pub fn since_ms(text: &str) -> Result<u64, SinceError> {
    since_ms_at(text, Timestamp::now(), TimeZone::system())
}

/// [`since_ms`] with `now` and the time zone given.
pub fn since_ms_at(text: &str, now: Timestamp, tz: TimeZone) -> Result<u64, SinceError> {
    let zone = |cause| SinceError::Zone {
        text: text.to_string(),
        cause,
    };
    let ms = if let Ok(span) = text.parse::<jiff::Span>() {
        let then = now
            .to_zoned(tz)
            .checked_sub(span)
            .map_err(|_| SinceError::TooFarBack(text.to_string()))?;
        then.timestamp().as_millisecond()
    } else if let Ok(dt) = text.replace(' ', "T").parse::<jiff::civil::DateTime>() {
        dt.to_zoned(tz).map_err(zone)?.timestamp().as_millisecond()
    } else if let Ok(d) = text.parse::<jiff::civil::Date>() {
        d.to_zoned(tz).map_err(zone)?.timestamp().as_millisecond()
    } else {
        return Err(SinceError::Unrecognised(text.to_string()));
    };
    Ok(ms.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-20T12:00:00Z";
    const DAY_MS: u64 = 86_400_000;

    fn at(text: &str) -> Result<u64, SinceError> {
        since_ms_at(text, NOW.parse().unwrap(), TimeZone::UTC)
    }

    #[test]
    fn spans_count_back_from_now_and_dates_are_local() {
        let now = NOW.parse::<Timestamp>().unwrap().as_millisecond() as u64;
        assert_eq!(at("7d").unwrap(), now - 7 * DAY_MS);
        assert_eq!(at("24h").unwrap(), now - DAY_MS);
        assert_eq!(at("2 weeks").unwrap(), now - 14 * DAY_MS);
        assert_eq!(at("2026-11-20").unwrap(), now - DAY_MS / 2);
        assert_eq!(at("2026-11-20 14:00").unwrap(), now + 2 * 3_600_000);
        let berlin = TimeZone::get("Europe/Berlin").unwrap();
        let local = since_ms_at("2026-11-20 14:00", NOW.parse().unwrap(), berlin).unwrap();
        assert_eq!(local, now + 3_600_000);
    }

    #[test]
    fn what_is_no_time_is_refused_with_the_forms_there_are() {
        let err = at("yesterday").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--since 'yesterday' is neither a date nor a span: use 2026-11-01, \"2026-11-01 14:00\", 7d or 24h"
        );
        let err = at("19000y").unwrap_err();
        assert_eq!(err.to_string(), "--since 19000y reaches too far back");
    }
}
