use super::*;
use clap::Parser;
use iomark_disk::plan::Workload;
use iomark_disk::profiles::parse_mix;
use iomark_disk::target::TargetRequest;
use iomark_model::disk::{DataPattern, RwMode};
use iomark_model::units::Nanos;

#[derive(Debug, Parser)]
struct Wrap {
    #[command(flatten)]
    disk: DiskArgs,
}

/// A custom job's spec and target request.
#[derive(Debug)]
struct Custom {
    spec: iomark_model::disk::DiskJobSpec,
    request: TargetRequest,
}

fn parse(args: &[&str]) -> anyhow::Result<Custom> {
    let mut all = vec!["disk"];
    all.extend_from_slice(args);
    let mut settings = Wrap::try_parse_from(all)?.disk.settings();
    // The tests give no workload flag at times; a custom job still.
    settings.profile = None;
    if settings.job.given().is_empty() {
        settings.job.rw = Some(RwMode::RandRead);
    }
    let plan = settings.build()?;
    let Workload::Custom(spec) = plan.workload else {
        panic!("a custom job");
    };
    Ok(Custom {
        spec,
        request: plan.request,
    })
}

#[test]
fn fio_vocabulary_becomes_a_spec() {
    let o = parse(&[
        "/tmp",
        "--rw",
        "randrw",
        "--bs",
        "64k",
        "--iodepth",
        "8",
        "--numjobs",
        "2",
        "--size",
        "256MiB",
        "--runtime",
        "5s",
        "--engine",
        "psync",
        "--rwmix-read",
        "30",
        "--data",
        "compressible:50",
    ])
    .unwrap();
    assert_eq!(o.spec.rw, RwMode::RandRw);
    assert_eq!(o.spec.bs, Bytes(65536));
    assert_eq!((o.spec.iodepth, o.spec.numjobs), (8, 2));
    assert_eq!(o.request.size, Some(Bytes(256 << 20)));
    assert_eq!(o.spec.runtime, Some(Nanos::from_secs(5)));
    assert_eq!(o.spec.data, DataPattern::Compressible(50));
    assert!(o.request.write);
}

#[test]
fn bad_values_name_the_fix() {
    for (args, needle) in [
        (vec!["--bs", "0"], "--bs must be larger than 0"),
        (vec!["--bs", "4q"], "unknown unit"),
        (vec!["--iodepth", "0"], "--iodepth must be at least 1"),
        (vec!["--rw", "sideways"], "use read, write"),
        (vec!["--engine", "windowsaio"], "use psync"),
        (vec!["--runtime", "10x"], "--runtime"),
        (vec!["--size", "0"], "--size must be larger than 0"),
        (vec!["--rwmix-read", "101"], "0 to 100"),
        (vec!["--iodepth-batch", "0"], "--iodepth-batch must be 1 to"),
        (
            vec!["--iodepth", "8", "--iodepth-batch", "16"],
            "1 to --iodepth (8)",
        ),
    ] {
        let err = parse(&args).unwrap_err().to_string();
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn mmap_engines_go_through_the_page_cache() {
    let o = parse(&["--engine", "mmap-sync"]).unwrap();
    assert_eq!(o.request.direct, iomark_disk::target::DirectMode::Buffered);
    assert!(!o.spec.direct);
    let err = parse(&["--engine", "mmap-async", "--direct"]).unwrap_err();
    assert!(err.to_string().contains("page cache"), "{err}");
}

#[test]
fn the_submission_adapts_unless_a_batch_is_asked_for() {
    assert_eq!(
        parse(&[]).unwrap().spec.iodepth_batch,
        iomark_model::disk::DiskJobSpec::ADAPTIVE_BATCH
    );
    let o = parse(&["--iodepth", "32", "--iodepth-batch", "8"]).unwrap();
    assert_eq!(o.spec.iodepth_batch, 8);
}

#[test]
fn mix_swallowing_a_path_says_how_to_write_it() {
    assert_eq!(parse_mix("60"), Ok(60));
    let err = parse_mix("/mnt/usb").unwrap_err();
    assert!(err.contains("--mix=70"), "{err}");
    assert!(parse_mix("101").is_err());
}

#[test]
fn runtime_zero_means_size_based() {
    let o = parse(&["--runtime", "0"]).unwrap();
    assert_eq!(o.spec.runtime, None);
}

/// `iomark disk` as clap builds it.
fn disk_command() -> clap::Command {
    use clap::CommandFactory;
    crate::app::Cli::command()
        .find_subcommand("disk")
        .expect("iomark disk")
        .clone()
}

/// Whether `iomark disk` has `flag` (`--name`) as an argument.
fn has_flag(cmd: &clap::Command, flag: &str) -> bool {
    let long = flag.strip_prefix("--").expect("a flag starts with --");
    cmd.get_arguments().any(|a| a.get_long() == Some(long))
}

#[test]
fn every_setting_and_workload_flag_is_an_argument_of_iomark_disk() {
    use iomark_disk::profiles::Setting;
    let cmd = disk_command();
    for setting in Setting::ALL {
        assert!(has_flag(&cmd, setting.flag()), "{setting:?}");
    }
    // Every workload flag given: what `given` can name, all of it.
    let all = Wrap::try_parse_from([
        "disk",
        "--rw=read",
        "--bs=4k",
        "--iodepth=1",
        "--iodepth-batch=1",
        "--numjobs=1",
        "--runtime=1s",
        "--ramp=1s",
        "--engine=psync",
        "--rwmix-read=50",
        "--verify",
    ])
    .unwrap()
    .disk
    .workload;
    let given = all.given();
    assert_eq!(given.len(), 10, "{given:?}");
    for flag in given {
        assert!(has_flag(&cmd, flag), "{flag}");
    }
}
