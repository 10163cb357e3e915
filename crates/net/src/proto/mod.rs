//! The iperf3 control protocol, pure: bytes in, messages out.
//!
//! Nothing here touches a socket. [`frame::Decoder`] turns the bytes of a
//! control connection into state bytes, length-prefixed JSON frames and
//! error codes; [`params`] and [`results`] read and write the two JSON
//! messages with iperf3's compatibility rules (reference:
//! `iperf3-protocol.md`, sections 1.2 to 1.8), and [`untrusted`] escapes
//! every string they carry and range-checks the peer's figures on receipt.
//! Every parser here is fuzzed with proptest and returns an error, never
//! panics, on any input.

pub mod cookie;
pub mod frame;
pub mod params;
pub mod results;
pub mod untrusted;

pub use cookie::Cookie;
pub use frame::Decoder;
pub use params::{Params, Protocol};
pub use results::{Results, StreamResults};

/// The largest parameters JSON a server accepts (iperf3 3.18+ rule).
pub const MAX_PARAMS_LEN: usize = 8 * 1024;

/// The hello datagram a UDP client sends on each stream (`"9876"`).
pub const UDP_HELLO: [u8; 4] = *b"9876";
/// The reply a server sends on a UDP stream (`"6789"`).
pub const UDP_REPLY: [u8; 4] = *b"6789";
/// The reply servers before 3.12 sent: 987654321 in little-endian order.
pub const UDP_REPLY_LEGACY: [u8; 4] = 987_654_321u32.to_le_bytes();

/// One state byte on the control connection (section 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum State {
    /// All streams are connected: reset counters.
    TestStart = 1,
    /// Start moving data.
    TestRunning = 2,
    /// Defined by iperf3, never sent.
    ResultRequest = 3,
    /// The client's end condition was reached.
    TestEnd = 4,
    /// Defined by iperf3, never sent.
    StreamBegin = 5,
    /// Defined by iperf3, never sent.
    StreamRunning = 6,
    /// Defined by iperf3, never sent.
    StreamEnd = 7,
    /// Defined by iperf3, never sent.
    AllStreamsEnd = 8,
    /// The server asks for the parameters JSON.
    ParamExchange = 9,
    /// The server asks the client to open the data streams.
    CreateStreams = 10,
    /// The server was interrupted.
    ServerTerminate = 11,
    /// The client was interrupted.
    ClientTerminate = 12,
    /// Send your results JSON, then read mine.
    ExchangeResults = 13,
    /// The exchange is complete.
    DisplayResults = 14,
    /// The server's idle state, never sent.
    IperfStart = 15,
    /// The client is done and closes.
    IperfDone = 16,
    /// Busy server or bad cookie.
    AccessDenied = -1,
    /// An error; two big-endian i32 follow (iperf error code, errno).
    ServerError = -2,
}

impl State {
    /// The byte on the wire.
    pub fn byte(self) -> u8 {
        self as i8 as u8
    }

    /// Read a state byte.
    pub fn from_byte(b: u8) -> Result<State, ProtoError> {
        use State::*;
        Ok(match b as i8 {
            1 => TestStart,
            2 => TestRunning,
            3 => ResultRequest,
            4 => TestEnd,
            5 => StreamBegin,
            6 => StreamRunning,
            7 => StreamEnd,
            8 => AllStreamsEnd,
            9 => ParamExchange,
            10 => CreateStreams,
            11 => ServerTerminate,
            12 => ClientTerminate,
            13 => ExchangeResults,
            14 => DisplayResults,
            15 => IperfStart,
            16 => IperfDone,
            -1 => AccessDenied,
            -2 => ServerError,
            _ => return Err(ProtoError::UnknownState(b)),
        })
    }
}

/// iperf3 error codes used on the wire (`src/iperf_api.h`).
pub mod code {
    /// Test duration out of range.
    pub const DURATION: i32 = 5;
    /// Parallel streams out of range (1..128).
    pub const NUM_STREAMS: i32 = 6;
    /// TCP block size out of range.
    pub const BLOCK_SIZE: i32 = 7;
    /// Socket buffer size out of range.
    pub const BUF_SIZE: i32 = 8;
    /// MSS out of range.
    pub const MSS: i32 = 10;
    /// Omit time out of range.
    pub const OMIT: i32 = 12;
    /// SCTP is not available.
    pub const NO_SCTP: i32 = 18;
    /// UDP datagram size out of range.
    pub const UDP_BLOCK_SIZE: i32 = 20;
    /// TOS out of range.
    pub const BAD_TOS: i32 = 21;
    /// The requested duration is above the server's maximum (newer iperf3
    /// servers' `--server-max-duration`).
    pub const MAX_DURATION: i32 = 37;
    /// The server cannot listen (for the UDP streams).
    pub const LISTEN: i32 = 102;
    /// The congestion control asked for cannot be set (here: is no name).
    pub const SET_CONGESTION: i32 = 134;
    /// Unable to set the TCP MSS (`-M`).
    pub const SET_MSS: i32 = 123;
    /// Unable to set the IP TOS (`-S`, `--dscp`).
    pub const SET_TOS: i32 = 125;
    /// Unable to set the CPU affinity (`-A`).
    pub const AFFINITY: i32 = 132;
    /// Unable to set the socket pacing rate (`--fq-rate`).
    pub const SET_PACING: i32 = 140;
    /// The server refused the credentials (`--username`).
    pub const AUTH_TEST: i32 = 142;
    /// Unable to receive the cookie.
    pub const RECV_COOKIE: i32 = 106;
    /// Unable to receive the parameters.
    pub const RECV_PARAMS: i32 = 114;
    /// The client terminated the test.
    pub const CLIENT_TERM: i32 = 119;
    /// The server terminated the test.
    pub const SERVER_TERM: i32 = 120;
    /// The server is busy.
    pub const ACCESS_DENIED: i32 = 121;
    /// No data within the receive timeout.
    pub const NO_MSG: i32 = 144;
    /// The server's test duration expired.
    pub const SERVER_DURATION: i32 = 160;

