//! The `/model` picker's list: `model/list` asked once the thread is ready,
//! page by page (`nextCursor`), hidden models left out. A server that
//! cannot list them (an older one, an error) leaves the models hive's own
//! configuration names (issue 34 item 7: the picker was empty).

use super::*;

/// More pages than this are not asked for (a server repeating a cursor).
const MAX_PAGES: usize = 20;

impl AppServer {
    /// Asks for the first page, once per server.
    pub(super) async fn list_models(&mut self) {
        if std::mem::replace(&mut self.models_asked, true) {
            return;
        }
        self.request(Request::ModelList(Vec::new()), "model/list", json!({}))
            .await;
    }

    /// A page came: ask for the next one, or offer what was listed.
    pub(super) async fn models_listed(&mut self, mut so_far: Vec<String>, result: &Value) {
        so_far.extend(page_models(result));
        let cursor = result.get("nextCursor").and_then(Value::as_str);
        match cursor {
            Some(c) if so_far.len() < MAX_PAGES * 100 && self.model_pages < MAX_PAGES => {
                self.model_pages += 1;
                let params = json!({ "cursor": c });
                self.request(Request::ModelList(so_far), "model/list", params)
                    .await;
            }
            _ if so_far.is_empty() => self.configured_models(),
            _ => {
                let _ = self.events.send(ProviderEvent::Models(so_far));
            }
        }
    }

    /// `model/list` failed: the models the configuration names.
    pub(super) fn configured_models(&self) {
        let models = self.settings.configured_models();
        if !models.is_empty() {
            let _ = self.events.send(ProviderEvent::Models(models));
        }
    }
}

/// The model ids of one `model/list` page (`model`, else `id`), without
/// the hidden ones.
fn page_models(result: &Value) -> Vec<String> {
    let Some(data) = result.get("data").and_then(Value::as_array) else {
        return Vec::new();
    };
    data.iter()
        .filter(|m| !m.get("hidden").and_then(Value::as_bool).unwrap_or(false))
        .filter_map(|m| {
            m.get("model")
                .or_else(|| m.get("id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_lists_visible_models_by_slug() {
        let page = json!({"data": [
            {"id": "a", "model": "gpt-5.5", "hidden": false},
            {"id": "b", "model": "internal", "hidden": true},
            {"id": "only-id"},
        ], "nextCursor": null});
        assert_eq!(page_models(&page), ["gpt-5.5", "only-id"]);
        assert!(page_models(&json!({})).is_empty());
    }
}
