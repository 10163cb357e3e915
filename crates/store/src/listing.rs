//! Listing what the store holds, for both databases: runs by filter and
//! page, the devices runs were measured on, and every device remembered.
//! Filters and pages are SQL, so a page of a store of 10,000 runs reads
//! one page of small rows.

use crate::backend::{Db, Param};
use crate::decode::SUMMARY_COLUMNS;
use crate::ops::{schema_version, HOST_PROFILE_SINCE_VERSION};
use crate::{DeviceMemory, RunQuery, RunSummary, SeenDevice, StoreError};

/// Runs matching `q`, oldest first: the newest `q.limit` after skipping
/// the newest `q.offset`.
pub(crate) fn list<D: Db>(db: &mut D, q: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
    let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE 1=1");
    let mut args: Vec<Box<dyn Param>> = Vec::new();
    // Every label required, as one condition however many are asked for:
    // a condition per label nested the query deeper with each, and 5,500
    // labels made SQLite refuse it ("Expression tree is too large").
    let mut labels: Vec<&String> = Vec::new();
    for l in &q.labels {
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    if !labels.is_empty() {
        let mut marks = Vec::new();
        for l in &labels {
            args.push(Box::new((*l).clone()));
            marks.push(format!("?{}", args.len()));
        }
        sql += &format!(
            " AND id IN (SELECT run_id FROM run_labels WHERE label IN ({}) \
             GROUP BY run_id HAVING COUNT(DISTINCT label) = {})",
            marks.join(", "),
            labels.len()
        );
    }
    let like = D::LIKE;
    if let Some(d) = &q.device {
        args.push(Box::new(like_pattern(d)));
        let n = args.len();
        sql += &format!(" AND (device {like} ?{n} ESCAPE '\\' OR target {like} ?{n} ESCAPE '\\')");
    }
    if let Some(d) = &q.device_is {
        args.push(Box::new(d.clone()));
        sql += &format!(" AND {SEEN_AS} = ?{}", args.len());
    }
    if let Some(k) = &q.kind {
        args.push(Box::new(k.clone()));
        sql += &format!(" AND kind = ?{}", args.len());
    }
    // Host and profile are columns since schema 8; a database opened
    // read-only at an older version has them in the document alone.
    let columns = schema_version(db)? >= HOST_PROFILE_SINCE_VERSION;
    if let Some(h) = &q.host {
        args.push(Box::new(like_pattern(h)));
        let n = args.len();
        sql += &if columns {
            format!(" AND host {like} ?{n} ESCAPE '\\'")
        } else {
            format!(
                " AND EXISTS (SELECT 1 FROM run_documents WHERE run_id = runs.id AND {} {like} ?{n} ESCAPE '\\')",
                D::json_text("document", &["host", "hostname"]),
            )
        };
    }
    if let Some(p) = &q.profile {
        args.push(Box::new(p.clone()));
        let n = args.len();
        sql += &if columns {
            format!(" AND profile = ?{n}")
        } else {
            format!(
                " AND EXISTS (SELECT 1 FROM run_documents WHERE run_id = runs.id AND {} = ?{n})",
                D::json_text("document", &["body", "profile"]),
            )
        };
    }
    if let Some(s) = q.since_ms {
        args.push(Box::new(ms(s)));
        sql += &format!(" AND started_at_ms >= ?{}", args.len());
    }
    if let Some(u) = q.until_ms {
        args.push(Box::new(ms(u)));
        sql += &format!(" AND started_at_ms < ?{}", args.len());
    }
    sql += " ORDER BY id DESC";
    // A count past i64::MAX is no integer to either database: SQLite read
    // it as a real ("datatype mismatch"). No store holds that many runs.
    let count = |n: usize| n.min(i64::MAX as usize);
    match (q.limit.map(count), count(q.offset)) {
        (Some(n), 0) => sql += &format!(" LIMIT {n}"),
        (Some(n), o) => sql += &format!(" LIMIT {n} OFFSET {o}"),
        // Both databases take OFFSET only after a LIMIT.
        (None, 0) => {}
        (None, o) => sql += &format!(" LIMIT {} OFFSET {o}", i64::MAX),
    }
    let params: Vec<&dyn Param> = args.iter().map(|a| a.as_ref()).collect();
    let mut out: Vec<RunSummary> = db.query(&sql, &params)?;
    out.reverse();
    crate::presence::mark_running(&db.location(), &mut out);
    crate::ops::add_headlines(db, &mut out)?;
    Ok(out)
}

/// What a run's device is listed as: the device behind its target, or
/// the target itself when none is known (a tmpfs path, a network host).
const SEEN_AS: &str = "COALESCE(device, target, '')";

/// Every device runs were measured on, as [`SEEN_AS`] names it, with how
/// many runs and when; the most recently used first.
pub(crate) fn seen_devices<D: Db>(db: &mut D) -> Result<Vec<SeenDevice>, StoreError> {
    db.query(
        &format!(
            "SELECT {SEEN_AS}, COUNT(*), MIN(started_at_ms), MAX(started_at_ms), MAX(id),
                 MIN(kind)
             FROM runs GROUP BY {SEEN_AS} ORDER BY MAX(id) DESC"
        ),
        &[],
    )
}

/// Every device remembered (rated speed, probe and verify verdicts), by
/// key; none in a database older than the `devices` table (version 2).
pub(crate) fn devices<D: Db>(db: &mut D) -> Result<Vec<DeviceMemory>, StoreError> {
    if schema_version(db)? < 2 {
        return Ok(Vec::new());
    }
    db.query(
        "SELECT key, description, rated, probe, probe_run_id, probe_at_ms,
             verify, verify_run_id, verify_at_ms
         FROM devices ORDER BY key",
        &[],
    )
}

/// A `LIKE` pattern matching `text` anywhere, with its wildcards escaped.
fn like_pattern(text: &str) -> String {
    let mut p = String::from("%");
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// A time as the databases' signed 64-bit integer.
fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
