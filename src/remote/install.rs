//! hive on the far side: finds a hive there that speaks this protocol, or
//! copies this very binary into the remote user's cache dir
//! (`${XDG_CACHE_HOME:-~/.cache}/hive/bin/hive-<sha256>`), as VS Code's
//! remote server does. The copy is checked by hash on arrival and is only
//! offered to a box of the same OS and architecture.
//!
//! The probe is one POSIX shell command; its answer is parsed here
//! (`Probe::parse`, I/O-free) and trusted for nothing but the choice of
//! binary: the binary then says its protocol in the handshake anyway.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::Stdio;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use super::ssh::Ssh;
use super::target::{Target, quote};
use crate::wire::PROTOCOL_VERSION;

/// Whether a missing hive may be copied over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// Ask on the terminal (no terminal: no).
    Ask,
    Yes,
    No,
}

/// The remote cache dir's shell expression.
const CACHE: &str = "\"${XDG_CACHE_HOME:-$HOME/.cache}/hive/bin\"";

/// What the probe found on the host.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Our own build, copied there before.
    pub cached: Option<String>,
    /// `hive` on the remote PATH, with the protocol it speaks.
    pub on_path: Option<(String, Option<u32>)>,
    /// Other builds copied there before, with the protocol each speaks.
    pub others: Vec<(String, Option<u32>)>,
    /// `uname -sm`.
    pub uname: String,
}

impl Probe {
    /// The shell command that asks; `hash` names our build.
    pub fn command(hash: &str) -> String {
        format!(
            "c={CACHE}/hive-{hash}; [ -x \"$c\" ] && echo \"cached $c\"; \
             (cd {CACHE} 2>/dev/null && for f in $(ls -t hive-* 2>/dev/null); do \
             [ -x \"$f\" ] && [ \"$PWD/$f\" != \"$c\" ] && \
             echo \"other $(\"./$f\" relay --protocol 2>/dev/null) $PWD/$f\"; done); \
             p=$(command -v hive 2>/dev/null) && echo \"path $p\" && \
             echo \"protocol $(\"$p\" relay --protocol 2>/dev/null)\"; \
             echo \"uname $(uname -sm)\""
        )
    }

    /// Reads the probe's answer; lines it does not know are skipped.
    pub fn parse(out: &str) -> Self {
        let mut p = Probe::default();
        for line in out.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "cached" => p.cached = Some(value.to_owned()),
                "path" => p.on_path = Some((value.to_owned(), None)),
                "protocol" => {
                    if let Some((_, v)) = p.on_path.as_mut() {
                        *v = value.trim().parse().ok();
                    }
                }
                "uname" => p.uname = value.trim().to_owned(),
                "other" => {
                    let (v, path) = value.split_once(' ').unwrap_or(("", value));
                    p.others.push((path.to_owned(), v.trim().parse().ok()));
                }
                _ => {}
            }
        }
        p
    }

    /// The binary to run there, if one speaks our protocol.
    pub fn usable(&self) -> Option<&str> {
        if let Some(c) = &self.cached {
            return Some(c);
        }
        if let Some((p, Some(v))) = &self.on_path
            && *v == PROTOCOL_VERSION
        {
            return Some(p);
        }
        // Another build of this protocol copied there before, the newest
        // first (the probe lists them so).
        self.others
            .iter()
            .find(|(_, v)| *v == Some(PROTOCOL_VERSION))
            .map(|(p, _)| p.as_str())
    }

    /// Whether this binary can run there (`uname -sm` against ours).
    pub fn same_platform(&self) -> bool {
        let mut parts = self.uname.split_whitespace();
        let os = parts.next().unwrap_or("").to_ascii_lowercase();
        let arch = parts.next().unwrap_or("");
        let arch = match arch {
            "arm64" => "aarch64",
            "amd64" => "x86_64",
            a => a,
        };
        os == std::env::consts::OS && arch == std::env::consts::ARCH
    }
}

/// The sha256 of this binary, hex; read once per process.
pub fn own_hash() -> anyhow::Result<String> {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(h) = HASH.get() {
        return Ok(h.clone());
    }
    let h = hash_exe()?;
    Ok(HASH.get_or_init(|| h).clone())
}

