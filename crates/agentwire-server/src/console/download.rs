//! Downloading a task's file parts, as attachments of bytes.

use agentwire_types::{A2AError, A2aRequest, GetTaskRequest, PartContent, Task};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use http::request::Parts;
use http::{header, HeaderValue};

use super::pages;
use super::state::{context, error_page, run, ConsoleState};

/// A file part of an artifact, as a download.
pub(super) async fn download_part(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    Path((id, artifact_id, index)): Path<(String, String, usize)>,
) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let task: Task =
            run(&state, &ctx, A2aRequest::GetTask(GetTaskRequest { id, ..GetTaskRequest::default() })).await?;
        let part = task
            .artifacts
            .into_iter()
            .find(|artifact| artifact.artifact_id == artifact_id)
            .and_then(|artifact| artifact.parts.into_iter().nth(index))
            .ok_or_else(|| A2AError::invalid_params("the task has no such artifact part"))?;
        Ok(part)
    }
    .await;
    let part = match result {
        Ok(part) => part,
        Err(error) => return error_page(&state.console.site, &error),
    };
    let (body, default_type) = match part.content {
        PartContent::Raw(bytes) => (Body::from(bytes), "application/octet-stream"),
        PartContent::Text(text) => (Body::from(text), "text/plain; charset=utf-8"),
        PartContent::Data(value) => {
            (Body::from(serde_json::to_vec_pretty(&value).unwrap_or_default()), "application/json")
        }
        // Only to the web: an agent's `javascript:` or `data:` URL would run in the console's origin.
        PartContent::Url(url) => {
            return match pages::web_link(&url) {
                Some(url) => Redirect::to(url).into_response(),
                None => {
                    let error = A2AError::invalid_params("the part's URL is not an http or https address");
                    error_page(&state.console.site, &error)
                }
            };
        }
    };
    let media_type = part.media_type.as_deref().unwrap_or(default_type);
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(download_type(media_type)));
    headers.insert(header::CONTENT_DISPOSITION, attachment(part.filename.as_deref().unwrap_or("part")));
    // Whatever a browser makes of the bytes, nothing in them runs with the console's origin.
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    response
}

/// The media types a download keeps: kinds a browser shows or saves without running anything.
/// Anything else, HTML and SVG above all, downloads as bytes.
pub(super) const DOWNLOAD_TYPES: &[&str] = &[
    "text/plain; charset=utf-8",
    "text/csv",
    "application/json",
    "application/pdf",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "audio/mpeg",
    "audio/wav",
    "video/mp4",
];

/// The `Content-Type` a download of a part of `media_type` is served with.
pub(super) fn download_type(media_type: &str) -> &'static str {
    let essence = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let essence = if essence == "text/plain" { "text/plain; charset=utf-8" } else { essence.as_str() };
    DOWNLOAD_TYPES.iter().find(|safe| **safe == essence).copied().unwrap_or("application/octet-stream")
}

/// `Content-Disposition: attachment` for a file named `name` (RFC 6266): the name's characters
/// in `filename*`, and an ASCII stand-in in `filename` for the oldest clients. Control characters
/// are dropped, so the header is always valid and always sent.
pub(super) fn attachment(name: &str) -> HeaderValue {
    let name = pages::readable(name);
    let name = if name.trim().is_empty() { "part".to_owned() } else { name };
    let ascii: String =
        name.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '_' }).collect();
    let value = format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{}", pages::encode(&name));
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("attachment"))
}
