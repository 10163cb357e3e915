//! `iomark net client`'s flags: iperf3's names and meanings.

use clap::Args;
use iomark_model::units::Bytes;
use iomark_net::settings::{parse_bitrate, ClientSettings};
use iomark_net::RateFormat;

/// `iomark net client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The server: a host name or an IPv4/IPv6 address.
    pub(super) host: String,
    /// The server's port.
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub(super) port: u16,
    /// Seconds to transmit (default 10; not with -n or -k).
    #[arg(short = 't', long = "time", value_name = "SECS")]
    pub(super) time: Option<u32>,
    /// Send this many bytes instead of for a time, e.g. 10M (1024-based).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES")]
    pub(super) bytes: Option<Bytes>,
    /// Send this many blocks (-l each) instead of for a time.
    #[arg(short = 'k', long = "blockcount", value_name = "BLOCKS")]
    pub(super) blockcount: Option<Bytes>,
    /// IPv4 only.
    #[arg(short = '4', long = "version4")]
    pub(super) ipv4: bool,
    /// IPv6 only.
    #[arg(short = '6', long = "version6")]
    pub(super) ipv6: bool,
    /// Connect from this local address, interface or both: ADDR, ADDR%DEV or %DEV.
    #[arg(short = 'B', long = "bind", value_name = "ADDR[%DEV]")]
    pub(super) bind: Option<String>,
    /// Local port of the first data stream; stream i uses PORT + i.
    #[arg(long, value_name = "PORT")]
    pub(super) cport: Option<u16>,
    /// Send with sendfile(2), without copying the payload (TCP).
    #[arg(short = 'Z', long = "zerocopy")]
    pub(super) zerocopy: bool,
    /// TCP congestion control for both ends, e.g. bbr or cubic.
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub(super) congestion: Option<String>,
    /// TCP maximum segment size (MSS) of the data streams.
    #[arg(short = 'M', long = "set-mss", value_name = "BYTES")]
    pub(super) mss: Option<u32>,
    /// IP type of service byte, e.g. 0x10 (decimal, 0x hex or 0 octal).
    #[arg(short = 'S', long = "tos", value_name = "TOS")]
    pub(super) tos: Option<String>,
    /// DSCP value, 0 to 63 or a name such as ef or af41 (sets the TOS byte).
    #[arg(long, value_name = "DSCP")]
    pub(super) dscp: Option<String>,
    /// Socket pacing rate in bits per second per stream (SO_MAX_PACING_RATE), e.g. 100M.
    #[arg(long = "fq-rate", value_name = "RATE", value_parser = parse_bitrate)]
    pub(super) fq_rate: Option<u64>,
    /// Run on CPU n, and ask the server to run on CPU m: n or n,m.
    #[arg(short = 'A', long = "affinity", value_name = "n[,m]")]
    pub(super) affinity: Option<String>,
    /// Start each output line with "TITLE:  " (also sent to the server).
    #[arg(short = 'T', long = "title", value_name = "TITLE")]
    pub(super) title: Option<String>,
    /// Unit of the rate column: k, m, g, t (bits/s) or K, M, G, T (Bytes/s).
    #[arg(short = 'f', long = "format", value_name = "UNIT", value_parser = RateFormat::parse)]
    pub(super) format: Option<RateFormat>,
    /// Flush the output after every line (to follow --logfile live).
    #[arg(long)]
    pub(super) forceflush: bool,
    /// Start each output line with the time, as strftime FORMAT (default "%c ").
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "%c ")]
    pub(super) timestamps: Option<String>,
    /// Append the output to FILE instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub(super) logfile: Option<std::path::PathBuf>,
    /// iperf3's file transfer; refused, see docs/net.md.
    #[arg(short = 'F', long = "file", value_name = "FILE", hide = true)]
    pub(super) file: Option<std::path::PathBuf>,
    /// Print the server's output of the test as well (its -J document with -J).
    #[arg(long = "get-server-output")]
    pub(super) get_server_output: bool,
    /// Print JSON as the test runs, one object per line (iperf3 3.17+'s --json-stream).
    #[arg(long = "json-stream")]
    pub(super) json_stream: bool,
    /// Authenticate as this user to an iperf3 server that requires it (password in IPERF3_PASSWORD).
    #[arg(long, value_name = "USER")]
    pub(super) username: Option<String>,
    /// The server's RSA public key, PEM, for --username.
    #[arg(long = "rsa-public-key-path", value_name = "FILE")]
    pub(super) rsa_public_key_path: Option<std::path::PathBuf>,
    /// Encrypt the credentials with PKCS#1 v1.5 padding (iperf3 servers before 3.17) instead of OAEP.
    #[arg(long = "use-pkcs1-padding")]
    pub(super) use_pkcs1_padding: bool,
    /// Do not time TCP handshakes with the server's port before and during the test (RTT idle / under load).
    #[arg(long = "no-rtt-probe")]
    pub(super) no_rtt_probe: bool,
    /// Milliseconds to wait for the server to answer the connection (default 10000).
    #[arg(long = "connect-timeout", value_name = "MS")]
    pub(super) connect_timeout: Option<u64>,
    /// Seconds between interval reports; 0 turns them off.
    #[arg(short = 'i', long, default_value = "1", value_name = "SECS")]
    pub(super) interval: f64,
    /// Parallel streams (1 to 128); each runs on its own thread.
    #[arg(short = 'P', long, default_value_t = 1, value_name = "N")]
    pub(super) parallel: u32,
    /// Reverse: the server sends, the client receives.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub(super) reverse: bool,
    /// Send and receive at the same time.
    #[arg(long)]
    pub(super) bidir: bool,
    /// Bytes per write (TCP, default 128K) or datagram size (UDP, default the MSS).
    #[arg(short = 'l', long = "length", value_name = "LEN")]
    pub(super) length: Option<Bytes>,
    /// Socket buffer size on both ends (sets the TCP window), e.g. 4M.
    #[arg(short = 'w', long = "window", value_name = "SIZE")]
    pub(super) window: Option<Bytes>,
    /// Set TCP_NODELAY on the data streams.
    #[arg(short = 'N', long = "no-delay")]
    pub(super) no_delay: bool,
    /// Leave out the first SECS seconds (TCP slow start) from the totals.
    #[arg(short = 'O', long = "omit", default_value_t = 0, value_name = "SECS")]
    pub(super) omit: u32,
    /// Use UDP instead of TCP.
    #[arg(short = 'u', long)]
    pub(super) udp: bool,
    /// Target bits per second per stream, e.g. 100M or 1G (UDP default 1M; TCP unlimited).
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = parse_bitrate)]
    pub(super) bitrate: Option<u64>,
    /// Print the results as JSON in iperf3's -J layout.
    #[arg(short = 'J', long = "json")]
    pub(super) json: bool,
    /// Verbose, as iperf3's -V: the settings, the cookie, the test's
    /// parameters, per-stream TCP figures.
    #[arg(short = 'V', long)]
    pub(super) verbose: bool,
    #[command(flatten)]
    pub(super) store: crate::record::StoreArgs,
}

