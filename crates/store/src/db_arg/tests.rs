//! `--db` names: which backend they pick, which are refused, and that no
//! password reaches a message.

use super::*;
use crate::{open, open_read_only, RunId};

#[test]
fn urls_pick_the_backend() {
    assert!(is_postgres_url("postgres://u@h/db"));
    assert!(is_postgres_url("postgresql://h/db"));
    assert!(!is_postgres_url("/tmp/x.db"));
}

const SECRET: &str = "s3cr3t-pw";

/// The forms a password can take in `--db`.
fn secret_dbs() -> Vec<String> {
    vec![
        format!("postgres://me:{SECRET}@db:5432/iomark"),
        format!("postgresql://me:{SECRET}@db/iomark?sslmode=require"),
        format!("postgres://me@db/iomark?password={SECRET}"),
        format!("postgres://me@db/iomark?sslmode=require&password={SECRET}&connect_timeout=3"),
        format!("postgres://me@db/iomark?pass%77ord={SECRET}"),
        format!("postgres://me:{SECRET}@db/iomark?sslpassword={SECRET}"),
        format!("postgres://me:a?b{SECRET}@db/iomark"),
        format!("host=db dbname=iomark password={SECRET}"),
        format!("host=db password = '{SECRET} x\\'y' user=me"),
        format!("host=db password='{SECRET}"),
        format!("postgres:/me:{SECRET}@db/iomark"),
    ]
}

#[test]
fn passwords_never_reach_messages() {
    assert_eq!(
        redact("postgres://me:secret@db:5432/iomark"),
        "postgres://me:***@db:5432/iomark"
    );
    assert_eq!(redact("postgres://me@db/iomark"), "postgres://me@db/iomark");
    assert_eq!(redact("postgres://db/iomark"), "postgres://db/iomark");
    assert_eq!(
        redact("postgres://me@db/x?sslmode=require&password=pw&connect_timeout=3"),
        "postgres://me@db/x?sslmode=require&password=***&connect_timeout=3"
    );
    assert_eq!(
        redact("host=db  password='a b' user=me"),
        "host=db  password=*** user=me"
    );
    assert_eq!(redact("/var/lib/results.db"), "/var/lib/results.db");
    for db in secret_dbs() {
        let shown = redact(&db);
        assert!(!shown.contains(SECRET), "{db} shown as {shown}");
        assert!(
            shown.contains("***") || shown.contains("not shown"),
            "{shown}"
        );
    }
}

#[test]
fn no_store_error_shows_a_password() {
    for db in secret_dbs() {
        let url = redact(&db);
        let errors = [
            target(Some(&db)).err(),
            Some(StoreError::Postgres {
                url: url.clone(),
                reason: "x".into(),
            }),
            Some(StoreError::Unreachable {
                url: url.clone(),
                secs: 1,
            }),
            Some(StoreError::BadUrl {
                url: url.clone(),
                reason: "x".into(),
            }),
            Some(StoreError::NotFound {
                id: RunId(1),
                location: url.clone(),
            }),
            Some(StoreError::ReadOnly {
                location: url.clone(),
                why: "x".into(),
            }),
            Some(StoreError::NoSchema {
                location: url.clone(),
            }),
            Some(StoreError::NewerSchema {
                location: url.clone(),
                found: 2,
                known: 1,
            }),
            Some(StoreError::Corrupt {
                location: url.clone(),
                reason: "x".into(),
            }),
        ];
        for e in errors.into_iter().flatten() {
            let msg = e.to_string();
            assert!(!msg.contains(SECRET), "{db}: {msg}");
            assert!(!format!("{e:?}").contains(SECRET), "{db}: {e:?}");
        }
    }
    // What the real openers say, without any server to answer.
    for db in secret_dbs() {
        let db = db.replace("@db", "@127.0.0.1:1");
        if let Err(e) = open(Some(&format!("{db}&connect_timeout=1"))) {
            assert!(!e.to_string().contains(SECRET), "{db}: {e}");
        }
        if let Err(e) = open_read_only(Some(&db)) {
            assert!(!e.to_string().contains(SECRET), "{db}: {e}");
        }
    }
}

