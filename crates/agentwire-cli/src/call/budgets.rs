//! `agentwire budgets`: what callers may spend on models and have spent, read and reset over a
//! server's or gateway's `/budgets` routes.

use serde_json::Value;

use super::output::printable;
use super::registry::answer_of;
use super::{exit, Failure};

/// The budget commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum BudgetsCommand {
    /// Show budgets and what was spent of them: your own, or every holder's for a --budget-admin.
    List(ServerArgs),
    /// Forget what a principal or tenant spent in its window, so that it may spend its whole
    /// budget again (a --budget-admin only).
    Reset(ResetOpt),
}

/// How the budget commands reach the server.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServerArgs {
    /// The server's or gateway's base URL.
    #[arg(value_name = "URL")]
    server: String,

    /// Send `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN", env = "AGENTWIRE_TOKEN", hide_env_values = true)]
    token: Option<String>,

    /// Print the server's JSON answer.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
#[group(id = "holder", required = true, multiple = false)]
pub(crate) struct ResetOpt {
    #[command(flatten)]
    server: ServerArgs,

    /// The principal whose spending to forget.
    #[arg(long, group = "holder")]
    principal: Option<String>,

    /// The tenant whose spending to forget.
    #[arg(long, group = "holder")]
    tenant: Option<String>,
}

/// Runs a budget command; the exit status says how it went.
pub(crate) async fn run(command: BudgetsCommand) -> Result<u8, Failure> {
    match command {
        BudgetsCommand::List(args) => list(&args).await,
        BudgetsCommand::Reset(opt) => reset(&opt).await,
    }
}

/// A request to `URL/SEGMENTS...`, each segment escaped.
fn request(args: &ServerArgs, method: reqwest::Method, segments: &[&str]) -> Result<reqwest::RequestBuilder, Failure> {
    let invalid = || Failure {
        message: format!("{:?} is not a URL such as http://127.0.0.1:8080", args.server),
        code: exit::USAGE,
    };
    let mut url = reqwest::Url::parse(args.server.trim_end_matches('/')).map_err(|_| invalid())?;
    url.path_segments_mut().map_err(|()| invalid())?.pop_if_empty().extend(segments);
    let request = reqwest::Client::new().request(method, url).timeout(std::time::Duration::from_secs(30));
    Ok(match &args.token {
        Some(token) => request.bearer_auth(token),
        None => request,
    })
}

async fn list(args: &ServerArgs) -> Result<u8, Failure> {
    let answer = answer_of("server", request(args, reqwest::Method::GET, &["budgets"])?, &args.server).await?;
    if args.json {
        println!("{answer}");
        return Ok(exit::OK);
    }
    let statements = answer["budgets"].as_array().cloned().unwrap_or_default();
    if statements.is_empty() {
        println!("no budget applies");
    }
    for statement in &statements {
        println!("{}", line(statement));
    }
    Ok(exit::OK)
}

/// One budget as a line: `principal:alice  tokens 1040/1000  tool rounds 1/5  resets 2026-…`.
fn line(statement: &Value) -> String {
    let measure = |name: &str, key: &str| {
        let measure = &statement[key];
        let count = |key: &str| measure[key].as_u64().map_or_else(|| "?".to_owned(), |n| n.to_string());
        measure.is_object().then(|| format!("  {name} {}/{}", count("spent"), count("budget")))
    };
    let text = |key: &str| printable(statement[key].as_str().unwrap_or_default());
    format!(
        "{}{}{}  resets {}",
        text("holder"),
        measure("tokens", "tokens").unwrap_or_default(),
        measure("tool rounds", "toolRounds").unwrap_or_default(),
        text("resetsAt")
    )
}

async fn reset(opt: &ResetOpt) -> Result<u8, Failure> {
    let (kind, name) = match (&opt.principal, &opt.tenant) {
        (Some(principal), _) => ("principal", principal),
        (None, Some(tenant)) => ("tenant", tenant),
        (None, None) => return Err(Failure { message: "give --principal or --tenant".to_owned(), code: exit::USAGE }),
    };
    let args = &opt.server;
    answer_of("server", request(args, reqwest::Method::DELETE, &["budgets", kind, name])?, &args.server).await?;
    if !args.json {
        println!("reset the budget of {kind} {name}");
    }
    Ok(exit::OK)
}
