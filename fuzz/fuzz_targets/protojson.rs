//! Fuzz target: The ProtoJSON readers of the canonical v1.0 types.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::protojson(data));