impl ClientArgs {
    pub(super) fn settings(&self) -> ClientSettings {
        ClientSettings {
            host: self.host.clone(),
            port: self.port,
            time: self.time,
            bytes: self.bytes,
            blockcount: self.blockcount,
            ipv4: self.ipv4,
            ipv6: self.ipv6,
            bind: self.bind.clone(),
            cport: self.cport,
            zerocopy: self.zerocopy,
            congestion: self.congestion.clone(),
            mss: self.mss,
            tos: self.tos.clone(),
            dscp: self.dscp.clone(),
            fq_rate: self.fq_rate,
            affinity: self.affinity.clone(),
            title: self.title.clone(),
            format: self.format.unwrap_or_default(),
            connect_timeout_ms: self.connect_timeout,
            get_server_output: self.get_server_output,
            no_rtt_probe: self.no_rtt_probe,
            json_stream: self.json_stream,
            username: self.username.clone(),
            rsa_public_key_path: self.rsa_public_key_path.clone(),
            // iperf3's variable, read where the command line is read.
            password: std::env::var("IPERF3_PASSWORD").ok(),
            use_pkcs1_padding: self.use_pkcs1_padding,
            interval_secs: self.interval,
            parallel: self.parallel,
            reverse: self.reverse,
            bidir: self.bidir,
            length: self.length,
            window: self.window,
            no_delay: self.no_delay,
            omit: self.omit,
            udp: self.udp,
            bitrate: self.bitrate,
            json: self.json,
            verbose: self.verbose,
        }
    }
}
