//! What a console is told of a pane's agent (issue 44): its card, never
//! how the server starts it. A secret in the agent's env, command line,
//! system prompt, settings or MCP server must not be in the bytes a
//! console receives.

use super::layout::Placed;
use super::pane::{Pane, pane_snapshot};
use crate::config::{AgentConfig, McpServerConfig};
use crate::protocol::ServerMsg;
use crate::protocol::frame::encode;

const SECRET: &str = "sk-live-4f2b9c";

fn secret_agent() -> AgentConfig {
    let mut agent = AgentConfig::new("a", "claude");
    agent.name = Some("Architect".into());
    agent.model = Some("opus".into());
    agent.env.insert("ANTHROPIC_API_KEY".into(), SECRET.into());
    agent.command = vec!["claude".into(), format!("--token={SECRET}")];
    agent.args = vec![format!("--api-key={SECRET}")];
    agent.system_prompt = Some(format!("the deploy key is {SECRET}"));
    agent
        .set("base_url", format!("https://{SECRET}@example.com"))
        .expect("sets");
    agent.hive_mcp = Some(McpServerConfig {
        name: "hive".into(),
        command: "hive".into(),
        args: vec![format!("--secret={SECRET}")],
        env: [("HIVE_TOKEN".to_owned(), SECRET.to_owned())].into(),
        url: None,
        headers: Default::default(),
    });
    agent
}

#[test]
fn no_secret_of_the_agent_reaches_a_console() {
    let placed = Placed {
        agent: secret_agent(),
        window: 1,
        added: false,
        parent: None,
    };
    let mut panes = crate::panes::Panes::default();
    let (record, pane) = Pane::slot(placed, secret_agent());
    let slot = panes.push(record, pane);
    let snap = pane_snapshot(&panes[slot], None);
    assert_eq!(snap.agent.display_name(), "Architect");
    assert_eq!(snap.agent.model.as_deref(), Some("opus"));
    let bytes = encode(&ServerMsg::SnapshotPane(Box::new(snap))).expect("encodes");
    let seen = String::from_utf8_lossy(&bytes);
    assert!(
        !seen.contains(SECRET),
        "a console would read the secret: {seen}"
    );
}
