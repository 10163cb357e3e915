//! iperf3's authentication, both parts: iomark's client with
//! `--username`, `--rsa-public-key-path` and `IPERF3_PASSWORD` runs a test
//! on iperf3 3.12 and 3.21 servers that require it, and a wrong password
//! is refused (the server's code 142, when its close leaves it readable);
//! iomark's server with `--rsa-private-key-path` and
//! `--authorized-users-path` lets iperf3 3.12, 3.21 and iomark clients with
//! the password in, and refuses a wrong one and a missing one (a stale
//! one: the unit tests of `iomark_net::auth`).

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

/// A key pair and a users file with `mario` / `rossi` in `dir`: the
/// private key, the public key and the users file's paths.
fn keys(dir: &std::path::Path) -> (String, String, String) {
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    let (key, public, users) = (path("private.pem"), path("public.pem"), path("users.csv"));
    for args in [
        vec!["genrsa", "-traditional", "-out", &key, "2048"],
        vec!["rsa", "-in", &key, "-pubout", "-out", &public],
    ] {
        let out = Command::new("openssl").args(&args).output().unwrap();
        assert_ok(&out, "openssl");
    }
    // iperf3's users file: NAME,sha256("{NAME}PASSWORD") in hex.
    let digest = Command::new("sh")
        .args([
            "-c",
            "printf '%s' '{mario}rossi' | sha256sum | cut -d' ' -f1",
        ])
        .output()
        .unwrap();
    std::fs::write(&users, format!("mario,{}", stdout(&digest).trim())).unwrap();
    (key, public, users)
}

fn require_openssl() -> Result<(), String> {
    if Command::new("openssl").arg("version").output().is_ok() {
        Ok(())
    } else {
        Err("needs openssl (Debian package openssl; scripts/test installs it)".into())
    }
}

#[test]
fn iomark_client_authenticates_to_iperf3_servers() {
    require!(have("iperf3"));
    require!(require_openssl());
    let ip321 = iperf3_21();
    let dir = tempfile::tempdir().unwrap();
    let (key, public, users) = keys(dir.path());
    // 3.12 decrypts PKCS#1 v1.5 padding only; 3.21 OAEP by default.
    let mut peers = vec![("iperf3 3.12", "iperf3", Some("--use-pkcs1-padding"))];
    peers.extend(ip321.as_deref().map(|bin| ("iperf 3.21", bin, None)));
    for (peer, bin, padding) in peers {
        for (password, works) in [("rossi", true), ("wrong", false)] {
            let port = free_port();
            let server = peer_server(
                bin,
                port,
                &[
                    "--rsa-private-key-path",
                    &key,
                    "--authorized-users-path",
                    &users,
                ],
            );
            let mut cmd = Command::new(IOMARK);
            cmd.args([
                "net",
                "-c",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-n",
                "1M",
            ])
            .args([
                "--username",
                "mario",
                "--rsa-public-key-path",
                &public,
                "--no-store",
            ])
            .args(padding)
            .env("IPERF3_PASSWORD", password);
            let out = Proc::spawn(&mut cmd).finish(Duration::from_secs(30));
            if works {
                assert!(ok(&out).contains("receiver"), "{peer}");
                assert_ok(&server.finish(Duration::from_secs(20)), peer);
            } else {
                // The server says why; the client shows the code when it
                // reads it before the server's close resets the
                // connection (iperf3's close race, esnet/iperf#499).
                assert_eq!(out.status.code(), Some(2), "{peer}: {}", stderr(&out));
                let err = stderr(&out);
                assert!(
                    err.contains("test authorization failed") || err.contains("closed"),
                    "{peer}: {err}"
                );
                // A refused client is no test: a 3.12 -1 server waits for
                // the next; dropping it ends it.
                drop(server);
            }
        }
    }
    // Without the password the client says where it goes.
    let out = iomark(&[
        "net",
        "-c",
        "127.0.0.1",
        "--username",
        "mario",
        "--rsa-public-key-path",
        &public,
    ]);
    fails_with(&out, "set the password in IPERF3_PASSWORD");
}

#[test]
fn iomark_server_asks_iperf3_and_iomark_clients_for_credentials() {
    require!(have("iperf3"));
    require!(require_openssl());
    let dir = tempfile::tempdir().unwrap();
    let (key, public, users) = keys(dir.path());
    let server_auth = [
        "--rsa-private-key-path",
        &key,
        "--authorized-users-path",
        &users,
    ];
    let login = ["--username", "mario", "--rsa-public-key-path", &public];
    // iperf3 3.12 pads with PKCS#1 v1.5 only: its server is told so, and
    // the iomark client pads the same way to talk to it.
    let mut clients: Vec<(&str, String, bool)> = vec![
        ("iperf3 3.12", "iperf3".into(), true),
        ("iomark", IOMARK.into(), false),
        ("iomark", IOMARK.into(), true),
    ];
    clients.extend(iperf3_21().map(|bin| ("iperf 3.21", bin, false)));
    for (who, bin, pkcs1) in clients {
        let padding = pkcs1.then_some("--use-pkcs1-padding");
        let port = free_port();
        let mut extra: Vec<&str> = server_auth.to_vec();
        extra.extend(padding);
        let mut server = iomark_server(port, &extra);
        let run = |password: Option<&str>, with_login: bool| {
            let mut cmd = Command::new(&bin);
            if bin == IOMARK {
                cmd.args(["net", "-c", "127.0.0.1", "--no-store"]);
                // iomark's client pads for the server it is told of.
                cmd.args(padding.filter(|_| with_login));
            } else {
                cmd.args(["-c", "127.0.0.1"]);
            }
            cmd.args(["-p", &port.to_string(), "-n", "1M"]);
            if with_login {
                cmd.args(login);
            }
            match password {
                Some(p) => cmd.env("IPERF3_PASSWORD", p),
                None => cmd.env_remove("IPERF3_PASSWORD"),
            };
            Proc::spawn(&mut cmd).finish(Duration::from_secs(30))
        };
        let out = run(Some("rossi"), true);
        assert!(ok(&out).contains("receiver"), "{who}: {}", stderr(&out));
        for (case, password, with_login, why) in [
            (
                "wrong password",
                Some("wrong"),
                true,
                "with this password is not in",
            ),
            (
                "no credentials",
                None,
                false,
                "the client sent no credentials",
            ),
        ] {
            let out = run(password, with_login);
            assert!(!out.status.success(), "{who}, {case}: it ran");
            let said = format!("{}{}", stdout(&out), stderr(&out));
            assert!(
                said.contains("test authorization failed") || said.contains("142"),
                "{who}, {case}: {said}"
            );
            server.wait_stderr(why, Duration::from_secs(10));
        }
    }
    // The flags go together, and a key that is not one is named.
    let out = iomark(&["net", "server", "--rsa-private-key-path", &key]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = iomark(&[
        "net",
        "server",
        "--no-store",
        "--rsa-private-key-path",
        &users,
        "--authorized-users-path",
        &users,
    ]);
    fails_with(&out, "not an RSA private key in PEM");
}
