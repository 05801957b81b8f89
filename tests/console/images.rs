#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic
//! Image attachments (issue 14 item 8): the wire shape each provider's
//! request builder gives a message with an image, and the composer side —
//! a pasted path becomes a chip, Backspace removes it, an agent that takes
//! no images refuses the message and keeps the draft.

use crate::support;

use base64::Engine;
use crossterm::event::KeyCode;
use serde_json::json;

use hive::image::Image;
use hive::provider::Capabilities;
use hive::runner::RunnerCommand;
use support::console::Console;

/// A real 1×1 PNG.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn png(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(PNG_B64)
        .unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn image() -> (tempfile::TempDir, Image) {
    let dir = tempfile::tempdir().unwrap();
    let img = Image::load(&png(dir.path(), "shot.png")).unwrap();
    (dir, img)
}

#[test]
fn claude_message_has_base64_image_blocks_before_the_text() {
    let (_d, img) = image();
    let line = hive::provider::claude::control::user_message("what is this?", &[img], "u-1");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        v["message"],
        json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            {"type": "text", "text": "what is this?"},
        ]})
    );
    // Without images the content stays a plain string.
    let line = hive::provider::claude::control::user_message("hi", &[], "u-2");
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["message"]["content"], "hi");
}

#[test]
fn codex_turn_input_has_local_image_items() {
    let (_d, img) = image();
    let path = img.path.display().to_string();
    assert!(img.path.is_absolute());
    assert_eq!(
        hive::provider::codex::app_server::turn_input("look", &[img]),
        json!([
            {"type": "text", "text": "look"},
            {"type": "localImage", "path": path},
        ])
    );
}

#[test]
fn acp_prompt_has_image_content_only_when_the_agent_takes_images() {
    use hive::provider::acp::engine::prompt_blocks;
    let (_d, img) = image();
    let with =
        serde_json::to_value(prompt_blocks("hi".into(), std::slice::from_ref(&img), true)).unwrap();
    assert_eq!(
        with,
        json!([
            {"type": "image", "mimeType": "image/png", "data": PNG_B64},
            {"type": "text", "text": "hi"},
        ])
    );
    let without = serde_json::to_value(prompt_blocks("hi".into(), &[img], false)).unwrap();
    assert_eq!(without, json!([{"type": "text", "text": "hi"}]));
}

#[test]
fn openai_user_message_has_an_image_url_data_url() {
    use hive::provider::openai::wire::ChatMessage;
    let (_d, img) = image();
    assert_eq!(
        serde_json::to_value(ChatMessage::user("what is this?".into(), &[img])).unwrap(),
        json!({"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}},
        ]})
    );
    assert_eq!(
        serde_json::to_value(ChatMessage::user("hi".into(), &[])).unwrap(),
        json!({"role": "user", "content": "hi"})
    );
}

fn console(dir: &std::path::Path, images: bool) -> Console {
    let mut c = Console::one(Capabilities {
        images,
        ..Capabilities::default()
    });
    c.app.panes[0].agent.cwd = Some(dir.to_owned());
    c
}

#[test]
fn a_pasted_image_path_becomes_a_chip_and_goes_with_the_next_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = png(dir.path(), "screen shot.png");
    let mut c = console(dir.path(), true);
    // Terminals paste dropped files quoted or with escaped spaces.
    c.app.on_paste(&format!("'{}'", path.display()));
    assert_eq!(c.app.panes[0].attachments.len(), 1);
    assert!(c.app.panes[0].composer.is_empty());
    c.typ("what is on it?");
    insta::assert_snapshot!("image_chip", c.render(72, 12));
    c.key(KeyCode::Enter);
    match c.app.outbox.runner_commands().as_slice() {
        [
            (0, RunnerCommand::Attach(images)),
            (0, RunnerCommand::Submit { text, .. }),
        ] => {
            assert_eq!(images[0].media_type, "image/png");
            assert_eq!(images[0].name(), "screen shot.png");
            assert_eq!(text, "what is on it?");
        }
        other => panic!("{other:?}"),
    }
    assert!(c.app.panes[0].attachments.is_empty());
}

