//! The HTML page: runs, devices and links with their ceilings, warnings,
//! charts, and every stored figure. Inline CSS and SVG only.

use std::fmt::Write;

use iomark_model::device::{BlockLayer, DeviceReport};
use iomark_model::mem::MemRun;
use iomark_model::net::NetRun;
use iomark_model::RunBody;

use iomark_stats::lineup::counterpart;

use crate::svg::esc;
use crate::{date, Chart, Report, ReportRun};

/// The page's style sheet.
pub const CSS: &str =
    "body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:24px;color:#222;background:#fafafa}\
h1{font-size:22px}td.headline{font-size:20px;font-weight:bold}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:8px 0;font-size:13px;background:#fff;display:block;overflow-x:auto;max-width:100%;width:fit-content}\
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#eee}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}\
figure{margin:0;background:#fff;border:1px solid #ddd}figure svg{display:block;width:100%;height:auto}\
nav#contents{font-size:13px;background:#fff;border:1px solid #ddd;padding:4px 12px}\
nav#contents ol ol{columns:2 320px;font-size:12px}a{color:#1f4e9a}\
figcaption{font-size:12px;padding:4px 8px;color:#555}li.warning{color:#8a4b00}\
summary{cursor:pointer;margin:4px 0}\
code{font-size:12px}";

fn kind(r: &ReportRun) -> String {
    match &r.doc.body {
        RunBody::Disk(d) => format!("disk {}", d.profile),
        RunBody::Mem(m) => format!("mem {}", iomark_model::figure::mem_test_name(m)),
        RunBody::Net(n) => format!("net {}", iomark_model::figure::net_test_name(n)),
        #[allow(unreachable_patterns)]
        _ => "other".into(),
    }
}

fn layer_link(l: &BlockLayer) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &l.usb {
        let speed = u
            .speed_mbps
            .map(|s| format!("{s} Mb/s"))
            .unwrap_or_default();
        parts.push(format!(
            "USB {} {} {}",
            u.version.as_deref().unwrap_or(""),
            speed,
            u.protocol().unwrap_or("")
        ));
    }
    if let Some(s) = &l.sata {
        parts.push(format!(
            "SATA {} ({})",
            s.speed_gbps
                .map(|g| format!("{g} Gb/s"))
                .unwrap_or("speed unknown".into()),
            s.port
        ));
    }
    for p in &l.pcie {
        parts.push(format!(
            "PCIe {} GT/s x{} ({}{})",
            p.speed_gts,
            p.width,
            p.address,
            p.driver
                .as_deref()
                .map(|d| format!(", {d}"))
                .unwrap_or_default()
        ));
    }
    parts.join("; ")
}

fn ceilings(l: &BlockLayer, out: &mut Vec<String>) {
    for c in &l.ceilings {
        out.push(format!(
            "{}: {:.0} MB/s hard{}",
            c.name,
            c.hard.mb_per_sec(),
            c.typical
                .map(|t| format!(", {:.0} MB/s typical", t.mb_per_sec()))
                .unwrap_or_default()
        ));
    }
    for lower in &l.lower {
        ceilings(lower, out);
    }
}

fn device_row(out: &mut String, r: &ReportRun, d: &DeviceReport) {
    let fs = d
        .filesystem
        .as_ref()
        .map(|m| format!("{} on {} ({})", m.fs_type, m.mount_point, m.source))
        .unwrap_or_default();
    let (dev, transport, model, link) = match &d.device {
        Some(l) => {
            let model = [&l.identity.vendor, &l.identity.model]
                .iter()
                .filter_map(|s| s.as_deref())
                .collect::<Vec<_>>()
                .join(" ");
            (
                format!("{} ({}, {})", l.name, l.devno, format_bytes(l.size.get())),
                l.transport.to_string(),
                model,
                layer_link(l),
            )
        }
        None => ("none".into(), String::new(), String::new(), String::new()),
    };
    let mut ceil = Vec::new();
    if let Some(l) = &d.device {
        ceilings(l, &mut ceil);
    }
    let slowest = d
        .slowest
        .as_ref()
        .map(|c| format!("{} ({:.0} MB/s)", c.name, c.hard.mb_per_sec()))
        .unwrap_or_else(|| "unknown".into());
    let mut notes = d.notes.clone();
    if let Some(n) = d.device.as_ref().and_then(|l| l.note.clone()) {
        notes.push(n);
    }
    let _ = write!(
        out,
        "<tr data-run=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(&r.id),
        esc(&r.name),
        esc(&d.path),
        esc(&fs),
        esc(&dev),
        esc(&transport),
        esc(&model),
        esc(&link),
        esc(&ceil.join("; ")),
        esc(&slowest),
        esc(&notes.join(" "))
    );
}

