use iomark_model::net::NetDirection;
use iomark_model::{RunBody, RunDocument, RunStatus};

use crate::{ClientConfig, ServerConfig};

#[test]
fn run_document_holds_a_net_run_from_a_real_test() {
    let mut scfg = ServerConfig::new();
    scfg.port = 0;
    scfg.bind = Some("127.0.0.1".parse().unwrap());
    scfg.one_off = true;
    scfg.text = false;
    let server = crate::server::Server::bind(scfg).unwrap();
    let port = server.local_addr().port();
    let h = std::thread::spawn(move || {
        server.serve(
            &mut std::io::sink(),
            &mut std::io::sink(),
            &mut crate::live::Quiet,
        )
    });
    let mut c = ClientConfig::new("127.0.0.1");
    c.port = port;
    c.params.time = 1;
    c.params.parallel = 2;
    c.text = false;
    let report = crate::client::run(&c, &mut iomark_pipeline::NoDisplay).unwrap();
    h.join().unwrap().unwrap();
    let doc = crate::run_document(&report, vec!["iomark".into(), "net".into()]);
    assert_eq!(doc.status, RunStatus::Complete);
    let RunBody::Net(run) = &doc.body else {
        panic!("not a net run: {:?}", doc.body)
    };
    assert_eq!(run.streams.len(), 2);
    assert_eq!(run.streams[1].id, 3, "iperf3 numbers streams 1, 3, 4...");
    let up = run.goodput(NetDirection::Upload).unwrap();
    assert!(up.0 > 0.0);
    // Both ends counted the same bytes (the client sent, the server got).
    for s in &run.streams {
        assert!(s.received.get() > 0 && s.received <= s.sent, "{s:?}");
    }
    assert_eq!(run.interface.as_ref().map(|i| i.name.as_str()), Some("lo"));
    assert!(run.cpu_remote.unwrap().total_percent > 0.0);
    let json = serde_json::to_string(&doc).unwrap();
    let back: RunDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back.body, doc.body);
}
