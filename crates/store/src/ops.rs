//! The store's work, written once for both databases: migrating, writing a
//! run, listing, loading and deleting runs, in SQL both understand. Each
//! backend opens the transaction (of its own kind) and commits it; what
//! happens in it is here.

use crate::backend::{Db, Param};
use crate::decode::SUMMARY_COLUMNS;
use crate::row::RunRow;
use crate::{DeviceMemory, RunId, RunSummary, StoreError, StoredRun};

/// Bring the schema up to the newest migration this build knows; a
/// database from a newer iomark is [`StoreError::NewerSchema`].
pub(crate) fn migrate<D: Db>(db: &mut D) -> Result<(), StoreError> {
    db.batch(&format!(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version {int} PRIMARY KEY,
             name TEXT NOT NULL,
             applied_at_ms {int} NOT NULL)",
        int = D::BIGINT
    ))?;
    let current = schema_version(db)?;
    let known = D::known_version();
    if current > known {
        return Err(StoreError::NewerSchema {
            location: db.location(),
            found: current,
            known,
        });
    }
    for (version, name, sql) in D::MIGRATIONS.iter().filter(|m| m.0 > current) {
        db.batch(sql)?;
        db.execute(
            "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?1, ?2, ?3)",
            &[version, name, &now_ms()],
        )?;
    }
    Ok(())
}

/// The oldest schema version whose runs this build reads: versions 2, 3
/// and 4 only added the `devices` table, its verify columns and the
/// `run_ranks` table, which reading runs never touches.
const READABLE_FROM: i64 = 1;

/// A database opened read-only cannot be migrated: it must be at a schema
/// version this build reads ([`READABLE_FROM`] up to its own).
pub(crate) fn check_schema<D: Db>(db: &mut D) -> Result<(), StoreError> {
    let has_table = db.query::<bool>(D::HAS_MIGRATIONS_TABLE, &[])?;
    if has_table.first() != Some(&true) {
        return Err(StoreError::NoSchema {
            location: db.location(),
        });
    }
    let found = schema_version(db)?;
    let known = D::known_version();
    match found.cmp(&known) {
        std::cmp::Ordering::Greater => Err(StoreError::NewerSchema {
            location: db.location(),
            found,
            known,
        }),
        // Reading needs only the tables of READABLE_FROM.
        std::cmp::Ordering::Less if found >= READABLE_FROM => Ok(()),
        std::cmp::Ordering::Less => Err(StoreError::OlderSchema {
            location: db.location(),
            found,
            known,
        }),
        std::cmp::Ordering::Equal => Ok(()),
    }
}

/// The schema version the database is at (0 before any migration).
pub(crate) fn schema_version(db: &mut impl Db) -> Result<i64, StoreError> {
    let found = db.query(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        &[],
    )?;
    Ok(found.first().copied().unwrap_or(0))
}

/// The run row's values, in the order [`INSERT_RUN`] and [`UPDATE_RUN`]
/// name their columns.
fn run_values(row: &RunRow) -> [&dyn Param; 15] {
    [
        &row.kind,
        &row.tool,
        &row.tool_version,
        &row.command_line,
        &row.started_at_ms,
        &row.finished_at_ms,
        &row.status,
        &row.labels_json,
        &row.note,
        &row.target,
        &row.device,
        &row.warning_count,
        &row.schema_version,
        &row.host,
        &row.profile,
    ]
}

const INSERT_RUN: &str = "INSERT INTO runs (kind, tool, tool_version, command_line, started_at_ms,
     finished_at_ms, status, labels, note, target, device, warning_count, schema_version,
     host, profile)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
     RETURNING id";

const UPDATE_RUN: &str = "UPDATE runs SET kind=?1, tool=?2, tool_version=?3, command_line=?4,
     started_at_ms=?5, finished_at_ms=?6, status=?7, labels=?8, note=?9, target=?10, device=?11,
     warning_count=?12, schema_version=?13, host=?14, profile=?15
     WHERE id=?16";

/// The tables holding a run's parts, each keyed by `run_id`.
const RUN_PARTS: [&str; 5] = [
    "run_documents",
    "run_labels",
    "figures",
    "warnings",
    "run_ranks",
];

