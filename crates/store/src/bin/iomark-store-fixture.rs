//! Fills a results database with realistic runs, for `bench/store` and the
//! store's process tests. Not installed for users; run it with
//! `cargo run -p iomark-store --bin iomark-store-fixture -- ...`.
//!
//! ```text
//! iomark-store-fixture fill DB COUNT [FIRST_SEED]   store COUNT finished runs
//! iomark-store-fixture hold DB JOBS                 start a run, store JOBS
//!                                                   finished jobs, then wait
//!                                                   forever (to be killed)
//! ```

use std::io::Write;
use std::process::ExitCode;

#[path = "../synthetic.rs"]
mod synthetic;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("iomark-store-fixture: {e}");
            ExitCode::from(2)
        }
    }
}

fn number(s: Option<&String>, what: &str) -> Result<u64, String> {
    s.ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("{what} must be a number"))
}

fn run(args: &[String]) -> Result<(), String> {
    let usage = "usage: iomark-store-fixture fill DB COUNT [FIRST_SEED] | hold DB JOBS";
    let (cmd, db) = match args {
        [cmd, db, ..] => (cmd.as_str(), db.as_str()),
        _ => return Err(usage.into()),
    };
    let mut store = iomark_store::open(Some(db)).map_err(|e| e.to_string())?;
    match cmd {
        "fill" => {
            let count = number(args.get(2), "COUNT")?;
            let first = args
                .get(3)
                .map_or(Ok(0), |_| number(args.get(3), "FIRST_SEED"))?;
            for seed in first..first + count {
                store
                    .insert_complete(&synthetic::full_run(seed))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        "hold" => {
            let jobs = number(args.get(2), "JOBS")? as usize;
            let mut doc = synthetic::run(1, 0);
            let id = store.begin_run(&doc).map_err(|e| e.to_string())?;
            let mut out = std::io::stdout();
            writeln!(out, "run {id}").map_err(|e| e.to_string())?;
            for t in 0..jobs {
                if let iomark_model::RunBody::Disk(d) = &mut doc.body {
                    d.jobs.push(synthetic::job(t, 420e6, 1));
                }
                store.update_run(id, &doc).map_err(|e| e.to_string())?;
                writeln!(out, "stored job {}", t + 1).map_err(|e| e.to_string())?;
                out.flush().map_err(|e| e.to_string())?;
            }
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        _ => Err(usage.into()),
    }
}
