//! Fuzz target: The client's reading of an event stream, cut into arbitrary pieces.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::sse(data));
