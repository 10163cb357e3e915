//! What the PostgreSQL driver and server say, made into [`StoreError`]s
//! that never show the URL's passwords.

use crate::db_arg::percent_decode;
use crate::StoreError;

/// Makes a driver error a [`StoreError::Postgres`] about `url`, with the
/// `secrets` scrubbed from what it says.
pub(super) fn pg_err(url: &str, secrets: &[String]) -> impl Fn(postgres::Error) -> StoreError {
    let url = url.to_string();
    let secrets = secrets.to_vec();
    move |e| StoreError::Postgres {
        url: url.clone(),
        reason: scrub(&pg_reason(&e), &secrets),
    }
}

/// The server's own message when there is one, else the driver's; a full
/// disk and a server that only reads are said in words, with the fix.
pub(super) fn pg_reason(e: &postgres::Error) -> String {
    use postgres::error::SqlState;
    match e.as_db_error() {
        Some(db) if *db.code() == SqlState::DISK_FULL => format!(
            "the server's disk is full ({}): free space on the database server, \
             or pass --db to another database",
            db.message()
        ),
        Some(db) if *db.code() == SqlState::READ_ONLY_SQL_TRANSACTION => format!(
            "the server only reads here ({}: a standby, or default_transaction_read_only \
             set): point --db at a database that takes writes, or pass --no-store",
            db.message()
        ),
        Some(db) => db.message().to_string(),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(cause) = src {
                s += &format!(": {cause}");
                src = cause.source();
            }
            s
        }
    }
}

/// The passwords in `url` (user info and `password=` parameters), raw and
/// decoded, to be scrubbed from whatever the driver or server says.
pub(super) fn secrets_of(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return out;
    };
    let query_at = rest.find('?').unwrap_or(rest.len());
    if let Some(at) = rest[..query_at].rfind('@').or_else(|| rest.rfind('@')) {
        if let Some((_, pw)) = rest[..at].split_once(':') {
            out.push(pw.to_string());
        }
    }
    if let Some((_, query)) = rest.split_once('?') {
        for (k, v) in query.split('&').filter_map(|p| p.split_once('=')) {
            if percent_decode(k).to_ascii_lowercase().contains("password") {
                out.push(v.to_string());
            }
        }
    }
    let decoded: Vec<String> = out.iter().map(|s| percent_decode(s)).collect();
    out.extend(decoded);
    // A one- or two-letter password would blank out half of any message,
    // and neither the driver nor the server ever repeats it anyway.
    out.retain(|s| s.chars().count() >= 3);
    out
}

/// `text` with every secret replaced by `***`.
pub(super) fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "***"))
}
