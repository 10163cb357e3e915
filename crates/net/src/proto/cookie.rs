//! The 37-byte cookie that names a test (section 1.2).

use rand::Rng;

/// Characters a cookie is drawn from: lower-case base32.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A test's cookie: 36 printable characters and a NUL on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie([u8; Cookie::LEN]);

impl Cookie {
    /// Length on the wire, NUL included.
    pub const LEN: usize = 37;

    /// A fresh random cookie.
    pub fn random() -> Cookie {
        let mut rng = rand::rng();
        let mut b = [0u8; Cookie::LEN];
        for c in &mut b[..Cookie::LEN - 1] {
            *c = ALPHABET[rng.random_range(0..ALPHABET.len())];
        }
        Cookie(b)
    }

    /// The cookie as read from the wire; iperf3 never checks the alphabet.
    pub fn from_wire(b: [u8; Cookie::LEN]) -> Cookie {
        Cookie(b)
    }

    /// The bytes to send.
    pub fn wire(&self) -> &[u8; Cookie::LEN] {
        &self.0
    }

    /// Whether a data stream's cookie names this test. Like iperf3's C string
    /// compare, only the bytes up to the first NUL count.
    pub fn matches(&self, other: &Cookie) -> bool {
        self.text_bytes() == other.text_bytes()
    }

    fn text_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(Cookie::LEN);
        &self.0[..end]
    }

    /// The printable part, as `-J` shows it in `start.cookie`. A server's
    /// cookie is the client's bytes, which iperf3 never checks: control
    /// characters are shown escaped, never sent to a terminal.
    pub fn as_text(&self) -> String {
        iomark_model::escape::escape_controls(&String::from_utf8_lossy(self.text_bytes()))
            .into_owned()
    }
}

impl std::fmt::Debug for Cookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cookie({})", self.as_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_cookie_is_36_base32_chars_and_nul() {
        let c = Cookie::random();
        assert_eq!(c.wire()[36], 0);
        assert!(c.wire()[..36].iter().all(|b| ALPHABET.contains(b)));
        assert_eq!(c.as_text().len(), 36);
        assert_ne!(c, Cookie::random());
    }

    #[test]
    fn match_stops_at_nul() {
        let c = Cookie::random();
        let mut w = *c.wire();
        assert!(c.matches(&Cookie::from_wire(w)));
        w[5] ^= 1;
        assert!(!c.matches(&Cookie::from_wire(w)));
    }

    #[test]
    fn a_peers_control_characters_are_shown_escaped() {
        let mut w = *Cookie::random().wire();
        w[..6].copy_from_slice(b"\x1b]0;x\x07");
        let text = Cookie::from_wire(w).as_text();
        assert!(text.starts_with("\\x1b]0;x\\x07"), "{text}");
        assert!(!text.contains('\x1b'));
    }
}
