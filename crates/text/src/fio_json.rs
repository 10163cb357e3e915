//! A disk run in fio's `--output-format=json` / `json+` layout (fio 3.x),
//! so what reads fio's JSON (dashboards, `fio_jsonplus_clat2csv`, iomark's
//! own importer) reads iomark's.
//!
//! fio's units, not iomark's: `bw` and the `bw_*` statistics in KiB/s,
//! `runtime` in ms, latencies in ns. `fio version` names iomark, so no
//! reader mistakes the document for fio's own. iomark times an I/O from
//! its submission to its completion, which is fio's `clat`; it has no
//! separate submission latency, so `slat_ns` is empty (`N` 0) and `lat_ns`
//! equals `clat_ns`. `job options` are what ran (the job's settings after
//! defaults), which is what fio's importer needs to rebuild the job.

use iomark_model::disk::{DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, EngineKind};
use iomark_model::steady::{Limit, Metric, SteadyStateOutcome};
use iomark_model::units::Nanos;
use iomark_model::{RunBody, RunDocument, RunStatus};
use serde_json::{json, Map, Value};

/// fio's `latency_ns` / `latency_us` bucket edges (each ≤ edge, in that
/// unit), and `latency_ms`'s, whose last bucket is `>=2000`.
const LAT_EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
const LAT_MS_EDGES: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// The document for a disk run; `None` for any other run. `plus` adds each
/// direction's latency histogram (`clat_ns.bins`, fio's json+).
pub fn fio_json(doc: &RunDocument, plus: bool) -> Option<Value> {
    let RunBody::Disk(run) = &doc.body else {
        return None;
    };
    let jobs: Vec<Value> = run
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| job(j, i, &run.target.path, doc.status, plus))
        .collect();
    Some(json!({
        "fio version": format!("{}-{}", doc.tool, doc.tool_version),
        "timestamp": doc.finished_at_ms / 1000,
        "timestamp_ms": doc.finished_at_ms,
        "time": time_of(doc.finished_at_ms),
        "global options": {},
        "jobs": jobs,
        "disk_util": disk_util(&run.jobs),
    }))
}

/// fio's `disk_util`: per device, its counters over the run's jobs (fio
/// reads them over its whole run): requests, merges and ticks (ms) per
/// direction, `in_queue` (ms) and `util` (percent of the time measured).
fn disk_util(jobs: &[DiskJobResult]) -> Vec<Value> {
    let mut devices: Vec<iomark_model::blockio::DeviceIo> = Vec::new();
    for seen in jobs.iter().filter_map(|j| j.device_io.as_ref()) {
        match devices.iter_mut().find(|d| d.name == seen.name) {
            Some(sum) => sum.add(seen),
            None => devices.push(seen.clone()),
        }
    }
    let ms = |n: Nanos| n.get() / 1_000_000;
    devices
        .iter()
        .map(|d| {
            json!({
                "name": d.name,
                "read_ios": d.read.requests,
                "write_ios": d.write.requests,
                "read_merges": d.read.merges,
                "write_merges": d.write.merges,
                "read_ticks": ms(d.read.time),
                "write_ticks": ms(d.write.time),
                "in_queue": ms(d.in_queue),
                "util": (d.utilization_pct() * 100.0).round() / 100.0,
            })
        })
        .collect()
}

/// fio's `time`: `Tue Mar  4 10:00:00 2025`, local time.
fn time_of(ms: u64) -> String {
    let Ok(t) = jiff::Timestamp::from_millisecond(ms as i64) else {
        return String::new();
    };
    t.to_zoned(jiff::tz::TimeZone::system())
        .strftime("%a %b %e %H:%M:%S %Y")
        .to_string()
}

