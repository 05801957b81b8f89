//! What every request passes before a handler sees it: a `Host` the page
//! is served under (a DNS-rebinding page names another), an `Origin` of
//! the page's own on every state change and socket upgrade (403 otherwise:
//! another site's form or script cannot act with the user's cookie), and
//! a paired device's cookie on every route but the pairing page's (401
//! otherwise). Every answer carries the headers that keep the page's
//! content inert: a Content-Security-Policy without inline script, no
//! sniffing, no framing, no referrer, no caching.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Shared;
use super::devices::Device;

/// The device cookie's name.
pub(super) const COOKIE: &str = "hive_device";

/// The only sources the page loads from: itself (its scripts are files,
/// never inline), and its live socket.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   img-src 'self'; connect-src 'self'; manifest-src 'self'; \
                   base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Routes open without a device: the pairing page and what it loads, and
/// the service worker (static files that hold nothing of the hive's; a
/// browser updates its worker on its own), and the pairing call.
fn public(path: &str) -> bool {
    matches!(
        path,
        "/pair" | "/assets/pair.js" | "/assets/style.css" | "/api/pair" | "/sw.js"
    )
}

/// The paired device a request came from (in its extensions).
#[derive(Debug, Clone)]
pub(super) struct Authed(pub(super) Device);

/// The value of cookie `name` in `headers`.
pub(super) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A refusal: its status and why.
type Refused = (StatusCode, &'static str);

fn refuse(status: StatusCode, why: &'static str) -> Refused {
    (status, why)
}

/// Whether the request changes something or opens the live socket.
fn needs_origin(req: &Request) -> bool {
    let upgrade = req
        .headers()
        .get(header::UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    upgrade || !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The middleware in front of every route.
pub(super) async fn guard(
    State(shared): State<Arc<Shared>>,
    mut req: Request,
    next: Next,
) -> Response {
    let mut res = match check(&shared, &mut req) {
        Ok(()) => next.run(req).await,
        Err(refused) => refused.into_response(),
    };
    let headers = res.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    res
}

fn check(shared: &Shared, req: &mut Request) -> Result<(), Refused> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !shared.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "not a host this page is served under",
        ));
    }
    let path = req.uri().path().to_owned();
    if !public(&path) {
        let device = cookie(req.headers(), COOKIE).and_then(|token| {
            let mut devices = shared.devices();
            let found = devices.find(token).cloned()?;
            devices.seen(&found.id);
            Some(found)
        });
        let Some(device) = device else {
            return Err(refuse(
                StatusCode::UNAUTHORIZED,
                "this browser is not paired: run `hive web pair` and open its link",
            ));
        };
        req.extensions_mut().insert(Authed(device));
    }
    if needs_origin(req) {
        let origin = req
            .headers()
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok());
        if !origin.is_some_and(|o| shared.origins.iter().any(|mine| mine == o)) {
            return Err(refuse(StatusCode::FORBIDDEN, "not from this page's origin"));
        }
    }
    Ok(())
}

/// The `Set-Cookie` that pairs this browser with `token`.
pub(super) fn set_cookie(token: &str, secure: bool) -> String {
    // A year: revoking is how a device stops, not an expiry.
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; hive_device=tok"),
        );
        assert_eq!(cookie(&h, COOKIE), Some("tok"));
        assert_eq!(cookie(&h, "b"), None);
        let c = set_cookie("tok", false);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Strict"));
        assert!(!c.contains("Secure"));
        assert!(set_cookie("tok", true).ends_with("; Secure"));
    }
}
