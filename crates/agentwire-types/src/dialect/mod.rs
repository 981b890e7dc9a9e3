//! The wire forms of older protocol versions, at the edge of the canonical v1.0 model.
//!
//! Decoding needs no mirror types: the canonical types read every spelling of every version (kebab
//! and lowercase states, `kind`/`type`-tagged parts, `file.bytes`/`uri`, `mimeType`). Encoding is
//! exact per version, so each module here writes the canonical values in its version's shapes,
//! borrowing them: nothing is copied to be sent.

pub mod v03;
