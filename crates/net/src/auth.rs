//! iperf3's authentication, the client's part (`--username`,
//! `--rsa-public-key-path`): the parameters carry an `authtoken`, the text
//! `user: NAME\npwd:  PASSWORD\nts:   UNIX_SECONDS` encrypted with the
//! server's RSA public key and base64-encoded on one line. The padding is
//! OAEP with SHA-1, OpenSSL's default, which iperf3 3.17+ uses unless told
//! `--use-pkcs1-padding`; iperf3 before 3.17 (Debian 12's 3.12) knows only
//! PKCS#1 v1.5 padding, which `--use-pkcs1-padding` selects here too. The server decrypts it with its private key, checks the
//! time against its clock (10 s by default) and the password's SHA-256 in
//! its authorized-users file, and answers a mismatch with SERVER_ERROR 142.

use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::{Oaep, Pkcs1v15Encrypt, RsaPublicKey};

use crate::NetError;

/// What a client authenticates with.
#[derive(Clone)]
pub struct Credentials {
    /// `--username`.
    pub username: String,
    /// From `IPERF3_PASSWORD`, as iperf3 reads it.
    pub password: String,
    /// The server's public key (`--rsa-public-key-path`).
    pub public_key: RsaPublicKey,
    /// PKCS#1 v1.5 padding instead of OAEP (`--use-pkcs1-padding`).
    pub pkcs1_padding: bool,
}

impl std::fmt::Debug for Credentials {
    // The password never goes to a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// Read the server's public key from PEM (`BEGIN PUBLIC KEY`, as
    /// `openssl rsa -pubout` writes it, or `BEGIN RSA PUBLIC KEY`).
    pub fn new(
        username: String,
        password: String,
        pem: &str,
        pkcs1_padding: bool,
    ) -> Result<Credentials, String> {
        let public_key = RsaPublicKey::from_public_key_pem(pem)
            .or_else(|_| RsaPublicKey::from_pkcs1_pem(pem))
            .map_err(|e| format!("not an RSA public key in PEM: {e}"))?;
        Ok(Credentials {
            username,
            password,
            public_key,
            pkcs1_padding,
        })
    }

    /// The `authtoken` for a test starting at `unix_secs`.
    pub(crate) fn token(&self, unix_secs: i64) -> Result<String, NetError> {
        let text = format!(
            "user: {}\npwd:  {}\nts:   {unix_secs}",
            self.username, self.password
        );
        let rng = &mut rand_core::OsRng;
        let sealed = if self.pkcs1_padding {
            self.public_key
                .encrypt(rng, Pkcs1v15Encrypt, text.as_bytes())
        } else {
            self.public_key
                .encrypt(rng, Oaep::new::<sha1::Sha1>(), text.as_bytes())
        };
        let sealed = sealed
            .map_err(|e| {
                NetError::Invalid(format!(
                    "--username/--rsa-public-key-path: cannot encrypt the credentials with this key: {e} (a longer key, or a shorter name and password)"
                ))
            })?;
        Ok(base64::engine::general_purpose::STANDARD.encode(sealed))
    }
}
