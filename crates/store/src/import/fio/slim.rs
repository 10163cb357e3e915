//! fio's JSON cut down while it is read to what the import uses: a
//! 20,000-job json+ file is over 100 MB, mostly buckets no figure needs.

use std::borrow::Cow;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Value};

/// The fields of fio's JSON that [`convert`](super::convert) reads, as a much smaller
/// [`Value`]; `None` when `text` is not fio's JSON (or not JSON), for the
/// caller to parse it whole.
///
/// A 20,000-job file is over 100 MB of JSON, most of it latency buckets
/// and bandwidth statistics that no figure uses;
/// parsed whole into values it takes a gigabyte and most of the import's
/// time. Here those are skipped as they are read. What is kept is exactly
/// what a whole parse would hold at those places, whatever its type, so
/// `convert` judges it the same way.
pub(in crate::import) fn slim(text: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Keep(&FIO).deserialize(&mut de).ok()?;
    de.end().ok()?;
    v.get("fio version").is_some().then_some(v)
}

/// Which parts of a JSON value to keep.
enum Shape {
    /// All of it.
    All,
    /// Of an object, only these keys, each kept to its own shape.
    Keys(&'static [(&'static str, Shape)]),
    /// Of an array, every element, kept to this shape.
    Each(&'static Shape),
}

const FIO: Shape = Shape::Keys(&[
    ("fio version", Shape::All),
    ("timestamp", Shape::All),
    ("timestamp_ms", Shape::All),
    ("global options", Shape::All),
    ("jobs", Shape::Each(&JOB)),
]);

const JOB: Shape = Shape::Keys(&[
    ("jobname", Shape::All),
    ("job options", Shape::All),
    ("error", Shape::All),
    ("elapsed", Shape::All),
    ("read", DIRECTION),
    ("write", DIRECTION),
    ("iodepth_level", Shape::All),
    ("usr_cpu", Shape::All),
    ("sys_cpu", Shape::All),
    ("steadystate", Shape::All),
]);

const DIRECTION: Shape = Shape::Keys(&[
    ("io_bytes", Shape::All),
    ("total_ios", Shape::All),
    ("runtime", Shape::All),
    ("bw_bytes", Shape::All),
    ("bw", Shape::All),
    ("iops", Shape::All),
    ("clat_ns", LATENCY),
]);

const LATENCY: Shape = Shape::Keys(&[
    ("min", Shape::All),
    ("max", Shape::All),
    ("mean", Shape::All),
    ("stddev", Shape::All),
    ("N", Shape::All),
    ("percentile", Shape::All),
    ("bins", Shape::All),
]);

/// Reads a JSON value keeping only what its [`Shape`] names.
struct Keep(&'static Shape);

impl<'de> DeserializeSeed<'de> for Keep {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Shape::All => Value::deserialize(d),
            shape => d.deserialize_any(KeepVisitor(shape)),
        }
    }
}

struct KeepVisitor(&'static Shape);

/// An object key, borrowed unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

/// A scalar as the Value it would have been parsed to.
macro_rules! scalar {
    ($name:ident, $t:ty) => {
        fn $name<E>(self, v: $t) -> Result<Value, E> {
            Ok(Value::from(v))
        }
    };
}

impl<'de> Visitor<'de> for KeepVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    scalar!(visit_bool, bool);
    scalar!(visit_i64, i64);
    scalar!(visit_u64, u64);
    scalar!(visit_f64, f64);
    scalar!(visit_str, &str);
    scalar!(visit_string, String);

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = match self.0 {
            Shape::Each(inner) => inner,
            _ => &Shape::All,
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Keep(inner))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let keys: &[(&str, Shape)] = match self.0 {
            Shape::Keys(keys) => keys,
            _ => &[],
        };
        let mut out = Map::new();
        // Keys borrowed from the input where they can be: most are skipped,
        // and a String for each was a tenth of the time.
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match keys.iter().find(|(k, _)| *k == key) {
                Some((_, shape)) => {
                    out.insert(key.into_owned(), map.next_value_seed(Keep(shape))?);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}
