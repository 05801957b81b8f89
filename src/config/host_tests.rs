//! `[[host]]` kinds, an agent's `host` and `sandbox`, and the `[sandbox]`
//! default, as the config resolves them.

use super::super::{Config, ConfigSource};
use crate::exec::{Kind, Network};

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, ConfigSource::Builtin).map_err(|e| e.to_string())
}

fn kind_of(c: &Config, id: &str) -> Option<&'static str> {
    c.agent(id)
        .and_then(|a| a.exec.as_ref())
        .map(|h| h.kind_name())
}

#[test]
fn agents_pick_a_host_a_sandbox_or_the_default() {
    let c = parse(
        r#"
[sandbox]
kind = "bwrap"
network = "host"

[[host]]
name = "ctr"
kind = "docker"
image = "agent:1"

[[host]]
name = "far"
ssh = "ann@far:2222"
path = "~/p"
attach = false

[[agent]]
id = "boxed"
provider = "script"

[[agent]]
id = "docked"
provider = "script"
host = "ctr"

[[agent]]
id = "remote"
provider = "script"
host = "far"

[[agent]]
id = "free"
provider = "script"
sandbox = "none"
"#,
    )
    .unwrap();
    assert_eq!(kind_of(&c, "boxed"), Some("bwrap"));
    assert_eq!(kind_of(&c, "docked"), Some("docker"));
    assert_eq!(kind_of(&c, "remote"), Some("ssh"));
    assert_eq!(kind_of(&c, "free"), None);
    let Some(Kind::Bwrap(b)) = c
        .agent("boxed")
        .and_then(|a| a.exec.as_ref())
        .map(|h| &h.kind)
    else {
        unreachable!()
    };
    assert_eq!(b.network, Network::Host);
    // hive's own sockets and history are out of the box.
    assert!(b.hide.contains(&crate::paths::socket_dir()));
    assert!(b.hide.contains(&crate::paths::data_dir()));
    // Only ssh hosts that attach are servers the console shows.
    assert!(!c.hosts.iter().any(|h| h.serves()));
}

#[test]
fn without_a_default_no_agent_is_boxed_unless_it_asks() {
    let c = parse(
        "[[agent]]\nid = \"a\"\nprovider = \"script\"\n\n[[agent]]\nid = \"b\"\nprovider = \"script\"\nsandbox = \"bwrap\"\n",
    )
    .unwrap();
    assert_eq!(kind_of(&c, "a"), None);
    assert_eq!(kind_of(&c, "b"), Some("bwrap"));
    let Some(Kind::Bwrap(b)) = c.agent("b").and_then(|a| a.exec.as_ref()).map(|h| &h.kind) else {
        unreachable!()
    };
    assert_eq!(b.network, Network::None, "no network unless allowed");
}

#[test]
fn a_bad_host_or_sandbox_is_a_clear_error() {
    let agent = |extra: &str| format!("[[agent]]\nid = \"a\"\nprovider = \"script\"\n{extra}\n");
    let cases = [
        (
            agent("host = \"nope\""),
            "host = \"nope\" names no [[host]]",
        ),
        (
            agent("sandbox = \"firejail\""),
            "sandbox = \"firejail\" is not `bwrap` or `none`",
        ),
        (
            format!(
                "[sandbox]\nnetwork = \"wifi\"\n{}",
                agent("sandbox = \"bwrap\"")
            ),
            "network = \"wifi\" is not `none` or `host`",
        ),
        (
            "[[host]]\nname = \"k\"\nkind = \"kubectl\"\n".to_owned(),
            "a `kubectl` host needs `pod`",
        ),
        (
            "[[host]]\nname = \"d\"\nkind = \"docker\"\n".to_owned(),
            "needs `container` or `image`",
        ),
        (
            "[[host]]\nname = \"v\"\nkind = \"vm\"\n".to_owned(),
            "kind `vm` is not one of ssh, bwrap",
        ),
        ("[[host]]\nname = \"s\"\n".to_owned(), "host `s`: ssh ="),
        (
            format!(
                "[[host]]\nname = \"c\"\nkind = \"podman\"\ncontainer = \"x\"\n{}",
                agent("host = \"c\"\nsandbox = \"bwrap\"")
            ),
            "not both",
        ),
    ];
    for (text, want) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.contains(want), "{text}\n→ {e}");
    }
}

#[test]
fn limits_and_idle_stop_are_read_and_checked_per_agent() {
    let c = parse(
        r#"
[[agent]]
id = "a"
provider = "script"
cpu = 1.5
memory = "512M"
idle_stop_after = "30m"
"#,
    )
    .unwrap();
    let a = c.agent("a").unwrap();
    assert_eq!(
        a.resources(),
        Ok(crate::exec::Resources {
            cpu: Some(150),
            memory: Some(512 << 20),
        })
    );
    assert_eq!(
        a.idle_stop(),
        Ok(Some(std::time::Duration::from_secs(30 * 60)))
    );
    for (key, said) in [
        ("memory = \"lots\"", "agent `b`: memory = \"lots\""),
        ("cpu = 0", "agent `b`: cpu = 0"),
        (
            "idle_stop_after = \"soon\"",
            "agent `b`: idle_stop_after = \"soon\"",
        ),
        ("idle_stop_after = \"10ms\"", "between a second and a week"),
    ] {
        let e = parse(&format!(
            "[[agent]]\nid = \"b\"\nprovider = \"script\"\n{key}\n"
        ))
        .unwrap_err();
        assert!(e.contains(said), "{key}: {e}");
    }
}
