//! The seconds of a run's tests, written as the run goes
//! ([`LiveSample`]), and the runs in progress found by them.

use iomark_model::live::{IntervalLatency, LiveSample};

use crate::backend::{Db, Param};
use crate::decode::{Decode, Row};
use crate::{ops, RunId, StoreError};

/// The schema version that has `run_samples`: a database opened read-only
/// at an older one has no samples to give.
const SINCE_VERSION: i64 = 6;

/// The schema version whose samples have `flops`: read as none before it.
const FLOPS_SINCE_VERSION: i64 = 7;
/// The schema version whose samples say whether their time left is the
/// most the run can take (`left_at_most`).
const AT_MOST_SINCE_VERSION: i64 = 9;

/// Store `samples` of run `id`, numbered from `first_seq`.
pub(crate) fn add<D: Db>(
    db: &mut D,
    id: RunId,
    first_seq: u64,
    samples: &[LiveSample],
) -> Result<(), StoreError> {
    for (i, s) in samples.iter().enumerate() {
        let seq = big(first_seq + i as u64);
        let lat = s.latency;
        let ns = |f: fn(&IntervalLatency) -> u64| lat.as_ref().map(|l| big(f(l)));
        let values: [&dyn Param; 17] = [
            &id.0,
            &seq,
            &big(s.at_ms),
            &i64::from(s.step),
            &i64::from(s.steps),
            &s.label,
            &big(s.offset_ms),
            &big(s.duration_ms),
            &big(s.bytes),
            &big(s.ios),
            &ns(|l| l.mean_ns),
            &ns(|l| l.p50_ns),
            &ns(|l| l.p99_ns),
            &ns(|l| l.max_ns),
            &s.left_ms.map(big),
            &s.flops,
            &i64::from(s.left_at_most),
        ];
        db.execute(
            "INSERT INTO run_samples (run_id, seq, at_ms, step, steps, label, offset_ms,
                 duration_ms, bytes, ios, lat_mean_ns, lat_p50_ns, lat_p99_ns, lat_max_ns,
                 left_ms, flops, left_at_most)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 ?17)",
            &values,
        )?;
    }
    Ok(())
}

/// A stored sample with its number.
struct Numbered(u64, LiveSample);

impl Decode for Numbered {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        let small = |i: usize| -> Result<u64, StoreError> { Ok(r.get::<i64>(i)?.max(0) as u64) };
        let opt = |i: usize| -> Result<Option<u64>, StoreError> {
            Ok(r.get::<Option<i64>>(i)?.map(|v| v.max(0) as u64))
        };
        let latency = match (opt(10)?, opt(11)?, opt(12)?, opt(13)?) {
            (Some(mean_ns), Some(p50_ns), Some(p99_ns), Some(max_ns)) => Some(IntervalLatency {
                mean_ns,
                p50_ns,
                p99_ns,
                max_ns,
            }),
            _ => None,
        };
        Ok(Numbered(
            small(0)?,
            LiveSample {
                at_ms: small(1)?,
                step: small(2)? as u32,
                steps: small(3)? as u32,
                label: r.get(4)?,
                offset_ms: small(5)?,
                duration_ms: small(6)?,
                bytes: small(7)?,
                ios: small(8)?,
                latency,
                left_ms: opt(9)?,
                flops: r.get(14)?,
                left_at_most: r.get::<Option<i64>>(15)?.is_some_and(|v| v != 0),
            },
        ))
    }
}

/// Run `id`'s samples numbered after `after` (all with `None`), in order,
/// with their numbers.
pub(crate) fn after<D: Db>(
    db: &mut D,
    id: RunId,
    after: Option<u64>,
) -> Result<Vec<(u64, LiveSample)>, StoreError> {
    let version = ops::schema_version(db)?;
    if version < SINCE_VERSION {
        return Ok(Vec::new());
    }
    let from = after.map_or(-1, big);
    // A database opened read-only is read at the version it is at.
    let flops = if version >= FLOPS_SINCE_VERSION {
        "flops"
    } else {
        "CAST(NULL AS DOUBLE PRECISION)"
    };
    let at_most = if version >= AT_MOST_SINCE_VERSION {
        "left_at_most"
    } else {
        "CAST(NULL AS BIGINT)"
    };
    let rows: Vec<Numbered> = db.query(
        &format!(
            "SELECT seq, at_ms, step, steps, label, offset_ms, duration_ms, bytes, ios,
                 left_ms, lat_mean_ns, lat_p50_ns, lat_p99_ns, lat_max_ns, {flops}, {at_most}
             FROM run_samples WHERE run_id = ?1 AND seq > ?2 ORDER BY seq"
        ),
        &[&id.0, &from],
    )?;
    Ok(rows.into_iter().map(|Numbered(n, s)| (n, s)).collect())
}

/// The runs in progress: not finished, and begun or sampled at or after
/// `since_ms` (ms since the Unix epoch), or going on this machine
/// ([`presence`](crate::presence)); newest first.
pub(crate) fn in_progress<D: Db>(db: &mut D, since_ms: u64) -> Result<Vec<RunId>, StoreError> {
    let since = big(since_ms);
    let mut sampled = if ops::schema_version(db)? >= SINCE_VERSION {
        " OR id IN (SELECT run_id FROM run_samples WHERE at_ms >= ?1)".to_string()
    } else {
        String::new()
    };
    let here: Vec<String> = crate::presence::running_here(&db.location())
        .iter()
        .map(|(id, _)| id.0.to_string())
        .collect();
    if !here.is_empty() {
        // Integers of our own making, not user text.
        sampled += &format!(" OR id IN ({})", here.join(", "));
    }
    let ids: Vec<Id> = db.query(
        &format!(
            "SELECT id FROM runs WHERE status = 'interrupted'
             AND (started_at_ms >= ?1{sampled}) ORDER BY id DESC"
        ),
        &[&since],
    )?;
    Ok(ids.into_iter().map(|Id(id)| id).collect())
}

struct Id(RunId);

impl Decode for Id {
    fn decode(r: &impl Row, _: &str) -> Result<Self, StoreError> {
        Ok(Id(RunId(r.get(0)?)))
    }
}

fn big(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