#[test]
fn names_that_keep_nothing_are_refused_with_the_fix() {
    for (db, says) in [
        ("", "it is empty"),
        ("sqlite://", "names no file"),
        (":memory:", "--no-store"),
        ("sqlite://:memory:", "in-memory"),
        ("file::memory:", "give the file's path"),
        ("sqlite::memory:", "sqlite://PATH"),
        ("mysql://db/x", "only postgres://"),
        ("postgres:/me:s3cr3t-pw@db/x", "two slashes"),
        (
            "host=db dbname=iomark",
            "postgres://user@host:port/dbname?sslmode",
        ),
        ("dbname = iomark", "key=value"),
    ] {
        let e = open(Some(db))
            .err()
            .unwrap_or_else(|| panic!("{db} accepted"));
        let msg = e.to_string();
        assert!(matches!(e, StoreError::BadUrl { .. }), "{db}: {msg}");
        assert!(msg.contains(says), "{db}: {msg}");
        assert!(!msg.contains('\n'), "{db}: {msg}");
        assert!(open_read_only(Some(db)).is_err(), "{db}");
    }
    assert_eq!(
        target(Some("sqlite:///tmp/r.db")).unwrap(),
        Target::Sqlite("/tmp/r.db".into())
    );
    assert_eq!(
        target(Some("./host=x.db")).unwrap(),
        Target::Sqlite("./host=x.db".into())
    );
    assert_eq!(
        target(Some("results=old.db")).unwrap(),
        Target::Sqlite("results=old.db".into())
    );
}

#[test]
fn iomark_db_names_the_database_when_db_is_not_given() {
    let env = |v: &str| Some(OsStr::new(v).to_os_string());
    // --db wins over the variable.
    assert_eq!(
        target_or_env(Some("/a.db"), env("/b.db").as_deref()).unwrap(),
        Target::Sqlite("/a.db".into())
    );
    assert_eq!(
        target_or_env(None, env("/b.db").as_deref()).unwrap(),
        Target::Sqlite("/b.db".into())
    );
    assert_eq!(
        target_or_env(None, env("postgres://me@db/iomark").as_deref()).unwrap(),
        Target::Postgres("postgres://me@db/iomark".into())
    );
    // Empty (an unfilled CI variable) is refused rather than falling back
    // to the home directory, naming the variable and the fix.
    for empty in ["", "  "] {
        let msg = target_or_env(None, env(empty).as_deref())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("IOMARK_DB is set but empty"), "{msg}");
        assert!(msg.contains("unset it"), "{msg}");
    }
    // A bad value is refused as --db would be, saying where it came from,
    // its password hidden.
    let msg = target_or_env(None, env(":memory:").as_deref())
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("the environment variable IOMARK_DB"),
        "{msg}"
    );
    assert!(msg.contains("in-memory"), "{msg}");
    let msg = target_or_env(None, env(&format!("host=db password={SECRET}")).as_deref())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("IOMARK_DB") && !msg.contains(SECRET), "{msg}");
}

#[test]
fn iomark_db_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let bad = OsStr::from_bytes(b"/tmp/\xff.db");
    let msg = target_or_env(None, Some(bad)).unwrap_err().to_string();
    assert!(msg.contains("IOMARK_DB is not UTF-8"), "{msg}");
}

#[test]
fn the_data_home_follows_the_xdg_specification() {
    let os = |s: &'static str| Some(OsStr::new(s));
    assert_eq!(
        data_home(os("/x/data"), os("/home/me")).unwrap(),
        PathBuf::from("/x/data")
    );
    // Unset, empty or relative XDG_DATA_HOME: $HOME/.local/share.
    for xdg in [None, os(""), os("data"), os("./data"), os("~/data")] {
        assert_eq!(
            data_home(xdg, os("/home/me")).unwrap(),
            PathBuf::from("/home/me/.local/share"),
            "{xdg:?}"
        );
    }
    // A relative HOME is refused, not used under the current directory.
    for home in ["home", ".", "~"] {
        let err = data_home(os("rel"), os(home)).unwrap_err();
        assert!(matches!(err, StoreError::RelativeHome { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("relative path") && msg.contains("--db PATH"),
            "{msg}"
        );
    }
    assert!(matches!(
        data_home(os("rel"), None).unwrap_err(),
        StoreError::NoDataDir
    ));
    assert!(matches!(
        data_home(None, os("")).unwrap_err(),
        StoreError::NoDataDir
    ));
}
