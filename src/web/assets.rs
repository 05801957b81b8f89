//! The page's files, built into the binary (assets/web/): nothing is read
//! from disk at run time, and no file holds any of the hive's data (that
//! comes only through the API, as text).

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../../assets/web/index.html");
const PAIR: &str = include_str!("../../assets/web/pair.html");
const APP_JS: &str = include_str!("../../assets/web/app.js");
const RENDER_JS: &str = include_str!("../../assets/web/render.js");
const PAIR_JS: &str = include_str!("../../assets/web/pair.js");
const STYLE: &str = include_str!("../../assets/web/style.css");
const SERVICE_WORKER: &str = include_str!("../../assets/web/sw.js");

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

pub(super) async fn index() -> Response {
    ([(header::CONTENT_TYPE, HTML)], INDEX).into_response()
}

pub(super) async fn pair_page() -> Response {
    ([(header::CONTENT_TYPE, HTML)], PAIR).into_response()
}

/// The service worker, at the root so that its scope is the whole page.
pub(super) async fn service_worker() -> Response {
    ([(header::CONTENT_TYPE, JS)], SERVICE_WORKER).into_response()
}

pub(super) async fn asset(Path(file): Path<String>) -> Response {
    let (kind, body) = match file.as_str() {
        "app.js" => (JS, APP_JS),
        "render.js" => (JS, RENDER_JS),
        "pair.js" => (JS, PAIR_JS),
        "style.css" => ("text/css; charset=utf-8", STYLE),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

#[cfg(test)]
mod tests {
    /// The page's own files hold no inline script or handler: the CSP
    /// would block them, and a page that needed them would be one an
    /// injected script could ride.
    #[test]
    fn no_inline_script_and_no_markup_from_strings() {
        for html in [super::INDEX, super::PAIR] {
            for bad in ["<script>", "onclick=", "onload=", "javascript:", "<style>"] {
                assert!(!html.contains(bad), "{bad} in the page");
            }
        }
        for js in [
            super::APP_JS,
            super::RENDER_JS,
            super::PAIR_JS,
            super::SERVICE_WORKER,
        ] {
            for bad in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
            ] {
                assert!(!js.contains(bad), "{bad} in the page's script");
            }
        }
    }
}
