//! `--budget`: what callers may spend on models in a window, read into
//! [`Budgets`].

use std::time::Duration;

use agentwire_server::budget::{Budget, Budgets};

use super::values::parse_duration;

/// The window of a budget that names none.
const DEFAULT_WINDOW: Duration = Duration::from_secs(86_400);

/// The longest window: a year and a day.
const MAX_WINDOW: Duration = Duration::from_secs(366 * 86_400);

/// One `--budget`: whose it is (`None`: every principal's own) and the budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BudgetSpec {
    holder: Option<(Kind, String)>,
    budget: Budget,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Principal,
    Tenant,
}

/// `[principal=NAME,|tenant=NAME,]tokens=N[,tool-rounds=N][,window=DURATION]`.
pub(super) fn parse_budget(text: &str) -> Result<BudgetSpec, String> {
    let usage = "a budget is [principal=NAME,|tenant=NAME,]tokens=N,tool-rounds=N,window=DURATION \
                 (tokens or tool-rounds, or both; the window 1d by default)";
    let mut spec =
        BudgetSpec { holder: None, budget: Budget { tokens: None, tool_rounds: None, window: DEFAULT_WINDOW } };
    for field in text.split(',').map(str::trim) {
        let Some((key, value)) = field.split_once('=').map(|(k, v)| (k.trim(), v.trim())) else {
            return Err(format!("{field:?} is not KEY=VALUE: {usage}"));
        };
        let count = || value.parse::<u64>().map_err(|_| format!("{key}={value:?} is not a whole number"));
        match key {
            "principal" | "tenant" if spec.holder.is_some() => {
                return Err(format!("{text:?} names two holders: {usage}"));
            }
            "principal" | "tenant" if value.is_empty() => return Err(format!("{key}= names no one")),
            "principal" => spec.holder = Some((Kind::Principal, value.to_owned())),
            "tenant" => spec.holder = Some((Kind::Tenant, value.to_owned())),
            "tokens" => spec.budget.tokens = Some(count()?),
            "tool-rounds" => spec.budget.tool_rounds = Some(count()?),
            "window" => spec.budget.window = parse_duration(value)?,
            other => return Err(format!("{other:?} is not a part of a budget: {usage}")),
        }
    }
    if spec.budget.tokens.is_none() && spec.budget.tool_rounds.is_none() {
        return Err(format!("{text:?} limits nothing: {usage}"));
    }
    if !(Duration::from_secs(1)..=MAX_WINDOW).contains(&spec.budget.window) {
        return Err(format!("a budget's window is from 1s to 366d, not {:?}", spec.budget.window));
    }
    Ok(spec)
}

/// The budgets `specs` set; a later one for the same holder replaces an earlier.
pub(crate) fn budgets(specs: &[BudgetSpec]) -> Budgets {
    let mut budgets = Budgets::default();
    for spec in specs {
        match &spec.holder {
            None => budgets.each_principal = Some(spec.budget),
            Some((Kind::Principal, name)) => {
                budgets.principals.insert(name.clone(), spec.budget);
            }
            Some((Kind::Tenant, name)) => {
                budgets.tenants.insert(name.clone(), spec.budget);
            }
        }
    }
    budgets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_written_and_mistakes_say_what_a_budget_is() {
        let alice = parse_budget("principal=alice, tokens=1000, window=1h").unwrap();
        let acme = parse_budget("tenant=acme,tool-rounds=5").unwrap();
        let each = parse_budget("tokens=50,tool-rounds=2,window=30m").unwrap();
        let budgets = budgets(&[alice, acme, each]);
        let hour = Duration::from_secs(3_600);
        assert_eq!(budgets.principals["alice"], Budget { tokens: Some(1000), tool_rounds: None, window: hour });
        assert_eq!(budgets.tenants["acme"].window, DEFAULT_WINDOW);
        assert_eq!(budgets.each_principal.unwrap().tool_rounds, Some(2));
        for wrong in ["principal=alice", "tokens=ten", "tokens=1,window=0s", "tokens=1,cost=3", "principal=,tokens=1"] {
            assert!(parse_budget(wrong).is_err(), "{wrong}");
        }
        assert!(parse_budget("tokens=1,window=400d").unwrap_err().contains("366d"));
    }
}
