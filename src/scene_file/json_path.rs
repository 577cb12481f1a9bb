//! Deserializing from a parsed JSON document while tracking where each value sits, so that every
//! error names its JSON path (`bodies[3].shape.sphere.radius`) instead of a line and column.
//!
//! [`Node`] is a `serde::Deserializer` over a borrowed `serde_json::Value` that carries its own
//! path. Errors raised while a node is being read (a wrong type, a missing field, an unknown
//! field or variant, a failed untagged match) are stamped with the deepest path that saw them:
//! each level only stamps an error that does not have a path yet. Syntax errors cannot get a path
//! (there is no document yet) and keep serde_json's line and column.

use core::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

/// A location in a JSON document: object keys and array indices from the top.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPath(Vec<Segment>);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl JsonPath {
    /// The top of the document.
    pub fn root() -> Self {
        Self::default()
    }

    /// The member `key` of the object at this path.
    pub fn key(&self, key: &str) -> Self {
        let mut path = self.clone();
        path.0.push(Segment::Key(key.to_string()));
        path
    }

    /// Element `index` of the array at this path.
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.clone();
        path.0.push(Segment::Index(index));
        path
    }
}

/// `bodies[3].shape.sphere.radius`; the top of the document is written `(top level)`.
impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A deserialization error and, once known, where it happened.
#[derive(Debug)]
pub struct PathError {
    /// The deepest path that saw the error.
    pub path: Option<JsonPath>,
    /// serde's message: "invalid type: string \"x\", expected f64", "missing field `shape`", ...
    pub message: String,
}

impl PathError {
    /// The error, stamped with `path` unless a deeper level already stamped it.
    fn at(mut self, path: &JsonPath) -> Self {
        if self.path.is_none() {
            self.path = Some(path.clone());
        }
        self
    }
}

impl de::Error for PathError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self {
            path: None,
            message: message.to_string(),
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{path}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PathError {}

/// Deserializes a `T` from `value`, naming the path of any error.
pub fn from_value<'a, T: de::Deserialize<'a>>(value: &'a Value) -> Result<T, PathError> {
    let root = JsonPath::root();
    T::deserialize(Node { value, path: &root }).map_err(|e| e.at(&root))
}

/// A value of the document and its path.
#[derive(Clone, Copy)]
struct Node<'a, 'p> {
    value: &'a Value,
    path: &'p JsonPath,
}

impl<'de> de::Deserializer<'de> for Node<'de, '_> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        let result = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                // Without arbitrary precision every other JSON number is an f64.
                (None, None) => visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => {
                let mut seq = Seq {
                    items: items.iter().enumerate(),
                    path: self.path,
                };
                let value = visitor.visit_seq(&mut seq)?;
                match seq.items.len() {
                    0 => Ok(value),
                    left => Err(de::Error::invalid_length(
                        items.len(),
                        &format!("{} elements", items.len() - left).as_str(),
                    )),
                }
            }
            Value::Object(map) => visitor.visit_map(Members {
                members: map.iter(),
                pending: None,
                path: self.path,
            }),
        };
        result.map_err(|e| e.at(self.path))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    /// Externally tagged enums: `"variant"` for a unit variant, `{"variant": content}` otherwise.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        let result = match self.value {
            Value::String(s) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
            Value::Object(map) if map.len() == 1 => {
                let (key, value) = map.iter().next().expect("one member");
                visitor.visit_enum(Variant {
                    key,
                    value,
                    path: self.path,
                })
            }
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a name, or an object with exactly one member naming the variant",
            )),
        };
        result.map_err(|e| e.at(self.path))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// How serde describes a JSON value in "invalid type" messages.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => de::Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

struct Seq<'a, 'p> {
    items: core::iter::Enumerate<core::slice::Iter<'a, Value>>,
    path: &'p JsonPath,
}

impl<'de> de::SeqAccess<'de> for Seq<'de, '_> {
    type Error = PathError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, PathError> {
        let Some((index, value)) = self.items.next() else {
            return Ok(None);
        };
        let path = self.path.index(index);
        // Stamp here too: a Deserialize impl may fail after the node has returned (untagged enums
        // buffer the value first and only then try each variant).
        seed.deserialize(Node { value, path: &path })
            .map(Some)
            .map_err(|e| e.at(&path))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Members<'a, 'p> {
    members: serde_json::map::Iter<'a>,
    pending: Option<(&'a String, &'a Value)>,
    path: &'p JsonPath,
}

impl<'de> de::MapAccess<'de> for Members<'de, '_> {
    type Error = PathError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, PathError> {
        let Some((key, value)) = self.members.next() else {
            return Ok(None);
        };
        self.pending = Some((key, value));
        // An unknown field is reported at the field itself.
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
            .map_err(|e: PathError| e.at(&self.path.key(key)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, PathError> {
        let (key, value) = self
            .pending
            .take()
            .ok_or_else(|| <PathError as de::Error>::custom("a value was asked for before its key"))?;
        let path = self.path.key(key);
        seed.deserialize(Node { value, path: &path }).map_err(|e| e.at(&path))
    }
}

/// The `{"variant": content}` form of an enum value.
struct Variant<'a, 'p> {
    key: &'a String,
    value: &'a Value,
    path: &'p JsonPath,
}

impl<'de, 'p> de::EnumAccess<'de> for Variant<'de, 'p> {
    type Error = PathError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), PathError> {
        let path = self.path.key(self.key);
        let variant = seed
            .deserialize(self.key.as_str().into_deserializer())
            .map_err(|e: PathError| e.at(&path))?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'de, '_> {
    type Error = PathError;

    fn unit_variant(self) -> Result<(), PathError> {
        match self.value {
            Value::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"a unit variant"))
                .map_err(|e: PathError| e.at(&self.path.key(self.key))),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, PathError> {
        let path = self.path.key(self.key);
        seed.deserialize(Node {
            value: self.value,
            path: &path,
        })
        .map_err(|e| e.at(&path))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, PathError> {
        let path = self.path.key(self.key);
        de::Deserializer::deserialize_any(
            Node {
                value: self.value,
                path: &path,
            },
            visitor,
        )
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value, PathError> {
        self.tuple_variant(0, visitor)
    }
}
