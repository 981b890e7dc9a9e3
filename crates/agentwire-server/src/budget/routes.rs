//! The budgets' routes: `GET /budgets` (the caller's own budgets, or every holder's for an
//! admin) and `DELETE /budgets/principal/NAME`, `DELETE /budgets/tenant/NAME` (an admin's reset).

use agentwire_types::{A2AError, Access, Front, Peer, Principal, RequestContext};
use axum::extract::{Path, Request};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http::StatusCode;
use serde_json::json;

use super::{BudgetBook, Holder};
use crate::App;

impl App {
    /// `routes` with those the app serves itself beside the operations: `/budgets`, when it keeps
    /// budgets. [`routes`](Self::routes) adds them; a server that builds its routes otherwise (a
    /// gateway) adds them here.
    pub fn beside_routes(&self, routes: crate::Routes) -> crate::Routes {
        match self.budget_book() {
            Some(book) => routes.merge(budget_routes(self, book)),
            None => routes,
        }
    }
}

/// The budgets' routes of `book`, served in `app`'s order (metrics, authentication, quotas).
fn budget_routes(app: &App, book: &BudgetBook) -> Router {
    let (read_app, read_book) = (app.clone(), book.clone());
    let (reset_app, reset_book) = (app.clone(), book.clone());
    Router::new()
        .route(
            "/budgets",
            axum::routing::get(move |request: Request| {
                let (app, book) = (read_app.clone(), read_book.clone());
                async move { read(&app, &book, request).await }
            }),
        )
        .route(
            "/budgets/{kind}/{name}",
            axum::routing::delete(move |Path((kind, name)): Path<(String, String)>, request: Request| {
                let (app, book) = (reset_app.clone(), reset_book.clone());
                async move { reset(&app, &book, &kind, name, request).await }
            }),
        )
}

fn context_of(request: &Request) -> RequestContext {
    RequestContext::from_http(Front::Budgets, request.headers(), request.extensions())
}

/// `GET /budgets`.
async fn read(app: &App, book: &BudgetBook, request: Request) -> Response {
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    let required = app.authentication().is_some();
    let answer = app.beside(ctx, Access::ReadBudgets, required, |principal| async move {
        let all = admits(app, book, principal.as_ref(), peer.as_ref());
        book.statements(principal.as_ref(), all).await
    });
    match answer.await {
        Ok(statements) => axum::Json(json!({ "budgets": statements })).into_response(),
        Err(error) => crate::error_response(&error),
    }
}

/// `DELETE /budgets/KIND/NAME`: from no web page of another origin.
async fn reset(app: &App, book: &BudgetBook, kind: &str, name: String, request: Request) -> Response {
    if let Some(refused) = foreign_origin(&request) {
        return crate::error_response(&refused);
    }
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    let required = app.authentication().is_some();
    let answer = app.beside(ctx, Access::ResetBudgets, required, |principal| async move {
        if !admits(app, book, principal.as_ref(), peer.as_ref()) {
            return Err(A2AError::permission_denied(match principal {
                Some(_) => "resetting budgets needs a principal named by --budget-admin",
                None => "this server authenticates no one: its budgets are reset from its own host only",
            }));
        }
        let holder = match kind {
            "principal" => Holder::Principal(name),
            "tenant" => Holder::Tenant(name),
            other => {
                return Err(A2AError::invalid_params(format!(
                    "{other:?} holds no budget: reset /budgets/principal/NAME or /budgets/tenant/NAME"
                )))
            }
        };
        if book.budgets().of_holder(&holder).is_none() {
            return Err(A2AError::invalid_params(format!("{holder} has no budget")));
        }
        let had_spent = book.reset(&holder).await?;
        tracing::info!(%holder, had_spent, "budget reset");
        Ok(had_spent)
    });
    match answer.await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => crate::error_response(&error),
    }
}

/// Whether `principal` (calling from `peer`) may see every budget and reset them
/// ([`sees_everyone`](super::sees_everyone)).
fn admits(app: &App, book: &BudgetBook, principal: Option<&Principal>, peer: Option<&Peer>) -> bool {
    super::sees_everyone(Some(book), app.authentication().is_some(), principal, peer)
}

/// The refusal of a request a web page of another origin than the server's sent: browsers name
/// the page's origin in `Origin`, and a command-line client sends none. A page on any site could
/// otherwise have a browser on the server's own host reset a budget.
fn foreign_origin(request: &Request) -> Option<A2AError> {
    let origin = request.headers().get(http::header::ORIGIN)?.to_str().unwrap_or_default();
    let host = crate::ServedHosts::named_by(request);
    let authority = origin.split_once("://").map(|(_, authority)| authority);
    if authority.is_some_and(|authority| !host.is_empty() && authority.eq_ignore_ascii_case(host)) {
        return None;
    }
    Some(A2AError::permission_denied(format!(
        "budgets are reset from no web page of another origin; this came from {origin:?}"
    )))
}
