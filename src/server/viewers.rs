//! Read-only consoles (`hive attach --read-only`, issue 47): a console that
//! says it only looks (`ClientMsg::ReadOnly`) is a `Caller::Console` of role
//! `ReadOnly` at the door for the rest of its connection, and the door's
//! one rule (`Caller::may`) refuses what it asks that changes anything. Its
//! session messages that change what others see (a mute, a draft, a merge,
//! a resume, a forge action) are refused here by the protocol's own list
//! (`ClientMsg::changes`). Each refusal is told to that console as a
//! `Notice`, so a shared screen says why nothing happened.

use super::clients::ClientId;
use super::serve::Server;
use crate::protocol::pane::RunnerCommand;
use crate::protocol::verb::{Caller, Role, Verb, read_only_refusal};
use crate::protocol::{ClientMsg, ServerMsg};

impl Server {
    /// Console `id` as the door's caller, with its role.
    pub(super) fn console_caller(&mut self, id: ClientId) -> Caller {
        let role = self.clients.get_mut(id).map_or(Role::Full, |l| l.role);
        Caller::Console { id, role }
    }

    /// `ClientMsg::ReadOnly`: client `id` only looks from now on; nothing
    /// it says later makes it the user again.
    pub(super) fn only_looks(&mut self, id: ClientId) {
        if let Some(link) = self.clients.get_mut(id) {
            tracing::info!(client = id, "a read-only console");
            link.role = Role::ReadOnly;
        }
    }

    /// Whether session message `msg` of client `id` is refused: it changes
    /// what is not its own and the client only looks. A draft goes
    /// quietly (a read-only console types nothing, but the owner's draft
    /// is never a viewer's to overwrite).
    pub(super) fn viewer_refused(&mut self, id: ClientId, msg: &ClientMsg) -> bool {
        let caller = self.console_caller(id);
        if !matches!(
            caller,
            Caller::Console {
                role: Role::ReadOnly,
                ..
            }
        ) {
            return false;
        }
        let Some(what) = msg.changes() else {
            return false;
        };
        if !matches!(msg, ClientMsg::Draft { .. }) {
            self.tell_refused(id, read_only_refusal(what));
        }
        true
    }

    /// The door refused console `id`'s `verb` for `why`: it is told, but
    /// for a size, which a read-only console sends on every layout and is
    /// never the pane's (as tmux's `attach -r`).
    pub(super) fn refused(&mut self, id: ClientId, verb: &Verb, why: &str) {
        tracing::info!(client = id, "a console's request refused: {why}");
        let quiet = matches!(
            verb,
            Verb::Command {
                cmd: RunnerCommand::Resize { .. },
                ..
            }
        );
        if !quiet {
            self.tell_refused(id, why.to_owned());
        }
    }

    fn tell_refused(&mut self, id: ClientId, text: String) {
        let notice = ServerMsg::Notice { text, focus: None };
        self.clients.send(id, &notice);
    }
}
