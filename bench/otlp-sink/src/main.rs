//! Receives OTLP traces over gRPC and counts the spans, keeping none: a collector that costs
//! little, so that a traced server is measured exporting to a real receiver. Prints its endpoint
//! when it listens, and the spans it received when it is stopped (SIGTERM or SIGINT).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use clap::Parser;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use tokio::signal::unix::{signal, SignalKind};

#[derive(Parser)]
struct Args {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: std::net::SocketAddr,
}

struct Counter(Arc<AtomicU64>);

#[tonic::async_trait]
impl TraceService for Counter {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = request
            .into_inner()
            .resource_spans
            .iter()
            .flat_map(|resource| &resource.scope_spans)
            .map(|scope| scope.spans.len() as u64)
            .sum();
        self.0.fetch_add(spans, Ordering::Relaxed);
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    println!("http://{}", listener.local_addr()?);
    let received = Arc::new(AtomicU64::new(0));
    let service = TraceServiceServer::new(Counter(Arc::clone(&received)));
    let (mut term, mut int) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    let stopped = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    };
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tonic::transport::Server::builder()
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, stopped)
        .await
        .map_err(std::io::Error::other)?;
    eprintln!("received {} spans", received.load(Ordering::Relaxed));
    Ok(())
}
