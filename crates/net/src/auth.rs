//! iperf3's authentication. The client ([`Credentials`]: `--username`,
//! `--rsa-public-key-path`) puts an `authtoken` in the parameters: the text
//! `user: NAME\npwd:  PASSWORD\nts:   UNIX_SECONDS` encrypted with the
//! server's RSA public key and base64-encoded on one line. The padding is
//! OAEP with SHA-1, OpenSSL's default, which iperf3 3.17+ uses unless told
//! `--use-pkcs1-padding`; iperf3 before 3.17 (Debian 12's 3.12) knows only
//! PKCS#1 v1.5 padding, which `--use-pkcs1-padding` selects here too. The
//! server ([`Authorizer`]: `--rsa-private-key-path`,
//! `--authorized-users-path`) decrypts it with its private key, checks the
//! time against its clock (`--time-skew-threshold`, 10 s by default) and
//! the password's SHA-256 in its authorized-users file, and answers a
//! mismatch with SERVER_ERROR 142.

use base64::Engine as _;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::{Oaep, Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};

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

/// The server's part (`--rsa-private-key-path`, `--authorized-users-path`):
/// each test's `authtoken` decrypted with the private key, its time held to
/// the skew threshold, and the name and password's hash looked up in the
/// users file, read again for each test as iperf3 does (a user added to
/// the file needs no restart).
///
/// The private-key operation is the rsa crate's, blinded with a fresh
/// random factor per test; the crate's arithmetic is not constant-time
/// (RUSTSEC-2023-0071, the Marvin attack), so, as with iperf3, the login
/// keeps casual users off a server, not an attacker who can time many
/// thousands of attempts on the network path.
pub struct Authorizer {
    private_key: RsaPrivateKey,
    users_path: std::path::PathBuf,
    pkcs1_padding: bool,
    skew_secs: i64,
}

impl std::fmt::Debug for Authorizer {
    // The key never goes to a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("users_path", &self.users_path)
            .field("pkcs1_padding", &self.pkcs1_padding)
            .field("skew_secs", &self.skew_secs)
            .finish_non_exhaustive()
    }
}

/// Why a test's credentials were refused, for the server's log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthRefusal {
    /// No `authtoken` in the parameters.
    #[error("the client sent no credentials (iperf3 -c needs --username and --rsa-public-key-path, and the password in IPERF3_PASSWORD)")]
    Missing,
    /// The token does not decrypt with this key and padding.
    #[error("the credentials do not decrypt with this server's private key and {0} padding (a client before iperf3 3.17 pads with PKCS#1 v1.5: start the server with --use-pkcs1-padding, and the client too if it is newer)")]
    Undecryptable(&'static str),
    /// The decrypted text is not `user:`, `pwd:`, `ts:`.
    #[error("the decrypted credentials are not iperf3's user, pwd and ts lines")]
    Malformed,
    /// The token's time is too far from this host's clock.
    #[error("user '{user}': the credentials are {skew} s from this server's clock, more than --time-skew-threshold {threshold} s (replayed, or a clock out of step: check NTP on both hosts)")]
    Skew {
        /// The name in the token.
        user: String,
        /// Seconds between the token's time and now.
        skew: i64,
        /// The threshold.
        threshold: i64,
    },
    /// No line of the users file has this name and password.
    #[error("user '{user}' with this password is not in the authorized-users file {file}")]
    Unknown {
        /// The name in the token.
        user: String,
        /// The users file.
        file: String,
    },
    /// The users file could not be read for this test.
    #[error("cannot read the authorized-users file {file}: {error}")]
    UsersFile {
        /// The users file.
        file: String,
        /// The OS error.
        error: String,
    },
}

impl Authorizer {
    /// Read the private key (PEM: `BEGIN PRIVATE KEY` or
    /// `BEGIN RSA PRIVATE KEY`, without a passphrase) and check that the
    /// users file reads. `skew_secs` is iperf3's `--time-skew-threshold`.
    pub fn new(
        private_pem: &str,
        users_path: std::path::PathBuf,
        pkcs1_padding: bool,
        skew_secs: u32,
    ) -> Result<Authorizer, String> {
        if private_pem.contains("ENCRYPTED") {
            return Err("the key is protected by a passphrase: write an unprotected copy for the server with `openssl rsa -in KEY -out KEY.plain` (as iperf3's manual says) and keep it readable by the server only".into());
        }
        let private_key = RsaPrivateKey::from_pkcs8_pem(private_pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(private_pem))
            .map_err(|e| format!("not an RSA private key in PEM: {e}"))?;
        let a = Authorizer {
            private_key,
            users_path,
            pkcs1_padding,
            skew_secs: skew_secs.into(),
        };
        a.users().map_err(|r| r.to_string())?;
        Ok(a)
    }

    fn users(&self) -> Result<String, AuthRefusal> {
        std::fs::read_to_string(&self.users_path).map_err(|e| AuthRefusal::UsersFile {
            file: self.users_path.display().to_string(),
            error: e.to_string(),
        })
    }

