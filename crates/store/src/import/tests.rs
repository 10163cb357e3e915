//! Recognising and checking documents before they are converted.

use super::*;

#[test]
fn leading_noise_is_skipped() {
    let v = parse_json("note: both iodepth >= 1 and synchronous I/O engine\n{\"a\": 1}\n").unwrap();
    assert_eq!(v["a"], 1);
}

#[test]
fn arrays_hold_iomark_documents_only() {
    assert!(matches!(import_many("[]"), Err(ImportError::NoJson)));
    assert!(matches!(
        import_many("[{\"fio version\": \"x\"}]"),
        Err(ImportError::UnknownFormat)
    ));
    assert!(matches!(
        import_many("[1,"),
        Err(ImportError::BadJson { .. })
    ));
    let bad = import_many("[{\"schema_version\": 1, \"body\": {}}]").unwrap_err();
    assert!(bad.to_string().contains("cannot read"), "{bad}");
}

#[test]
fn a_document_that_would_not_read_back_is_refused() {
    let text = r#"{"fio version": "fio-3.33", "timestamp": 1, "jobs": [{"jobname": "j",
        "read": {"io_bytes": 4096, "total_ios": 1, "runtime": 1, "bw_bytes": 4096000, "iops": 1000}}]}"#;
    let doc = import_str(text).unwrap();
    assert_eq!(read_back(doc.clone()).unwrap(), doc);
    for bad in [f64::NAN, f64::INFINITY] {
        let mut doc = doc.clone();
        let RunBody::Disk(run) = &mut doc.body else {
            panic!("not a disk run")
        };
        run.jobs[0].read.as_mut().unwrap().bw.0 = bad;
        let err = read_back(doc).unwrap_err();
        assert!(matches!(err, ImportError::ReadBack { .. }), "{err}");
        assert!(err.to_string().starts_with("the fio run"), "{err}");
    }
}

#[test]
fn numbers_are_read_strictly() {
    let at = At::new("fio", "jobs[0]");
    let v: Value = serde_json::from_str(
        r#"{"a": 18446744073709551615, "b": -1, "c": 2.0, "d": 2.5, "e": 1e300,
            "f": "NaN", "g": null, "h": [], "i": -0.0, "j": 1.8446744073709552e19}"#,
    )
    .unwrap();
    assert_eq!(at.u64(&v, "a").unwrap(), Some(u64::MAX));
    assert_eq!(at.u64(&v, "c").unwrap(), Some(2));
    assert_eq!(at.u64(&v, "g").unwrap(), None);
    assert_eq!(at.u64(&v, "missing").unwrap(), None);
    assert_eq!(at.f64(&v, "i").unwrap(), Some(0.0));
    assert_eq!(at.f64(&v, "j").unwrap(), Some(MAX_FIGURE));
    fn problem<T: std::fmt::Debug>(r: Result<T, ImportError>) -> String {
        r.unwrap_err().to_string()
    }
    assert!(problem(at.u64(&v, "b")).starts_with("jobs[0].b is negative (-1)"));
    assert!(problem(at.u64(&v, "d")).starts_with("jobs[0].d is not a whole number"));
    assert!(problem(at.u64(&v, "e")).starts_with("jobs[0].e is too large"));
    assert!(problem(at.f64(&v, "e")).starts_with("jobs[0].e is out of range"));
    assert!(problem(at.f64(&v, "f")).starts_with("jobs[0].f is not a finite number"));
    assert!(problem(at.f64(&v, "h")).starts_with("jobs[0].h is not a number ([])"));
    assert!(
        problem(at.small::<u16>(&v, "a")).contains("is too large (18446744073709551615 > 65535)")
    );
    let ms = at.ms_of("x", u64::MAX / 10, 1000).unwrap_err().to_string();
    assert!(ms.starts_with("jobs[0].x is too large for a time"), "{ms}");
    assert!(at.nanos_of_secs("x", 1e11).is_err());
    assert_eq!(at.nanos_of_secs("x", 1.5).unwrap().get(), 1_500_000_000);
}

#[test]
fn garbage_truncation_and_strangers_are_refused() {
    assert!(matches!(import_str("hello"), Err(ImportError::NoJson)));
    assert!(matches!(
        import_str("{\"fio version\": \"fio-3.33\", \"jobs\": ["),
        Err(ImportError::BadJson { .. })
    ));
    assert!(matches!(
        import_str("{\"name\": \"x\"}"),
        Err(ImportError::UnknownFormat)
    ));
    assert!(matches!(import_str("[1, 2]"), Err(ImportError::NoJson)));
}

#[test]
fn import_options_add_labels_once_replace_the_note_and_keep_a_command_line() {
    let fio = r#"{"fio version": "fio-3.33", "timestamp": 1, "jobs": [{"jobname": "j",
        "read": {"io_bytes": 4096, "total_ios": 1, "runtime": 1, "bw_bytes": 4096000, "iops": 1000}}]}"#;
    let options = ImportOptions {
        labels: vec!["usb2".into(), "t7".into()],
        note: Some("bench B".into()),
        command_line: vec!["iomark".into(), "results".into(), "import".into()],
    };
    let mut doc = import_str(fio).unwrap();
    doc.labels = vec!["t7".into()];
    doc.note = Some("old".into());
    let doc = options.applied(doc);
    assert_eq!(doc.labels, ["t7", "usb2"]);
    assert_eq!(doc.note.as_deref(), Some("bench B"));
    assert_eq!(doc.command_line, options.command_line);
    // A document that names its own command line keeps it; no note given
    // keeps its note.
    let mut own = doc.clone();
    own.command_line = vec!["iomark".into(), "disk".into()];
    let own = ImportOptions::default().applied(own);
    assert_eq!(own.command_line, ["iomark", "disk"]);
    assert_eq!(own.note.as_deref(), Some("bench B"));
}
