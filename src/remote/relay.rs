//! `hive relay`, the far end of an ssh link: run in the project directory
//! by the ssh command, it finds that config's server (starting it, in a
//! session of its own, when asked), then copies bytes both ways between
//! the ssh channel (stdin/stdout) and the server's socket. It reads none
//! of them: the console and `hive ctl` speak to the server through it
//! exactly as over the local socket, and the server outlives the link.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

use anyhow::Context;

use crate::config::Config;
use crate::provider::Registry;
use crate::server::daemon;

/// Finds (or starts) the server for the config in the current directory
/// and relays until either side closes.
pub fn run(config: Option<&Path>, start: bool) -> anyhow::Result<()> {
    let cfg = Config::load(config, &Registry::builtin())?;
    let mut socket = daemon::socket_for(&cfg);
    if !daemon::is_live(&socket) {
        if !start {
            anyhow::bail!(
                "no hive server runs for {} on this host",
                cfg.source.describe()
            );
        }
        socket = daemon::start(&cfg, false)?;
    }
    let sock = UnixStream::connect(&socket)
        .with_context(|| format!("connecting to {}", socket.display()))?;
    pump(sock)
}

/// stdin → socket on a thread, socket → stdout here; unbuffered both ways
/// (a frame must not wait for a newline).
fn pump(sock: UnixStream) -> anyhow::Result<()> {
    let mut to_server = sock.try_clone()?;
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    std::thread::spawn(move || {
        let mut input = std::fs::File::from(stdin);
        let _ = copy(&mut input, &mut to_server);
        // The console hung up: so does its connection to the server.
        let _ = to_server.shutdown(std::net::Shutdown::Write);
    });
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    let mut output = std::fs::File::from(stdout);
    let mut from_server = sock;
    copy(&mut from_server, &mut output)?;
    Ok(())
}

/// A plain read-then-write copy. Not `std::io::copy`: between a socket and
/// a pipe it uses splice(2), which holds the pipe's lock while it waits on
/// the socket, so sshd, reading the other end of our stdout, blocks in the
/// kernel and stops answering keep-alives; the link dies 15 s later.
fn copy(from: &mut impl Read, to: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
}
