//! Small serde helpers shared by the model types.

use serde::{Deserialize, Deserializer};

/// ProtoJSON treats `null` as the field's default value.
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
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

/// ProtoJSON's optional `int64`, for `#[serde(with = ...)]`: written as a decimal string (a
/// JavaScript number cannot hold every one), read from a string or a number.
pub(crate) mod optional_int64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(value: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => s.collect_str(value),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        use serde::de::Error;
        match Option::<serde_json::Value>::deserialize(d)? {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Number(n)) => {
                n.as_i64().map(Some).ok_or_else(|| D::Error::custom(format!("{n} is not a 64-bit integer")))
            }
            Some(serde_json::Value::String(s)) => {
                s.trim().parse().map(Some).map_err(|_| D::Error::custom(format!("{s:?} is not an integer")))
            }
            Some(other) => Err(D::Error::custom(format!("expected an integer, found {other}"))),
        }
    }
}

/// A task-state filter. ts-proto-generated clients (the official JavaScript SDK among them) name a
/// value they do not know `UNRECOGNIZED` (-1 as a number) and send it for an unset filter; that
/// one name means no filter, as protobuf reads an unknown enum value as unset. Any other name
/// that is no state stays an error.
pub(crate) fn state_filter<'de, D: Deserializer<'de>>(d: D) -> Result<Option<crate::TaskState>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) if s == "UNRECOGNIZED" => Ok(None),
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(-1) => Ok(None),
        Some(other) => crate::TaskState::deserialize(other).map(Some).map_err(D::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{GetTaskRequest, Task};

    /// An `int64` goes out as ProtoJSON writes it, and comes in either way; an absent one is not
    /// written at all.
    #[test]
    fn an_optional_int64_is_a_string_on_the_wire() {
        let task = Task { generation: Some(7), ..Task::default() };
        assert_eq!(serde_json::to_value(&task).unwrap()["generation"], "7");
        assert!(serde_json::to_value(Task::default()).unwrap().get("generation").is_none());
        for given in [json!("12"), json!(12)] {
            let read: GetTaskRequest = serde_json::from_value(json!({"id": "t", "currentGeneration": given})).unwrap();
            assert_eq!(read.current_generation, Some(12));
        }
        let refused = serde_json::from_value::<GetTaskRequest>(json!({"id": "t", "currentGeneration": "soon"}));
        assert!(refused.unwrap_err().to_string().contains("\"soon\" is not an integer"));
    }
}
