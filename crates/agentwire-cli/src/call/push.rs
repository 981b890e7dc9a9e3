//! `agentwire push set|get|list|delete`: a task's webhooks.

use agentwire_types::{
    AuthenticationInfo, ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use clap::Subcommand;

use super::{exit, ClientArgs, Failure, Output};

#[derive(Debug, Subcommand)]
pub(crate) enum PushCommand {
    /// Ask the agent to call a webhook with the task's updates.
    #[command(
        after_help = "Example:\n  agentwire push set http://127.0.0.1:8080 0190c1d2-… https://hooks.example.com/a2a \
--notification-token s3cret --bearer \"$HOOK_TOKEN\""
    )]
    Set {
        /// The agent's base URL.
        url: String,
        /// The task's id.
        task: String,
        /// The webhook's URL.
        webhook: String,
        /// A token the agent sends back with every delivery (X-A2A-Notification-Token).
        #[arg(long = "notification-token", value_name = "TOKEN")]
        notification_token: Option<String>,
        /// Credentials the agent presents to the webhook as `Authorization: Bearer …`.
        #[arg(long, value_name = "CREDENTIALS")]
        bearer: Option<String>,
        /// The config's id (default: the agent names it).
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Show one of a task's webhook configs.
    Get {
        /// The agent's base URL.
        url: String,
        /// The task's id.
        task: String,
        /// The config's id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// List a task's webhook configs.
    List {
        /// The agent's base URL.
        url: String,
        /// The task's id.
        task: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Remove one of a task's webhook configs.
    Delete {
        /// The agent's base URL.
        url: String,
        /// The task's id.
        task: String,
        /// The config's id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
}

pub(crate) async fn run(command: PushCommand) -> Result<u8, Failure> {
    match command {
        PushCommand::Set { url, task, webhook, notification_token, bearer, id, client: args } => {
            let client = args.connect(&url).await?;
            let config = TaskPushNotificationConfig {
                id: id.unwrap_or_default(),
                task_id: task,
                url: webhook,
                token: notification_token.unwrap_or_default(),
                authentication: bearer.map(|credentials| AuthenticationInfo { scheme: "Bearer".into(), credentials }),
                ..Default::default()
            };
            show(&client.create_push_config(config).await?, &mut args.output());
        }
        PushCommand::Get { url, task, id, client: args } => {
            let client = args.connect(&url).await?;
            let reference = TaskPushNotificationConfigRef { task_id: task, id, ..Default::default() };
            show(&client.get_push_config(reference).await?, &mut args.output());
        }
        PushCommand::List { url, task, client: args } => {
            let client = args.connect(&url).await?;
            let request = ListTaskPushNotificationConfigsRequest { task_id: task, ..Default::default() };
            let page = client.list_push_configs(request).await?;
            let mut out = args.output();
            if !out.json(&page) {
                page.configs.iter().for_each(|config| show(config, &mut out));
                if page.configs.is_empty() {
                    out.line("no push configs");
                }
            }
        }
        PushCommand::Delete { url, task, id, client: args } => {
            let client = args.connect(&url).await?;
            let reference = TaskPushNotificationConfigRef { task_id: task, id: id.clone(), ..Default::default() };
            client.delete_push_config(reference).await?;
            let mut out = args.output();
            if !out.json(&serde_json::json!({})) {
                out.line(&format!("deleted {id}"));
            }
        }
    }
    Ok(exit::OK)
}

fn show(config: &TaskPushNotificationConfig, out: &mut Output) {
    if !out.json(config) {
        out.line(&format!("{}  {}", config.id, config.url));
    }
}