    /// iperf3's message for a code, for the client's error line.
    pub fn describe(code: i32) -> &'static str {
        match code {
            DURATION => "test duration too long (maximum = 86400 seconds)",
            NUM_STREAMS => "number of parallel streams too large (maximum = 128)",
            BLOCK_SIZE => "block size too large (maximum = 1048576 bytes)",
            BUF_SIZE => "socket buffer size too large (maximum = 536870912 bytes)",
            MSS => "TCP MSS too large (maximum = 32767 bytes)",
            OMIT => "bogus value for --omit",
            NO_SCTP => "no SCTP support available",
            UDP_BLOCK_SIZE => "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)",
            BAD_TOS => "bad TOS value (must be between 0 and 255 inclusive)",
            MAX_DURATION => "test duration longer than the server's maximum (--max-duration)",
            LISTEN => "unable to start listener for connections",
            SET_MSS => "unable to set TCP/SCTP MSS",
            SET_TOS => "unable to set IP TOS",
            AFFINITY => "unable to set CPU affinity",
            SET_PACING => "unable to set socket pacing",
            AUTH_TEST => "test authorization failed (check --username, IPERF3_PASSWORD and the server's key and clock)",
            SET_CONGESTION => "unable to set TCP_CONGESTION: supplied congestion control algorithm not supported on this host",
            RECV_COOKIE => "unable to receive cookie at server",
            RECV_PARAMS => "unable to receive parameters from client",
            CLIENT_TERM => "the client has terminated",
            SERVER_TERM => "the server has terminated",
            ACCESS_DENIED => "the server is busy running a test. try again later",
            NO_MSG => "idle timeout for receiving data",
            SERVER_DURATION => "server test duration expired",
            _ => "unknown iperf3 error",
        }
    }
}

/// Why bytes from a peer could not be read as protocol.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// A byte that is no iperf3 state.
    #[error("unknown state byte 0x{0:02x}: the peer does not speak iperf3's protocol")]
    UnknownState(u8),
    /// A JSON frame longer than the limit.
    #[error("JSON message of {len} bytes is longer than the limit of {limit} bytes")]
    FrameTooLarge {
        /// The announced length.
        len: u64,
        /// The limit.
        limit: usize,
    },
    /// A JSON frame of length zero.
    #[error("empty JSON message")]
    EmptyFrame,
    /// The JSON could not be read.
    #[error("malformed JSON message: {0}")]
    BadJson(String),
    /// A figure or name in the peer's results that no test can have.
    #[error("the peer's results are refused: {field} {problem}")]
    BadResults {
        /// The JSON path of the field (`streams[0].bytes`).
        field: String,
        /// What is wrong with it, with the value.
        problem: String,
    },
    /// A parameter outside iperf3's range or of the wrong type.
    #[error("parameter '{key}' is invalid: {reason}")]
    BadParam {
        /// The JSON key.
        key: &'static str,
        /// What is wrong with it.
        reason: String,
        /// The iperf3 error code a server answers with.
        code: i32,
    },
}

impl ProtoError {
    /// The iperf3 error code a server sends back for this error.
    pub fn iperf_code(&self) -> i32 {
        match self {
            ProtoError::BadParam { code, .. } => *code,
            _ => code::RECV_PARAMS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn state_bytes_match_the_spec() {
        assert_eq!(State::AccessDenied.byte(), 0xff);
        assert_eq!(State::ServerError.byte(), 0xfe);
        assert_eq!(State::IperfDone.byte(), 0x10);
        assert_eq!(State::CreateStreams.byte(), 0x0a);
    }

    proptest! {
        #[test]
        fn state_byte_round_trips_or_errors(b in any::<u8>()) {
            match State::from_byte(b) {
                Ok(s) => prop_assert_eq!(s.byte(), b),
                Err(e) => prop_assert_eq!(e, ProtoError::UnknownState(b)),
            }
        }
    }
}
