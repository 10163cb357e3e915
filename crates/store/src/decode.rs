//! Rows read back into the store's types, the same for both databases:
//! a run's summary, its figures and warnings, single values. A value this
//! version does not know is [`StoreError::Corrupt`].

use iomark_model::figure::{Figure, FigureUnit};
use iomark_model::{RunStatus, Warning, WarningKind};

use crate::{
    DeviceMemory, RememberedProbe, RememberedVerify, RunId, RunSummary, SeenDevice, StoreError,
    StoredWarning,
};

/// A column value that both drivers can read.
pub(crate) trait Column:
    rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>
{
}

impl<T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>> Column for T {}

/// One row of a query's answer.
pub(crate) trait Row {
    /// Column `i` (from 0).
    fn get<T: Column>(&self, i: usize) -> Result<T, StoreError>;
}

/// What a row of a query's answer is read into.
pub(crate) trait Decode: Sized {
    /// The value in `row`, read from a database at `location`.
    fn decode(row: &impl Row, location: &str) -> Result<Self, StoreError>;
}

fn corrupt(location: &str, reason: String) -> StoreError {
    StoreError::Corrupt {
        location: location.to_string(),
        reason,
    }
}

/// The columns [`RunSummary`] is read from, in order.
pub(crate) const SUMMARY_COLUMNS: &str =
    "id, kind, tool, tool_version, command_line, started_at_ms,
    finished_at_ms, status, labels, note, target, device, warning_count";

impl Decode for RunSummary {
    fn decode(r: &impl Row, location: &str) -> Result<Self, StoreError> {
        let id: i64 = r.get(0)?;
        let status: String = r.get(7)?;
        let status = status_from_str(&status)
            .ok_or_else(|| corrupt(location, format!("run {id} has status '{status}'")))?;
        Ok(RunSummary {
            id: RunId(id),
            kind: r.get(1)?,
            tool: r.get(2)?,
            tool_version: r.get(3)?,
            command_line: serde_json::from_str(&r.get::<String>(4)?).unwrap_or_default(),
            started_at_ms: r.get::<i64>(5)?.max(0) as u64,
            finished_at_ms: r.get::<i64>(6)?.max(0) as u64,
            status,
            labels: serde_json::from_str(&r.get::<String>(8)?).unwrap_or_default(),
            note: r.get(9)?,
            target: r.get(10)?,
            device: r.get(11)?,
            warning_count: r.get::<i64>(12)?.clamp(0, i64::from(u32::MAX)) as u32,
            // Read apart, for the runs listed (ops::add_headlines).
            profile: None,
            headline: None,
        })
    }
}

/// A summary followed by the run's document ([`SUMMARY_COLUMNS`], then
/// `document`).
impl Decode for (RunSummary, String) {
    fn decode(r: &impl Row, location: &str) -> Result<Self, StoreError> {
        Ok((RunSummary::decode(r, location)?, r.get(13)?))
    }
}

/// `test, metric, unit, value, spread_lo, spread_hi, noise_lo, noise_hi`.
impl Decode for Figure {
    fn decode(r: &impl Row, location: &str) -> Result<Self, StoreError> {
        let unit: String = r.get(2)?;
        let unit = unit_from_str(&unit)
            .ok_or_else(|| corrupt(location, format!("unknown figure unit '{unit}'")))?;
        let (lo, hi): (Option<f64>, Option<f64>) = (r.get(4)?, r.get(5)?);
        let (noise_lo, noise_hi): (Option<f64>, Option<f64>) = (r.get(6)?, r.get(7)?);
        let spread = lo.zip(hi);
        Ok(Figure {
            test: r.get(0)?,
            metric: r.get(1)?,
            unit,
            value: r.get(3)?,
            spread,
            // Runs stored before schema 5 kept only the range.
            noise: noise_lo.zip(noise_hi).or(spread),
            sampled: None,
        })
    }
}

/// A figure's columns ([`Figure`]'s decoding), then its run's id; no
/// figure where its columns cannot be read: a list of runs shows what it
/// can, and the broken run's own page names the fault.
impl Decode for (Option<Figure>, i64) {
    fn decode(r: &impl Row, location: &str) -> Result<Self, StoreError> {
        Ok((Figure::decode(r, location).ok(), r.get(8)?))
    }
}

/// A run's id and a text that may be missing.
impl Decode for (i64, Option<String>) {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        Ok((r.get(0)?, r.get(1)?))
    }
}

/// `scope, kind, message`.
impl Decode for StoredWarning {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        let kind: String = r.get(1)?;
        Ok(StoredWarning {
            scope: r.get(0)?,
            warning: Warning::new(warning_kind_from_str(&kind), r.get::<String>(2)?),
        })
    }
}

/// A remembered device: key, description, rated, probe, probe_run_id,
/// probe_at_ms. A JSON value this version cannot read is forgotten rather
/// than failing the run that asks.
/// `name, runs, first, last, newest id, kind` ([`crate::listing`]).
impl Decode for SeenDevice {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        let count = |i| -> Result<u64, StoreError> { Ok(r.get::<i64>(i)?.max(0) as u64) };
        Ok(SeenDevice {
            name: r.get(0)?,
            runs: count(1)?,
            first_ms: count(2)?,
            last_ms: count(3)?,
            newest: RunId(r.get(4)?),
            kind: r.get(5)?,
        })
    }
}

impl Decode for DeviceMemory {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        let rated: Option<String> = r.get(2)?;
        let probe: Option<String> = r.get(3)?;
        let run: Option<i64> = r.get(4)?;
        let at: Option<i64> = r.get(5)?;
        let verdict = probe.and_then(|p| serde_json::from_str(&p).ok());
        let verify: Option<String> = r.get(6)?;
        let verify = verify.and_then(|v| serde_json::from_str(&v).ok());
        let verify_run: Option<i64> = r.get(7)?;
        let verify_at: Option<i64> = r.get(8)?;
        Ok(DeviceMemory {
            key: r.get(0)?,
            description: r.get(1)?,
            rated: rated.and_then(|j| serde_json::from_str(&j).ok()),
            probe: verdict.map(|verdict| RememberedProbe {
                verdict,
                run: run.map(RunId),
                at_ms: at.unwrap_or(0).max(0) as u64,
            }),
            verify: verify.map(|verdict| RememberedVerify {
                verdict,
                run: verify_run.map(RunId),
                at_ms: verify_at.unwrap_or(0).max(0) as u64,
            }),
        })
    }
}

/// A single number.
impl Decode for i64 {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        r.get(0)
    }
}

/// A single yes or no.
impl Decode for bool {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        r.get(0)
    }
}

fn status_from_str(s: &str) -> Option<RunStatus> {
    [
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
}

fn unit_from_str(s: &str) -> Option<FigureUnit> {
    FigureUnit::from_name(s)
}

fn warning_kind_from_str(s: &str) -> WarningKind {
    serde_json::from_value(serde_json::Value::String(s.to_string())).unwrap_or(WarningKind::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_kinds_read_back_by_name() {
        assert_eq!(
            warning_kind_from_str("buffered_io"),
            WarningKind::BufferedIo
        );
        assert_eq!(warning_kind_from_str("from_the_future"), WarningKind::Other);
    }
}
