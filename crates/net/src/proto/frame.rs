//! The control connection's byte stream: state bytes, 4-byte big-endian
//! length-prefixed JSON, and SERVER_ERROR's two integers (sections 1.3,
//! 1.4, 1.11).
//!
//! The [`Decoder`] buffers what was read and hands out one message when the
//! caller says which kind it expects next; the protocol is strictly
//! alternating, so the caller always knows.

use super::{ProtoError, State};

/// Incremental reader of control-connection bytes.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    pos: usize,
}

impl Decoder {
    /// An empty decoder.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Append bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes fed but not consumed yet.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next state byte, or `None` when more bytes are needed.
    pub fn next_state(&mut self) -> Option<Result<State, ProtoError>> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(State::from_byte(b))
    }

    /// The next `n` raw bytes (the cookie), or `None` when more are needed.
    pub fn next_bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        let b = self.buf.get(self.pos..self.pos.checked_add(n)?)?.to_vec();
        self.pos += n;
        Some(b)
    }

    /// The next big-endian `i32` (SERVER_ERROR's code and errno).
    pub fn next_i32(&mut self) -> Option<i32> {
        let b: [u8; 4] = self.buf.get(self.pos..self.pos + 4)?.try_into().ok()?;
        self.pos += 4;
        Some(i32::from_be_bytes(b))
    }

    /// The next JSON frame's body, or `None` when more bytes are needed.
    /// A length above `limit` is refused as soon as the header is read, so an
    /// oversized message is never buffered.
    pub fn next_frame(&mut self, limit: usize) -> Option<Result<Vec<u8>, ProtoError>> {
        let header: [u8; 4] = self.buf.get(self.pos..self.pos + 4)?.try_into().ok()?;
        let len = u32::from_be_bytes(header);
        if len == 0 {
            self.pos += 4;
            return Some(Err(ProtoError::EmptyFrame));
        }
        if len as u64 > limit as u64 {
            self.pos += 4;
            return Some(Err(ProtoError::FrameTooLarge {
                len: len as u64,
                limit,
            }));
        }
        let start = self.pos + 4;
        let body = self.buf.get(start..start + len as usize)?.to_vec();
        self.pos = start + len as usize;
        Some(Ok(body))
    }
}

/// A JSON body with its length prefix, ready to write.
pub fn encode(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + 4);
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(json);
    out
}

/// SERVER_ERROR with its two integers, ready to write.
pub fn encode_server_error(code: i32, errno: i32) -> [u8; 9] {
    let mut out = [0u8; 9];
    out[0] = State::ServerError.byte();
    out[1..5].copy_from_slice(&code.to_be_bytes());
    out[5..9].copy_from_slice(&errno.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn oversized_frame_is_refused_from_its_header() {
        let mut d = Decoder::new();
        d.feed(&(9000u32).to_be_bytes());
        assert_eq!(
            d.next_frame(8192),
            Some(Err(ProtoError::FrameTooLarge {
                len: 9000,
                limit: 8192
            }))
        );
    }

    #[test]
    fn server_error_encodes_code_and_errno() {
        let b = encode_server_error(6, 0);
        let mut d = Decoder::new();
        d.feed(&b);
        assert_eq!(d.next_state(), Some(Ok(State::ServerError)));
        assert_eq!(d.next_i32(), Some(6));
        assert_eq!(d.next_i32(), Some(0));
        assert_eq!(d.next_i32(), None);
    }

    proptest! {
        #[test]
        fn a_session_decodes_the_same_however_it_is_split(
            body in proptest::collection::vec(any::<u8>(), 1..3000),
            cuts in proptest::collection::vec(0usize..4000, 0..8),
        ) {
            let mut wire = vec![State::ParamExchange.byte()];
            wire.extend(encode(&body));
            wire.push(State::TestStart.byte());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
            cuts.push(wire.len());
            cuts.sort();
            let mut d = Decoder::new();
            let mut got = Vec::new();
            let mut stage = 0;
            let mut last = 0;
            for c in cuts {
                d.feed(&wire[last..c]);
                last = c;
                loop {
                    let progressed = match stage {
                        0 | 2 => match d.next_state() {
                            Some(s) => { got.push(format!("{:?}", s.unwrap())); true }
                            None => false,
                        },
                        1 => match d.next_frame(4096) {
                            Some(f) => { prop_assert_eq!(f.unwrap(), body.clone()); true }
                            None => false,
                        },
                        _ => false,
                    };
                    if !progressed { break; }
                    stage += 1;
                }
            }
            prop_assert_eq!(stage, 3);
            prop_assert_eq!(got, vec!["ParamExchange".to_string(), "TestStart".to_string()]);
            prop_assert_eq!(d.pending(), 0);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), limit in 0usize..100) {
            let mut d = Decoder::new();
            d.feed(&bytes);
            while d.pending() > 0 {
                let before = d.pending();
                let _ = d.next_frame(limit);
                let _ = d.next_state();
                let _ = d.next_i32();
                if d.pending() == before { break; }
            }
        }
    }
}
