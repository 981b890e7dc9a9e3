//! `Part`: one piece of message or artifact content.

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The content of a part: exactly one of text, raw bytes, a URL, or structured data.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Plain text.
    Text(String),
    /// Inline bytes (base64 on the JSON wire).
    Raw(Vec<u8>),
    /// A reference to content elsewhere.
    Url(String),
    /// Any JSON value.
    Data(Value),
}

/// A piece of content in a message or artifact.
///
/// On the v1.0 wire the content kind is told by which member is present (`text`, `raw`, `url`,
/// `data`). Decoding also accepts the older `kind`/`type`-tagged forms (`{"kind":"file","file":{..}}`).
///
/// ```
/// use agentwire_types::Part;
///
/// let part = Part::text("hello");
/// assert_eq!(serde_json::to_string(&part).unwrap(), r#"{"text":"hello"}"#);
/// let legacy: Part = serde_json::from_str(r#"{"kind":"text","text":"hi"}"#).unwrap();
/// assert_eq!(legacy.as_text(), Some("hi"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What the part holds.
    pub content: PartContent,
    /// Free-form metadata.
    pub metadata: Option<Map<String, Value>>,
    /// A file name, for raw and url parts.
    pub filename: Option<String>,
    /// The IANA media type of the content.
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A data part holding any JSON value.
    pub fn data(value: Value) -> Self {
        Self::new(PartContent::Data(value))
    }

    /// An inline file.
    pub fn raw(bytes: impl Into<Vec<u8>>, filename: impl Into<String>, media_type: impl Into<String>) -> Self {
        Self::new(PartContent::Raw(bytes.into())).with_file(filename, media_type)
    }

    /// A file by reference.
    pub fn url(url: impl Into<String>, filename: impl Into<String>, media_type: impl Into<String>) -> Self {
        Self::new(PartContent::Url(url.into())).with_file(filename, media_type)
    }

    fn new(content: PartContent) -> Self {
        Self { content, metadata: None, filename: None, media_type: None }
    }

    fn with_file(mut self, filename: impl Into<String>, media_type: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self.media_type = Some(media_type.into());
        self
    }

    /// The text, for a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => map.serialize_entry("text", t)?,
            PartContent::Raw(b) => map.serialize_entry("raw", &base64::engine::general_purpose::STANDARD.encode(b))?,
            PartContent::Url(u) => map.serialize_entry("url", u)?,
            PartContent::Data(d) => map.serialize_entry("data", d)?,
        }
        if let Some(m) = &self.metadata {
            map.serialize_entry("metadata", m)?;
        }
        if let Some(f) = self.filename.as_deref().filter(|f| !f.is_empty()) {
            map.serialize_entry("filename", f)?;
        }
        if let Some(t) = self.media_type.as_deref().filter(|t| !t.is_empty()) {
            map.serialize_entry("mediaType", t)?;
        }
        map.end()
    }
}

/// Every member any dialect uses for a part; which ones are set decides the content kind.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    text: Option<String>,
    raw: Option<String>,
    url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    file: Option<WireFile>,
    metadata: Option<Map<String, Value>>,
    filename: Option<String>,
    #[serde(alias = "media_type")]
    media_type: Option<String>,
    #[serde(alias = "mime_type")]
    mime_type: Option<String>,
    kind: Option<String>,
    #[serde(rename = "type")]
    type_: Option<String>,
}

/// The v0.1/v0.3 `file` object, including the proto-style member names seen in examples.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFile {
    name: Option<String>,
    #[serde(alias = "mime_type")]
    mime_type: Option<String>,
    #[serde(alias = "media_type")]
    media_type: Option<String>,
    #[serde(alias = "fileWithBytes", alias = "file_with_bytes")]
    bytes: Option<String>,
    #[serde(alias = "fileWithUri", alias = "file_with_uri")]
    uri: Option<String>,
}

/// Distinguishes `"data": null` (present) from a missing member.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn decode_base64<E: serde::de::Error>(text: &str) -> Result<Vec<u8>, E> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let trimmed = text.trim_end_matches('=');
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(trimmed)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(trimmed))
        .or_else(|_| STANDARD.decode(text))
        .or_else(|_| URL_SAFE.decode(text))
        .map_err(|_| E::custom("part content is not valid base64"))
}

/// The content members found in a wire part; valid parts have exactly one. (Not a `Vec`: every
/// decoded part would allocate one.)
#[derive(Default)]
struct OneContent {
    first: Option<PartContent>,
    more: bool,
}

