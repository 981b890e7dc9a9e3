//! Generates the prost messages and tonic services from `proto/`, with the protoc binary of
//! `protoc-bin-vendored`, so that a build needs no protoc on the machine.

use std::path::PathBuf;

const PROTOS: [&str; 2] = ["proto/lf/a2a/v1/a2a.proto", "proto/a2a/v1/a2a.proto"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure().file_descriptor_set_path(out.join("a2a_descriptor.bin")).compile_with_config(
        config,
        &PROTOS.map(PathBuf::from),
        &[PathBuf::from("proto"), well_known],
    )?;
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    Ok(())
}
