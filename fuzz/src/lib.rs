//! The harnesses of the fuzz targets in `fuzz_targets/`, one function per target, kept in a
//! library so that `cargo test` replays the checked-in corpus on the stable toolchain without a
//! fuzzer (`tests/replay.rs`).
//!
//! Each harness feeds its input to decoders of untrusted input and checks what must hold for any
//! input: nothing panics, what a server writes back is well-formed, and a decoded value *settles*:
//! what the encoder writes of it reads back as a value the encoder writes the same way (an encoder
//! may drop what its form cannot hold, but one trip through the wire is enough). A harness whose
//! input selects among several decoders takes the first byte as the selector, and its
//! documentation lists the choices.

#![forbid(unsafe_code)]

mod dialects;
mod mirror;
mod protobuf;
mod protojson;
mod samples;
mod seeds;
mod server;
mod sse;

pub use dialects::dialects;
pub use protobuf::protobuf;
pub use protojson::protojson;
pub use seeds::{dictionary, seeds, Seed};
pub use server::{jsonrpc, rest};
pub use sse::sse;

/// A harness: runs one input, and panics where something that must hold does not.
pub type Harness = fn(&[u8]);

/// Every fuzz target, by name, with its harness.
pub const TARGETS: [(&str, Harness); 6] = [
    ("jsonrpc", jsonrpc),
    ("rest", rest),
    ("dialects", dialects),
    ("protojson", protojson),
    ("protobuf", protobuf),
    ("sse", sse),
];

/// The decoder `data` selects by its first byte, out of `count`, and the rest of the input.
fn split_selector(data: &[u8], count: usize) -> Option<(usize, &[u8])> {
    let (first, rest) = data.split_first()?;
    Some((usize::from(*first) % count, rest))
}

/// Asserts that what `encode` writes of a decoded value reads back, through `decode`, as a value
/// `encode` writes the same way: an encoder may drop what its form cannot hold (and timestamps
/// keep milliseconds only), but one round trip through the wire settles the value.
fn assert_settles<T, W: Clone + PartialEq + std::fmt::Debug>(
    what: &str,
    value: &T,
    encode: impl Fn(&T) -> W,
    decode: impl Fn(W) -> Result<T, String>,
) {
    let written = encode(value);
    let read = decode(written.clone()).unwrap_or_else(|error| {
        panic!("{what}: the decoder refuses what the encoder wrote: {error}\nwritten: {written:?}")
    });
    assert_eq!(encode(&read), written, "{what}: a second round trip changed the value");
}
