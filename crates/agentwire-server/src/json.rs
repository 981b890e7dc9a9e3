//! A JSON writer for replies and events: the same bytes as `serde_json::to_vec`, written faster.
//!
//! serde_json checks every byte of every string, member names included, against its escape table
//! one at a time; in a SendMessage reply that was a tenth of the server's instructions. Here
//! strings are checked eight bytes at a time, and copied in one piece when nothing needs escaping,
//! as nearly everything in A2A (ids, states, member names, timestamps) never does. Numbers are
//! still written by serde_json, so they come out exactly as it writes them.

use serde::ser::{self, Serialize};
use serde_json::Error;

/// `value` as JSON text, in a buffer of at least `capacity` bytes.
pub(crate) fn to_vec_with_capacity<T: Serialize + ?Sized>(value: &T, capacity: usize) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(capacity);
    append(&mut out, value)?;
    Ok(out)
}

/// Writes `value` as JSON text at the end of `out`.
pub(crate) fn append<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    let mut writer = Writer { out: std::mem::take(out) };
    let written = value.serialize(&mut writer);
    *out = writer.out;
    written
}

/// `value` as a JSON string.
pub(crate) fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    utf8(to_vec_with_capacity(value, 256)?)
}

/// JSON text as a `String`.
pub(crate) fn utf8(json: Vec<u8>) -> Result<String, Error> {
    // Only whole UTF-8 strings and ASCII are ever written, so this never fails.
    String::from_utf8(json).map_err(|_| ser::Error::custom("the JSON writer produced invalid UTF-8"))
}

struct Writer {
    out: Vec<u8>,
}

/// Each byte's escape: 0 for none, `u` for `\u00XX`, otherwise the letter after the backslash.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Whether any of the eight bytes in `word` is a control character, `"` or `\`. Bytes of 0x80 and
/// above never match, so multi-byte UTF-8 passes through.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20);
    let quote = (word ^ (ONES * b'"' as u64)).wrapping_sub(ONES);
    let backslash = (word ^ (ONES * b'\\' as u64)).wrapping_sub(ONES);
    (below_space | quote | backslash) & !word & HIGH != 0
}

fn word_at(bytes: &[u8], start: usize) -> u64 {
    u64::from_le_bytes(bytes[start..start + 8].try_into().expect("eight bytes"))
}

/// Whether any byte of `bytes` needs escaping. Nearly every string in A2A is an id, a name, a
/// state or a timestamp that never does, so this is the common answer to find quickly: eight
/// bytes at a time, the last (partial) eight overlapping the ones before.
fn any_needs_escape(bytes: &[u8]) -> bool {
    if bytes.len() < 8 {
        return bytes.iter().any(|&b| ESCAPE[b as usize] != 0);
    }
    let last = bytes.len() - 8;
    (0..last).step_by(8).any(|start| needs_escape(word_at(bytes, start))) || needs_escape(word_at(bytes, last))
}

impl Writer {
    fn string(&mut self, value: &str) {
        let bytes = value.as_bytes();
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        if any_needs_escape(bytes) {
            self.escaped(bytes);
        } else {
            self.out.extend_from_slice(bytes);
        }
        self.out.push(b'"');
    }

    /// The slow path, for text with something to escape: plain runs are copied whole.
    fn escaped(&mut self, bytes: &[u8]) {
        let mut run_start = 0;
        for (i, &byte) in bytes.iter().enumerate() {
            if ESCAPE[byte as usize] != 0 {
                self.out.extend_from_slice(&bytes[run_start..i]);
                self.escape(byte);
                run_start = i + 1;
            }
        }
        self.out.extend_from_slice(&bytes[run_start..]);
    }

    fn escape(&mut self, byte: u8) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        match ESCAPE[byte as usize] {
            b'u' => self.out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(byte >> 4) as usize],
                HEX[(byte & 0xf) as usize],
            ]),
            letter => self.out.extend_from_slice(&[b'\\', letter]),
        }
    }

    /// Opens an object or array, and for an enum variant the object around it first.
    fn open(&mut self, variant: Option<&str>, bracket: u8) -> Compound<'_> {
        if let Some(variant) = variant {
            self.out.push(b'{');
            self.string(variant);
            self.out.push(b':');
        }
        self.out.push(bracket);
        Compound { writer: self, first: true, in_variant: variant.is_some() }
    }
}

/// Numbers are written by serde_json, so they come out exactly as it writes them.
macro_rules! numbers {
    ($($method:ident: $type:ty),* $(,)?) => {
        $(fn $method(self, v: $type) -> Result<(), Error> {
            serde_json::to_writer(&mut self.out, &v)
        })*
    };
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    numbers!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128,
        serialize_f32: f32, serialize_f64: f64);

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for byte in v {
            seq.serialize_element(byte)?;
        }
        seq.end()
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.string(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.out.push(b'{');
        self.string(variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(None, b'['))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.open(Some(variant), b'['))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(None, b'{'))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Err(ser::Error::custom("RawValue is written by serde_json only"));
        }
        Ok(self.open(None, b'{'))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        Ok(self.open(Some(variant), b'{'))
    }
}

/// The struct name serde_json's `RawValue` serializes under; its text would be quoted here, so it
/// is refused instead (raw ids are spliced in by the caller).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// An object or array being written.
pub(crate) struct Compound<'a> {
    writer: &'a mut Writer,
    first: bool,
    /// Inside `{"Variant":…}`, which needs closing too.
    in_variant: bool,
}

impl Compound<'_> {
    fn separator(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.writer.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.separator();
        value.serialize(&mut *self.writer)
    }

    fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.separator();
        self.writer.string(key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn close(self, bracket: u8) -> Result<(), Error> {
        self.writer.out.push(bracket);
        if self.in_variant {
            self.writer.out.push(b'}');
        }
        Ok(())
    }
}

/// Arrays: sequences, tuples and tuple variants.
macro_rules! array {
    ($($trait:ident::$method:ident),*) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }

            fn end(self) -> Result<(), Error> {
                self.close(b']')
            }
        })*
    };
}

array!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// Objects with fixed members: structs and struct variants.
macro_rules! object {
    ($($trait:ident),*) => {
        $(impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                self.member(key, value)
            }

            fn end(self) -> Result<(), Error> {
                self.close(b'}')
            }
        })*
    };
}

object!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;

    /// Keys are strings; numbers and booleans are quoted, as serde_json does, and anything else
    /// is refused.
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.separator();
        let start = self.writer.out.len();
        key.serialize(&mut *self.writer)?;
        match self.writer.out.get(start) {
            Some(b'"') => {}
            Some(b'0'..=b'9' | b'-' | b't' | b'f') => {
                self.writer.out.insert(start, b'"');
                self.writer.out.push(b'"');
            }
            _ => return Err(ser::Error::custom("key must be a string")),
        }
        self.writer.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<(), Error> {
        self.close(b'}')
    }
}

#[cfg(test)]
mod tests;
