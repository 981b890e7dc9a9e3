//! gRPC answers: one length-prefixed `lf.a2a.v1.SendMessageResponse` holding a completed task, and
//! `grpc-status: 0`.

use agentwire_proto::lf_a2a_v1 as pb;
use hyper::HeaderMap;
use prost::Message as _;

use super::ResponseCheck;

/// Checks SendMessage answers of the gRPC binding.
pub(crate) struct GrpcTaskCheck;

impl ResponseCheck for GrpcTaskCheck {
    fn quick(&self, body: &[u8]) -> Result<u64, String> {
        frame(body).map(|_| 1)
    }

    fn full(&self, body: &[u8]) -> Result<u64, String> {
        let reply =
            pb::SendMessageResponse::decode(frame(body)?).map_err(|e| format!("not a SendMessageResponse: {e}"))?;
        let Some(pb::send_message_response::Payload::Task(task)) = reply.payload else {
            return Err(format!("not a task: {reply:?}"));
        };
        if task.id.is_empty() {
            return Err("task without an id".to_owned());
        }
        match task.status.map(|status| status.state) {
            Some(state) if state == pb::TaskState::Completed as i32 => Ok(1),
            other => Err(format!("task state {other:?}, expected TASK_STATE_COMPLETED")),
        }
    }
}

/// The one message of a unary answer: a 5-byte prefix (not compressed, then the length), then
/// exactly that many bytes.
fn frame(body: &[u8]) -> Result<&[u8], String> {
    let Some(([compressed, length @ ..], message)) = body.split_first_chunk::<5>() else {
        return Err(format!("a gRPC answer of {} bytes", body.len()));
    };
    let length = u32::from_be_bytes(*length) as usize;
    if *compressed != 0 || message.len() != length {
        return Err(format!("not one uncompressed message of {length} bytes ({} follow)", message.len()));
    }
    Ok(message)
}

/// The `grpc-status` of an answer (in its trailers, or its headers for a trailers-only answer),
/// if it has one.
pub(crate) fn grpc_status<'a>(headers: &'a HeaderMap, trailers: Option<&'a HeaderMap>) -> Option<&'a [u8]> {
    trailers.and_then(|t| t.get("grpc-status")).or_else(|| headers.get("grpc-status")).map(|v| v.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(reply: &pb::SendMessageResponse) -> Vec<u8> {
        let message = reply.encode_to_vec();
        let mut body = vec![0];
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(&message);
        body
    }

    fn task(state: pb::TaskState) -> pb::SendMessageResponse {
        let status = pb::TaskStatus { state: state as i32, ..Default::default() };
        let task = pb::Task { id: "t1".into(), status: Some(status), ..Default::default() };
        pb::SendMessageResponse { payload: Some(pb::send_message_response::Payload::Task(task)) }
    }

    #[test]
    fn a_completed_task_passes() {
        let body = framed(&task(pb::TaskState::Completed));
        assert_eq!(GrpcTaskCheck.quick(&body), Ok(1));
        assert_eq!(GrpcTaskCheck.full(&body), Ok(1));
    }

    #[test]
    fn another_state_or_a_broken_frame_fails() {
        assert!(GrpcTaskCheck.full(&framed(&task(pb::TaskState::Working))).is_err());
        let body = framed(&task(pb::TaskState::Completed));
        assert!(GrpcTaskCheck.quick(&body[..body.len() - 1]).is_err());
        assert!(GrpcTaskCheck.quick(&[]).is_err());
    }
}
