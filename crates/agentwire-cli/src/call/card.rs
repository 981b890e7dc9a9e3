//! `agentwire card URL`.

use super::{exit, ClientArgs, Failure};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  agentwire card http://127.0.0.1:8080\n  \
agentwire card https://agent.example.com --token \"$TOKEN\" --json\n\n\
With credentials, and a card that offers one, the extended card is shown.")]
pub(crate) struct CardOpt {
    /// The agent's base URL, or the URL of its card.
    pub(crate) url: String,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

pub(crate) async fn run(opt: CardOpt) -> Result<u8, Failure> {
    // The client fetches the extended card itself when the card offers one and credentials are set.
    let client = opt.client.connect(&opt.url).await?;
    opt.client.output().card(client.card(), client.card_signature());
    Ok(exit::OK)
}