fn job(j: &DiskJobResult, index: usize, path: &str, status: RunStatus, plus: bool) -> Value {
    let s = &j.spec;
    let runtime = j
        .read
        .as_ref()
        .or(j.write.as_ref())
        .map_or(Nanos(0), |d| d.runtime);
    let elapsed_s = (runtime.get() + s.ramp.get()).div_ceil(1_000_000_000);
    let bins: Vec<[u64; 2]> = [&j.read, &j.write]
        .into_iter()
        .flatten()
        .flat_map(|d| d.clat.bins.iter().copied())
        .collect();
    let mut out = json!({
        "jobname": s.name,
        "groupid": index,
        // fio's error is an errno; an interrupted job is EINTR (4).
        "error": if j.interrupted || status == RunStatus::Interrupted { 4 } else { 0 },
        "eta": 0,
        "elapsed": elapsed_s,
        "job options": options(s, path),
        "read": direction(j.read.as_ref(), j, true, plus),
        "write": direction(j.write.as_ref(), j, false, plus),
        "trim": direction(None, j, false, plus),
        "sync": { "total_ios": 0, "lat_ns": lat(None) },
        "job_runtime": runtime.get() / 1_000_000,
        "usr_cpu": j.cpu.user_pct,
        "sys_cpu": j.cpu.system_pct,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": j.iodepth_level,
        "latency_ns": lat_buckets(&bins, 1, &LAT_EDGES, false),
        "latency_us": lat_buckets(&bins, 1_000, &LAT_EDGES, false),
        "latency_ms": lat_buckets(&bins, 1_000_000, &LAT_MS_EDGES, true),
    });
    if let Some(ss) = &j.steady_state {
        out["steadystate"] = steadystate(ss);
    }
    if !j.warnings.is_empty() {
        // Not fio's; a reader that knows fio's keys skips it.
        out["iomark_warnings"] = j.warnings.iter().map(|w| w.to_string()).collect();
    }
    if let Some(seen) = j.device_io.as_ref().filter(|d| d.stalled.get() > 0) {
        // The time the device held requests and completed none, so a
        // reader can tell a stall from a slow device.
        out["iomark_device_stalled_ms"] = (seen.stalled.get() / 1_000_000).into();
    }
    out
}

/// What ran, with fio's option names and values it reads back.
fn options(s: &DiskJobSpec, path: &str) -> Map<String, Value> {
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", s.name.clone());
    if !path.is_empty() {
        put("filename", path.into());
    }
    put("rw", s.rw.as_str().into());
    put("bs", s.bs.get().to_string());
    if s.size.get() > 0 {
        put("size", s.size.get().to_string());
    }
    put("ioengine", fio_engine(s.engine).into());
    put("iodepth", s.iodepth.to_string());
    if s.iodepth_batch > 1 {
        put("iodepth_batch_submit", s.iodepth_batch.to_string());
    }
    put("numjobs", s.numjobs.to_string());
    put("direct", u8::from(s.direct).to_string());
    if let Some(r) = s.runtime {
        put("runtime", time(r));
        put("time_based", String::new());
    }
    if s.ramp.get() > 0 {
        put("ramp_time", time(s.ramp));
    }
    if s.rw.reads() && s.rw.writes() {
        put("rwmixread", s.rwmix_read.to_string());
    }
    put("randseed", s.seed.to_string());
    match s.data {
        DataPattern::Zeros => put("zero_buffers", String::new()),
        DataPattern::Compressible(p) => put("buffer_compress_percentage", p.to_string()),
        // fio's default: random data, made unique per write.
        _ => {}
    }
    if s.numjobs > 1 {
        put("group_reporting", String::new());
    }
    if let Some(ss) = &s.steady_state {
        put("ss", ss.criterion.to_string());
        put("ss_dur", time(ss.window));
        if ss.ramp.get() > 0 {
            put("ss_ramp", time(ss.ramp));
        }
    }
    o
}

/// fio's `steadystate` block: the criterion, the window's length in
/// seconds, whether it was met, the last window's figures and samples.
fn steadystate(ss: &SteadyStateOutcome) -> Value {
    let pct = matches!(ss.spec.criterion.limit, Limit::Percent(_));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / (v.len().max(1) as f64);
    let whole = |v: &[f64]| v.iter().map(|x| x.round() as u64).collect::<Vec<_>>();
    let mut data = json!({
        "bw_mean": mean(&ss.bw).round() as u64,
        "iops_mean": mean(&ss.iops).round() as u64,
        "iops": whole(&ss.iops),
        "bw": whole(&ss.bw),
    });
    if ss.spec.criterion.metric == Metric::Latency {
        data["lat_mean"] = (mean(&ss.lat_ns).round() as u64).into();
        data["lat"] = whole(&ss.lat_ns).into();
    }
    json!({
        "ss": ss.spec.criterion.fio_form(),
        "duration": ss.spec.window.get() / 1_000_000_000,
        "attained": u8::from(ss.attained),
        "criterion": format!("{:.6}{}", ss.criterion.unwrap_or(0.0), if pct { "%" } else { "" }),
        "max_deviation": ss.max_deviation,
        "slope": ss.slope,
        "data": data,
    })
}

/// fio's name for an engine; mmap-async has none nearer than `mmap`.
fn fio_engine(e: EngineKind) -> &'static str {
    match e {
        EngineKind::Psync => "psync",
        EngineKind::IoUring => "io_uring",
        EngineKind::MmapSync | EngineKind::MmapAsync => "mmap",
        EngineKind::Null => "null",
    }
}

