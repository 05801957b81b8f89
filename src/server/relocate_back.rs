//! A moved pane comes back (issue 50, `hive ctl move host:pane --host
//! local`): the server with the `[[host]]` drives this way too, since the
//! host has no way back to it. It asks the host's server to pack the pane
//! (`Relocate::Leave`, which changes nothing there), copies the package
//! here over ssh, unpacks it as any arrival (src/server/relocate_in.rs),
//! and only once the pane runs here asks the host to stop its copy
//! (`Relocate::Left`). A step that fails leaves the pane working on the
//! host and says which step it was.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::move_package;
use super::relocate::{Asker, package_dir, refused};
use super::serve::Server;
use crate::control::protocol::{Call, CtlError, ErrorCode};
use crate::protocol::carry::Relocate;
use crate::remote::carry::HostLink;

/// A package fetched from the host: the link, its directory there, the
/// local copy.
type Fetched = (HostLink, String, PathBuf);

impl Server {
    /// Pane `id` of `[[host]]` `host` comes back here.
    pub(super) fn come_back(&mut self, host: &str, id: &str, asker: Asker) {
        let target = match self.host_target(host) {
            Ok(t) => t,
            Err(e) => return asker.answer(self, Err(e)),
        };
        if let Some(slot) = self.panes.find(id)
            && self.runners.get(slot).is_some_and(Option::is_some)
        {
            let e = refused(format!("a pane `{id}` runs here already"));
            return asker.answer(self, Err(e));
        }
        let (id, host) = (id.to_owned(), host.to_owned());
        self.moves.spawn(move || {
            let fetched = fetch(&target, &id);
            Box::new(move |s: &mut Server| match fetched {
                Ok(f) => s.unpack_fetched(f, id, host, asker),
                Err(why) => {
                    let text =
                        format!("/move of {id} back from {host} failed: {why}; it stays on {host}");
                    asker.answer(s, Err(CtlError::new(ErrorCode::Unavailable, text)));
                }
            })
        });
    }

    fn unpack_fetched(
        &mut self,
        (link, remote, local): Fetched,
        id: String,
        host: String,
        asker: Asker,
    ) {
        let dir = local.clone();
        let then = Box::new(move |s: &mut Server, outcome: Result<Value, CtlError>| {
            let _ = std::fs::remove_dir_all(&local);
            let here = match outcome {
                Ok(v) => v,
                Err(e) => {
                    let text = format!(
                        "/move of {id} back from {host} failed: {}; it stays on {host}",
                        e.message
                    );
                    s.moves.spawn(move || {
                        link.remove_dir(&remote);
                        Box::new(|_: &mut Server| {})
                    });
                    return asker.answer(s, Err(CtlError::new(e.code, text)));
                }
            };
            let left = Call::Relocate(Relocate::Left {
                pane: id.clone(),
                to: super::relocate::this_host(),
                abandon: false,
            });
            s.moves.spawn(move || {
                let stopped = link.call(left);
                link.remove_dir(&remote);
                Box::new(move |s: &mut Server| s.back_done(&id, &host, here, stopped, asker))
            });
        });
        self.arrive_then(dir, then);
    }

    /// The host stopped its copy (or would not: then this one goes).
    fn back_done(
        &mut self,
        id: &str,
        host: &str,
        here: Value,
        stopped: Result<Value, crate::remote::carry::CarryError>,
        asker: Asker,
    ) {
        if let Err(e) = stopped {
            let _ = self.moved_off(id, "", true);
            let text = format!(
                "/move of {id} back from {host} failed: stopping it there: {e}; it stays on {host}"
            );
            return asker.answer(self, Err(CtlError::new(ErrorCode::Unavailable, text)));
        }
        let text = format!("moved {id} back from {host}: it goes on here");
        let mut json = json!({"pane": id, "from": host, "text": text});
        if let Some(w) = here.get("worktree") {
            json["worktree"] = w.clone();
        }
        asker.answer(self, Ok(json));
    }

    /// `Relocate::Leave`: pane `pane` packs itself (on the blocking pool);
    /// the answer names the package's directory and files.
    pub(super) fn leave(&mut self, pane: &str, asker: Asker) {
        let checked = self
            .open_slot(pane)
            .map_err(|e| CtlError::new(e.code(), e.to_string()))
            .and_then(|slot| self.may_move(slot).map(|()| slot));
        let slot = match checked {
            Ok(s) => s,
            Err(e) => return asker.answer(self, Err(e)),
        };
        let leaving = self.leaving(slot);
        let id = pane.to_owned();
        self.moves.spawn(move || {
            let packed = package_dir(&id).and_then(|dir| {
                let m = move_package::pack(&leaving, &dir).inspect_err(|_| {
                    let _ = std::fs::remove_dir_all(&dir);
                })?;
                Ok(json!({"dir": dir, "files": move_package::names(&m)}))
            });
            Box::new(move |s: &mut Server| {
                let outcome = packed.map_err(|e| CtlError::new(ErrorCode::Unavailable, e));
                asker.answer(s, outcome);
            })
        });
    }
}

/// The blocking part of coming back: reach the host, have the pane
/// packed there, copy the package here.
fn fetch(target: &crate::remote::Target, id: &str) -> Result<Fetched, String> {
    let link = HostLink::open(target).map_err(|e| format!("reaching {}: {e}", target.name))?;
    let answer = link
        .call(Call::Relocate(Relocate::Leave {
            pane: id.to_owned(),
        }))
        .map_err(|e| format!("packing it on {}: {e}", target.name))?;
    let remote = answer["dir"].as_str().unwrap_or_default().to_owned();
    let files: Vec<String> = answer["files"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if remote.is_empty() || files.is_empty() {
        return Err(format!("packing it on {}: no package named", target.name));
    }
    let local = package_dir(id)?;
    if let Err(e) = link.fetch_dir(&remote, &files, &local) {
        let _ = std::fs::remove_dir_all(&local);
        link.remove_dir(&remote);
        return Err(format!("copying it from {}: {e}", target.name));
    }
    Ok((link, remote, local))
}