/// Store `row` as a new run (`id` `None`) or in place of run `id`'s
/// document, labels, figures and warnings.
pub(crate) fn write(
    db: &mut impl Db,
    id: Option<RunId>,
    row: &RunRow,
) -> Result<RunId, StoreError> {
    let values = run_values(row);
    let id = match id {
        Some(id) => {
            let mut params = values.to_vec();
            params.push(&id.0);
            if db.execute(UPDATE_RUN, &params)? == 0 {
                return Err(StoreError::NotFound {
                    id,
                    location: db.location(),
                });
            }
            for table in RUN_PARTS {
                db.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), &[&id.0])?;
            }
            id
        }
        None => {
            let ids: Vec<i64> = db.query(INSERT_RUN, &values)?;
            RunId(ids.first().copied().unwrap_or_default())
        }
    };
    db.execute(
        "INSERT INTO run_documents (run_id, document) VALUES (?1, ?2)",
        &[&id.0, &row.document],
    )?;
    for l in &row.labels {
        db.execute(
            "INSERT INTO run_labels (run_id, label) VALUES (?1, ?2)",
            &[&id.0, l],
        )?;
    }
    for (i, f) in row.figures.iter().enumerate() {
        db.execute(
            "INSERT INTO figures
                 (run_id, ord, test, metric, unit, value, spread_lo, spread_hi, noise_lo, noise_hi)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[
                &id.0,
                &(i as i64),
                &f.test,
                &f.metric,
                &f.unit.as_str(),
                &f.value,
                &f.spread.map(|s| s.0),
                &f.spread.map(|s| s.1),
                &f.noise.map(|s| s.0),
                &f.noise.map(|s| s.1),
            ],
        )?;
    }
    for r in &row.ranks {
        db.execute(
            "INSERT INTO run_ranks (run_id, rank, host, path, region_at, start_ns, end_ns,
             read_bytes, write_bytes, read_bw, write_bw, interrupted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            &[
                &id.0,
                &i64::from(r.rank),
                &r.host,
                &r.path,
                &big(r.offset.0),
                &big(r.start.0),
                &big(r.end.0),
                &big(r.read_bytes.0),
                &big(r.write_bytes.0),
                &r.read_bw.0,
                &r.write_bw.0,
                &i64::from(r.interrupted),
            ],
        )?;
    }
    for (i, (scope, kind, msg)) in row.warnings.iter().enumerate() {
        db.execute(
            "INSERT INTO warnings (run_id, ord, scope, kind, message) VALUES (?1, ?2, ?3, ?4, ?5)",
            &[&id.0, &(i as i64), scope, kind, msg],
        )?;
    }
    Ok(id)
}

/// The figures' noise band columns, as a database at its version has them:
/// before version 5 there are none (the spread stands in).
pub(crate) fn noise_columns(db: &mut impl Db) -> Result<&'static str, StoreError> {
    Ok(if schema_version(db)? >= 5 {
        "noise_lo, noise_hi"
    } else {
        "CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS DOUBLE PRECISION)"
    })
}

/// One run with its figures, warnings and document; run in one read
/// transaction, so a concurrent update is seen whole or not at all.
pub(crate) fn load(db: &mut impl Db, id: RunId) -> Result<StoredRun, StoreError> {
    let found = db.query(
        &format!(
            "SELECT {SUMMARY_COLUMNS}, document FROM runs
             JOIN run_documents ON run_documents.run_id = runs.id WHERE id = ?1"
        ),
        &[&id.0],
    )?;
    let Some((mut summary, document_json)) = found.into_iter().next() else {
        return Err(StoreError::NotFound {
            id,
            location: db.location(),
        });
    };
    crate::presence::mark_running(&db.location(), std::slice::from_mut(&mut summary));
    add_headlines(db, std::slice::from_mut(&mut summary))?;
    // A database opened read-only is read at the version it is at: before
    // version 5 its figures have no noise band (their spread stands in).
    let noise = noise_columns(db)?;
    let figures = db.query(
        &format!(
            "SELECT test, metric, unit, value, spread_lo, spread_hi, {noise} FROM figures
             WHERE run_id = ?1 ORDER BY ord"
        ),
        &[&id.0],
    )?;
    let warnings = db.query(
        "SELECT scope, kind, message FROM warnings WHERE run_id = ?1 ORDER BY ord",
        &[&id.0],
    )?;
    Ok(StoredRun {
        summary,
        figures,
        warnings,
        document_json,
    })
}

/// Remove a run; its parts go with it (`ON DELETE CASCADE`).
pub(crate) fn delete(db: &mut impl Db, id: RunId) -> Result<(), StoreError> {
    if db.execute("DELETE FROM runs WHERE id = ?1", &[&id.0])? == 0 {
        return Err(StoreError::NotFound {
            id,
            location: db.location(),
        });
    }
    Ok(())
}

/// [`Store`](crate::Store)'s four writes, for a backend with a method
/// `write(&mut self, id: Option<RunId>, row: &RunRow)`: a live run is
/// stored as interrupted until it is finished, a finished one with its
/// document's status.
macro_rules! store_writes {
    () => {
        fn begin_run(
            &mut self,
            doc: &iomark_model::RunDocument,
        ) -> Result<$crate::RunId, $crate::StoreError> {
            let row = $crate::row::RunRow::new(doc, iomark_model::RunStatus::Interrupted)?;
            self.write(None, &row)
        }

        fn update_run(
            &mut self,
            id: $crate::RunId,
            doc: &iomark_model::RunDocument,
        ) -> Result<(), $crate::StoreError> {
            let row = $crate::row::RunRow::new(doc, iomark_model::RunStatus::Interrupted)?;
            self.write(Some(id), &row).map(drop)
        }

        fn finish_run(
            &mut self,
            id: $crate::RunId,
            doc: &iomark_model::RunDocument,
        ) -> Result<(), $crate::StoreError> {
            let row = $crate::row::RunRow::new(doc, doc.status)?;
            self.write(Some(id), &row).map(drop)
        }

        fn insert_complete(
            &mut self,
            doc: &iomark_model::RunDocument,
        ) -> Result<$crate::RunId, $crate::StoreError> {
            let row = $crate::row::RunRow::new(doc, doc.status)?;
            self.write(None, &row)
        }
    };
}
pub(crate) use store_writes;

