//! A2A's gRPC bindings: the messages and services generated from this crate's `.proto` files, and
//! conversions between them and the canonical model of `agentwire-types`.
//!
//! - [`lf_a2a_v1`]: package `lf.a2a.v1`, the v1.0 binding (`lf.a2a.v1.A2AService`).
//! - [`a2a_v1`]: package `a2a.v1`, the v0.3 binding (`a2a.v1.A2AService`).
//!
//! ```
//! use agentwire_proto::lf_a2a_v1 as pb;
//! use agentwire_types::{Message, Part, Role};
//!
//! let message = Message::new(Role::User, "m1", vec![Part::text("hi")]);
//! let wire = pb::Message::from(message.clone());
//! assert_eq!(wire.role, pb::Role::User as i32);
//! assert_eq!(Message::try_from(wire).unwrap(), message);
//! ```

mod convert;

/// Package `lf.a2a.v1`: the A2A v1.0 messages and `A2AService`.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod lf_a2a_v1 {
    tonic::include_proto!("lf.a2a.v1");
}

/// Package `a2a.v1`: the A2A v0.3 messages and `A2AService`.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod a2a_v1 {
    tonic::include_proto!("a2a.v1");
}

/// The encoded `FileDescriptorSet` of every package here, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("a2a_descriptor");
