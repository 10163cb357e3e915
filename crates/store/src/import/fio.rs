//! fio's `--output-format=json` / `json+` (fio 3.x) as a disk run.
//!
//! Each entry of `jobs` becomes a [`DiskJobResult`]; the spec comes from the
//! job's options (then the global options, then fio's defaults). fio's `bw`
//! is KiB/s, so `bw_bytes` is used; latencies are the `*_ns` keys.

use std::collections::BTreeMap;

use iomark_model::disk::{
    CpuUsage, DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget,
    EngineKind, LatencySummary, Percentile, RwMode, TargetKind,
};
use iomark_model::{
    Bytes, BytesPerSec, Iops, Nanos, RunBody, RunDocument, RunStatus, Warning, WarningKind,
    SCHEMA_VERSION,
};
use serde_json::Value;

use super::{need, need_f64, ImportError};

const TOOL: &str = "fio";

pub(super) fn convert(v: &Value) -> Result<RunDocument, ImportError> {
    let version = need(v, TOOL, &["fio version"])?
        .as_str()
        .unwrap_or_default();
    let jobs = need(v, TOOL, &["jobs"])?
        .as_array()
        .ok_or_else(|| ImportError::Missing {
            tool: TOOL,
            field: "jobs (a list)".into(),
        })?;
    if jobs.is_empty() {
        return Err(ImportError::Unsupported(
            "fio output has no jobs: there is nothing to import".into(),
        ));
    }
    let global = v.get("global options");
    let mut results = Vec::with_capacity(jobs.len());
    let mut run_warnings = Vec::new();
    let mut failed = false;
    let mut elapsed_ms = 0u64;
    for (i, job) in jobs.iter().enumerate() {
        let name = job["jobname"].as_str().unwrap_or("fio job").to_string();
        // Without group_reporting fio lists every clone on its own, each one
        // thread; with it, one entry stands for all `numjobs` threads.
        let clones = jobs
            .iter()
            .filter(|j| j["jobname"] == job["jobname"])
            .count();
        let (result, error) = convert_job(job, i, &name, global, clones > 1)?;
        if error != 0 {
            failed = true;
            run_warnings.push(Warning::new(
                WarningKind::Other,
                format!("fio job '{name}' ended with error {error}: its figures may be partial"),
            ));
        }
        elapsed_ms = elapsed_ms.max(job["elapsed"].as_u64().unwrap_or(0) * 1000);
        results.push(result);
    }
    let finished_at_ms = match v.get("timestamp_ms").and_then(Value::as_u64) {
        Some(ms) => ms,
        None => need_f64(v, TOOL, &["timestamp"])? as u64 * 1000,
    };
    let target = target(jobs, global);
    Ok(RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: TOOL.into(),
        tool_version: version.trim_start_matches("fio-").to_string(),
        command_line: Vec::new(),
        started_at_ms: finished_at_ms.saturating_sub(elapsed_ms),
        finished_at_ms,
        status: if failed {
            RunStatus::Failed
        } else {
            RunStatus::Complete
        },
        labels: Vec::new(),
        note: None,
        warnings: run_warnings,
        host: None,
        device: None,
        body: RunBody::Disk(DiskRun {
            profile: TOOL.into(),
            target,
            jobs: results,
            profile_result: None,
            cgroup: None,
        }),
    })
}

/// A job option, falling back to the `[global]` section.
fn opt<'a>(job: &'a Value, global: Option<&'a Value>, key: &str) -> Option<&'a str> {
    job["job options"][key]
        .as_str()
        .or_else(|| global.and_then(|g| g[key].as_str()))
}

