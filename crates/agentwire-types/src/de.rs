//! Small serde helpers shared by the model types.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// ProtoJSON treats `null` as the field's default value.
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Like [`null_default`] for a list, which is kept at its exact length. serde grows a `Vec` from
/// four slots, and parts live on in task history long after they are decoded, most often alone.
pub(crate) fn null_default_exact<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Exact<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Exact<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_none<E>(self) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }

        fn visit_unit<E>(self) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }

        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Vec<T>, D2::Error> {
            d.deserialize_seq(self)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let Some(first) = seq.next_element()? else { return Ok(Vec::new()) };
            let Some(second) = seq.next_element()? else { return Ok(vec![first]) };
            let mut items = vec![first, second];
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            items.shrink_to_fit();
            Ok(items)
        }
    }

    d.deserialize_option(Exact(PhantomData))
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// ProtoJSON accepts integers as numbers or as decimal strings.
pub(crate) fn lenient_i32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("{n} is not a 32-bit integer"))),
        Some(serde_json::Value::String(s)) => {
            s.trim().parse().map(Some).map_err(|_| D::Error::custom(format!("{s:?} is not an integer")))
        }
        Some(other) => Err(D::Error::custom(format!("expected an integer, found {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use crate::Message;

    fn parts(json: &str) -> Result<Vec<crate::Part>, serde_json::Error> {
        serde_json::from_str::<Message>(&format!(r#"{{"messageId":"m","role":"ROLE_USER"{json}}}"#)).map(|m| m.parts)
    }

    #[test]
    fn lists_are_decoded_at_their_exact_length() {
        let one = parts(r#","parts":[{"text":"a"}]"#).unwrap();
        assert_eq!((one.len(), one.capacity()), (1, 1));
        let three = parts(r#","parts":[{"text":"a"},{"text":"b"},{"text":"c"}]"#).unwrap();
        assert_eq!((three.len(), three.capacity()), (3, 3));
        assert_eq!(three[2].as_text(), Some("c"));
        assert!(parts(r#","parts":[]"#).unwrap().is_empty());
        assert!(parts(r#","parts":null"#).unwrap().is_empty());
        assert!(parts("").unwrap().is_empty());
        assert!(parts(r#","parts":{"text":"a"}"#).is_err());
    }
}
