//! Runner scenarios written once for both a fake agent and the real CLI
//! (opt-in tests): the same steps and the same checks, whichever process
//! answers.

use hive::event::Origin;
use hive::provider::{PermissionDecision, PermissionRequest};
use hive::runner::{Decider, PaneEvent, RunnerCommand, SubmitMode};
use hive::upsert::{TurnEvent, UpsertStatus};

use super::driver::{Pane, agent_text, cancelled, completed};

/// Interrupt while text streams: the turn ends cancelled, and the same
/// process takes the next turn (`next`), which completes.
pub async fn interrupt_then_next_turn(pane: &mut Pane, slow: &str, next: &str) {
    pane.submit(slow, SubmitMode::Auto);
    pane.until("first agent text", agent_text).await;
    pane.runner.send(RunnerCommand::Interrupt);
    let t = pane.turn_end().await;
    assert!(cancelled(&t), "{t:?}");
    // The text already received stays, marked interrupted (issue 13 item 5).
    let kept = pane.messages_where(|u, o| {
        u.turn_id == t.turn_id() && o == Origin::Agent && u.status == UpsertStatus::Interrupted
    });
    assert!(
        kept.last().is_some_and(|k| !k.is_empty()),
        "interrupted text kept: {:#?}",
        pane.seen
    );
    pane.submit(next, SubmitMode::Auto);
    let t = pane.turn_end().await;
    assert!(completed(&t), "{t:?}");
}

/// A message written while text streams (`steer`) joins the running turn,
/// which completes.
pub async fn steer_while_streaming(pane: &mut Pane, slow: &str, steer: &str) -> TurnEvent {
    pane.submit(slow, SubmitMode::Auto);
    pane.until("first agent text", agent_text).await;
    pane.submit(steer, SubmitMode::Steer);
    let t = pane.turn_end().await;
    assert!(completed(&t), "{t:?}");
    t
}

/// Submits `prompt` and waits for the permission request it leads to.
pub async fn permission_asked(pane: &mut Pane, prompt: &str) -> PermissionRequest {
    pane.submit(prompt, SubmitMode::Auto);
    let PaneEvent::Permission(req) = pane
        .until("permission", |e| matches!(e, PaneEvent::Permission(_)))
        .await
    else {
        unreachable!()
    };
    req
}

/// Answers `req` with `decision`; the turn then completes.
pub async fn answer_permission(
    pane: &mut Pane,
    req: PermissionRequest,
    decision: PermissionDecision,
) {
    pane.runner.send(RunnerCommand::Permission {
        request_id: req.request_id,
        decision,
        by: Decider::Console,
    });
    assert!(completed(&pane.turn_end().await));
}

/// Environment for the real Claude Code CLI against the mock model: an
/// isolated HOME, no network besides `base_url`, no telemetry or updates.
pub fn real_claude_env(home: &str, base_url: &str, api_key: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.to_owned()),
        ("ANTHROPIC_BASE_URL", base_url.to_owned()),
        ("ANTHROPIC_API_KEY", api_key.to_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        // as root, bypassPermissions (and claude-code-acp's session/new) need this
        ("IS_SANDBOX", "1".into()),
    ]
}
