//! The shared store: the same tables in PostgreSQL, for a team or a fleet.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use iomark_model::{RunDocument, RunStatus};
use postgres::config::SslMode;
use postgres::Client;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::row::RunRow;
use crate::sqlite::{figure_from_parts, like_pattern, now_ms, warning_from_parts, RawSummary};
use crate::{percent_decode, redact, RunId, RunQuery, RunSummary, Store, StoreError, StoredRun};

/// The numbered migrations, in order; the same numbers as SQLite's.
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "runs",
    include_str!("../migrations/postgres/0001_runs.sql"),
)];

/// How long to wait for a server when the URL does not say
/// (`?connect_timeout=N`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An arbitrary constant naming iomark's migration lock, so two processes
/// migrating one fresh database take turns.
const MIGRATION_LOCK: i64 = 0x696f_6d61_726b;

/// Results in a PostgreSQL database.
pub struct PgStore {
    client: Client,
    url: String,
    /// The URL's passwords, kept out of every message.
    secrets: Vec<String>,
}

impl PgStore {
    /// Connect to `url` (`postgres://user:password@host:port/dbname`) and
    /// migrate the schema. Gives up after the URL's `connect_timeout` (10 s
    /// by default) however the server fails to answer. `sslmode` and
    /// `sslrootcert` in the URL work as in libpq (docs/store.md, TLS).
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let mut store = Self::connect_only(url)?;
        store.migrate()?;
        Ok(store)
    }

    /// Connect to `url` for reading only: no migration is attempted, the
    /// session refuses writes, and a database without iomark's schema is
    /// [`StoreError::NoSchema`].
    pub fn connect_read_only(url: &str) -> Result<PgStore, StoreError> {
        let mut store = Self::connect_only(url)?;
        let err = pg_err(&store.url, &store.secrets);
        store
            .client
            .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            .map_err(&err)?;
        let exists: bool = store
            .client
            .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
            .map_err(&err)?
            .get(0);
        if !exists {
            return Err(StoreError::NoSchema {
                location: store.url.clone(),
            });
        }
        let found = store.schema_version()?;
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        match found.cmp(&known) {
            std::cmp::Ordering::Greater => Err(StoreError::NewerSchema {
                location: store.url.clone(),
                found,
                known,
            }),
            std::cmp::Ordering::Less => Err(StoreError::OlderSchema {
                location: store.url.clone(),
                found,
                known,
            }),
            std::cmp::Ordering::Equal => Ok(store),
        }
    }

    fn connect_only(url: &str) -> Result<PgStore, StoreError> {
        let shown = redact(url);
        let secrets = secrets_of(url);
        let bad = |reason: String| StoreError::BadUrl {
            url: shown.clone(),
            reason: scrub(&reason, &secrets),
        };
        let (driver_url, tls) = Tls::from_url(url).map_err(bad)?;
        let mut config = postgres::Config::from_str(&driver_url).map_err(|e| bad(e.to_string()))?;
        config.ssl_mode(tls.driver_mode());
        let connector = tls.connector().map_err(|reason| StoreError::Postgres {
            url: shown.clone(),
            reason: scrub(&reason, &secrets),
        })?;
        let timeout = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        config.connect_timeout(timeout);
        // The driver's timeout covers the TCP connect only; a server that
        // accepts and then says nothing would hang the handshake, so the
        // whole connect runs on a thread we stop waiting for.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(config.connect(connector));
        });
        let client = match rx.recv_timeout(timeout + Duration::from_millis(500)) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                return Err(StoreError::Postgres {
                    url: shown,
                    reason: scrub(&tls.explain(&e), &secrets),
                })
            }
            Err(_) => {
                return Err(StoreError::Unreachable {
                    url: shown,
                    secs: timeout.as_secs().max(1),
                })
            }
        };
        Ok(PgStore {
            client,
            url: shown,
            secrets,
        })
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StoreError {
        pg_err(&self.url, &self.secrets)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let url = self.url.clone();
        let err = self.err();
        let mut tx = self.client.transaction().map_err(&err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(&err)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                 version BIGINT PRIMARY KEY,
                 name TEXT NOT NULL,
                 applied_at_ms BIGINT NOT NULL)",
        )
        .map_err(&err)?;
        let current: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .map_err(&err)?
            .get(0);
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if current > known {
            return Err(StoreError::NewerSchema {
                location: url,
                found: current,
                known,
            });
        }
        for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            tx.batch_execute(sql).map_err(&err)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)",
                &[version, name, &now_ms()],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)
    }

    fn write(&mut self, id: Option<RunId>, row: &RunRow) -> Result<RunId, StoreError> {
        let url = self.url.clone();
        let err = self.err();
        let mut tx = self.client.transaction().map_err(&err)?;
        let warning_count = row.warnings.len() as i64;
        let id = match id {
            Some(id) => {
                let n = tx
                    .execute(
                        "UPDATE runs SET kind=$2, tool=$3, tool_version=$4, command_line=$5,
                         started_at_ms=$6, finished_at_ms=$7, status=$8, labels=$9, note=$10,
                         target=$11, device=$12, warning_count=$13, schema_version=$14
                         WHERE id=$1",
                        &[
                            &id.0,
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
                            &warning_count,
                            &row.schema_version,
                        ],
                    )
                    .map_err(&err)?;
                if n == 0 {
                    return Err(StoreError::NotFound { id, location: url });
                }
                for table in ["run_documents", "run_labels", "figures", "warnings"] {
                    tx.execute(&format!("DELETE FROM {table} WHERE run_id = $1"), &[&id.0])
                        .map_err(&err)?;
                }
                id
            }
            None => RunId(
                tx.query_one(
                    "INSERT INTO runs (kind, tool, tool_version, command_line, started_at_ms,
                     finished_at_ms, status, labels, note, target, device, warning_count,
                     schema_version)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                     RETURNING id",
                    &[
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
                        &warning_count,
                        &row.schema_version,
                    ],
                )
                .map_err(&err)?
                .get(0),
            ),
        };
        tx.execute(
            "INSERT INTO run_documents (run_id, document) VALUES ($1, $2)",
            &[&id.0, &row.document],
        )
        .map_err(&err)?;
        let st = tx
            .prepare("INSERT INTO run_labels (run_id, label) VALUES ($1, $2)")
            .map_err(&err)?;
        for l in &row.labels {
            tx.execute(&st, &[&id.0, l]).map_err(&err)?;
        }
        let st = tx
            .prepare(
                "INSERT INTO figures (run_id, ord, test, metric, unit, value, spread_lo, spread_hi)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .map_err(&err)?;
        for (i, f) in row.figures.iter().enumerate() {
            tx.execute(
                &st,
                &[
                    &id.0,
                    &(i as i64),
                    &f.test,
                    &f.metric,
                    &f.unit.as_str(),
                    &f.value,
                    &f.spread.map(|s| s.0),
                    &f.spread.map(|s| s.1),
                ],
            )
            .map_err(&err)?;
        }
        let st = tx
            .prepare(
                "INSERT INTO warnings (run_id, ord, scope, kind, message) VALUES ($1, $2, $3, $4, $5)",
            )
            .map_err(&err)?;
        for (i, (scope, kind, msg)) in row.warnings.iter().enumerate() {
            tx.execute(&st, &[&id.0, &(i as i64), scope, kind, msg])
                .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        Ok(id)
    }
}

