//! Fuzz target: The protobuf messages of `lf.a2a.v1` and `a2a.v1`, and their conversions.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::protobuf(data));
