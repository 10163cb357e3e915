//! Numbers read from other tools' JSON, each checked against what a run
//! can have, with the field named when it cannot.

use serde_json::Value;

use super::ImportError;

/// The latest time the store keeps: milliseconds in a signed 64-bit column.
pub(super) const MAX_MS: u64 = i64::MAX as u64;

/// The largest rate, time or percentage accepted: what a u64 count holds.
/// No device comes near it, and sums and products of a few such figures
/// stay finite, so nothing derived from them in a report overflows.
pub(super) const MAX_FIGURE: f64 = u64::MAX as f64;

/// 2^64 and 2^63 exactly: the first values that do not fit u64 / i64.
pub(super) const TWO_64: f64 = 18_446_744_073_709_551_616.0;
pub(super) const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// Reads the numbers below one place of one tool's JSON, refusing those no
/// run can have with an error naming the field (`jobs[3].read.bw_bytes`).
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    tool: &'static str,
    /// The JSON path of the object read, without a trailing dot; may be empty.
    path: &'a str,
}

impl<'a> At<'a> {
    pub(super) fn new(tool: &'static str, path: &'a str) -> Self {
        At { tool, path }
    }

    pub(super) fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub(super) fn invalid(&self, key: &str, problem: String) -> ImportError {
        ImportError::Invalid {
            tool: self.tool,
            field: self.field(key),
            problem,
        }
    }

    pub(super) fn missing(&self, key: &str, what: &str) -> ImportError {
        ImportError::Missing {
            tool: self.tool,
            field: format!("{}{what}", self.field(key)),
        }
    }

    /// `parent[key]` as a count; `None` when absent or null.
    pub(super) fn u64(&self, parent: &Value, key: &str) -> Result<Option<u64>, ImportError> {
        let v = &parent[key];
        let Value::Number(n) = v else {
            return self.not_a_number(v, key).map(|()| None);
        };
        if let Some(u) = n.as_u64() {
            return Ok(Some(u));
        }
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f < 0.0 {
            Err(self.invalid(key, format!("is negative ({n})")))
        } else if f.fract() != 0.0 {
            Err(self.invalid(key, format!("is not a whole number ({n})")))
        } else if f >= TWO_64 {
            Err(self.invalid(key, format!("is too large ({n} > {})", u64::MAX)))
        } else {
            // Whole, non-negative and below 2^64: exact.
            Ok(Some(f as u64))
        }
    }

    /// `parent[key]` as a count that must be there.
    pub(super) fn need_u64(&self, parent: &Value, key: &str) -> Result<u64, ImportError> {
        self.u64(parent, key)?
            .ok_or_else(|| self.missing(key, " (a whole number)"))
    }

    /// `parent[key]` as a count that fits `T` (an id, a port, a depth).
    pub(super) fn small<T: TryFrom<u64> + Into<u64> + Bounded>(
        &self,
        parent: &Value,
        key: &str,
    ) -> Result<Option<T>, ImportError> {
        self.u64(parent, key)?.map(|u| self.fit(key, u)).transpose()
    }

    /// `u` as a `T`, or refused as too large rather than cut down to its
    /// low bits.
    pub(super) fn fit<T: TryFrom<u64> + Into<u64> + Bounded>(
        &self,
        key: &str,
        u: u64,
    ) -> Result<T, ImportError> {
        T::try_from(u)
            .map_err(|_| self.invalid(key, format!("is too large ({u} > {})", T::MAX.into())))
    }

    /// `parent[key]` as a non-negative finite figure; `None` when absent or
    /// null.
    pub(super) fn f64(&self, parent: &Value, key: &str) -> Result<Option<f64>, ImportError> {
        let v = &parent[key];
        let Value::Number(n) = v else {
            return self.not_a_number(v, key).map(|()| None);
        };
        let f = n.as_f64().unwrap_or(f64::NAN);
        self.figure(key, f, &n.to_string()).map(Some)
    }

    /// `parent[key]` as a figure that must be there.
    pub(super) fn need_f64(&self, parent: &Value, key: &str) -> Result<f64, ImportError> {
        self.f64(parent, key)?
            .ok_or_else(|| self.missing(key, " (a number)"))
    }

    /// `f` (written `text` in the input) if it is a figure a run can have.
    pub(super) fn figure(&self, key: &str, f: f64, text: &str) -> Result<f64, ImportError> {
        if f.is_nan() || f.is_infinite() {
            Err(self.invalid(key, format!("is not a finite number ({text})")))
        } else if f < 0.0 {
            Err(self.invalid(key, format!("is negative ({text})")))
        } else if f > MAX_FIGURE {
            Err(self.invalid(key, format!("is out of range ({text} > {MAX_FIGURE:e})")))
        } else {
            Ok(f)
        }
    }

    /// Ok for absent or null; a refusal for anything else not a number,
    /// such as `"NaN"` written as a string.
    pub(super) fn not_a_number(&self, v: &Value, key: &str) -> Result<(), ImportError> {
        match v {
            Value::Null => Ok(()),
            Value::String(s) if s.trim().parse::<f64>().is_ok_and(|f| !f.is_finite()) => {
                Err(self.invalid(key, format!("is not a finite number (\"{}\")", short(s))))
            }
            other => Err(self.invalid(
                key,
                format!("is not a number ({})", short(&other.to_string())),
            )),
        }
    }

    /// Seconds as whole milliseconds since 1970, as the store keeps times.
    pub(super) fn ms_of_secs(&self, key: &str, secs: f64) -> Result<u64, ImportError> {
        let ms = (secs * 1e3).round();
        if ms >= TWO_63 {
            return Err(self.invalid(
                key,
                format!("is too large for a time ({secs} s > {MAX_MS} ms since 1970)"),
            ));
        }
        Ok(ms as u64)
    }

    /// A whole number of `unit`s (1000 for seconds as ms) in milliseconds,
    /// within what the store keeps.
    pub(super) fn ms_of(&self, key: &str, n: u64, unit: u64) -> Result<u64, ImportError> {
        n.checked_mul(unit)
            .filter(|ms| *ms <= MAX_MS)
            .ok_or_else(|| {
                self.invalid(
                    key,
                    format!("is too large for a time ({n} x {unit} > {MAX_MS} ms)"),
                )
            })
    }

    /// Seconds as nanoseconds, the unit every stored duration is in.
    pub(super) fn nanos_of_secs(
        &self,
        key: &str,
        secs: f64,
    ) -> Result<iomark_model::Nanos, ImportError> {
        let ns = (secs * 1e9).round();
        if ns >= TWO_64 {
            return Err(self.invalid(
                key,
                format!("is too long a time ({secs} s > {} ns)", u64::MAX),
            ));
        }
        Ok(iomark_model::Nanos(ns as u64))
    }
}

/// The unsigned types a count is narrowed to.
pub(super) trait Bounded {
    const MAX: Self;
}

impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}

impl Bounded for u32 {
    const MAX: u32 = u32::MAX;
}

/// At most 40 characters of `s`, for a message that stays on one line.
pub(super) fn short(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 40 {
        format!("{}...", one_line.chars().take(40).collect::<String>())
    } else {
        one_line
    }
}