fn pg_err(url: &str, secrets: &[String]) -> impl Fn(postgres::Error) -> StoreError {
    let url = url.to_string();
    let secrets = secrets.to_vec();
    move |e| StoreError::Postgres {
        url: url.clone(),
        reason: scrub(&pg_reason(&e), &secrets),
    }
}

/// The server's own message when there is one, else the driver's.
fn pg_reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
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
fn secrets_of(url: &str) -> Vec<String> {
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
fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "***"))
}

/// libpq's `sslmode`, which tokio-postgres only knows in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// How to secure the connection, from the URL's `sslmode` and
/// `sslrootcert`, with libpq's meaning: `prefer` (the default) and
/// `require` encrypt without checking the certificate (`require` refuses a
/// server without TLS), `verify-ca` checks it against the CA in
/// `sslrootcert`, `verify-full` also that it names the host. As in libpq,
/// `require` with an `sslrootcert` checks the CA, and `verify-*` without
/// one reads `~/.postgresql/root.crt`.
#[derive(Debug, Clone)]
pub(crate) struct Tls {
    mode: Mode,
    root_cert: Option<PathBuf>,
}

impl Tls {
    /// Take `sslmode` and `sslrootcert` out of `url` (the driver refuses
    /// both verify modes and the file), returning the URL for the driver.
    fn from_url(url: &str) -> Result<(String, Tls), String> {
        let mut tls = Tls {
            mode: Mode::Prefer,
            root_cert: None,
        };
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_string(), tls));
        };
        let mut kept = Vec::new();
        for param in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = param.split_once('=').unwrap_or((param, ""));
            match percent_decode(k).as_str() {
                "sslmode" => {
                    tls.mode = match percent_decode(v).as_str() {
                        "disable" => Mode::Disable,
                        "prefer" => Mode::Prefer,
                        "require" => Mode::Require,
                        "verify-ca" => Mode::VerifyCa,
                        "verify-full" => Mode::VerifyFull,
                        other => {
                            return Err(format!(
                                "sslmode={other} is not known: use disable, prefer, require, verify-ca or verify-full"
                            ))
                        }
                    }
                }
                "sslrootcert" if percent_decode(v) == "system" => {
                    return Err("sslrootcert=system is not supported: give the CA certificate's PEM file, sslrootcert=FILE".into())
                }
                "sslrootcert" => tls.root_cert = Some(PathBuf::from(percent_decode(v))),
                "sslcert" | "sslkey" => {
                    return Err("client certificates (sslcert, sslkey) are not supported: authenticate with a password or trust".into())
                }
                _ => kept.push(param),
            }
        }
        let url = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((url, tls))
    }

    fn driver_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The CA file to check the server against, if the mode checks one.
    fn ca_file(&self) -> Option<PathBuf> {
        match (self.mode, &self.root_cert) {
            (Mode::Disable | Mode::Prefer, _) | (Mode::Require, None) => None,
            (_, Some(f)) => Some(f.clone()),
            (Mode::VerifyCa | Mode::VerifyFull, None) => Some(
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default()
                    .join(".postgresql/root.crt"),
            ),
        }
    }

    fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let checker = match self.ca_file() {
            None => None,
            Some(file) => {
                let roots = load_roots(&file)?;
                let v =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| format!("cannot use the CA in {}: {e}", file.display()))?;
                Some(v)
            }
        };
        let verifier = Verifier {
            checker,
            check_name: self.mode == Mode::VerifyFull,
            provider: provider.clone(),
        };
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS cannot be set up: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }

    /// The reason a connection failed, with what to do about a TLS failure.
    fn explain(&self, e: &postgres::Error) -> String {
        let reason = pg_reason(e);
        let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(cause) = src {
            // An io::Error's source() skips the error it wraps: look inside.
            let inner = cause
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .map_or(cause, |i| i as &(dyn std::error::Error + 'static));
            if let Some(rustls::Error::InvalidCertificate(c)) = inner.downcast_ref() {
                let ca = self
                    .ca_file()
                    .map_or_else(|| "sslrootcert".into(), |f| f.display().to_string());
                let what = match c {
                    CertificateError::UnknownIssuer | CertificateError::BadSignature => format!(
                        "the server's certificate is not signed by the CA in {ca}: point sslrootcert at the CA that signed it"
                    ),
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. } => "the server's certificate does not name the host in the URL: connect by a host name the certificate lists, or use sslmode=verify-ca to check the CA only".to_string(),
                    CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                        "the server's certificate has expired: renew it on the server".to_string()
                    }
                    _ => "the server's certificate was refused: check sslrootcert and the server's certificate".to_string(),
                };
                return format!("TLS certificate check failed ({reason}): {what}");
            }
            src = cause.source();
        }
        if reason.contains("server does not support TLS") {
            return format!(
                "{reason}: the server may have ssl=off; turn SSL on in the server, or use sslmode=prefer or sslmode=disable"
            );
        }
        reason
    }
}

