use super::*;
use crate::job::IodepthList;
use iomark_model::disk::{DataPattern, EngineKind, RwMode};
use iomark_model::units::{Bytes, Nanos};

fn one(text: &str) -> FioJob {
    let mut f = parse(text).unwrap();
    assert_eq!(f.jobs.len(), 1, "{text}");
    f.jobs.remove(0)
}

fn err(text: &str) -> FioJobError {
    parse(text).unwrap_err()
}

#[test]
fn every_supported_option_lands_in_the_settings() {
    let j = one("[global]
name=not-the-jobs
description=a test
readwrite=randrw
blocksize=64k
size=256m
directory=/tmp
filename=scratch
iodepth=8
numjobs=2
ioengine=io_uring
direct=1
runtime=5
time_based
ramp_time=2
rwmixread=30
randrepeat=1
randseed=0x10
buffer_compress_percentage=50
invalidate=0
group_reporting
new_group
[job]
stonewall
name=label
");
    let s = &j.settings;
    assert_eq!(j.name, "label");
    assert_eq!(s.rw, Some(RwMode::RandRw));
    assert_eq!(s.bs, Some(Bytes(64 << 10)));
    assert_eq!(s.size, Some(Bytes(256 << 20)));
    assert_eq!(j.path.as_deref(), Some(Path::new("/tmp/scratch")));
    assert_eq!(
        (s.iodepth.clone(), s.numjobs),
        (Some(IodepthList(vec![8])), Some(2))
    );
    assert_eq!(s.engine_kind(), Some(EngineKind::IoUring));
    assert_eq!(s.direct, Some(true));
    assert_eq!(s.runtime, Some(Nanos::from_secs(5)));
    assert_eq!(s.ramp, Some(Nanos::from_secs(2)));
    assert_eq!(s.rwmix_read, Some(30));
    assert_eq!(s.data, DataPattern::Compressible(50));
    assert_eq!(s.seed, 16);
    assert!(j.keep_cache && j.stonewall);
    assert!(j.notes.is_empty(), "{:?}", j.notes);
}

#[test]
fn randseed_is_hexadecimal_or_decimal() {
    assert_eq!(one("[j]\nrandseed=0x10\n").settings.seed, 16);
    assert_eq!(one("[j]\nrandseed=42\n").settings.seed, 42);
}

#[test]
fn fios_defaults_where_they_differ_from_iomarks() {
    let j = one("[j]\n");
    let s = &j.settings;
    assert_eq!(s.rw, Some(RwMode::Read));
    assert_eq!(s.engine_kind(), Some(EngineKind::Psync));
    assert_eq!(
        (s.iodepth.clone(), s.rwmix_read),
        (Some(IodepthList(vec![1])), Some(50))
    );
    assert_eq!(s.direct, Some(false));
    assert_eq!(s.runtime, Some(Nanos(0)), "one pass over size");
    assert_eq!(j.path, None);
    assert!(!j.keep_cache);
}

#[test]
fn global_applies_to_the_jobs_after_it_and_jobs_override_it() {
    let f = parse(
        "; a comment
[global]
bs=4k
rw=randread   ; inline comment
[a]
bs=8k
[b]
[global]
iodepth=4
[c]
",
    )
    .unwrap();
    let bs: Vec<_> = f.jobs.iter().map(|j| j.settings.bs).collect();
    assert_eq!(
        bs,
        [Some(Bytes(8192)), Some(Bytes(4096)), Some(Bytes(4096))]
    );
    assert!(f
        .jobs
        .iter()
        .all(|j| j.settings.rw == Some(RwMode::RandRead)));
    let depth: Vec<_> = f
        .jobs
        .iter()
        .map(|j| j.settings.iodepth.as_ref().map(|d| d.0.clone()))
        .collect();
    assert_eq!(depth, [Some(vec![1]), Some(vec![1]), Some(vec![4])]);
    assert_eq!(f.jobs[0].line, 5);
    assert_eq!(f.concurrent_in_fio(), ["b", "c"]);
}

#[test]
fn engines_by_fios_names() {
    let j = one("[j]\nioengine=libaio\n");
    assert_eq!(j.settings.engine_kind(), Some(EngineKind::IoUring));
    assert_eq!(j.notes, [LIBAIO_NOTE]);
    assert_eq!(
        one("[j]\nioengine=sync\n").settings.engine_kind(),
        Some(EngineKind::Psync)
    );
    assert_eq!(
        one("[j]\nioengine=mmap\n").settings.engine_kind(),
        Some(EngineKind::MmapSync)
    );
    // A later engine replaces libaio, and its note.
    let j = one("[global]\nioengine=libaio\n[j]\nioengine=psync\n");
    assert!(j.notes.is_empty());
}

#[test]
fn buffered_rwmixwrite_zero_buffers_and_randrepeat() {
    let j = one("[j]\nbuffered=0\nrwmixwrite=40\nzero_buffers\nrandrepeat=0\n");
    assert_eq!(j.settings.direct, Some(true));
    assert_eq!(j.settings.rwmix_read, Some(60));
    assert_eq!(j.settings.data, DataPattern::Zeros);
    let j2 = one("[j]\nrandrepeat=0\nrandseed=7\n");
    assert_eq!(j2.settings.seed, 7, "randseed wins over randrepeat=0");
}

#[test]
fn runtime_without_time_based_is_noted_and_time_based_needs_runtime() {
    let j = one("[j]\nruntime=10\n");
    assert_eq!(j.settings.runtime, Some(Nanos::from_secs(10)));
    assert!(j.notes[0].contains("without time_based"), "{:?}", j.notes);
    assert!(one("[j]\nruntime=10\ntime_based\n").notes.is_empty());
    let e = err("[j]\ntime_based\n");
    assert!(matches!(e, FioJobError::BadValue { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("runtime="), "{e}");
}

#[test]
fn an_unsupported_option_is_refused_with_its_line() {
    let e = err("[global]\nbs=4k\ngtod_reduce=1\n[j]\n");
    assert_eq!(
        e,
        FioJobError::Unsupported {
            line: 3,
            option: "gtod_reduce".into()
        }
    );
    let msg = e.to_string();
    assert!(msg.starts_with("line 3: fio option 'gtod_reduce'"), "{msg}");
    assert!(!msg.contains('\n'));
    // In a job section too, and a bare flag option alike.
    let e = err("[j]\nrw=read\nnorandommap\n");
    assert!(matches!(e, FioJobError::Unsupported { line: 3, .. }), "{e}");
}

#[test]
fn bad_values_name_line_and_fix() {
    for (text, line, needle) in [
        ("[j]\nrw=trim\n", 2, "iomark runs read"),
        ("[j]\nbs=4k-16k\n", 2, "one block size"),
        ("[j]\nbs=4k,8k\n", 2, "one block size"),
        ("[j]\nbs=4q\n", 2, "unit"),
        ("[j]\nsize=50%\n", 2, "one size"),
        ("[j]\n\niodepth=many\n", 3, "whole number"),
        ("[j]\nrwmixread=101\n", 2, "0 to 100"),
        ("[j]\ndirect=yes\n", 2, "0 or 1"),
        ("[j]\nioengine=windowsaio\n", 2, "iomark runs psync"),
        ("[j]\nfilename=/a:/b\n", 2, "one file"),
        ("[j]\nruntime=soon\n", 2, "runtime=soon"),
        ("[j]\nbs\n", 2, "needs a value"),
    ] {
        let e = err(text);
        let msg = e.to_string();
        assert!(
            matches!(&e, FioJobError::BadValue { line: l, .. } if *l == line),
            "{text:?}: {msg}"
        );
        assert!(msg.contains(needle), "{text:?}: {msg}");
    }
}

#[test]
fn syntax_errors_and_empty_files() {
    assert!(matches!(
        err("bs=4k\n[j]\n"),
        FioJobError::Syntax { line: 1, .. }
    ));
    assert!(matches!(err("[j\n"), FioJobError::Syntax { line: 1, .. }));
    assert!(matches!(
        err("[j]\nbs 4k\n"),
        FioJobError::Syntax { line: 2, .. }
    ));
    assert_eq!(err("[global]\nbs=4k\n"), FioJobError::NoJobs);
    assert_eq!(err("# nothing\n"), FioJobError::NoJobs);
}

#[test]
fn a_job_plans_like_a_custom_job_under_its_name() {
    let j = one("[seq]\nrw=write\nbs=1m\nsize=8m\nioengine=psync\n");
    let plan = j.plan(Some(Path::new("/tmp")), &[]).unwrap();
    let Workload::Custom(spec) = &plan.workload else {
        panic!("a custom job");
    };
    assert_eq!(spec.name, "seq");
    assert_eq!(spec.runtime, None, "one pass over size");
    assert!(plan.request.write);
    assert_eq!(plan.request.size, Some(Bytes(8 << 20)));
    assert_eq!(plan.request.path, Path::new("/tmp"));
    // The custom job's checks, named by job and line.
    let f = parse("[g]\n[mm]\nioengine=mmap\ndirect=1\n").unwrap();
    let e = f.jobs[1].plan(None, &[]).unwrap_err().to_string();
    assert!(e.starts_with("job [mm] (line 2):"), "{e}");
    assert!(e.contains("page cache"), "{e}");
}

#[test]
fn comments_need_white_space_before_them() {
    assert_eq!(strip_comment("bs=4k ; x"), "bs=4k ");
    assert_eq!(strip_comment("# all"), "");
    assert_eq!(strip_comment("filename=a#b"), "filename=a#b");
}

#[test]
fn verify_is_crc32c_or_off_and_do_verify_0_turns_it_off() {
    let on = |text: &str| one(text).settings.verify_writes().is_some();
    assert!(on("[j]\nrw=write\nverify=crc32c\n"));
    assert!(on("[global]\nverify=1\n[j]\nrw=write\n"));
    assert!(!on("[j]\nrw=write\nverify=crc32c\nverify=0\n"));
    assert!(!on("[j]\nrw=write\nverify=crc32c\ndo_verify=0\n"));
    let e = err("[j]\nrw=write\nverify=md5\n");
    assert!(
        matches!(&e, FioJobError::BadValue { line: 3, option, .. } if option == "verify"),
        "{e}"
    );
    assert!(e.to_string().contains("verify=crc32c"), "{e}");
    // A read job cannot be checked: refused as --verify on --rw read is.
    let read = one("[r]\nrw=read\nverify=crc32c\n");
    let refused = read.plan(None, &[]).unwrap_err().to_string();
    assert!(refused.contains("job [r] (line 1)") && refused.contains("writes nothing"));
}

#[test]
fn a_files_run_is_stored_as_one_and_its_notes_are_said_once() {
    let f = parse("[a]\nioengine=libaio\nsize=1m\n[b]\nioengine=libaio\nsize=1m\n").unwrap();
    let plan = f.run_plan(Some(Path::new(".")), &[], 1).unwrap();
    assert_eq!(plan.name, PROFILE);
    assert_eq!(plan.jobs.len(), 2);
    let notes = f.notes();
    assert_eq!(notes.iter().filter(|n| *n == LIBAIO_NOTE).count(), 1);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[1].starts_with("fio would start b together with the job before"),
        "{notes:?}"
    );
}

#[test]
fn many_concurrent_jobs_are_named_up_to_five() {
    let text: String = (1..=7).map(|i| format!("[j{i}]\nsize=1m\n")).collect();
    let notes = parse(&text).unwrap().notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("fio would start j2, j3, j4, j5, j6 and 1 more together"),
        "{notes:?}"
    );
}

#[test]
fn jobs_on_two_targets_are_refused_naming_the_first_that_differs() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let text = format!(
        "[a]\nsize=1m\ndirectory={}\n[b]\nsize=1m\nstonewall\ndirectory={}\n",
        one.path().display(),
        two.path().display()
    );
    let f = parse(&text).unwrap();
    let why = f.run_plan(None, &[], 1).unwrap_err().to_string();
    assert!(why.starts_with("job [b] (line 4) runs on"), "{why}");
    // PATH puts every job on one target.
    f.run_plan(Some(one.path()), &[], 1).unwrap();
}

