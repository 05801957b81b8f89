//! A scripted demo pane that answers every message with one line, for the
//! operations tests (tests/services/ops.rs, tests/cli/mcp.rs).

use hive::config::AgentConfig;

pub fn demo(id: &str, dir: &std::path::Path, reply: &str) -> AgentConfig {
    let path = dir.join(format!("{id}.toml"));
    let scenario = format!(
        "model = \"demo-1\"\nchunk_chars = 50\ndelay_ms = 1\n[[turn]]\n[[turn.step]]\ntext = \"{reply}\"\n"
    );
    std::fs::write(&path, scenario).expect("write scenario");
    let mut a = AgentConfig::new(id, "script");
    a.script = Some(path);
    a
}