    /// The user a test's `authtoken` names, when it is theirs, fresh, and
    /// in the users file at `now_unix`.
    pub(crate) fn check(&self, token: Option<&str>, now_unix: i64) -> Result<String, AuthRefusal> {
        let token = token.ok_or(AuthRefusal::Missing)?;
        let padding = if self.pkcs1_padding {
            "PKCS#1 v1.5"
        } else {
            "OAEP"
        };
        let sealed = base64::engine::general_purpose::STANDARD
            .decode(token.trim())
            .map_err(|_| AuthRefusal::Undecryptable(padding))?;
        let rng = &mut rand_core::OsRng;
        let text = if self.pkcs1_padding {
            self.private_key
                .decrypt_blinded(rng, Pkcs1v15Encrypt, &sealed)
        } else {
            self.private_key
                .decrypt_blinded(rng, Oaep::new::<sha1::Sha1>(), &sealed)
        }
        .map_err(|_| AuthRefusal::Undecryptable(padding))?;
        let (user, password, ts) =
            parse_credentials(&String::from_utf8_lossy(&text)).ok_or(AuthRefusal::Malformed)?;
        let skew = (now_unix - ts).abs();
        if skew > self.skew_secs {
            return Err(AuthRefusal::Skew {
                user,
                skew,
                threshold: self.skew_secs,
            });
        }
        let hash = password_hash(&user, &password);
        let listed = self.users()?.lines().any(|line| {
            let line = line.trim();
            !line.starts_with('#')
                && line
                    .split_once(',')
                    .is_some_and(|(u, h)| u == user && h.trim().eq_ignore_ascii_case(&hash))
        });
        if listed {
            Ok(user)
        } else {
            Err(AuthRefusal::Unknown {
                user,
                file: self.users_path.display().to_string(),
            })
        }
    }
}

/// iperf3's hash of a user's password: SHA-256 of `{NAME}PASSWORD`, in hex.
pub fn password_hash(user: &str, password: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{{{user}}}{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `user: NAME\npwd:  PASSWORD\nts:   SECONDS` (iperf3 reads each with
/// `%s`, so neither name nor password holds a space).
fn parse_credentials(text: &str) -> Option<(String, String, i64)> {
    let mut lines = text.lines();
    let mut field = |key: &str| {
        lines
            .next()?
            .strip_prefix(key)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let user = field("user:")?;
    let password = field("pwd:")?;
    let ts = field("ts:")?.parse().ok()?;
    Some((user, password, ts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

    fn pair(users: &str, pkcs1: bool) -> (Authorizer, Credentials, tempfile::TempDir) {
        let key = RsaPrivateKey::new(&mut rand_core::OsRng, 1024).unwrap();
        let private = key.to_pkcs8_pem(LineEnding::LF).unwrap();
        let public = key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.csv");
        std::fs::write(&path, users).unwrap();
        let server = Authorizer::new(&private, path, pkcs1, 10).unwrap();
        let client = Credentials::new("mario".into(), "rossi".into(), &public, pkcs1).unwrap();
        (server, client, dir)
    }

    #[test]
    fn a_listed_user_with_a_fresh_token_passes_both_paddings() {
        let line = format!("# users\nmario,{}\n", password_hash("mario", "rossi"));
        for pkcs1 in [false, true] {
            let (server, client, _dir) = pair(&line, pkcs1);
            let token = client.token(1_000_000).unwrap();
            assert_eq!(server.check(Some(&token), 1_000_005), Ok("mario".into()));
            // A token from 11 s ago is stale (threshold 10 s).
            assert!(matches!(
                server.check(Some(&token), 1_000_011),
                Err(AuthRefusal::Skew { skew: 11, .. })
            ));
        }
    }

    #[test]
    fn a_wrong_password_missing_token_or_other_padding_is_refused() {
        let line = format!("mario,{}\n", password_hash("mario", "other"));
        let (server, client, _dir) = pair(&line, false);
        let token = client.token(5).unwrap();
        assert!(matches!(
            server.check(Some(&token), 5),
            Err(AuthRefusal::Unknown { .. })
        ));
        assert_eq!(server.check(None, 5), Err(AuthRefusal::Missing));
        let pkcs1 = Credentials {
            pkcs1_padding: true,
            ..client
        };
        assert_eq!(
            server.check(Some(&pkcs1.token(5).unwrap()), 5),
            Err(AuthRefusal::Undecryptable("OAEP"))
        );
        assert_eq!(
            server.check(Some("not base64!"), 5),
            Err(AuthRefusal::Undecryptable("OAEP"))
        );
    }

    #[test]
    fn the_hash_is_iperf3s() {
        // printf '%s' '{mario}rossi' | sha256sum
        assert_eq!(
            password_hash("mario", "rossi"),
            "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b"
        );
    }
}
