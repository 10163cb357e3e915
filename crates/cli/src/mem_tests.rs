use super::*;
use clap::Parser;
use iomark_model::mem::{HimenoLength, MemJobSpec, MemKernelSpec, StreamSpec};
use iomark_model::units::Bytes;

#[derive(Parser)]
struct T {
    #[command(subcommand)]
    mem: MemCommand,
}

fn parse(args: &[&str]) -> anyhow::Result<MemJobSpec> {
    let mut v = vec!["t"];
    v.extend_from_slice(args);
    Ok(T::try_parse_from(v)?.mem.options()?.plan.spec)
}

#[test]
fn flags_become_a_spec() {
    let o = parse(&["stream", "--size", "80M", "--threads", "2", "--ntimes", "5"]).unwrap();
    assert_eq!(
        o.kernel,
        MemKernelSpec::Stream(StreamSpec {
            array_len: 80_000_000,
            ntimes: 5,
            // 640 MB arrays are beyond any last-level cache.
            nt_stores: true,
        })
    );
    assert_eq!(o.threads, 2);
    for (flags, nt) in [
        (&["--nt-stores"][..], true),
        (&["--nt-stores", "off"][..], false),
        (&["--nt-stores=on"][..], true),
    ] {
        let mut args = vec!["stream", "--size", "1k"];
        args.extend_from_slice(flags);
        let o = parse(&args).unwrap();
        let MemKernelSpec::Stream(s) = o.kernel else {
            panic!("stream")
        };
        assert_eq!(s.nt_stores, nt, "{flags:?}");
    }
    let o = parse(&[
        "himeno",
        "--grid",
        "S",
        "--iterations",
        "64",
        "--mem-limit",
        "256MiB",
    ])
    .unwrap();
    assert_eq!(o.mem_limit, Some(Bytes(256 << 20)));
    let MemKernelSpec::Himeno(h) = o.kernel else {
        panic!("himeno")
    };
    assert_eq!(h.length, HimenoLength::Iterations(64));
    assert_eq!((h.grid.i, h.grid.j, h.grid.k), (64, 64, 128));
}

#[test]
fn bad_values_name_the_fix() {
    let msg = |a: &[&str]| format!("{:#}", parse(a).unwrap_err());
    assert!(msg(&["stencil", "--mask", "5"]).contains("use 3 or 15"));
    assert!(msg(&["stencil", "--n", "10", "--mask", "15"]).contains("--n 16"));
    assert!(msg(&["stream", "--ntimes", "1"]).contains("at least 2"));
    assert!(msg(&["stream", "--backing", "disk"]).contains("mmap:PATH"));
    assert!(msg(&["stream", "--relative"]).contains("--mem-limit"));
    assert!(msg(&["himeno", "--grid", "huge"]).contains("IxJxK"));
    assert!(msg(&["stream", "--threads", "0"]).contains("at least 1"));
    assert!(msg(&["stream", "--warm"]).contains("mmap:PATH"));
    assert!(msg(&["stream", "--repeat", "3"]).contains("--relative"));
    assert!(msg(&[
        "stream",
        "--repeat",
        "0",
        "--relative",
        "--mem-limit",
        "64MiB"
    ])
    .contains("at least 1"));
    let twice = msg(&["stream", "--backing", "heap,heap", "--sizes", "1MiB"]);
    assert!(twice.contains("lists heap twice"), "{twice}");
}