fn hash_exe() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("finding hive's own executable")?;
    let mut file =
        std::fs::File::open(&exe).with_context(|| format!("reading {}", exe.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The name of our build in the remote cache: the hash's first 16 digits.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}

/// Finds (or, as `install` allows, copies) a hive on `target` and returns
/// its path there. Runs before the console takes the terminal, so ssh may
/// ask for a password or a key's passphrase: the master connection it
/// opens then serves the console's connections.
pub fn locate(ssh: &Ssh, target: &Target, install: Install) -> anyhow::Result<String> {
    let hash = own_hash()?;
    let probe = run_probe(ssh, target, short(&hash))?;
    if let Some(bin) = probe.usable() {
        return Ok(bin.to_owned());
    }
    // The path is the remote's words: shown, never trusted to be plain.
    let found = match &probe.on_path {
        Some((p, Some(v))) => format!(
            "{} speaks protocol {v}, this hive {PROTOCOL_VERSION}",
            crate::sanitize::peer_line(p)
        ),
        Some((p, None)) => format!(
            "{} is a hive too old to say its protocol",
            crate::sanitize::peer_line(p)
        ),
        None => "no hive on its PATH".to_owned(),
    };
    if !probe.same_platform() {
        bail!(
            "{} has {found}, and is a {} machine while this hive is built for {} {}: install hive there (of protocol {PROTOCOL_VERSION})",
            target.name,
            crate::sanitize::peer_line(&probe.uname),
            std::env::consts::OS,
            std::env::consts::ARCH
        );
    }
    if !may_install(install, target, &found)? {
        bail!("{} has {found}; not copied", target.name);
    }
    copy_binary(ssh, target, &hash)
}

/// The hive to run on `target` without asking anything (a `[[host]]`
/// reached from the console): one that speaks our protocol, or why none.
pub async fn find(ssh: &Ssh, target: &Target) -> Result<String, String> {
    let hash = tokio::task::spawn_blocking(own_hash)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let out =
        tokio::process::Command::from(ssh.command(target, true, &Probe::command(short(&hash))))
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| format!("running ssh: {e}"))?;
    let probe = Probe::parse(&String::from_utf8_lossy(&out.stdout));
    if let Some(bin) = probe.usable() {
        return Ok(bin.to_owned());
    }
    if !out.status.success() && out.stdout.is_empty() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(crate::sanitize::neutralize(said.trim()).into_owned());
    }
    Err(format!(
        "no hive of protocol {PROTOCOL_VERSION} there (`hive attach --install {target}` copies this one)"
    ))
}

fn run_probe(ssh: &Ssh, target: &Target, hash: &str) -> anyhow::Result<Probe> {
    let out = ssh
        .command(target, false, &Probe::command(hash))
        .stdin(Stdio::inherit())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running ssh to {}", target.name))?;
    probe_answer(target, &out)
}

/// Asks `target` what hive it has without a prompt or a terminal (`hive
/// doctor`); ssh's own complaint is the error when it cannot connect.
pub fn probe(ssh: &Ssh, target: &Target) -> anyhow::Result<Probe> {
    let hash = own_hash()?;
    let out = ssh
        .command(target, true, &Probe::command(short(&hash)))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running ssh to {}", target.name))?;
    probe_answer(target, &out)
}

fn probe_answer(target: &Target, out: &std::process::Output) -> anyhow::Result<Probe> {
    if !out.status.success() && out.stdout.is_empty() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = crate::sanitize::neutralize(said.trim());
        bail!(
            "cannot reach {} over ssh ({}{}{said}): check `{}` works",
            target.name,
            out.status,
            if said.is_empty() { "" } else { ": " },
            ssh_hint(target)
        );
    }
    Ok(Probe::parse(&String::from_utf8_lossy(&out.stdout)))
}

/// The plain ssh command that reaches `target`, its port included.
fn ssh_hint(target: &Target) -> String {
    match target.port {
        Some(p) => format!("ssh -p {p} {}", target.destination),
        None => format!("ssh {}", target.destination),
    }
}

fn may_install(install: Install, target: &Target, found: &str) -> anyhow::Result<bool> {
    match install {
        Install::Yes => Ok(true),
        Install::No => Ok(false),
        Install::Ask => {
            if !std::io::stdin().is_terminal() {
                return Ok(false);
            }
            eprint!(
                "{} has {found}. Copy this hive there (into its ~/.cache/hive/bin)? [y/N] ",
                target.name
            );
            std::io::stderr().flush()?;
            let mut answer = String::new();
            std::io::stdin().lock().read_line(&mut answer)?;
            Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
        }
    }
}