/// A time as fio writes one: whole seconds bare, else ms or µs.
fn time(t: Nanos) -> String {
    let ns = t.get();
    if ns.is_multiple_of(1_000_000_000) {
        (ns / 1_000_000_000).to_string()
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns / 1_000)
    }
}

/// One direction; zeros where the job did not go that way, as fio writes.
fn direction(d: Option<&DirectionResult>, j: &DiskJobResult, read: bool, plus: bool) -> Value {
    let Some(d) = d else {
        return json!({
            "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0,
            "runtime": 0, "total_ios": 0, "short_ios": 0, "drop_ios": 0,
            "slat_ns": lat(None), "clat_ns": lat(None), "lat_ns": lat(None),
            "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0,
            "bw_samples": 0, "iops_min": 0, "iops_max": 0, "iops_mean": 0.0,
            "iops_stddev": 0.0, "iops_samples": 0,
        });
    };
    // Per-second samples of this direction, for fio's bw_* and iops_*.
    let per_sec: Vec<(f64, f64)> = j
        .samples
        .iter()
        .filter(|s| s.length.get() > 0)
        .map(|s| {
            let secs = s.length.get() as f64 / 1e9;
            let (b, n) = if read {
                (s.read_bytes, s.read_ios)
            } else {
                (s.write_bytes, s.write_ios)
            };
            (b as f64 / 1024.0 / secs, n as f64 / secs)
        })
        .collect();
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(per_sec.iter().map(|p| p.0));
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(per_sec.iter().map(|p| p.1));
    let mut clat = lat(Some(d));
    let pct: Map<String, Value> = d
        .clat
        .percentiles
        .iter()
        .map(|p| (format!("{:.6}", p.percent), Value::from(p.ns)))
        .collect();
    clat["percentile"] = Value::Object(pct);
    if plus && !d.clat.bins.is_empty() {
        let bins: Map<String, Value> = d
            .clat
            .bins
            .iter()
            .map(|[ns, n]| (ns.to_string(), Value::from(*n)))
            .collect();
        clat["bins"] = Value::Object(bins);
    }
    json!({
        "io_bytes": d.io_bytes.get(),
        "io_kbytes": d.io_bytes.get() / 1024,
        "bw_bytes": d.bw.0.round() as u64,
        "bw": (d.bw.0 / 1024.0).round() as u64,
        "iops": d.iops.0,
        "runtime": d.runtime.get() / 1_000_000,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": lat(None),
        "clat_ns": clat,
        "lat_ns": lat(Some(d)),
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": 100.0,
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": per_sec.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": per_sec.len(),
    })
}

/// fio's latency object without percentiles; zeros for none.
fn lat(d: Option<&DirectionResult>) -> Value {
    match d {
        Some(d) => json!({
            "min": d.clat.min_ns, "max": d.clat.max_ns, "mean": d.clat.mean_ns,
            "stddev": d.clat.stddev_ns, "N": d.clat.count,
        }),
        None => json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 }),
    }
}

/// Min, max, mean and sample standard deviation (fio's `bw_dev`).
fn spread(v: impl Iterator<Item = f64> + Clone) -> (f64, f64, f64, f64) {
    let n = v.clone().count();
    if n == 0 {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let mean = v.clone().sum::<f64>() / n as f64;
    let min = v.clone().fold(f64::INFINITY, f64::min);
    let max = v.clone().fold(0.0, f64::max);
    let var = if n > 1 {
        v.map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    (min, max, mean, var.sqrt())
}

/// fio's `latency_*` map: percent of I/Os whose latency, in `unit` ns, is
/// at most each edge (and above the one before); from the bins, so empty
/// when a run kept none.
fn lat_buckets(bins: &[[u64; 2]], unit: u64, edges: &[u64], last_open: bool) -> Value {
    let total: u64 = bins.iter().map(|b| b[1]).sum();
    let mut out = Map::new();
    if total == 0 {
        return Value::Object(out);
    }
    let lower = if unit == 1 { 0 } else { unit };
    let mut counts = vec![0u64; edges.len() + usize::from(last_open)];
    for &[ns, n] in bins {
        // Only I/Os in this unit's range; fio puts the rest in the others.
        if ns < lower {
            continue;
        }
        match edges.iter().position(|&e| ns <= e * unit) {
            Some(i) => counts[i] += n,
            None if last_open => counts[edges.len()] += n,
            None => {}
        }
    }
    for (i, &e) in edges.iter().enumerate() {
        out.insert(
            e.to_string(),
            json!(100.0 * counts[i] as f64 / total as f64),
        );
    }
    if last_open {
        let key = format!(">={}", edges[edges.len() - 1]);
        out.insert(
            key,
            json!(100.0 * counts[edges.len()] as f64 / total as f64),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "fio_json_tests.rs"]
mod tests;
