//! The request every virtual user sends: parsed once, then stamped out per request.

use std::cell::Cell;
use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, HOST, TE};
use hyper::{HeaderMap, Method, Request, Uri};

use prost::Message as _;

use crate::opt::{Envelope, TargetOpt};

/// Replaced by a per-request counter in a body template.
const SEQ_PLACEHOLDER: &str = "{{seq}}";

/// A request template bound to one server address.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) addr: SocketAddr,
    grpc: bool,
    method: Method,
    path: Uri,
    headers: HeaderMap,
    /// A header whose value holds `{{seq}}`, stamped per request like a numbered body.
    numbered_header: Option<(HeaderName, BodyTemplate)>,
    body: BodyTemplate,
}

#[derive(Debug)]
enum BodyTemplate {
    /// The same bytes every time: a reference-count bump per request.
    Fixed(Bytes),
    /// `before{{seq}}after`, formatted per request.
    Numbered { before: String, after: String, next: Cell<u64> },
}

impl Target {
    pub(crate) fn from_opt(opt: &TargetOpt) -> anyhow::Result<Self> {
        let uri: Uri = opt.url.parse().with_context(|| format!("bad --url {}", opt.url))?;
        if uri.scheme_str() != Some("http") {
            bail!("--url must be plain http://");
        }
        let authority = uri.authority().ok_or_else(|| anyhow!("--url has no host"))?.clone();
        let port = authority.port_u16().unwrap_or(80);
        let addr = (authority.host(), port)
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve {authority}"))?
            .next()
            .ok_or_else(|| anyhow!("{authority} resolves to nothing"))?;
        let path: Uri = uri.path_and_query().map_or("/", |p| p.as_str()).parse()?;

        let body = match (&opt.body, &opt.body_file) {
            (Some(body), _) => body.clone(),
            (None, Some(file)) => {
                std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
            }
            (None, None) => String::new(),
        };

        let grpc = opt.envelope == Envelope::Grpc;
        let mut headers = HeaderMap::new();
        let (path, body) = if grpc {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
            headers.insert(TE, HeaderValue::from_static("trailers"));
            // HTTP/2 takes the scheme and authority from the URI.
            (uri.clone(), BodyTemplate::Fixed(grpc_message(&body)?))
        } else {
            // HTTP/1.1 requires Host (some servers reject requests without it).
            headers.insert(HOST, HeaderValue::from_str(authority.as_str())?);
            if !body.is_empty() {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            (path, BodyTemplate::new(body))
        };
        let mut numbered_header = None;
        for line in &opt.headers {
            let (name, value) = line.split_once(':').ok_or_else(|| anyhow!("header {line:?} is not `Name: value`"))?;
            let name = HeaderName::from_bytes(name.trim().as_bytes())?;
            if value.contains(SEQ_PLACEHOLDER) {
                numbered_header = Some((name, BodyTemplate::new(value.trim().to_owned())));
                continue;
            }
            headers.insert(name, HeaderValue::from_str(value.trim())?);
        }

        Ok(Self { addr, grpc, method: opt.method.parse()?, path, headers, numbered_header, body })
    }

    /// Whether requests go over HTTP/2 (gRPC) rather than HTTP/1.1.
    pub(crate) fn http2(&self) -> bool {
        self.grpc
    }

    /// The next request to send.
    pub(crate) fn request(&self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.next()));
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.path.clone();
        *request.headers_mut() = self.headers.clone();
        if let Some((name, value)) = &self.numbered_header {
            if let Ok(value) = HeaderValue::from_maybe_shared(value.next()) {
                request.headers_mut().insert(name.clone(), value);
            }
        }
        request
    }
}

/// A SendMessageRequest written in ProtoJSON, as the one message of a gRPC request: a 5-byte
/// prefix (not compressed, then the length), then the message in protobuf.
fn grpc_message(json: &str) -> anyhow::Result<Bytes> {
    let request: agentwire_types::SendMessageRequest =
        serde_json::from_str(json).context("a gRPC body must be a SendMessageRequest in ProtoJSON")?;
    let message = agentwire_proto::lf_a2a_v1::SendMessageRequest::from(request).encode_to_vec();
    let mut framed = Vec::with_capacity(5 + message.len());
    framed.push(0);
    framed.extend_from_slice(&u32::try_from(message.len())?.to_be_bytes());
    framed.extend_from_slice(&message);
    Ok(Bytes::from(framed))
}

impl BodyTemplate {
    fn new(body: String) -> Self {
        match body.split_once(SEQ_PLACEHOLDER) {
            None => Self::Fixed(Bytes::from(body)),
            Some((before, after)) => {
                Self::Numbered { before: before.to_owned(), after: after.to_owned(), next: Cell::new(0) }
            }
        }
    }

    fn next(&self) -> Bytes {
        match self {
            Self::Fixed(bytes) => bytes.clone(),
            Self::Numbered { before, after, next } => {
                let seq = next.get();
                next.set(seq + 1);
                Bytes::from(format!("{before}{seq}{after}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_bodies_count_up() {
        let template = BodyTemplate::new(r#"{"id":"m{{seq}}"}"#.to_owned());
        assert_eq!(template.next(), Bytes::from_static(br#"{"id":"m0"}"#));
        assert_eq!(template.next(), Bytes::from_static(br#"{"id":"m1"}"#));
    }

    #[derive(clap::Parser)]
    struct Wrapped {
        #[command(flatten)]
        target: TargetOpt,
    }

    #[test]
    fn a_numbered_header_counts_up() {
        use clap::Parser as _;
        let opt = Wrapped::try_parse_from([
            "rps",
            "--url",
            "http://127.0.0.1:1/",
            "-H",
            "A2A-Version: 1.0",
            "-H",
            "Idempotency-Key: k{{seq}}",
        ]);
        let target = Target::from_opt(&opt.unwrap().target).unwrap();
        let keys: Vec<_> = (0..2).map(|_| target.request().headers()["idempotency-key"].clone()).collect();
        assert_eq!(keys, ["k0", "k1"]);
        assert_eq!(target.request().headers()["a2a-version"], "1.0");
    }

    #[test]
    fn fixed_bodies_are_shared() {
        let template = BodyTemplate::new("hello".to_owned());
        assert_eq!(template.next(), template.next());
    }
}
