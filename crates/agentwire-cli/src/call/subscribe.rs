//! `agentwire subscribe URL ID`.

use agentwire_types::SubscribeToTaskRequest;

use super::{follow, ClientArgs, Failure, EXIT_CODES};

#[derive(Debug, clap::Args)]
#[command(after_help = format!("Example:\n  agentwire subscribe http://127.0.0.1:8080 0190c1d2-…\n\n\
A dropped connection is resumed where it stopped.\n\n{EXIT_CODES}"))]
pub(crate) struct SubscribeOpt {
    /// The agent's base URL.
    pub(crate) url: String,
    /// The task's id.
    pub(crate) id: String,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

pub(crate) async fn run(opt: SubscribeOpt) -> Result<u8, Failure> {
    let client = opt.client.connect(&opt.url).await?;
    let events = client.subscribe(SubscribeToTaskRequest { id: opt.id, ..Default::default() }).await?;
    follow(events, &mut opt.client.output(), &opt.url).await
}