/// The certificates in a PEM file.
fn load_roots(file: &Path) -> Result<rustls::RootCertStore, String> {
    let hint =
        "sslrootcert must name a PEM file holding the CA certificate that signed the server's";
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read sslrootcert {}: {e}; {hint}", file.display()))?;
    let mut roots = rustls::RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(format!(
            "no usable certificate in sslrootcert {}; {hint}",
            file.display()
        ));
    }
    Ok(roots)
}

/// Checks the server's certificate as the sslmode asks: not at all
/// (`prefer`, `require`: encryption only, as libpq), against the CA
/// (`verify-ca`), against the CA and the host name (`verify-full`). The
/// handshake's signatures are always checked.
#[derive(Debug)]
struct Verifier {
    checker: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(checker) = &self.checker else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the chain before the name, so a name error means
        // the chain is good: all verify-ca asks for.
        match checker.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn summary(row: &postgres::Row) -> RawSummary {
    RawSummary {
        id: row.get(0),
        kind: row.get(1),
        tool: row.get(2),
        tool_version: row.get(3),
        command_line: row.get(4),
        started_at_ms: row.get(5),
        finished_at_ms: row.get(6),
        status: row.get(7),
        labels: row.get(8),
        note: row.get(9),
        target: row.get(10),
        device: row.get(11),
        warning_count: row.get(12),
    }
}

const SUMMARY_COLUMNS: &str = "id, kind, tool, tool_version, command_line, started_at_ms,
    finished_at_ms, status, labels, note, target, device, warning_count";

impl Store for PgStore {
    fn location(&self) -> String {
        self.url.clone()
    }

