//! The parent's side of the child protocol, against shell children that
//! write what a limited child would (no cgroup needed).

use std::io::Write;
use std::process::ChildStdin;

use super::*;
use crate::observe::Pass;

fn pass(index: u32) -> String {
    ChildLine::Pass(Pass {
        index,
        counted: index > 1,
        bytes: Some(1000 * u64::from(index)),
        seconds: 0.5,
        flops: None,
    })
    .to_line()
}

fn swept() -> String {
    ChildLine::Outcome(Ok(MemOutcome::Swept)).to_line()
}

/// Runs `script` in bash with `args` as $1..., its stdin a pipe.
fn bash(script: &str, args: &[String]) -> Child {
    Command::new("bash")
        .args(["-c", script, "child"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash starts")
}

/// Hears passes by number; on the first, releases the child (waiting on
/// its stdin), which can only have got there while still running.
#[derive(Default)]
struct Heard {
    passes: Vec<u32>,
    release: Option<ChildStdin>,
}

impl MemObserver for Heard {
    fn pass(&mut self, p: &Pass) {
        self.passes.push(p.index);
        if let Some(mut stdin) = self.release.take() {
            let _ = stdin.write_all(b"go\n");
        }
    }
}

fn watch(mut child: Child) -> (ChildEnd, Vec<u32>) {
    let mut heard = Heard {
        release: child.stdin.take(),
        ..Heard::default()
    };
    let end = watch_child(child, &AtomicBool::new(false), &mut heard).unwrap();
    (end, heard.passes)
}

#[test]
fn passes_are_heard_while_the_child_runs_in_order_then_its_outcome() {
    // The child waits for the first pass to be heard before the rest; a
    // parent that heard passes only at the end would leave it waiting,
    // and it would end without an outcome.
    let child = bash(
        r#"echo "$1"; read -t 60 go || exit 3; printf '%s\n' "$2" "$3" "$4""#,
        &[pass(1), pass(2), pass(3), swept()],
    );
    let (end, passes) = watch(child);
    assert_eq!(passes, [1, 2, 3]);
    assert!(end.status.success(), "{end:?}");
    assert!(end.unreadable.is_none(), "{end:?}");
    assert_eq!(judge(end, "", false, false).unwrap(), MemOutcome::Swept);
}

#[test]
fn a_child_killed_mid_run_keeps_the_passes_it_reported() {
    // Killed as the OOM killer kills, one line cut off as it was written.
    let child = bash(
        r#"printf '%s\n' "$1" "$2"; printf '{"pass":{"ind'; kill -9 $$"#,
        &[pass(1), pass(2)],
    );
    let (end, passes) = watch(child);
    assert_eq!(passes, [1, 2]);
    assert!(end.unreadable.as_ref().is_some_and(|u| u.cut), "{end:?}");
    let outcome = judge(end, OOM_NO_SWAP, false, true).unwrap();
    assert_eq!(
        outcome,
        MemOutcome::OomKilled {
            message: OOM_NO_SWAP.into()
        }
    );
}

#[test]
fn a_line_outside_the_protocol_is_an_error_naming_it() {
    for (script, named) in [
        (r#"echo "$1"; echo 'not json'; echo "$2""#, "\"not json\""),
        // Cut off with no signal to excuse it.
        (r#"echo "$1"; printf '{"pass":'"#, "\"{\\\"pass\\\":\""),
        (r#"echo "$2"; echo "$1""#, "a pass after the outcome line"),
        (r#"echo "$2"; echo "$2""#, "a second outcome line"),
    ] {
        let (end, _) = watch(bash(script, &[pass(1), swept()]));
        let err = judge(end, "", false, false).unwrap_err();
        assert!(matches!(err, MemError::ChildLine(_)), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with("limited child process wrote a line iomark cannot read: ")
                && text.contains(named),
            "{text}"
        );
    }
    // No line at all: how it ended, with its stderr.
    let (end, _) = watch(bash("echo broken >&2; exit 4", &[]));
    let err = judge(end, "", false, false).unwrap_err().to_string();
    assert!(
        err.contains("exit status: 4") && err.ends_with(": broken"),
        "{err}"
    );
}