/// Streams this binary to the host's cache dir; the host checks its hash
/// before it takes the file's final name, so a torn copy is never run.
fn copy_binary(ssh: &Ssh, target: &Target, hash: &str) -> anyhow::Result<String> {
    let name = format!("hive-{}", short(hash));
    let script = format!(
        "umask 077; d={CACHE}; mkdir -p \"$d\" && t=\"$d/.{name}.$$\" && cat > \"$t\" && \
         s=$(sha256sum \"$t\" 2>/dev/null || shasum -a 256 \"$t\") && \
         if [ \"${{s%% *}}\" = {hash} ]; then chmod 700 \"$t\" && mv \"$t\" \"$d/{name}\" && echo \"ok $d/{name}\"; \
         else rm -f \"$t\"; echo \"bad ${{s%% *}}\"; fi",
        hash = quote(hash),
    );
    let exe = std::env::current_exe()?;
    let mut file = std::fs::File::open(&exe)?;
    let mut child = ssh
        .command(target, false, &script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("running ssh to {}", target.name))?;
    eprintln!("hive: copying this hive to {}…", target.name);
    if let Some(mut stdin) = child.stdin.take() {
        std::io::copy(&mut file, &mut stdin).context("sending the binary")?;
    }
    let out = child.wait_with_output()?;
    let answer = String::from_utf8_lossy(&out.stdout);
    match answer.lines().last().and_then(|l| l.split_once(' ')) {
        Some(("ok", path)) => Ok(path.to_owned()),
        Some(("bad", got)) => bail!(
            "the copy on {} does not match this binary (sha256 {} there): not used",
            target.name,
            crate::sanitize::neutralize(got)
        ),
        _ => bail!("copying hive to {} failed ({})", target.name, out.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_build_wins_then_a_hive_of_our_protocol() {
        let p = Probe::parse(&format!(
            "path /usr/bin/hive\nprotocol {PROTOCOL_VERSION}\nuname Linux x86_64\n"
        ));
        assert_eq!(p.usable(), Some("/usr/bin/hive"));
        let p = Probe::parse("cached /h/.cache/hive/bin/hive-ab\npath /usr/bin/hive\nprotocol 0\n");
        assert_eq!(p.usable(), Some("/h/.cache/hive/bin/hive-ab"));
    }

    #[test]
    fn another_protocol_or_none_is_not_usable() {
        let p = Probe::parse("path /usr/bin/hive\nprotocol 999\nuname Linux x86_64\n");
        assert_eq!(p.usable(), None);
        // An old hive without `relay --protocol` answers nothing.
        let p = Probe::parse("path /usr/bin/hive\nprotocol \nuname Linux x86_64\n");
        assert_eq!(p.on_path, Some(("/usr/bin/hive".to_owned(), None)));
        assert_eq!(p.usable(), None);
        assert_eq!(Probe::parse("uname Linux x86_64").usable(), None);
    }

    #[test]
    fn an_earlier_copy_of_our_protocol_serves_when_nothing_better_does() {
        let out = format!(
            "other 999 /c/hive-old\nother  /c/hive-older\nother {PROTOCOL_VERSION} /c/hive-same\nuname Linux x86_64\n"
        );
        assert_eq!(Probe::parse(&out).usable(), Some("/c/hive-same"));
        let out = format!("{out}path /usr/bin/hive\nprotocol {PROTOCOL_VERSION}\n");
        assert_eq!(Probe::parse(&out).usable(), Some("/usr/bin/hive"));
    }

    /// #53 item 14: the hint names the port the user gave. Failed before
    /// (`ssh user@host`, which reaches port 22).
    #[test]
    fn the_ssh_hint_keeps_the_port() {
        use std::os::unix::process::ExitStatusExt;
        let target = Target::parse("ssh://me@box:2222/p").expect("a target");
        let out = std::process::Output {
            status: std::process::ExitStatus::from_raw(255 << 8),
            stdout: Vec::new(),
            stderr: b"Connection refused".to_vec(),
        };
        let e = probe_answer(&target, &out).expect_err("unreachable");
        assert!(e.to_string().contains("`ssh -p 2222 me@box`"), "{e}");
    }

    #[test]
    fn platforms_compare_by_os_and_arch() {
        let ours = format!("uname {} {}", std::env::consts::OS, std::env::consts::ARCH);
        assert!(Probe::parse(&ours).same_platform());
        assert!(!Probe::parse("uname Darwin arm64").same_platform() || cfg!(target_os = "macos"));
        assert!(!Probe::parse("uname Linux riscv64").same_platform());
        assert!(!Probe::parse("").same_platform());
    }
}
