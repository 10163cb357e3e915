//! What the user said about a client test: iperf3's client flags, with
//! the `clap` feature their definitions (the doc comments are their help).

use iomark_model::units::Bytes;

#[cfg(feature = "clap")]
use super::parse_bitrate;
use crate::RateFormat;

/// What the user said about a client test.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ClientSettings {
    /// The server: a host name or an IPv4/IPv6 address.
    pub host: String,

    /// The server's port.
    #[cfg_attr(feature = "clap", arg(short = 'p', long, default_value_t = 5201))]
    pub port: u16,

    /// Seconds to transmit (default 10; not with -n or -k).
    #[cfg_attr(feature = "clap", arg(short = 't', long = "time", value_name = "SECS"))]
    pub time: Option<u32>,

    /// Send this many bytes instead of for a time, e.g. 10M (1024-based).
    #[cfg_attr(
        feature = "clap",
        arg(short = 'n', long = "bytes", value_name = "BYTES")
    )]
    pub bytes: Option<Bytes>,

    /// Send this many blocks (-l each) instead of for a time.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'k', long = "blockcount", value_name = "BLOCKS")
    )]
    pub blockcount: Option<Bytes>,

    /// IPv4 only.
    #[cfg_attr(feature = "clap", arg(short = '4', long = "version4"))]
    pub ipv4: bool,

    /// IPv6 only.
    #[cfg_attr(feature = "clap", arg(short = '6', long = "version6"))]
    pub ipv6: bool,

    /// Connect from this local address, interface or both: ADDR, ADDR%DEV or %DEV.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'B', long = "bind", value_name = "ADDR[%DEV]")
    )]
    pub bind: Option<String>,

    /// Local port of the first data stream; stream i uses PORT + i.
    #[cfg_attr(feature = "clap", arg(long, value_name = "PORT"))]
    pub cport: Option<u16>,

    /// Send with sendfile(2), without copying the payload (TCP).
    #[cfg_attr(feature = "clap", arg(short = 'Z', long = "zerocopy"))]
    pub zerocopy: bool,

    /// TCP congestion control for both ends, e.g. bbr or cubic.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'C', long = "congestion", value_name = "ALGO")
    )]
    pub congestion: Option<String>,

    /// TCP maximum segment size (MSS) of the data streams.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'M', long = "set-mss", value_name = "BYTES")
    )]
    pub mss: Option<u32>,

    /// IP type of service byte, e.g. 0x10 (decimal, 0x hex or 0 octal).
    #[cfg_attr(feature = "clap", arg(short = 'S', long = "tos", value_name = "TOS"))]
    pub tos: Option<String>,

    /// DSCP value, 0 to 63 or a name such as ef or af41 (sets the TOS byte).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DSCP"))]
    pub dscp: Option<String>,

    /// Socket pacing rate in bits per second per stream (SO_MAX_PACING_RATE), e.g. 100M.
    #[cfg_attr(feature = "clap", arg(long = "fq-rate", value_name = "RATE", value_parser = parse_bitrate))]
    pub fq_rate: Option<u64>,

    /// Run on CPU n, and ask the server to run on CPU m: n or n,m.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'A', long = "affinity", value_name = "n[,m]")
    )]
    pub affinity: Option<String>,

    /// Start each output line with "TITLE:  " (also sent to the server).
    #[cfg_attr(
        feature = "clap",
        arg(short = 'T', long = "title", value_name = "TITLE")
    )]
    pub title: Option<String>,

    /// Unit of the rate column: k, m, g, t (bits/s) or K, M, G, T (Bytes/s).
    #[cfg_attr(feature = "clap", arg(short = 'f', long = "format", value_name = "UNIT", value_parser = RateFormat::parse))]
    pub format: Option<RateFormat>,

    /// Flush the output after every line (to follow --logfile live).
    #[cfg_attr(feature = "clap", arg(long))]
    pub forceflush: bool,

    /// Start each output line with the time, as strftime FORMAT (default "%c ").
    #[cfg_attr(feature = "clap", arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "%c "))]
    pub timestamps: Option<String>,

    /// Append the output to FILE instead of printing it.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub logfile: Option<std::path::PathBuf>,

    /// iperf3's file transfer; refused, see docs/net.md.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'F', long = "file", value_name = "FILE", hide = true)
    )]
    pub file: Option<std::path::PathBuf>,

    /// Print the server's output of the test as well (its -J document with -J).
    #[cfg_attr(feature = "clap", arg(long = "get-server-output"))]
    pub get_server_output: bool,

    /// Print JSON as the test runs, one object per line (iperf3 3.17+'s --json-stream).
    #[cfg_attr(feature = "clap", arg(long = "json-stream"))]
    pub json_stream: bool,

    /// Authenticate as this user to an iperf3 server that requires it (password in IPERF3_PASSWORD).
    #[cfg_attr(feature = "clap", arg(long, value_name = "USER"))]
    pub username: Option<String>,

    /// The server's RSA public key, PEM, for --username.
    #[cfg_attr(
        feature = "clap",
        arg(long = "rsa-public-key-path", value_name = "FILE")
    )]
    pub rsa_public_key_path: Option<std::path::PathBuf>,

    /// The password for --username: iperf3 reads it from IPERF3_PASSWORD,
    /// never from the command line.
    #[cfg_attr(feature = "clap", arg(skip = std::env::var("IPERF3_PASSWORD").ok()))]
    pub password: Option<String>,

    /// Encrypt the credentials with PKCS#1 v1.5 padding (iperf3 servers before 3.17) instead of OAEP.
    #[cfg_attr(feature = "clap", arg(long = "use-pkcs1-padding"))]
    pub use_pkcs1_padding: bool,

    /// Do not time TCP handshakes with the server's port before and during the test (RTT idle / under load).
    #[cfg_attr(feature = "clap", arg(long = "no-rtt-probe"))]
    pub no_rtt_probe: bool,

    /// Milliseconds to wait for the server to answer the connection (default 10000).
    #[cfg_attr(feature = "clap", arg(long = "connect-timeout", value_name = "MS"))]
    pub connect_timeout_ms: Option<u64>,

    /// Seconds between interval reports; 0 turns them off.
    #[cfg_attr(
        feature = "clap",
        arg(
            short = 'i',
            long = "interval",
            default_value = "1",
            value_name = "SECS"
        )
    )]
    pub interval_secs: f64,

    /// Parallel streams (1 to 128); each runs on its own thread.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'P', long, default_value_t = 1, value_name = "N")
    )]
    pub parallel: u32,

    /// Reverse: the server sends, the client receives.
    #[cfg_attr(feature = "clap", arg(short = 'R', long, conflicts_with = "bidir"))]
    pub reverse: bool,

    /// Send and receive at the same time.
    #[cfg_attr(feature = "clap", arg(long))]
    pub bidir: bool,

    /// Bytes per write (TCP, default 128K) or datagram size (UDP, default the MSS).
    #[cfg_attr(
        feature = "clap",
        arg(short = 'l', long = "length", value_name = "LEN")
    )]
    pub length: Option<Bytes>,

    /// Socket buffer size on both ends (sets the TCP window), e.g. 4M.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'w', long = "window", value_name = "SIZE")
    )]
    pub window: Option<Bytes>,

    /// Set TCP_NODELAY on the data streams.
    #[cfg_attr(feature = "clap", arg(short = 'N', long = "no-delay"))]
    pub no_delay: bool,

    /// Leave out the first SECS seconds (TCP slow start) from the totals.
    #[cfg_attr(
        feature = "clap",
        arg(short = 'O', long = "omit", default_value_t = 0, value_name = "SECS")
    )]
    pub omit: u32,

    /// Use UDP instead of TCP.
    #[cfg_attr(feature = "clap", arg(short = 'u', long))]
    pub udp: bool,

    /// Target bits per second per stream, e.g. 100M or 1G (UDP default 1M; TCP unlimited).
    #[cfg_attr(feature = "clap", arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = parse_bitrate))]
    pub bitrate: Option<u64>,

    /// Print the results as JSON in iperf3's -J layout.
    #[cfg_attr(feature = "clap", arg(short = 'J', long = "json"))]
    pub json: bool,

    /// Verbose, as iperf3's -V: the settings, the cookie, the test's
    /// parameters, per-stream TCP figures.
    #[cfg_attr(feature = "clap", arg(short = 'V', long))]
    pub verbose: bool,
}
