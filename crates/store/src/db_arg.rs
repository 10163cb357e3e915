//! What `--db` names: a SQLite file or a PostgreSQL URL, checked before
//! anything is opened, and the same names made fit for messages (every
//! password hidden).

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::StoreError;

/// The environment variable that names the database when `--db` is not
/// given: a CI job sets it once instead of passing `--db` to every step.
pub const DB_ENV: &str = "IOMARK_DB";

/// Where `--db` points, checked before anything is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Sqlite(PathBuf),
    Postgres(String),
}

/// What `--db` names, else `$IOMARK_DB`, else the default file; refuses
/// names that would not store anywhere real or would store somewhere the
/// user did not mean.
pub(crate) fn target(db: Option<&str>) -> Result<Target, StoreError> {
    target_or_env(db, std::env::var_os(DB_ENV).as_deref())
}

/// [`target`] with the value of `$IOMARK_DB` given, so tests need not
/// change the process's environment.
fn target_or_env(db: Option<&str>, env: Option<&OsStr>) -> Result<Target, StoreError> {
    if let Some(db) = db {
        return named(db);
    }
    let Some(value) = env else {
        return Ok(Target::Sqlite(default_sqlite_path()?));
    };
    // An empty value is most often a CI variable that was never filled
    // in: falling back to the home directory would store the runs where
    // the next step does not look.
    let value = value.to_str().ok_or(StoreError::DbEnv {
        reason: "is not UTF-8: set it to a UTF-8 file path or a postgres:// URL, or unset it"
            .into(),
    })?;
    if value.trim().is_empty() {
        return Err(StoreError::DbEnv {
            reason: "is set but empty: set it to a file path or a postgres:// URL, or unset it to use the default database".into(),
        });
    }
    named(value).map_err(|e| StoreError::DbEnv {
        reason: format!("does not name a database: {e}"),
    })
}

/// What a database name given as text means.
fn named(db: &str) -> Result<Target, StoreError> {
    let bad = |reason: &str| StoreError::BadUrl {
        url: redact(db),
        reason: reason.to_string(),
    };
    if is_postgres_url(db) {
        return Ok(Target::Postgres(db.to_string()));
    }
    if looks_like_conninfo(db) {
        return Err(bad("it is a libpq key=value connection string: use a postgres:// URL instead, e.g. postgres://user@host:port/dbname?sslmode=verify-full&sslrootcert=FILE (for a file of that name write ./NAME)"));
    }
    let path = match db.strip_prefix("sqlite://") {
        Some(p) => p,
        None if db.starts_with("sqlite:") => {
            return Err(bad("SQLite takes sqlite://PATH or a plain PATH"));
        }
        // A mistyped PostgreSQL URL would otherwise create directories
        // named after the host.
        None if db.starts_with("postgres:") || db.starts_with("postgresql:") => {
            return Err(bad(
                "a PostgreSQL URL starts with postgres:// (two slashes)",
            ));
        }
        None if db.starts_with("file:") => {
            return Err(bad(
                "SQLite URI file names are not taken: give the file's path",
            ));
        }
        None if has_scheme(db) => {
            return Err(bad(
                "only postgres://, postgresql:// and sqlite:// URLs are known",
            ));
        }
        None => db,
    };
    if path.trim().is_empty() {
        return Err(bad(if db.is_empty() {
            "it is empty"
        } else {
            "it names no file: write sqlite:///abs/path.db or sqlite://relative.db"
        }));
    }
    // SQLite keeps these in memory and drops them on exit: a run "stored"
    // there would be gone before anyone could read it.
    if path == ":memory:" {
        return Err(bad(
            "an in-memory database keeps nothing after iomark exits (--no-store stores nothing on purpose)",
        ));
    }
    Ok(Target::Sqlite(PathBuf::from(path)))
}

/// `scheme://...`: a URL of some kind, not a file name.
fn has_scheme(db: &str) -> bool {
    db.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// libpq's keywords, to tell `host=db dbname=x` from a file name with an
/// `=` in it.
const CONNINFO_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "connect_timeout",
    "options",
    "application_name",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "service",
    "target_session_attrs",
    "keepalives",
    "channel_binding",
];

/// Whether `db` reads as a libpq `key=value ...` connection string.
fn looks_like_conninfo(db: &str) -> bool {
    let t = db.trim_start();
    let key_len = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    let (key, rest) = t.split_at(key_len);
    CONNINFO_KEYWORDS.contains(&key.to_ascii_lowercase().as_str())
        && rest.trim_start().starts_with('=')
}