/// What is remembered under `key`.
pub(crate) fn device<D: Db>(db: &mut D, key: &str) -> Result<Option<DeviceMemory>, StoreError> {
    let found: Vec<DeviceMemory> = db.query(
        "SELECT key, description, rated, probe, probe_run_id, probe_at_ms,
             verify, verify_run_id, verify_at_ms
         FROM devices WHERE key = ?1",
        &[&key],
    )?;
    Ok(found.into_iter().next())
}

/// Remember `d` under its key, replacing what was there.
pub(crate) fn remember_device<D: Db>(db: &mut D, d: &DeviceMemory) -> Result<(), StoreError> {
    // Plain data with string keys: serialising cannot fail.
    let rated = d.rated.as_ref().and_then(|r| serde_json::to_string(r).ok());
    let probe = d
        .probe
        .as_ref()
        .and_then(|p| serde_json::to_string(&p.verdict).ok());
    let run = d.probe.as_ref().and_then(|p| p.run).map(|r| r.0);
    let at = d.probe.as_ref().map(|p| p.at_ms as i64);
    let verify = d
        .verify
        .as_ref()
        .and_then(|v| serde_json::to_string(&v.verdict).ok());
    let verify_run = d.verify.as_ref().and_then(|v| v.run).map(|r| r.0);
    let verify_at = d.verify.as_ref().map(|v| v.at_ms as i64);
    db.execute(
        "INSERT INTO devices (key, description, rated, probe, probe_run_id, probe_at_ms,
             verify, verify_run_id, verify_at_ms, updated_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (key) DO UPDATE SET description = excluded.description,
             rated = excluded.rated, probe = excluded.probe,
             probe_run_id = excluded.probe_run_id, probe_at_ms = excluded.probe_at_ms,
             verify = excluded.verify, verify_run_id = excluded.verify_run_id,
             verify_at_ms = excluded.verify_at_ms,
             updated_at_ms = excluded.updated_at_ms",
        &[
            &d.key,
            &d.description,
            &rated,
            &probe,
            &run,
            &at,
            &verify,
            &verify_run,
            &verify_at,
            &now_ms(),
        ],
    )
    .map(drop)
}

/// A count as the databases' signed 64-bit integer.
fn big(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Now as the databases keep it: the model's clock, signed.
fn now_ms() -> i64 {
    big(iomark_model::now_ms())
}

/// The schema version whose `runs` has `host` and `profile`.
pub(crate) const HOST_PROFILE_SINCE_VERSION: i64 = 8;

/// Fills each run's profile and headline figure ([`RunSummary`] says
/// which): two queries for all of `runs`, however many, so a page of the
/// run list still reads small rows.
pub(crate) fn add_headlines<D: Db>(db: &mut D, runs: &mut [RunSummary]) -> Result<(), StoreError> {
    if runs.is_empty() {
        return Ok(());
    }
    // The ids are the store's own integers, never user text.
    let ids = runs
        .iter()
        .map(|r| r.id.0.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let profiles: Vec<(i64, Option<String>)> = if schema_version(db)? >= HOST_PROFILE_SINCE_VERSION
    {
        db.query(
            &format!("SELECT id, profile FROM runs WHERE id IN ({ids})"),
            &[],
        )?
    } else {
        let profile = D::json_text("document", &["body", "profile"]);
        db.query(
            &format!("SELECT run_id, {profile} FROM run_documents WHERE run_id IN ({ids})"),
            &[],
        )?
    };
    let noise = noise_columns(db)?;
    let headlines: Vec<(Option<iomark_model::figure::Figure>, i64)> = db.query(
        &format!(
            "SELECT test, metric, unit, value, spread_lo, spread_hi, {noise}, run_id FROM figures f
             WHERE run_id IN ({ids}) AND ord = (SELECT MIN(ord) FROM figures g
                 WHERE g.run_id = f.run_id AND g.metric NOT LIKE 'cpu%')"
        ),
        &[],
    )?;
    for r in runs {
        r.profile = profiles
            .iter()
            .find(|(id, _)| *id == r.id.0)
            .and_then(|(_, p)| p.clone());
        r.headline = headlines
            .iter()
            .find(|(_, id)| *id == r.id.0)
            .and_then(|(f, _)| f.clone());
    }
    Ok(())
}
