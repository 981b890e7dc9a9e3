//! The usage page (`/console/usage`): what callers spent on models, by caller and by agent, as the
//! server's usage counters hold it, and the budgets of the page's caller (of everyone, for an
//! admin).

use std::collections::BTreeMap;
use std::sync::Arc;

use agentwire_types::{A2AError, UsageFigures};
use axum::extract::State;
use axum::response::Response;
use http::request::Parts;
use maud::{html, Markup};

use super::pages::{layout, Page};
use super::state::{page, refusal, ConsoleState};
use super::Site;
use crate::budget::Statement;
use crate::metrics::UsageSum;
use crate::RequestContext;

/// What the usage page shows one caller.
#[derive(Debug, Default)]
pub(crate) struct UsageReport {
    /// Whether the server counts usage (`--metrics`).
    pub(crate) counted: bool,
    /// The caller's principal (`None`: anonymous), and whether it sees everyone's rows.
    pub(crate) caller: Option<String>,
    pub(crate) everyone: bool,
    pub(crate) rows: Vec<UsageSum>,
    pub(crate) budgets: Vec<Statement>,
}

/// Makes the report for a page request's caller (its context), or the refusal.
pub(crate) type UsageView = Arc<
    dyn Fn(RequestContext) -> futures_util::future::BoxFuture<'static, Result<UsageReport, A2AError>> + Send + Sync,
>;

/// `GET /console/usage`.
pub(super) async fn usage_page(State(state): State<ConsoleState>, mut parts: Parts) -> Response {
    let ctx = super::state::context(&mut parts);
    show(&state.console, ctx).await
}

/// The usage page of `console` for the caller of `ctx` (a console of one agent's, or of the
/// page that lists several).
pub(super) async fn show(console: &super::Console, ctx: Result<RequestContext, A2AError>) -> Response {
    let site = &console.site;
    let Some(view) = &console.usage else {
        return refusal(site, http::StatusCode::NOT_FOUND, "No usage here", "This console shows no usage.");
    };
    let report = async { view(ctx?).await };
    page(site, report.await.map(|report| render(site, &report)))
}

/// The page of `report`; a mounted agent's console shows its agent's rows alone.
fn render(site: &Site, report: &UsageReport) -> Page {
    let agent = site.agent.as_ref().map(|(name, _)| name.as_ref());
    let rows: Vec<&UsageSum> = report.rows.iter().filter(|row| agent.is_none_or(|agent| row.agent == agent)).collect();
    let mut by_caller: BTreeMap<&str, (UsageFigures, u64)> = BTreeMap::new();
    for row in &rows {
        let (spent, turns) = by_caller.entry(row.principal.as_str()).or_default();
        *spent = spent.plus(row.spent);
        *turns = turns.saturating_add(row.reports);
    }
    let mut by_agent: Vec<&&UsageSum> = rows.iter().collect();
    by_agent.sort_by(|a, b| (&a.agent, &a.model, &a.principal).cmp(&(&b.agent, &b.model, &b.principal)));
    let whose = match (&report.caller, report.everyone) {
        (_, true) => "Every caller's".to_owned(),
        (Some(name), false) => format!("Yours ({name})"),
        (None, false) => "Yours".to_owned(),
    };
    layout(
        site,
        "Usage",
        "Usage",
        html! {
            h1 { "Usage" }
            p.lead { (whose) ", as the agents reported it since this server started." }
            @if !report.budgets.is_empty() {
                h2 { "Budgets" }
                div.scroll { table #budgets {
                    thead { tr { th { "Holder" } th { "Tokens" } th { "Tool rounds" } th { "Resets" } } }
                    tbody { @for statement in &report.budgets { tr {
                        td { code { (statement.holder) } }
                        td { (measure(statement.tokens.as_ref())) }
                        td { (measure(statement.tool_rounds.as_ref())) }
                        td { (statement.resets_at.to_string()) }
                    } } }
                } }
            }
            @if !report.counted {
                p.notice { "This server counts usage when it serves metrics (--metrics)." }
            } @else if rows.is_empty() {
                p { "Nothing reported yet." }
            } @else {
                h2 { "By caller" }
                div.scroll { table #by-caller {
                    thead { tr { th { "Caller" } (figure_heads()) } }
                    tbody { @for (caller, (spent, turns)) in &by_caller { tr {
                        td { (caller) } (figures(spent, *turns))
                    } } }
                } }
                h2 { "By agent and model" }
                div.scroll { table #by-agent {
                    thead { tr { th { "Agent" } th { "Model" } th { "Caller" } (figure_heads()) } }
                    tbody { @for row in &by_agent { tr {
                        td { (row.agent) } td { code { (row.model) } } td { (row.principal) } (figures(&row.spent, row.reports))
                    } } }
                } }
            }
        },
    )
}

fn figure_heads() -> Markup {
    html! { th { "Input tokens" } th { "Output tokens" } th { "Model calls" } th { "Tool rounds" } th { "Turns" } }
}

fn figures(spent: &UsageFigures, turns: u64) -> Markup {
    html! {
        td { (spent.input_tokens) } td { (spent.output_tokens) } td { (spent.model_calls) }
        td { (spent.tool_rounds) } td { (turns) }
    }
}

/// `spent / budget`, or a dash for no limit.
fn measure(measure: Option<&crate::budget::Measure>) -> Markup {
    match measure {
        Some(measure) if measure.spent >= measure.budget => {
            html! { strong.unhealthy { (measure.spent) " / " (measure.budget) } " spent" }
        }
        Some(measure) => html! { (measure.spent) " / " (measure.budget) },
        None => html! { "–" },
    }
}
