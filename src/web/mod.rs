//! The web client (issue 47, docs/web.md): a page the server serves for
//! a phone or another machine's browser, off unless `[web] listen` is set.
//! It is one more client of the server's one front door, not a second
//! server: each thing the page asks for becomes a [`WebRequest`] — the
//! paired device as its [`Caller`], a [`Verb`] — that the server's loop
//! answers like a `hive ctl` line (src/server/door.rs `on_web`), and its
//! live socket is a `watch` of the control hub, with the appended-text
//! encoder every watcher keeps.
//!
//! - [`devices`]: the paired devices (hashed tokens, a 0600 file).
//! - [`pairing`]: single-use codes and the lock after wrong ones.
//! - [`guard`]: who may ask (cookie), from where (Host, Origin), and the
//!   headers every answer carries (CSP without inline script).
//! - [`routes`]: the page, its assets and the JSON API; [`live`]: the
//!   WebSocket.
//! - [`push`]: Web Push to the devices that subscribed (a new approval
//!   card, with no page open).

mod assets;
pub(crate) mod devices;
mod guard;
mod live;
pub(crate) mod pairing;
pub(crate) mod push;
mod routes;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::WebSettings;
use crate::control::hub::Responder;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::protocol::verb::{Caller, Role, Verb, WebVerb};

/// One request from the page on its way to the server's loop.
#[derive(Debug)]
pub(crate) struct WebRequest {
    pub(crate) caller: Caller,
    pub(crate) verb: Verb,
    pub(crate) reply: Responder,
    /// The live socket's `watch`: where its event lines go.
    pub(crate) events: Option<crate::control::hub::Watch>,
}

/// What the handlers share.
pub(crate) struct Shared {
    devices: Mutex<devices::Devices>,
    pairing: Mutex<pairing::Pairing>,
    /// `scheme://host[:port]` of each origin the page is served under.
    origins: Vec<String>,
    /// The `Host` headers those origins send.
    hosts: Vec<String>,
    /// Pairing links start with it.
    base_url: String,
    /// `Secure` on the cookie: the page is reached over https.
    secure: bool,
    tx: mpsc::Sender<WebRequest>,
    /// This server's VAPID key, and what its pushes go out with.
    vapid: push::Vapid,
    http: reqwest::Client,
    /// The VAPID `sub`: who runs this server, for the push services.
    contact: String,
}

impl Shared {
    /// A poisoned lock still holds a consistent list (each change is one
    /// push or remove): the page keeps working.
    fn devices(&self) -> MutexGuard<'_, devices::Devices> {
        self.devices.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pairing(&self) -> MutexGuard<'_, pairing::Pairing> {
        self.pairing.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running web client: its accept loop, and the requests its pages
/// make for the server's loop to answer.
pub(crate) struct Web {
    shared: Arc<Shared>,
    requests: mpsc::Receiver<WebRequest>,
    task: JoinHandle<()>,
}

impl Drop for Web {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where server `name`'s paired devices are kept.
pub(crate) fn devices_file(name: &str) -> PathBuf {
    crate::paths::state_dir()
        .join("web")
        .join(format!("{name}.devices.json"))
}

/// Where server `name`'s VAPID key is kept.
fn vapid_file(name: &str) -> PathBuf {
    crate::paths::state_dir()
        .join("web")
        .join(format!("{name}.vapid.json"))
}

/// How long one push may take before it is given up.
const PUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

impl Web {
    /// Serves the page for the server on `socket`, if `[web] listen` says
    /// where; an address that cannot be bound is the server's error (said
    /// at start, not found later). Must run inside a tokio runtime.
    pub(crate) fn start(settings: &WebSettings, socket: &Path) -> anyhow::Result<Option<Self>> {
        let Some(addr) = settings.listen else {
            return Ok(None);
        };
        let name = crate::paths::name_of(socket);
        let devices = devices::Devices::load(&devices_file(&name))?;
        let vapid = push::Vapid::load_or_create(&vapid_file(&name))?;
        let http = reqwest::Client::builder()
            .timeout(PUSH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| anyhow::anyhow!("[web] listen = \"{addr}\": cannot listen there: {e}"))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let (origins, base_url) = origins(local, settings.public_url.as_deref())?;
        let hosts = origins
            .iter()
            .filter_map(|o| o.split_once("://").map(|(_, h)| h.to_owned()))
            .collect();
        let (tx, requests) = mpsc::channel(64);
        let shared = Arc::new(Shared {
            devices: Mutex::new(devices),
            pairing: Mutex::new(pairing::Pairing::default()),
            secure: base_url.starts_with("https://"),
            contact: if base_url.starts_with("https://") {
                base_url.clone()
            } else {
                "mailto:hive@localhost".into()
            },
            vapid,
            http,
            origins,
            hosts,
            base_url,
            tx,
        });
        let app = routes::router(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!("web client: {e}");
            }
        });
        tracing::info!(%local, "web client listening");
        Ok(Some(Self {
            shared,
            requests,
            task,
        }))
    }
}

