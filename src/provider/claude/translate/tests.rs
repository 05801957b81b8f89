//! The typed reading of block deltas (`DeltaLine`) against the JSON tree
//! reading of the same lines: two translators side by side, one with the
//! fast path off, must produce the same output and end in the same state
//! after every line.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::collections::HashMap;
use std::path::PathBuf;

use super::stream::DeltaLine;
use super::*;

/// `text` with every generated id (`prefix_` + 32 hex digits) replaced by
/// its order of first appearance: the two translators draw different ids.
fn normalize(text: &str, ids: &mut HashMap<String, usize>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('_') {
        let (head, tail) = rest.split_at(at + 1);
        out.push_str(head);
        let hex = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex == 32 {
            let n = ids.len();
            let n = *ids.entry(tail[..32].to_owned()).or_insert(n);
            out.push_str(&format!("#{n}"));
            rest = &tail[32..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// What a line produced, without event ids and clock stamps.
fn output(t: &Translated, ids: &mut HashMap<String, usize>) -> String {
    let events: Vec<String> = t
        .events
        .iter()
        .map(|e| match e {
            ProviderEvent::Stream(s) => format!("{} {} {:?}", s.turn_id, s.session_id, s.payload),
            other => format!("{other:?}"),
        })
        .collect();
    normalize(&format!("{events:#?}\n{:#?}", t.replies), ids)
}

/// Everything a translator keeps between lines (the abandoned set sorted:
/// two `HashSet`s list the same members in different orders).
fn state(tr: &Translator, ids: &mut HashMap<String, usize>) -> String {
    let mut abandoned: Vec<&String> = tr.abandoned.iter().collect();
    abandoned.sort();
    let text = format!(
        "{} {} {:?} {:?} {:?} {:#?} {:#?} {:?} {abandoned:?} {:?} {:?} {:?}",
        tr.session_id,
        tr.session_known,
        tr.model,
        tr.commands,
        tr.announced,
        tr.turn,
        tr.blocks,
        tr.current_message,
        tr.last_total_cost,
        tr.api_error,
        tr.stop_reason,
    );
    normalize(&text, ids)
}

/// Two translators, fast path on and off.
struct SideBySide {
    fast: Translator,
    tree: Translator,
    fast_ids: HashMap<String, usize>,
    tree_ids: HashMap<String, usize>,
    turns: usize,
    /// Lines the fast path read.
    read: usize,
}

impl SideBySide {
    fn new() -> Self {
        Self {
            fast: Translator::new(None),
            tree: Translator::new(None),
            fast_ids: HashMap::new(),
            tree_ids: HashMap::new(),
            turns: 0,
            read: 0,
        }
    }

    /// A line hive wrote to stdin, as the replay in tests/providers/claude.rs reads it.
    fn input(&mut self, line: &str) {
        let msg: Value = serde_json::from_str(line).expect("stdin line");
        match (msg["type"].as_str(), msg["request"]["subtype"].as_str()) {
            (Some("user"), _) => {
                let uuid = msg["uuid"].as_str().unwrap_or("generated").to_owned();
                if self.fast.add_message(&uuid) {
                    assert!(self.tree.add_message(&uuid));
                } else {
                    self.turns += 1;
                    let turn = format!("turn_{}", self.turns);
                    self.fast.begin_turn(&turn, vec![uuid.clone()]);
                    self.tree.begin_turn(&turn, vec![uuid]);
                }
            }
            (Some("control_request"), Some("interrupt")) => {
                assert_eq!(self.fast.request_cancel(), self.tree.request_cancel());
            }
            _ => {}
        }
    }

    /// hive gave up on the interrupt.
    fn force_cancel(&mut self) {
        let fast = self.fast.force_cancel();
        let tree = self.tree.force_cancel();
        assert_eq!(fast.len(), tree.len());
    }

    fn output(&mut self, line: &str, context: &str) {
        if DeltaLine::read(line.trim()).is_some() {
            self.read += 1;
        }
        let by_fields = self.fast.line_with(line, true);
        let by_tree = self.tree.line_with(line, false);
        assert_eq!(
            output(&by_fields, &mut self.fast_ids),
            output(&by_tree, &mut self.tree_ids),
            "{context}: {line}"
        );
        assert_eq!(
            state(&self.fast, &mut self.fast_ids),
            state(&self.tree, &mut self.tree_ids),
            "state after {context}: {line}"
        );
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".timeline.jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn captured_deltas_read_into_fields_translate_as_json_trees_do() {
    let mut deltas = 0;
    let mut read = 0;
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut pair = SideBySide::new();
        for record in std::fs::read_to_string(&path).unwrap().lines() {
            let record: Value = serde_json::from_str(record).expect("timeline record");
            let line = record["line"].as_str().expect("line");
            match record["dir"].as_str() {
                Some("in") => pair.input(line),
                Some("out") => {
                    if line.contains("content_block_delta") {
                        deltas += 1;
                    }
                    pair.output(line, &name);
                }
                _ => {}
            }
        }
        read += pair.read;
    }
    // Every captured delta takes the fast path: the fields it accepts are
    // all the ones Claude Code writes.
    assert_eq!(read, deltas);
    assert!(deltas > 200, "the captures hold deltas ({deltas})");
}

/// Lines no capture has: escapes, surrogates, unknown blocks, shapes the
/// fast path must leave to the general one. `>` marks hive's own input.
const HAND_WRITTEN: &str = r#"
> {"type":"user","uuid":"u1"}
{"type":"system","subtype":"init","session_id":"s1","model":"m"}
{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","model":"m"}},"session_id":"s1"}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"plain "}},"session_id":"s1","parent_tool_use_id":null,"uuid":"x","api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb \"q\" caf\u00e9 \\ud800 \ud83d\ude00 "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lone \ud800 surrogate"}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}},"uuid":"\udc00","api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"repaired \ufffd "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"no message id "}}}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"null message id "}},"api_message_id":null}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"numeric message id "}},"api_message_id":7}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"other message "}},"api_message_id":"msg_0"}
{"type":"stream_event","event":{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"unknown index "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"no index "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"negative index "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"float index "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"string index "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","text":"wrong field "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":"text"},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"dup ","text":"licate "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"extra field "}},"api_message_id":"msg_1","ttft_ms":1e400}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"extra event field ","x":1}},"api_message_id":"msg_1"}
{"type":"stream_event","ev\u0065nt":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"escaped key "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":["content_block_delta",0,{"type":"text_delta","text":"event array "}],"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":["text_delta","delta array "]},"api_message_id":"msg_1"}
["stream_event",{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line array "}}]
{"type":"assistant","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"not a stream event "}},"api_message_id":"msg_1"}
{"event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"no type "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"delta":{"type":"text_delta","text":"content_block_delta"}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"trailing"}},"api_message_id":"msg_1"} x
   {"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"padded "}},"api_message_id":"msg_1"}   
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"I think "}},"thinking_display":"updates","api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ec"}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ho hi && ls -la /tmp/some/where\"}"}},"api_message_id":"msg_1"}
{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"final"}]}}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"closed block "}},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"content_block_stop","index":0},"api_message_id":"msg_1"}
{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"}},"api_message_id":"msg_1"}

not json
{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2","model":"m"}},"session_id":"s1"}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"api_message_id":"msg_2"}
> force_cancel
> {"type":"user","uuid":"u2"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"of the abandoned turn "}},"api_message_id":"msg_2"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"names the turn "}},"user_message_uuid":"u2","api_message_id":"msg_2"}
{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_3","model":"m"}},"session_id":"s1"}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"api_message_id":"msg_3"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"of the new turn "}},"api_message_id":"msg_3"}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"named by a list "}},"user_message_uuids":["u2"],"api_message_id":"msg_3"}
"#;

#[test]
fn hand_written_deltas_read_into_fields_translate_as_json_trees_do() {
    let mut pair = SideBySide::new();
    for line in HAND_WRITTEN.lines().skip(1) {
        match line.strip_prefix("> ") {
            Some("force_cancel") => pair.force_cancel(),
            Some(input) => pair.input(input),
            None => pair.output(line, "hand-written"),
        }
    }
    assert!(pair.read >= 10, "the fast path read {} lines", pair.read);
}

#[test]
fn delta_text_is_borrowed_unless_it_has_escapes() {
    let delta = |text: &str| {
        format!(
            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{text}"}}}}}}"#
        )
    };
    let within = |line: &str, piece: &str| line.as_bytes().as_ptr_range().contains(&piece.as_ptr());
    let plain = delta("plain");
    let d = DeltaLine::read(&plain).expect("a plain delta");
    assert_eq!(d.piece(), Some("plain"));
    assert!(within(&plain, d.piece().unwrap()), "borrowed from the line");
    let escaped = delta(r#"a\n\"b\u00e9"#);
    let d = DeltaLine::read(&escaped).expect("a delta with escapes");
    assert_eq!(d.piece(), Some("a\n\"b\u{e9}"));
    assert!(
        !within(&escaped, d.piece().unwrap()),
        "decoded into its own string"
    );
    assert!(DeltaLine::read(&delta(r"\ud800")).is_none());
    assert!(DeltaLine::read(&delta(r"\ud83d\ude00")).is_some());
}

/// Issue 51: a server Claude Code's `init` lists as failed is a warning in
/// the pane; a connected or pending one says nothing.
#[test]
fn a_failed_mcp_server_in_init_is_a_warning() {
    let mut tr = Translator::new(None);
    let out = tr.line(
        r#"{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"files","status":"failed"},{"name":"hive","status":"connected"},{"name":"docs","status":"pending"}]}"#,
    );
    let warnings: Vec<&String> = out
        .events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Diagnostic {
                level: DiagnosticLevel::Warn,
                message,
            } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(
        warnings,
        ["MCP server `files` did not start (Claude Code lists it as failed)"]
    );
}