/// Check `--db` without opening anything, so a command can refuse a name
/// that would store nowhere real before it measures anything.
pub fn check_db(db: Option<&str>) -> Result<(), StoreError> {
    target(db).map(drop)
}

/// Whether `db` names a PostgreSQL database.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// The password marker messages show instead of a password.
const HIDDEN: &str = "***";

/// `db` fit for a message: the password of a URL's user info, of a
/// `password=` (or `sslpassword=`) query parameter and of a libpq
/// `key=value` string replaced by `***`.
pub fn redact(db: &str) -> String {
    if looks_like_conninfo(db) {
        return redact_conninfo(db);
    }
    let Some((scheme, rest)) = db.split_once("://") else {
        if db.starts_with("postgres:") || db.starts_with("postgresql:") {
            return "postgres:(not shown)".into();
        }
        return db.to_string();
    };
    // The user info ends at the last `@` before the query; a password with
    // an unescaped `?` has its `@` after it, and then the last `@` of all
    // is taken: hiding too much beats showing a password.
    let query_at = rest.find('?').unwrap_or(rest.len());
    let at = rest[..query_at].rfind('@').or_else(|| rest.rfind('@'));
    let (auth, after) = match at {
        Some(i) => {
            let (user, hidden) = match rest[..i].split_once(':') {
                Some((user, _)) => (user, true),
                None => (&rest[..i], false),
            };
            let auth = if hidden {
                format!("{user}:{HIDDEN}@")
            } else {
                format!("{user}@")
            };
            (auth, &rest[i + 1..])
        }
        None => (String::new(), rest),
    };
    let after = match after.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if is_password_key(&percent_decode(k)) => {
                        format!("{k}={HIDDEN}")
                    }
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => after.to_string(),
    };
    format!("{scheme}://{auth}{after}")
}

fn is_password_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("password")
}

/// A libpq `key=value ...` string with its password values hidden; one it
/// cannot follow is not shown at all.
fn redact_conninfo(s: &str) -> String {
    let unreadable = || "(a key=value connection string, not shown)".to_string();
    let mut out = String::new();
    let mut it = s.char_indices().peekable();
    loop {
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        let Some(&(start, _)) = it.peek() else {
            return out;
        };
        let mut key_end = s.len();
        while let Some(&(i, c)) = it.peek() {
            if c == '=' || c.is_whitespace() {
                key_end = i;
                break;
            }
            it.next();
        }
        let key = &s[start..key_end];
        out.push_str(key);
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        if it.next().map(|(_, c)| c) != Some('=') {
            return unreadable();
        }
        out.push('=');
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        let mut value = String::new();
        if it.peek().map(|(_, c)| *c) == Some('\'') {
            it.next();
            loop {
                match it.next() {
                    Some((_, '\\')) => match it.next() {
                        Some((_, c)) => {
                            value.push('\\');
                            value.push(c);
                        }
                        None => return unreadable(),
                    },
                    Some((_, '\'')) => break,
                    Some((_, c)) => value.push(c),
                    None => return unreadable(),
                }
            }
            value = format!("'{value}'");
        } else {
            while let Some((_, c)) = it.peek().copied().filter(|(_, c)| !c.is_whitespace()) {
                value.push(c);
                it.next();
            }
        }
        if is_password_key(key) {
            out.push_str(HIDDEN);
        } else {
            out.push_str(&value);
        }
    }
}

/// `%XX` escapes decoded (invalid ones kept as they are).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `$XDG_DATA_HOME/iomark/results.db`, else `$HOME/.local/share/iomark/results.db`.
///
/// As the XDG Base Directory specification says, a relative
/// `XDG_DATA_HOME` is ignored (it would put the database under whatever
/// directory iomark was started from). A relative `HOME` has no fallback
/// and is refused ([`StoreError::RelativeHome`]).
pub fn default_sqlite_path() -> Result<PathBuf, StoreError> {
    data_home(
        std::env::var_os("XDG_DATA_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
    .map(|d| d.join("iomark").join("results.db"))
}

/// The XDG data directory from the values of `XDG_DATA_HOME` and `HOME`.
fn data_home(xdg: Option<&OsStr>, home: Option<&OsStr>) -> Result<PathBuf, StoreError> {
    let set = |v: Option<&OsStr>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = set(xdg).filter(|d| d.is_absolute()) {
        return Ok(d);
    }
    let home = set(home).ok_or(StoreError::NoDataDir)?;
    if !home.is_absolute() {
        return Err(StoreError::RelativeHome {
            home: home.display().to_string(),
        });
    }
    Ok(home.join(".local/share"))
}

#[cfg(test)]
mod tests;
