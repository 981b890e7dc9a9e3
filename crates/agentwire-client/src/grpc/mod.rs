//! The gRPC binding: `lf.a2a.v1.A2AService` at v1.0 interfaces, `a2a.v1.A2AService` at v0.3's.
//! The conversions of `agentwire-proto` write canonical requests as messages and read answers
//! back; credentials go as metadata, with `a2a-version`.

mod v03;
mod v1;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use agentwire_types::{A2AError, RpcCode, StreamResponse};
use futures_util::future::BoxFuture;
use futures_util::stream::{Stream, StreamExt};
use tonic::metadata::{MetadataKey, MetadataValue};
use tonic::transport::{Channel, ClientTlsConfig};
use tonic_types::StatusExt;

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::stream::Events;
use crate::transport::Transport;
use agentwire_types::{A2aRequest, A2aResponse};

/// One connection per gRPC interface, made on first use and shared by every call after.
#[derive(Debug)]
pub(crate) struct Channels {
    channels: Mutex<HashMap<String, Channel>>,
    tls: crate::tls::TlsSettings,
    /// Whether an address without a scheme is dialed over TLS: when the card came over HTTPS.
    tls_without_scheme: bool,
    /// The limit on a unary call; streams have none.
    timeout: Option<Duration>,
}

impl Channels {
    /// Connections with these TLS roots and client certificate; an address without a scheme over
    /// TLS when `tls_without_scheme`.
    /// A unary call ends after `timeout`, where set.
    pub(crate) fn new(tls: crate::tls::TlsSettings, tls_without_scheme: bool, timeout: Option<Duration>) -> Self {
        Self { channels: Mutex::default(), tls, tls_without_scheme, timeout }
    }

    /// The connection to `endpoint`; a first connection that fails leaves the endpoint
    /// [`Error::Unreachable`].
    async fn channel(&self, endpoint: &Endpoint) -> Result<Channel> {
        let url = &endpoint.url;
        if let Some(channel) = self.channels.lock().unwrap_or_else(|e| e.into_inner()).get(url) {
            return Ok(channel.clone());
        }
        // A v1.0 card names a gRPC interface `host:port`, secured as the card itself was; v0.3's
        // write a scheme.
        let uri = match (url.contains("://"), self.tls_without_scheme) {
            (true, _) => url.clone(),
            (false, true) => format!("https://{url}"),
            (false, false) => format!("http://{url}"),
        };
        let mut target = tonic::transport::Endpoint::from_shared(uri.clone())
            .map_err(|e| Error::Setting(format!("{url} is not a gRPC address: {e}")))?;
        if uri.starts_with("https://") {
            let mut tls = ClientTlsConfig::new().with_webpki_roots();
            for root in &self.tls.roots {
                tls = tls.ca_certificate(tonic::transport::Certificate::from_pem(root));
            }
            if let Some((chain, key)) = &self.tls.identity {
                tls = tls.identity(tonic::transport::Identity::from_pem(chain, key));
            }
            target = target.tls_config(tls).map_err(|e| Error::Setting(format!("TLS for {url}: {e}")))?;
        }
        let channel =
            target.connect().await.map_err(|e| Error::Unreachable { url: url.clone(), source: Box::new(e) })?;
        self.channels.lock().unwrap_or_else(|e| e.into_inner()).insert(url.clone(), channel.clone());
        Ok(channel)
    }
}

impl Transport for Channels {
    fn unary<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
    ) -> BoxFuture<'a, Result<A2aResponse>> {
        Box::pin(async move {
            let channel = self.channel(endpoint).await?;
            let rpc = Rpc { endpoint, authorization: authorization.as_ref(), timeout: self.timeout };
            match endpoint.version {
                crate::Version::V1 => v1::unary(channel, rpc, call).await,
                crate::Version::V03 => v03::unary(channel, rpc, call).await,
            }
        })
    }

    /// gRPC numbers no event: a stream resumes with the task as it stands.
    fn open<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
        _last_event_id: Option<u64>,
    ) -> BoxFuture<'a, Result<Events>> {
        Box::pin(async move {
            let channel = self.channel(endpoint).await?;
            let rpc = Rpc { endpoint, authorization: authorization.as_ref(), timeout: None };
            match endpoint.version {
                crate::Version::V1 => v1::open(channel, rpc, call).await,
                crate::Version::V03 => v03::open(channel, rpc, call).await,
            }
        })
    }
}

