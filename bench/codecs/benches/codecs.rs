//! ProtoJSON decode and encode of the A2A types on the request path, and SSE event framing.
//!
//! Run with `cargo bench -p codecs` in `bench/` (or `bench/run.sh --codecs`).

use std::hint::black_box;

use agentwire_types::{Message, StreamResponse, Task};
use codecs::{frame_like_agentwire, frame_via_value, ARTIFACT_UPDATE, MESSAGE, STATUS_UPDATE, TASK};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Decode and encode benchmarks for one type, named after it.
fn round_trip<T: Serialize + DeserializeOwned>(c: &mut Criterion, name: &str, wire: &str) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.bench_function("decode", |b| b.iter(|| serde_json::from_str::<T>(black_box(wire)).unwrap()));
    let value: T = serde_json::from_str(wire).unwrap();
    let mut out = Vec::with_capacity(wire.len() * 2);
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&value)).unwrap();
        })
    });
    group.finish();
}

fn protojson(c: &mut Criterion) {
    round_trip::<Message>(c, "message", MESSAGE);
    round_trip::<Task>(c, "task", TASK);
    round_trip::<StreamResponse>(c, "stream_response/artifact_update", ARTIFACT_UPDATE);
    round_trip::<StreamResponse>(c, "stream_response/status_update", STATUS_UPDATE);
}

fn sse_framing(c: &mut Criterion) {
    let response: StreamResponse = serde_json::from_str(ARTIFACT_UPDATE).unwrap();
    let mut group = c.benchmark_group("sse_event");
    let mut out = Vec::with_capacity(1024);
    group.bench_function("direct_like_agentwire", |b| {
        b.iter(|| {
            out.clear();
            frame_like_agentwire(&mut out, black_box(2), black_box(&response));
        })
    });
    group.bench_function("via_value_before", |b| {
        b.iter(|| {
            out.clear();
            frame_via_value(&mut out, black_box(2), black_box(&response));
        })
    });
    group.finish();
}

criterion_group!(benches, protojson, sse_framing);
criterion_main!(benches);