impl OneContent {
    fn push(&mut self, content: PartContent) {
        self.more |= self.first.is_some();
        self.first.get_or_insert(content);
    }

    fn only(self) -> Option<PartContent> {
        self.first.filter(|_| !self.more)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let w = WirePart::deserialize(deserializer)?;
        let mut filename = w.filename;
        let mut media_type = w.media_type.or(w.mime_type);
        let mut contents = OneContent::default();
        if let Some(t) = w.text {
            contents.push(PartContent::Text(t));
        }
        if let Some(r) = w.raw {
            contents.push(PartContent::Raw(decode_base64(&r)?));
        }
        if let Some(u) = w.url {
            contents.push(PartContent::Url(u));
        }
        if let Some(d) = w.data {
            contents.push(PartContent::Data(d));
        }
        if let Some(file) = w.file {
            filename = filename.or(file.name);
            media_type = media_type.or(file.mime_type).or(file.media_type);
            match (file.bytes, file.uri) {
                (Some(b), None) => contents.push(PartContent::Raw(decode_base64(&b)?)),
                (None, Some(u)) => contents.push(PartContent::Url(u)),
                _ => return Err(D::Error::custom("a file part needs exactly one of `bytes` or `uri`")),
            }
        }
        // The v0.1/v0.3 discriminator, where present, must name a kind of part there is.
        if let Some(kind) = w.kind.as_deref().or(w.type_.as_deref())
            && !matches!(kind, "text" | "file" | "data")
        {
            return Err(D::Error::custom(format!("unsupported part kind {kind:?}")));
        }
        let Some(content) = contents.only() else {
            return Err(D::Error::custom("a part must contain exactly one of `text`, `raw`, `url` or `data`"));
        };
        Ok(Part { content, metadata: w.metadata, filename, media_type })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_each_kind() {
        for part in [
            Part::text("a"),
            Part::raw(b"hello".to_vec(), "f.txt", "text/plain"),
            Part::url("https://example.com/x", "x", "text/plain"),
            Part::data(json!({"key": "value", "count": 42})),
        ] {
            let text = serde_json::to_string(&part).unwrap();
            assert_eq!(serde_json::from_str::<Part>(&text).unwrap(), part, "{text}");
        }
        let raw = serde_json::to_value(Part::raw(b"hello".to_vec(), "f", "text/plain")).unwrap();
        assert_eq!(raw["raw"], "aGVsbG8=");
    }

    #[test]
    fn data_keeps_the_member_order_its_author_wrote() {
        let text = r#"{"data":{"zeta":1,"alpha":{"y":true,"b":null}}}"#;
        let part: Part = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&part).unwrap(), text);
    }

    #[test]
    fn a_number_in_data_reads_back_as_the_number_its_author_wrote() {
        let digits = format!("42{}", "0".repeat(102));
        let part: Part = serde_json::from_str(&format!(r#"{{"data":{{"count":{digits}}}}}"#)).unwrap();
        assert_eq!(part.content, PartContent::Data(json!({"count": 4.2e103})));
        let written = serde_json::to_string(&part).unwrap();
        assert_eq!(serde_json::from_str::<Part>(&written).unwrap(), part, "{written}");
    }

    #[test]
    fn decodes_legacy_file_shapes() {
        let p: Part = serde_json::from_value(json!({
            "kind": "file", "file": {"name": "a.txt", "mimeType": "text/plain", "bytes": "aGk="}
        }))
        .unwrap();
        assert_eq!(p.content, PartContent::Raw(b"hi".to_vec()));
        assert_eq!(p.filename.as_deref(), Some("a.txt"));
        assert_eq!(p.media_type.as_deref(), Some("text/plain"));
    }

    #[test]
    fn rejects_a_part_of_an_unknown_kind() {
        let error = serde_json::from_value::<Part>(json!({"type": "unsupported_type", "text": "x"})).unwrap_err();
        assert!(error.to_string().contains("unsupported part kind"), "{error}");
        assert!(serde_json::from_value::<Part>(json!({"kind": "image", "text": "x"})).is_err());
    }

    #[test]
    fn rejects_zero_or_two_contents() {
        assert!(serde_json::from_value::<Part>(json!({"metadata": {}})).is_err());
        assert!(serde_json::from_value::<Part>(json!({"text": "a", "url": "b"})).is_err());
    }
}