#[test]
fn fios_steady_state_options_make_the_jobs_criterion() {
    use iomark_model::steady::{Criterion, SteadyStateSpec};
    let text = "[ss-read]\nrw=randread\nsize=8m\ntime_based\nruntime=5m\n\
                ss=bw_slope:1%\nss_dur=10s\nss_ramp=5s\n";
    let plan = one(text).plan(Some(Path::new("/tmp")), &[]).unwrap();
    let Workload::Custom(spec) = &plan.workload else {
        panic!("a custom job");
    };
    assert_eq!(
        spec.steady_state,
        Some(SteadyStateSpec {
            criterion: "bw_slope:1%".parse().unwrap(),
            window: Nanos::from_secs(10),
            ramp: Nanos::from_secs(5),
        })
    );
    // fio's long names, and its default criterion with ss_dur alone.
    let j = one("[j]\nsteadystate_duration=30\n");
    let Workload::Custom(spec) = j.plan(Some(Path::new("/tmp")), &[]).unwrap().workload else {
        panic!("a custom job");
    };
    let ss = spec.steady_state.unwrap();
    assert_eq!(
        (ss.criterion, ss.window),
        (Criterion::FIO_DEFAULT, Nanos::from_secs(30))
    );
    // A criterion without a window would be ignored by fio: refused here.
    let e = err("[j]\nrw=read\nss=iops:5%\n");
    assert!(matches!(e, FioJobError::BadValue { line: 3, .. }), "{e}");
    assert!(e.to_string().contains("needs ss_dur="), "{e}");
    let e = err("[j]\nss=iops:lots\nss_dur=5s\n");
    assert!(matches!(e, FioJobError::BadValue { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("e.g. iops:10%"), "{e}");
}
