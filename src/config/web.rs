//! `[web]`: the web client the server serves (docs/web.md), off unless
//! `listen` names an address. Loopback by default: exposing it is the
//! user's own act (`tailscale serve`, `ssh -L`), and `public_url` then says
//! under which origin the page is reached, so pairing links and the Origin
//! check know it.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSettings {
    /// Where the page is served (`127.0.0.1:8377`); absent: no web client.
    #[serde(default)]
    pub listen: Option<SocketAddr>,
    /// The origin a browser reaches it under when that is not `listen`
    /// itself (`https://box.tailnet.ts.net`, `http://localhost:9000` for
    /// an `ssh -L`): pairing links use it, and the Origin check lets it in.
    #[serde(default)]
    pub public_url: Option<String>,
}
