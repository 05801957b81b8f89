//! `hive web`: pairs browsers with the running server's web client, lists
//! them and revokes them (docs/web.md). Each asks the server over its
//! control socket; the codes and devices live in the server.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;

use crate::control::client::Client;
use crate::control::protocol::Call;
use crate::sanitize::neutralize;

#[derive(Debug, Args)]
pub struct WebArgs {
    /// The hive to talk to: a socket path, or a name in the socket dir.
    #[arg(long, env = "HIVE_SOCKET", value_name = "NAME|PATH", global = true)]
    pub socket: Option<String>,
    #[command(subcommand)]
    pub command: WebCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum WebCommand {
    /// Print a link (and its QR code) that pairs one browser, once,
    /// within ten minutes.
    Pair {
        /// The device may look but not answer, send or interrupt.
        #[arg(long)]
        read_only: bool,
    },
    /// The paired devices.
    Devices,
    /// Unpair a device; its open pages lose their connection at once.
    Revoke { id: String },
}

pub(super) fn web(cli: &super::Cli, args: &WebArgs) -> anyhow::Result<ExitCode> {
    let path = super::ctl::socket_for(cli, args.socket.as_deref())?;
    let mut client = Client::connect(&path)?;
    let call = match &args.command {
        WebCommand::Pair { read_only } => Call::WebPair {
            read_only: *read_only,
        },
        WebCommand::Devices => Call::WebDevices,
        WebCommand::Revoke { id } => Call::WebRevoke { device: id.clone() },
    };
    let answer = client.call(call)?;
    let mut out = std::io::stdout().lock();
    match &args.command {
        WebCommand::Pair { .. } => print_pair(&mut out, &answer)?,
        WebCommand::Devices => print_devices(&mut out, &answer)?,
        WebCommand::Revoke { .. } => {
            let id = answer["revoked"].as_str().unwrap_or_default();
            writeln!(out, "revoked {}", neutralize(id))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The link on a line of its own (to copy, or for a script), then its QR
/// code for a phone's camera.
fn print_pair(out: &mut impl Write, answer: &Value) -> anyhow::Result<()> {
    let url = answer["url"].as_str().unwrap_or_default();
    let minutes = answer["expires_in"].as_u64().unwrap_or(600) / 60;
    let role = answer["role"].as_str().unwrap_or("full");
    writeln!(
        out,
        "Open this link on the device to pair it ({role}; once, within {minutes} minutes):\n"
    )?;
    writeln!(out, "{}\n", neutralize(url))?;
    writeln!(out, "{}", qr(url)?)?;
    Ok(())
}

/// `text` as a QR code drawn with half blocks (two rows per line), dark
/// on light with its quiet zone, as phone cameras read it off a terminal.
pub(crate) fn qr(text: &str) -> anyhow::Result<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(text.as_bytes())?;
    Ok(code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}

fn print_devices(out: &mut impl Write, answer: &Value) -> anyhow::Result<()> {
    let devices = answer["devices"].as_array().cloned().unwrap_or_default();
    if devices.is_empty() {
        writeln!(out, "no paired devices (`hive web pair` pairs one)")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<9} {:<9} {:<17} {:<17} DEVICE",
        "ID", "ROLE", "PAIRED", "LAST SEEN"
    )?;
    let when = |v: &Value| {
        v.as_i64()
            .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
            .map_or_else(
                || "-".to_owned(),
                |t| t.format("%Y-%m-%d %H:%M").to_string(),
            )
    };
    for d in devices {
        writeln!(
            out,
            "{:<9} {:<9} {:<17} {:<17} {}",
            neutralize(d["id"].as_str().unwrap_or_default()),
            neutralize(d["role"].as_str().unwrap_or_default()),
            when(&d["paired"]),
            when(&d["last_seen"]),
            neutralize(d["label"].as_str().unwrap_or_default()),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_qr_code_is_drawn_in_blocks() {
        let qr = super::qr("http://127.0.0.1:8377/pair#ABCDEFGHJK").unwrap();
        let lines: Vec<&str> = qr.lines().collect();
        assert!(lines.len() > 10, "{qr}");
        assert!(qr.contains('█') || qr.contains('▀') || qr.contains('▄'));
        // Square: every line as wide as the code is tall, in rows of two.
        let width = lines[0].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() == width));
        assert_eq!(width.div_ceil(2), lines.len());
    }
}