    fn begin_run(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        self.write(None, &row)
    }

    fn update_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        self.write(Some(id), &row).map(drop)
    }

    fn finish_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        self.write(Some(id), &row).map(drop)
    }

    fn insert_complete(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        self.write(None, &row)
    }

    fn list(&mut self, q: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE TRUE");
        let mut args: Vec<Box<dyn postgres::types::ToSql + Sync>> = Vec::new();
        for l in &q.labels {
            args.push(Box::new(l.clone()));
            sql += &format!(
                " AND id IN (SELECT run_id FROM run_labels WHERE label = ${})",
                args.len()
            );
        }
        if let Some(d) = &q.device {
            args.push(Box::new(like_pattern(d)));
            let n = args.len();
            sql += &format!(" AND (device ILIKE ${n} OR target ILIKE ${n})");
        }
        if let Some(s) = q.since_ms {
            args.push(Box::new(i64::try_from(s).unwrap_or(i64::MAX)));
            sql += &format!(" AND started_at_ms >= ${}", args.len());
        }
        sql += " ORDER BY id DESC";
        if let Some(n) = q.limit {
            sql += &format!(" LIMIT {n}");
        }
        let url = self.url.clone();
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            args.iter().map(|a| a.as_ref()).collect();
        let rows = self.client.query(&sql, &refs).map_err(self.err())?;
        let mut out = rows
            .iter()
            .map(|r| summary(r).check(&url))
            .collect::<Result<Vec<_>, _>>()?;
        out.reverse();
        Ok(out)
    }

    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError> {
        let url = self.url.clone();
        let err = self.err();
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(&err)?;
        let row = tx
            .query_opt(
                &format!(
                    "SELECT {SUMMARY_COLUMNS}, document FROM runs
                     JOIN run_documents ON run_documents.run_id = runs.id WHERE id = $1"
                ),
                &[&id.0],
            )
            .map_err(&err)?;
        let Some(row) = row else {
            return Err(StoreError::NotFound { id, location: url });
        };
        let summary = summary(&row).check(&url)?;
        let document_json: String = row.get(13);
        let figures = tx
            .query(
                "SELECT test, metric, unit, value, spread_lo, spread_hi FROM figures
                 WHERE run_id = $1 ORDER BY ord",
                &[&id.0],
            )
            .map_err(&err)?
            .iter()
            .map(|r| {
                figure_from_parts(
                    &url,
                    r.get(0),
                    r.get(1),
                    r.get(2),
                    r.get(3),
                    r.get(4),
                    r.get(5),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let warnings = tx
            .query(
                "SELECT scope, kind, message FROM warnings WHERE run_id = $1 ORDER BY ord",
                &[&id.0],
            )
            .map_err(&err)?
            .iter()
            .map(|r| warning_from_parts(r.get(0), r.get::<_, &str>(1), r.get(2)))
            .collect();
        tx.commit().map_err(&err)?;
        Ok(StoredRun {
            summary,
            figures,
            warnings,
            document_json,
        })
    }

    fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        let n = self
            .client
            .execute("DELETE FROM runs WHERE id = $1", &[&id.0])
            .map_err(self.err())?;
        if n == 0 {
            return Err(StoreError::NotFound {
                id,
                location: self.url.clone(),
            });
        }
        Ok(())
    }

    fn schema_version(&mut self) -> Result<i64, StoreError> {
        let row = self
            .client
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .map_err(self.err())?;
        Ok(row.get(0))
    }
}
