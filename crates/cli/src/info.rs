//! `iomark info [PATH|IFACE]`: the machine, and the file system, devices,
//! links and ceilings behind a path, or a network interface's driver, link
//! and the bus under it.

use std::path::PathBuf;

use iomark_host::{DeviceChain, HostInfoExt};
use iomark_model::device::HostInfo;

use crate::exit::{print, print_json, Exit};
use iomark_text::terminal::text_width;

/// Raw arguments of `iomark info`.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// A file, directory or block device (symlinks are followed), or a
    /// network interface (`eth0`) when no such path exists.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Print one JSON object `{"schema_version": 1, "host": ..., "device": ...}`
    /// instead of text (docs/result-schema.md).
    #[arg(long)]
    json: bool,
}

/// Runs `iomark info`.
pub fn run(args: InfoArgs) -> anyhow::Result<Exit> {
    if !args.path.exists() {
        if let Some(nic) = args.path.to_str().and_then(iomark_host::nic_chain) {
            return nic_info(&nic, args.json);
        }
    }
    // The error names the path and the fix already.
    let chain = DeviceChain::for_path(&args.path)?;
    let host = HostInfo::collect();
    if args.json {
        print_json(&iomark_text::json::info(&host, chain.report()))?;
    } else {
        let text = iomark_text::device_info(&host, chain.report(), text_width());
        print(&text)?;
    }
    Ok(Exit::Success)
}

fn nic_info(nic: &iomark_model::net::NicChain, json: bool) -> anyhow::Result<Exit> {
    let host = HostInfo::collect();
    if json {
        print_json(&iomark_text::json::nic_info(&host, nic))?;
    } else {
        print(&iomark_text::nic_info(&host, nic, text_width()))?;
    }
    for w in iomark_host::nic_warnings(nic, "this host's", None) {
        crate::record::eprint_fitted(&format!("iomark: warning: {w}"));
    }
    Ok(Exit::Success)
}
