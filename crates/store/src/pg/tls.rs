//! TLS for PostgreSQL as libpq does it: the URL's `sslmode` and
//! `sslrootcert` read, the certificate checked as the mode asks (rustls on
//! the ring provider, no system OpenSSL), and a failed check explained.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::errors::pg_reason;
use crate::db_arg::percent_decode;

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
pub(super) struct Tls {
    mode: Mode,
    root_cert: Option<PathBuf>,
}

impl Tls {
    /// Take `sslmode` and `sslrootcert` out of `url` (the driver refuses
    /// both verify modes and the file), returning the URL for the driver.
    pub(super) fn from_url(url: &str) -> Result<(String, Tls), String> {
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

    pub(super) fn driver_mode(&self) -> SslMode {
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

    pub(super) fn connector(&self) -> Result<MakeRustlsConnect, String> {
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
    pub(super) fn explain(&self, e: &postgres::Error) -> String {
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