/// What every call to an endpoint carries.
#[derive(Clone, Copy)]
struct Rpc<'a> {
    endpoint: &'a Endpoint,
    /// A current access token's `Authorization`, which replaces the endpoint's.
    authorization: Option<&'a http::HeaderValue>,
    timeout: Option<Duration>,
}

impl Rpc<'_> {
    /// `message` with the endpoint's headers as metadata, the version, and the deadline.
    fn request<T>(self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        let metadata = request.metadata_mut();
        for (name, value) in &self.endpoint.headers {
            if let (Ok(key), Ok(value)) =
                (MetadataKey::from_bytes(name.as_str().as_bytes()), MetadataValue::try_from(value.as_bytes()))
            {
                metadata.insert(key, value);
            }
        }
        if let Some(authorization) = self.authorization.and_then(|v| MetadataValue::try_from(v.as_bytes()).ok()) {
            metadata.insert("authorization", authorization);
        }
        metadata.insert("a2a-version", MetadataValue::from_static(self.endpoint.version.header()));
        metadata.as_mut().extend(crate::trace::context_headers());
        metadata.as_mut().extend(crate::scoped::call_headers());
        if let Some(timeout) = self.timeout {
            request.set_timeout(timeout);
        }
        request
    }

    /// The answer of a unary call, converted to the canonical type.
    fn answer<P, C>(self, answer: Result<tonic::Response<P>, tonic::Status>) -> Result<C>
    where
        C: TryFrom<P>,
        C::Error: std::fmt::Display,
    {
        let message = answer.map_err(|status| self.error(status))?.into_inner();
        C::try_from(message).map_err(|e| Error::decode(&self.endpoint.url, e))
    }

    /// The events of a streaming call, converted to canonical stream items.
    fn events<P>(self, answer: Result<tonic::Response<tonic::Streaming<P>>, tonic::Status>) -> Result<Events>
    where
        P: Send + 'static,
        StreamResponse: TryFrom<P>,
        <StreamResponse as TryFrom<P>>::Error: std::fmt::Display,
    {
        let stream = answer.map_err(|status| self.error(status))?.into_inner();
        let url = self.endpoint.url.clone();
        Ok(items(stream, url).boxed())
    }

    /// A status as the A2A error it reports: the kind its `ErrorInfo` names, else the one its
    /// code most likely means; a status about the connection itself is a connection failure.
    fn error(self, status: tonic::Status) -> Error {
        read_status(&self.endpoint.url, status)
    }
}

fn items<P>(stream: tonic::Streaming<P>, url: String) -> impl Stream<Item = Result<(Option<u64>, StreamResponse)>>
where
    StreamResponse: TryFrom<P>,
    <StreamResponse as TryFrom<P>>::Error: std::fmt::Display,
{
    stream.map(move |item| match item {
        Ok(message) => StreamResponse::try_from(message).map(|event| (None, event)).map_err(|e| Error::decode(&url, e)),
        Err(status) => Err(read_status(&url, status)),
    })
}

fn read_status(url: &str, status: tonic::Status) -> Error {
    let info = status.get_details_error_info();
    let by_code = RpcCode::from_number(status.code() as i32).map(RpcCode::error_kind);
    let (reason, metadata) = info.map(|info| (Some(info.reason), info.metadata)).unwrap_or_default();
    match A2AError::reported(reason.as_deref(), by_code, status.message(), metadata) {
        Some(error) => error.into(),
        None => Error::Connection { url: url.to_owned(), source: Box::new(status) },
    }
}

/// The refusal of an operation the endpoint's package has no RPC for.
fn unsupported(rpc: Rpc<'_>, call: &A2aRequest) -> Error {
    Error::Unsupported { operation: call.operation(), endpoint: rpc.endpoint.to_string() }
}
