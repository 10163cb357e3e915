//! `-f`: the unit of the rate column, as iperf3's `units.c` picks it.

/// The rate column's unit: iperf3's `-f` letter. Lowercase letters are bits
/// per second (1000-based), uppercase bytes per second (1024-based); `a`/`A`
/// pick the largest unit the value reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateFormat(char);

impl Default for RateFormat {
    /// iperf3's default: adaptive bits.
    fn default() -> Self {
        RateFormat('a')
    }
}

impl RateFormat {
    /// Read an `-f` letter: `a b k m g t` or `A B K M G T`.
    pub fn parse(s: &str) -> Result<RateFormat, String> {
        match s {
            "a" | "b" | "k" | "m" | "g" | "t" | "A" | "B" | "K" | "M" | "G" | "T" => {
                Ok(RateFormat(s.chars().next().expect("one letter")))
            }
            _ => Err(format!(
                "-f {s}: give one of k, m, g, t (Kbits, Mbits, ... per second), \
                 K, M, G, T (KBytes, MBytes, ...), or a/A for adaptive"
            )),
        }
    }

    /// `bits_per_sec` in this unit, four significant characters, e.g.
    /// ` 941 Mbits/sec`.
    pub fn rate(self, bits_per_sec: f64) -> String {
        let bits = self.0.is_ascii_lowercase();
        let (mut v, step, labels) = if bits {
            (
                bits_per_sec,
                1000.0,
                ["bits", "Kbits", "Mbits", "Gbits", "Tbits"],
            )
        } else {
            (
                bits_per_sec / 8.0,
                1024.0,
                ["Bytes", "KBytes", "MBytes", "GBytes", "TBytes"],
            )
        };
        let power = match self.0.to_ascii_lowercase() {
            'b' => 0,
            'k' => 1,
            'm' => 2,
            'g' => 3,
            't' => 4,
            _ => {
                let mut p = 0;
                let mut t = v;
                while t >= step && p < 4 {
                    t /= step;
                    p += 1;
                }
                p
            }
        };
        v /= f64::powi(step, power);
        format!("{} {}/sec", super::text::fmt_num(v), labels[power as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_pick_iperf3s_units() {
        let f = |l: &str, v: f64| RateFormat::parse(l).unwrap().rate(v);
        assert_eq!(f("a", 941.0e6), " 941 Mbits/sec");
        assert_eq!(f("a", 15.6e9), "15.6 Gbits/sec");
        assert_eq!(f("k", 941.0e6), "941000 Kbits/sec");
        assert_eq!(f("m", 15.6e9), "15600 Mbits/sec");
        assert_eq!(f("M", 8.0 * 1024.0 * 1024.0 * 100.0), " 100 MBytes/sec");
        assert_eq!(
            f("A", 8.0 * 1024.0 * 1024.0 * 1024.0 * 2.5),
            "2.50 GBytes/sec"
        );
        assert!(RateFormat::parse("x").unwrap_err().contains("-f x"));
    }
}