impl Web {
    /// Tells every subscribed device `message` (which pane, and what
    /// happened: never a command, a path or an agent's text), each push
    /// in a task of its own; a subscription the push service says is gone
    /// is forgotten.
    pub(crate) fn push(&self, message: &Value) {
        let body = message.to_string();
        for (id, sub) in self.shared.devices().subscriptions() {
            let shared = self.shared.clone();
            let req = match push::request(&shared.vapid, &sub, body.as_bytes(), &shared.contact) {
                Ok(req) => req,
                Err(e) => {
                    tracing::warn!(device = %id, "web push: {e}");
                    continue;
                }
            };
            tokio::spawn(async move {
                match push::deliver(&shared.http, req).await {
                    push::Delivery::Accepted => {}
                    push::Delivery::Gone => shared.devices().push_gone(&id, &sub.endpoint),
                    push::Delivery::Failed(why) => {
                        tracing::warn!(device = %id, "web push: {why}");
                    }
                }
            });
        }
    }
}

/// The origins the page may be reached under (the listen address, as
/// `localhost` too when it is loopback, and `public_url`), and the one
/// pairing links use.
fn origins(
    local: std::net::SocketAddr,
    public_url: Option<&str>,
) -> anyhow::Result<(Vec<String>, String)> {
    let mut origins = vec![format!("http://{local}")];
    if local.ip().is_loopback() {
        origins.push(format!("http://localhost:{}", local.port()));
    }
    let Some(public) = public_url else {
        return Ok((origins.clone(), origins[0].clone()));
    };
    let public = public.trim_end_matches('/');
    let (scheme, rest) = public
        .split_once("://")
        .filter(|(s, r)| matches!(*s, "http" | "https") && !r.is_empty() && !r.contains('/'))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "[web] public_url = \"{public}\": expected an origin such as \
                 https://host or http://localhost:9000 (no path)"
            )
        })?;
    let public = format!("{scheme}://{rest}");
    origins.push(public.clone());
    Ok((origins, public))
}

/// The next request from a page (never, without a web client).
pub(crate) async fn next(web: &mut Option<Web>) -> Option<WebRequest> {
    match web {
        Some(w) => w.requests.recv().await,
        None => std::future::pending().await,
    }
}

/// `hive web pair | devices | revoke`: answered on the server's loop.
pub(crate) fn answer(web: Option<&Web>, verb: WebVerb) -> Result<Value, CtlError> {
    let Some(web) = web else {
        return Err(CtlError::new(
            ErrorCode::BadRequest,
            "this hive serves no web client: set `[web] listen = \"127.0.0.1:8377\"` \
             in its config and start it again (docs/web.md)",
        ));
    };
    let failed = |e: &dyn std::fmt::Display| CtlError::new(ErrorCode::Unavailable, e.to_string());
    match verb {
        WebVerb::Pair { role } => {
            let now = std::time::Instant::now();
            let code = web
                .shared
                .pairing()
                .issue(role, now)
                .map_err(|e| failed(&e))?;
            Ok(json!({
                "url": format!("{}/pair#{code}", web.shared.base_url),
                "code": code,
                "role": role,
                "expires_in": pairing::CODE_TTL.as_secs(),
            }))
        }
        WebVerb::Devices => {
            let devices = web.shared.devices();
            let list: Vec<Value> = devices
                .list()
                .iter()
                .map(|d| {
                    json!({"id": d.id, "role": d.role, "label": d.label,
                           "paired": d.paired, "last_seen": d.last_seen})
                })
                .collect();
            Ok(json!({ "devices": list }))
        }
        WebVerb::Revoke { device } => match web.shared.devices().revoke(&device) {
            Ok(d) => Ok(json!({ "revoked": d.id })),
            Err(e @ devices::DevicesError::Unknown(_)) => {
                Err(CtlError::new(ErrorCode::SessionNotFound, e.to_string()))
            }
            Err(e) => Err(failed(&e)),
        },
    }
}

/// Asks the server's loop `verb` as device `who`.
async fn ask(
    shared: &Shared,
    who: &guard::Authed,
    verb: Verb,
    events: Option<crate::control::hub::Watch>,
) -> Result<Value, CtlError> {
    let gone = || CtlError::new(ErrorCode::Unavailable, "hive is shutting down");
    let (reply, answer) = tokio::sync::oneshot::channel();
    let req = WebRequest {
        caller: caller_of(&who.0),
        verb,
        reply,
        events,
    };
    shared.tx.send(req).await.map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

/// The caller a paired device asks as.
fn caller_of(d: &devices::Device) -> Caller {
    Caller::Device {
        id: d.id.clone(),
        role: d.role,
    }
}

/// Whether a device of `role` may act (the page hides what it may not;
/// the door refuses it whatever the page shows).
fn acts(role: Role) -> bool {
    role == Role::Full
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_the_listen_address_and_the_public_url() {
        let local: std::net::SocketAddr = "127.0.0.1:8377".parse().unwrap();
        let (o, base) = origins(local, None).unwrap();
        assert_eq!(o, ["http://127.0.0.1:8377", "http://localhost:8377"]);
        assert_eq!(base, "http://127.0.0.1:8377");
        let (o, base) = origins(local, Some("https://box.ts.net/")).unwrap();
        assert_eq!(o.last().unwrap(), "https://box.ts.net");
        assert_eq!(base, "https://box.ts.net");
        assert!(origins(local, Some("box.ts.net")).is_err());
        assert!(origins(local, Some("https://box/path")).is_err());
        assert!(origins(local, Some("javascript://x")).is_err());
    }
}