fn format_bytes(b: u64) -> String {
    let g = b as f64 / (1u64 << 30) as f64;
    if g >= 1.0 {
        format!("{g:.1} GiB")
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

fn net_row(out: &mut String, r: &ReportRun, n: &NetRun) {
    let iface = n
        .interface
        .as_ref()
        .map(|i| {
            format!(
                "{}{}{}",
                i.name,
                i.driver
                    .as_deref()
                    .map(|d| format!(", {d}"))
                    .unwrap_or_default(),
                i.speed_mbit
                    .map(|s| format!(", {s} Mbit/s link"))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "unknown".into());
    spec_row(
        out,
        r,
        &format!("net to {}:{}", n.spec.host, n.spec.port),
        &format!("interface {iface}"),
        &n.peer_version
            .clone()
            .map(|v| format!("peer {v}"))
            .unwrap_or_default(),
    );
}

fn mem_row(out: &mut String, r: &ReportRun, m: &MemRun) {
    let limit = m
        .spec
        .mem_limit
        .map(|l| format!("limit {}", format_bytes(l.get())))
        .unwrap_or_else(|| "no limit".into());
    let ram = if m.host.mem_total.get() > 0 {
        format_bytes(m.host.mem_total.get())
    } else {
        "unknown".into()
    };
    spec_row(
        out,
        r,
        &format!("mem {}", m.spec.kernel.name()),
        &format!("{} threads, {}, {limit}", m.spec.threads, m.spec.backing),
        &format!(
            "LLC {}, RAM {ram}",
            m.host
                .llc
                .map(|b| format_bytes(b.get()))
                .unwrap_or("unknown".into()),
        ),
    );
}

/// Per run, the tests other runs have and it has not (a different test
/// size, engine or depth is a different test): their rows compare nothing.
/// Each says why where the run ran the same work at another setting, by
/// the rule `results compare` uses ([`counterpart`]).
fn unmatched_tests(o: &mut String, runs: &[ReportRun]) {
    if runs.len() < 2 {
        return;
    }
    let tests: Vec<Vec<&str>> = runs
        .iter()
        .map(|r| {
            let mut t: Vec<&str> = Vec::new();
            for f in &r.figures {
                if !t.contains(&f.test.as_str()) {
                    t.push(&f.test);
                }
            }
            t
        })
        .collect();
    let mut items = String::new();
    let mut count = 0;
    for (r, missing) in runs.iter().zip(counterpart::missing_tests(&tests)) {
        count += missing.len();
        for (differs, tests) in counterpart::by_reason(&missing) {
            let these: Vec<String> = tests.iter().map(|t| esc(t)).collect();
            let why = counterpart::reason("which", differs, these.len())
                .map(|r| format!(", {}", esc(&r)))
                .unwrap_or_default();
            let _ = write!(
                items,
                "<li data-run=\"{}\">not in {}{why}: {}</li>",
                esc(&r.id),
                esc(&r.name),
                these.join("; ")
            );
        }
    }
    // Folded: a sweep against a CrystalDiskMark run lists dozens of test
    // names, which are detail, not the answer.
    if !items.is_empty() {
        let _ = write!(
            o,
            "<details id=\"unmatched\"><summary>Tests without a counterpart in every run: {count}</summary><ul>{items}</ul></details>"
        );
    }
}

/// The device table's row for a run without a device (net, mem): what ran,
/// then its setup across the device columns and its host or peer across the
/// ceiling columns; every text is escaped here.
fn spec_row(out: &mut String, r: &ReportRun, what: &str, setup: &str, host: &str) {
    let _ = write!(
        out,
        "<tr data-run=\"{}\"><td>{}</td><td>{}</td><td colspan=\"5\">{}</td><td colspan=\"3\">{}</td></tr>",
        esc(&r.id),
        esc(&r.name),
        esc(what),
        esc(setup),
        esc(host)
    );
}

/// The memory limit each run ran under (`--mem-limit`, a mem sweep's
/// limit), with what the cgroup recorded, as `results show` prints it:
/// none of it is in the figures.
fn limits(o: &mut String, runs: &[ReportRun]) {
    let limited: Vec<(&ReportRun, &iomark_model::mem::CgroupUsage)> = runs
        .iter()
        .filter_map(|r| {
            let cg = match &r.doc.body {
                RunBody::Disk(d) => d.cgroup.as_deref(),
                RunBody::Mem(m) => m.cgroup.as_deref(),
                _ => None,
            }?;
            Some((r, cg))
        })
        .collect();
    let swept: Vec<(&ReportRun, &iomark_model::mem::MemSweep)> = runs
        .iter()
        .filter_map(|r| match &r.doc.body {
            RunBody::Mem(m) => Some((r, m.sweep.as_deref()?)),
            _ => None,
        })
        .filter(|(_, s)| !iomark_text::sweep_limits::rows(s).is_empty())
        .collect();
    if limited.is_empty() && swept.is_empty() {
        return;
    }
    o.push_str("<h2>Memory limits</h2>");
    for (r, sweep) in swept {
        sweep_limits(o, r, sweep);
    }
    if limited.is_empty() {
        return;
    }
    o.push_str(
        "<table id=\"mem-limits\"><tr><th>run</th><th>limit and record</th><th>OOM kills</th></tr>",
    );
    for (r, cg) in limited {
        let _ = write!(
            o,
            "<tr data-run=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.id),
            esc(&r.name),
            esc(&iomark_text::limit_record(cg)),
            cg.oom_kills
        );
    }
    o.push_str("</table>");
}

/// A memory sweep's record of its limit, a row per point (its own
/// cgroup), as `results show` prints it.
fn sweep_limits(o: &mut String, r: &ReportRun, sweep: &iomark_model::mem::MemSweep) {
    let _ = write!(
        o,
        "<table class=\"sweep-limits\" id=\"sweep-limits-{}\"><caption>{}: each point's memory cgroup</caption><tr>",
        esc(&r.id),
        esc(&r.name)
    );
    for h in iomark_text::sweep_limits::HEADER {
        let _ = write!(o, "<th>{h}</th>");
    }
    o.push_str("</tr>");
    for row in iomark_text::sweep_limits::rows(sweep) {
        let _ = write!(o, "<tr data-run=\"{}\">", esc(&r.id));
        for (i, cell) in row.iter().enumerate() {
            let class = if i == 0 || i == 2 {
                ""
            } else {
                " class=\"num\""
            };
            let _ = write!(o, "<td{class}>{}</td>", esc(cell));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
}

/// The page: [`CSS`] and [`article`] in one self-contained file.
pub fn render(report: &Report) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>{}",
        esc(report.title()),
        article(report)
    )
}

/// The page's content without its shell: the title, the contents and
/// everything below them, for a page that brings its own `<head>`.
pub fn article(report: &Report) -> String {
    // Drawn once: the charts and the contents' list of them.
    let charts = report.charts();
    let body = body(report, &charts);
    let (body, nav) = crate::contents::contents(&body, &crate::chart_grid::listed(report, &charts));
    format!("<h1>{}</h1>{nav}{body}", esc(report.title()))
}

/// Everything below the title and the contents.
fn body(report: &Report, charts: &[Chart]) -> String {
    let mut o = String::new();
    // The answer first: what changed against the baseline, then the runs
    // and everything that explains it.
    if let Some(c) = report.comparison() {
        let name = |id: i64| {
            report
                .runs()
                .iter()
                .find(|r| r.id == id.to_string())
                .map_or_else(|| format!("run {id}"), |r| r.name.clone())
        };
        crate::comparison::html(&mut o, c, name);
    }
    crate::figures::headline(&mut o, report);
    o.push_str("<h2>Runs</h2><table id=\"runs\"><tr><th>id</th><th>name</th><th>what</th><th>started</th><th>status</th><th>host</th><th>command</th></tr>");
    for r in report.runs() {
        let host = r
            .doc
            .host
            .as_ref()
            .map(|h| {
                format!(
                    "{} ({}, {} CPUs, {})",
                    h.hostname, h.cpu_model, h.cpu_count, h.kernel_release
                )
            })
            .unwrap_or_default();
        // `--baseline ID`, or a run carrying `--baseline-label`'s label.
        let labelled = report.comparison().is_some_and(|c| {
            c.columns
                .iter()
                .any(|(ids, base)| *base && ids.iter().any(|id| id.to_string() == r.id))
        });
        let base = if labelled || report.baseline().map(|b| &b.id) == Some(&r.id) {
            " (baseline)"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<tr data-run=\"{}\"><td>{}</td><td>{}{base}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&r.id),
            esc(&r.id),
            esc(&r.name),
            esc(&kind(r)),
            esc(&date(r.doc.started_at_ms)),
            r.doc.status.as_str(),
            esc(&host),
            esc(&r.doc.command_line.join(" "))
        );
    }
    o.push_str("</table>");

    o.push_str("<h2>Devices and links</h2><table id=\"devices\"><tr><th>run</th><th>path</th><th>file system</th><th>device</th><th>transport</th><th>model</th><th>link</th><th>ceilings</th><th>slowest link</th><th>notes</th></tr>");
    for r in report.runs() {
        match (&r.doc.device, &r.doc.body) {
            (Some(d), _) => device_row(&mut o, r, d),
            (None, RunBody::Net(n)) => net_row(&mut o, r, n),
            (None, RunBody::Mem(m)) => mem_row(&mut o, r, m),
            _ => {
                let _ = write!(
                    o,
                    "<tr data-run=\"{}\"><td>{}</td><td colspan=\"9\">no device information stored</td></tr>",
                    esc(&r.id),
                    esc(&r.name)
                );
            }
        }
    }
    o.push_str("</table>");
    limits(&mut o, report.runs());

    crate::warnings::section(&mut o, report.runs());

    crate::chart_grid::section(&mut o, report, charts);
    crate::knees::section(&mut o, report.runs());
    crate::device_seen::section(&mut o, report.runs());
    let notes = report.chart_notes();
    if !notes.is_empty() {
        o.push_str("<ul class=\"chart-notes\" id=\"chart-notes\">");
        for n in notes {
            let _ = write!(o, "<li>{}</li>", esc(&n));
        }
        o.push_str("</ul>");
    }

    crate::figures::section(&mut o, report);
    unmatched_tests(&mut o, report.runs());
    o.push_str("<p><small>Made by iomark from stored results: the charts plot the stored figures, and each bar, point and figure row carries its stored value (base units) in <code>data-value</code>.</small></p></body></html>\n");
    o
}
