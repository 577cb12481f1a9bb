//! Members written twice in one object. A parsed `serde_json::Value` silently keeps the last of
//! them, so `{"radius": 1, "radius": -1}` would read as -1 with no word said; this pass over the
//! text finds them first, with their path.

use core::cell::RefCell;
use core::fmt;
use std::collections::HashSet;

use serde::de::{self, DeserializeSeed, Visitor};

use super::json_path::JsonPath;

/// The path and key of the first member that repeats a key of its object, `None` when there is
/// none. Fails with serde_json's error (line and column) when `text` is not JSON.
pub fn find_duplicate_member(text: &str) -> Result<Option<(JsonPath, String)>, serde_json::Error> {
    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let walked = Walk {
        path: JsonPath::root(),
        found: &found,
    }
    .deserialize(&mut deserializer)
    .and_then(|()| deserializer.end());
    match (found.into_inner(), walked) {
        (Some(found), _) => Ok(Some(found)),
        (None, Ok(())) => Ok(None),
        (None, Err(error)) => Err(error),
    }
}

/// Visits every value, checking each object's keys; `found` receives the first repeat.
struct Walk<'a> {
    path: JsonPath,
    found: &'a RefCell<Option<(JsonPath, String)>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Walk {
                path: self.path.index(index),
                found: self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = self.path.key(&key);
            if !seen.insert(key.clone()) {
                *self.found.borrow_mut() = Some((path, key));
                return Err(de::Error::custom("duplicate member"));
            }
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }
}
