//! JSON arguments decoded with the key path of every failure, and strict about unknown keys.
//!
//! The C ABI's request and configuration objects are written by hand in PHP and Python, where a
//! misspelt key (`atempt_timeout_ms`, `notifyUrl`) would otherwise be ignored silently and the
//! default used. [`decode`] walks the parsed [`Value`] through a [`Deserializer`] that knows the
//! key path of each value it hands to the target type:
//!
//! - serde's derived `Deserialize` asks for an unknown key's value with
//!   `deserialize_ignored_any`; that is refused and the key's full path
//!   (`retry.max_attempt`) reported, so the core types need no `deny_unknown_fields` (which
//!   must never reach the response types: clients ignore unused response fields);
//! - a value the target type refuses (a number out of range, a string where a number belongs)
//!   is reported with its path and whether it was a number.
//!
//! Arguments that are the service's own answers handed back (a listed product, a queried
//! payment) do not come here: they are decoded as the core decodes responses, ignoring unknown
//! keys (`io::response_json_arg`).

use std::cell::RefCell;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

/// Where and why decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// An object key the target type does not know, by full path.
    UnknownKey(String),
    /// The value at this path was refused; `number` when it was a JSON number that does not fit
    /// (out of range, negative for an unsigned field, fractional for an integer).
    Value { path: String, number: bool },
    /// The failure is about an object as a whole (a missing field), at this path ("" = root).
    Object(String),
}

/// A decoding failure: serde's message and the located problem.
#[derive(Debug)]
pub(crate) struct DecodeError {
    pub(crate) message: String,
    pub(crate) problem: Problem,
}

/// Decodes `value` into `T`, locating any failure.
pub(crate) fn decode<T: de::DeserializeOwned>(value: &Value) -> Result<T, DecodeError> {
    let state = State::default();
    let root = Tracked {
        value,
        path: String::new(),
        state: &state,
    };
    T::deserialize(root).map_err(|e| DecodeError {
        message: e.to_string(),
        problem: state
            .problem
            .into_inner()
            .unwrap_or(Problem::Object(String::new())),
    })
}

#[derive(Default)]
struct State {
    /// The innermost problem, recorded once.
    problem: RefCell<Option<Problem>>,
}

impl State {
    fn record(&self, problem: Problem) {
        let mut slot = self.problem.borrow_mut();
        if slot.is_none() {
            *slot = Some(problem);
        }
    }
}

/// Whether serde's message about a JSON number says the number does not fit (negative for an
/// unsigned field, too large, fractional for an integer, or refused by the type's own range
/// check), as opposed to a number where something else belongs.
fn number_out_of_range(message: &str) -> bool {
    if let Some(rest) = message.strip_prefix("invalid type: floating point") {
        // Beyond u64/i64 or fractional, where an integer belongs.
        return rest.contains(", expected u") || rest.contains(", expected i");
    }
    !message.starts_with("invalid type")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// What a JSON value is, for a type error.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// One JSON value and its path.
struct Tracked<'de> {
    value: &'de Value,
    path: String,
    state: &'de State,
}

impl<'de> Tracked<'de> {
    fn child(&self, value: &'de Value, path: String) -> Tracked<'de> {
        Tracked {
            value,
            path,
            state: self.state,
        }
    }

    /// Deserializes a child value, recording its path if it (and nothing inside it) failed.
    fn seed<S: DeserializeSeed<'de>>(
        &self,
        seed: S,
        value: &'de Value,
        path: String,
    ) -> Result<S::Value, serde_json::Error> {
        let object = value.is_object();
        seed.deserialize(self.child(value, path.clone()))
            .inspect_err(|e| {
                self.state.record(if object {
                    Problem::Object(path)
                } else {
                    let number = value.is_number() && number_out_of_range(&e.to_string());
                    Problem::Value { path, number }
                })
            })
    }
}

impl<'de> Deserializer<'de> for Tracked<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.value {
            Value::Object(map) => {
                let mut access = Map {
                    parent: &self,
                    iter: map.iter(),
                    pending: None,
                };
                let value = visitor.visit_map(&mut access)?;
                Ok(value)
            }
            Value::Array(items) => {
                let mut access = Seq {
                    parent: &self,
                    iter: items.iter().enumerate(),
                };
                visitor.visit_seq(&mut access)
            }
            leaf => leaf.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.value.deserialize_enum(name, variants, visitor)
    }

    /// A struct only from a JSON object: serde's derive would also read an array positionally
    /// (`[1, 2]` as the first two fields), which no host means. An empty array is an empty
    /// object: PHP's `json_encode` writes an empty array as `[]` whatever it stands for.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        static EMPTY_OBJECT: std::sync::LazyLock<Value> =
            std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));
        match self.value {
            Value::Object(_) => self.deserialize_any(visitor),
            Value::Array(items) if items.is_empty() => {
                let path = self.path.clone();
                self.child(&EMPTY_OBJECT, path).deserialize_any(visitor)
            }
            other => Err(de::Error::invalid_type(unexpected(other), &"a JSON object")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        // Serde's derive asks for an unknown key's value this way.
        let _ = visitor;
        let message = format!("unknown key `{}`", self.path);
        self.state.record(Problem::UnknownKey(self.path));
        Err(de::Error::custom(message))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

struct Map<'p, 'de> {
    parent: &'p Tracked<'de>,
    iter: serde_json::map::Iter<'de>,
    pending: Option<(&'de String, &'de Value)>,
}

impl<'de> MapAccess<'de> for Map<'_, 'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.pending = Some((key, value));
                let key = BorrowedStrDeserializer::<serde_json::Error>::new(key.as_str());
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let (key, value) = self
            .pending
            .take()
            .ok_or_else(|| de::Error::custom("value requested before its key"))?;
        let path = join(&self.parent.path, key);
        self.parent.seed(seed, value, path)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct Seq<'p, 'de> {
    parent: &'p Tracked<'de>,
    iter: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
}

impl<'de> SeqAccess<'de> for Seq<'_, 'de> {
    type Error = serde_json::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        match self.iter.next() {
            Some((index, value)) => {
                let path = format!("{}[{index}]", self.parent.path);
                self.parent.seed(seed, value, path).map(Some)
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}
