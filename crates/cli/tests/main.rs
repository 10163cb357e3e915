//! The CLI's integration tests: one binary, one module per area, as
//! ripgrep's are (a binary per file compiled and linked the shared harness
//! 32 times). The MPI runs are the one other binary, tests/mpi_rig.rs,
//! built with the `mpi` feature.
//!
//! Tests of an area that touch something the whole machine shares (swap,
//! zram0, the page cache of a device) take that resource's lock from
//! `common::exclusive` so that two areas never meet on it.

mod common;
mod net_common;

mod artefacts_rig;
mod compare_names;
mod compare_sizes_rig;
mod device_seen_rig;
mod disk_accuracy;
mod disk_descriptors;
mod disk_json_stream;
mod disk_progress;
mod disk_races;
mod disk_safety;
mod disk_store;
mod disk_submission;
mod fio_habits;
mod info_loop;
mod info_root;
mod info_zram;
mod knee_rig;
mod machine_causes;
mod mem_json_stream;
mod mem_kernels;
mod mem_limit_live;
mod mem_limits;
mod mem_sweep;
mod mpi_refusals;
mod net_abuse;
mod net_auth;
mod net_client_options;
mod net_interop;
mod net_iperf3_flags;
mod net_json_stream;
mod net_latency;
mod net_link;
mod net_many_clients;
mod net_shaped;
mod profiles_rig;
mod profiles_sweep;
mod profiles_testfile;
mod pts_rig;
mod report_compare;
mod report_html;
mod report_many;
mod results_abuse;
mod results_cli;
mod results_gate;
mod serve_limits;
mod serve_live;
mod serve_pages;
mod serve_store;
mod shell_man;
mod spoofing;
mod sustained_rig;
mod thread_limits;
mod verify_custom;
mod verify_rig;