#[test]
fn backspace_on_an_empty_composer_removes_the_chip() {
    let dir = tempfile::tempdir().unwrap();
    let path = png(dir.path(), "a.png");
    let mut c = console(dir.path(), true);
    c.app.on_paste(&path.display().to_string());
    c.typ("x");
    // Backspace edits the text first, then takes the chip.
    c.key(KeyCode::Backspace);
    assert_eq!(c.app.panes[0].attachments.len(), 1);
    c.key(KeyCode::Backspace);
    assert!(c.app.panes[0].attachments.is_empty());
    // A pasted path that is not an image stays text.
    c.app.on_paste("notes.txt");
    assert_eq!(c.app.panes[0].composer.text(), "notes.txt");
}

#[test]
fn an_agent_without_images_refuses_and_keeps_the_draft() {
    let dir = tempfile::tempdir().unwrap();
    png(dir.path(), "a.png");
    let mut c = console(dir.path(), false);
    c.app.on_paste("a.png");
    c.typ("look");
    c.key(KeyCode::Enter);
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "{:?}",
        c.app.outbox
    );
    assert_eq!(c.app.panes[0].composer.text(), "look");
    assert_eq!(c.app.panes[0].attachments.len(), 1);
    let entries = c.transcript();
    assert!(entries.contains("takes no images: not sent"), "{entries}");
}

#[test]
fn a_typed_image_path_is_attached_for_agents_that_take_images() {
    let dir = tempfile::tempdir().unwrap();
    png(dir.path(), "b.png");
    let mut c = console(dir.path(), true);
    c.typ("compare b.png with the mockup");
    c.key(KeyCode::Enter);
    assert!(
        matches!(
            c.app.outbox.runner_commands().as_slice(),
            [(0, RunnerCommand::Attach(i)), (0, RunnerCommand::Submit { text, .. })]
                if i.len() == 1 && text == "compare b.png with the mockup"
        ),
        "{:?}",
        c.app.outbox
    );
}

/// Issue 34 item 9, found against the real codex exec: a path typed in a
/// sentence ends in its punctuation ("what is in b.png?"); it is attached
/// all the same, the text unchanged. Failed before: the word `b.png?` named
/// no file, so the path went as text, silently.
#[test]
fn a_typed_image_path_in_a_sentence_is_attached() {
    let dir = tempfile::tempdir().unwrap();
    png(dir.path(), "b.png");
    png(dir.path(), "c.png");
    let mut c = console(dir.path(), true);
    c.typ("what is in b.png? (and \"c.png\").");
    c.key(KeyCode::Enter);
    let sent = c.app.outbox.runner_commands();
    let [
        (0, RunnerCommand::Attach(images)),
        (0, RunnerCommand::Submit { text, .. }),
    ] = sent.as_slice()
    else {
        panic!("{:?}", c.app.outbox);
    };
    let names: Vec<_> = images.iter().map(|i| i.name()).collect();
    assert_eq!(names, ["b.png", "c.png"]);
    assert_eq!(text, "what is in b.png? (and \"c.png\").");
    // Punctuation alone does not make a path of a missing file.
    c.typ("is d.png? there");
    c.key(KeyCode::Enter);
    assert!(!c.transcript().contains("image not attached"));
}

/// Issue 34 item 9: to an agent that takes no images (gemini, pi) a typed
/// image path goes as text, and the pane says so. Failed before: it went
/// silently.
#[test]
fn a_typed_image_path_to_an_agent_without_images_is_said_to_go_as_text() {
    let dir = tempfile::tempdir().unwrap();
    png(dir.path(), "b.png");
    let mut c = console(dir.path(), false);
    c.typ("compare b.png with the mockup");
    c.key(KeyCode::Enter);
    assert!(
        matches!(
            c.app.outbox.runner_commands().as_slice(),
            [(0, RunnerCommand::Submit { text, .. })] if text == "compare b.png with the mockup"
        ),
        "{:?}",
        c.app.outbox
    );
    let entries = c.transcript();
    assert!(
        entries.contains("b.png sent as text: ") && entries.contains("takes no images"),
        "{entries}"
    );
    // A word that only looks like an image is not mentioned.
    c.typ("see missing.png");
    c.key(KeyCode::Enter);
    assert_eq!(c.transcript().matches("sent as text").count(), 1);
}

#[test]
fn too_large_or_fake_images_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.png");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(hive::image::MAX_IMAGE_BYTES + 1)
        .unwrap();
    let mut c = console(dir.path(), true);
    c.app.on_paste(&big.display().to_string());
    assert!(c.app.panes[0].attachments.is_empty());
    let entries = c.transcript();
    assert!(entries.contains("more than the 10 MB"), "{entries}");
}