fn convert_job(
    job: &Value,
    index: usize,
    name: &str,
    global: Option<&Value>,
    single_clone: bool,
) -> Result<(DiskJobResult, i64), ImportError> {
    let o = |k: &'static str| opt(job, global, k);
    let rw_name = o("rw").or_else(|| o("readwrite")).unwrap_or("read");
    // fio allows `rw=randread:8` (an offset modifier); the mode is before it.
    let rw_name = rw_name.split(':').next().unwrap_or(rw_name);
    let rw: RwMode = rw_name.parse().map_err(|_| {
        ImportError::Unsupported(format!(
            "fio job '{name}' uses rw={rw_name}, which iomark does not measure (it knows read, write, randread, randwrite, readwrite, randrw)"
        ))
    })?;
    let bs = o("bs")
        .or_else(|| o("blocksize"))
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse::<Bytes>().ok())
        .unwrap_or(Bytes(4096));
    let num =
        |k: &'static str, default: u64| o(k).and_then(|s| s.parse::<u64>().ok()).unwrap_or(default);
    let engine_name = o("ioengine").unwrap_or("psync");
    let mut warnings = Vec::new();
    let engine = match engine_name {
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => EngineKind::Psync,
        "io_uring" => EngineKind::IoUring,
        "mmap" => EngineKind::MmapSync,
        "null" => EngineKind::Null,
        other => {
            // The nearest engine iomark has: asynchronous with a real
            // queue depth. Say so rather than pretend.
            warnings.push(Warning::new(
                WarningKind::Other,
                format!("imported from fio ioengine={other}, recorded as io_uring (the nearest asynchronous engine iomark knows)"),
            ));
            EngineKind::IoUring
        }
    };
    let direct = o("direct").is_some_and(|s| s == "1" || s == "true");
    if !direct {
        warnings.push(Warning::new(
            WarningKind::BufferedIo,
            format!("fio job '{name}' ran without direct=1: the page cache may have been measured instead of the device"),
        ));
    }
    let data = if let Some(p) = o("buffer_compress_percentage").and_then(|s| s.parse::<u8>().ok()) {
        DataPattern::Compressible(p.min(100))
    } else if o("zero_buffers").is_some() {
        DataPattern::Zeros
    } else {
        DataPattern::Random
    };
    let spec = DiskJobSpec {
        name: name.to_string(),
        rw,
        bs,
        iodepth: num("iodepth", 1) as u32,
        iodepth_batch: num("iodepth_batch_submit", num("iodepth_batch", 1)).max(1) as u32,
        numjobs: if single_clone {
            1
        } else {
            num("numjobs", 1) as u32
        },
        size: o("size")
            .and_then(|s| s.parse::<Bytes>().ok())
            .unwrap_or_default(),
        runtime: o("runtime").and_then(|s| s.parse::<Nanos>().ok()),
        ramp: o("ramp_time")
            .and_then(|s| s.parse::<Nanos>().ok())
            .unwrap_or_default(),
        engine,
        direct,
        data,
        rwmix_read: o("rwmixread")
            .and_then(|s| s.parse::<u8>().ok())
            .unwrap_or(50),
        seed: num("randseed", 0),
    };
    let at = |k: &str| format!("jobs[{index}].{k}");
    let read = direction(job, "read", &at("read"))?;
    let write = direction(job, "write", &at("write"))?;
    if read.is_none() && write.is_none() && job.get("read").is_none() {
        return Err(ImportError::Missing {
            tool: TOOL,
            field: at("read"),
        });
    }
    let iodepth_level: BTreeMap<String, f64> = job["iodepth_level"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_f64().map(|f| (k.clone(), f)))
                .collect()
        })
        .unwrap_or_default();
    let result = DiskJobResult {
        spec,
        read,
        write,
        // fio's JSON has no per-interval samples (they need --write_bw_log).
        samples: Vec::new(),
        cpu: CpuUsage {
            user_pct: job["usr_cpu"].as_f64().unwrap_or(0.0),
            system_pct: job["sys_cpu"].as_f64().unwrap_or(0.0),
        },
        iodepth_level,
        // Not in fio's output; its iodepth_level buckets are too coarse to
        // recover it.
        mean_depth: 0.0,
        page_cache_bypassed: direct,
        interrupted: false,
        warnings,
    };
    Ok((result, job["error"].as_i64().unwrap_or(0)))
}

/// One direction of a job, or `None` when it did no I/O that way.
fn direction(job: &Value, key: &str, at: &str) -> Result<Option<DirectionResult>, ImportError> {
    let Some(d) = job.get(key) else {
        return Ok(None);
    };
    let total_ios = d["total_ios"].as_u64().unwrap_or(0);
    let io_bytes = d["io_bytes"].as_u64().unwrap_or(0);
    if total_ios == 0 && io_bytes == 0 {
        return Ok(None);
    }
    let missing = |f: &str| ImportError::Missing {
        tool: TOOL,
        field: format!("{at}.{f}"),
    };
    let runtime_ms = d["runtime"].as_u64().ok_or_else(|| missing("runtime"))?;
    let bw = match d["bw_bytes"].as_f64() {
        Some(b) => b,
        // fio before 3.? printed only `bw`, in KiB/s.
        None => d["bw"].as_f64().ok_or_else(|| missing("bw_bytes"))? * 1024.0,
    };
    let iops = d["iops"].as_f64().ok_or_else(|| missing("iops"))?;
    let c = &d["clat_ns"];
    let percentiles = c["percentile"]
        .as_object()
        .map(|m| {
            let mut p: Vec<Percentile> = m
                .iter()
                .filter_map(|(k, v)| {
                    Some(Percentile {
                        percent: k.parse().ok()?,
                        ns: v.as_u64()?,
                    })
                })
                .collect();
            p.sort_by(|a, b| a.percent.total_cmp(&b.percent));
            p
        })
        .unwrap_or_default();
    Ok(Some(DirectionResult {
        io_bytes: Bytes(io_bytes),
        ios: total_ios,
        runtime: Nanos(runtime_ms * 1_000_000),
        bw: BytesPerSec(bw),
        iops: Iops(iops),
        clat: LatencySummary {
            count: c["N"].as_u64().unwrap_or(0),
            min_ns: c["min"].as_u64().unwrap_or(0),
            max_ns: c["max"].as_u64().unwrap_or(0),
            mean_ns: c["mean"].as_f64().unwrap_or(0.0),
            stddev_ns: c["stddev"].as_f64().unwrap_or(0.0),
            percentiles,
        },
    }))
}

/// The file, device or directory the jobs worked on.
fn target(jobs: &[Value], global: Option<&Value>) -> DiskTarget {
    let first = &jobs[0];
    let given = opt(first, global, "filename")
        .or_else(|| opt(first, global, "directory"))
        .unwrap_or("")
        .to_string();
    let kind = if given.starts_with("/dev/") {
        TargetKind::BlockDevice
    } else {
        TargetKind::File
    };
    DiskTarget {
        path: given.clone(),
        given,
        kind,
        size: Bytes(0),
        logical_block_size: 0,
    }
}
