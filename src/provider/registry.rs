//! One descriptor per provider, and the registry the rest of hive asks
//! (seed 002 AC-2.2). Everything hive knows about a provider beyond the
//! `ProviderFactory` contract is declared once, in the provider's own
//! module (`<provider>::descriptor()`): what `hive doctor` checks, which
//! transcripts `hive import` reads, the npm package of its program, how
//! its agent reaches hive's operations and which keys of the agent table
//! it reads. Doctor, import, the config check and the app's startup look
//! a provider up here; none of them names one.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::doctor::{DryStart, Facts, Probe};
use super::operations::{Operations, server_for};
use super::toolbox::ToolboxFactory;
use super::{ProviderError, ProviderFactory};
use crate::config::{AgentConfig, ProviderSettings, SettingsError};
use crate::history::import::Importer;

/// Everything hive knows about one provider.
#[derive(Clone)]
pub struct ProviderDescriptor {
    /// What an agent names with `provider = "<name>"`.
    pub name: &'static str,
    pub factory: Arc<dyn ProviderFactory>,
    /// What `hive doctor` checks for an agent of this provider, or why its
    /// config cannot work.
    pub doctor: fn(&AgentConfig, &Probe) -> Result<Facts, String>,
    /// Its agent's own transcript format, for `hive import <name>`.
    pub(crate) importer: Option<&'static (dyn Importer + Sync)>,
    /// The programs it starts that npm installs (their tested versions are
    /// in scripts/install-agents.sh).
    pub npm: &'static [NpmProgram],
    pub operations: Operations,
    pub settings: OwnSettings,
    /// How its agent is given the config's `[[mcp_server]]`s, as `hive
    /// doctor` says it (`None`: it takes none).
    pub mcp_channel: Option<&'static str>,
}

impl std::fmt::Debug for ProviderDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderDescriptor")
            .field("name", &self.name)
            .field("importer", &self.importer.map(|i| i.name()))
            .field("npm", &self.npm)
            .field("operations", &self.operations)
            .field("settings", &self.settings.keys)
            .finish_non_exhaustive()
    }
}

impl ProviderDescriptor {
    /// A provider known by its factory alone: nothing to check, import or
    /// install, no hive operations, no keys of its own.
    pub fn bare(name: &'static str, factory: Arc<dyn ProviderFactory>) -> Self {
        Self {
            name,
            factory,
            doctor: |_, _| {
                Ok(Facts {
                    program: None,
                    auth: None,
                    start: DryStart::None,
                })
            },
            importer: None,
            npm: &[],
            operations: Operations::None,
            settings: OwnSettings::NONE,
            mcp_channel: None,
        }
    }
}

/// A program a provider starts, as npm installs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpmProgram {
    /// The program's file name.
    pub program: &'static str,
    pub package: &'static str,
}

/// The keys a provider reads directly from the agent table
/// (`AgentConfig::settings`) and how it checks their values.
#[derive(Clone, Copy)]
pub struct OwnSettings {
    pub keys: &'static [&'static str],
    pub check: fn(&AgentConfig) -> Result<(), SettingsError>,
}

impl OwnSettings {
    /// No keys of its own.
    pub const NONE: Self = Self {
        keys: &[],
        check: |_| Ok(()),
    };
}

/// Provider names → descriptors.
#[derive(Debug, Clone)]
pub struct Registry {
    providers: BTreeMap<&'static str, ProviderDescriptor>,
}

impl Registry {
    pub fn empty() -> Self {
        Self {
            providers: BTreeMap::new(),
        }
    }

    /// Every provider hive ships.
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        for d in [
            super::script::descriptor(),
            super::pty::descriptor(),
            super::codex::descriptor(),
            super::gemini::descriptor(),
            super::pi::descriptor(),
            super::acp::descriptor(),
            super::claude::descriptor(),
            super::openai::descriptor(),
        ] {
            r.add(d);
        }
        r
    }

    /// Adds a provider (replacing one of the same name).
    pub fn add(&mut self, descriptor: ProviderDescriptor) {
        self.providers.insert(descriptor.name, descriptor);
    }

    /// Makes `factory` the provider an agent names with `provider = "<name>"`,
    /// keeping the rest of a known provider's descriptor.
    pub fn register(&mut self, name: &'static str, factory: Arc<dyn ProviderFactory>) {
        match self.providers.get_mut(name) {
            Some(d) => d.factory = factory,
            None => self.add(ProviderDescriptor::bare(name, factory)),
        }
    }

    /// Hands `toolbox` (the host's operations) to every provider that
    /// takes them in-process.
    #[must_use]
    pub fn with_toolbox(self, toolbox: ToolboxFactory) -> Self {
        self.in_process(toolbox, None)
    }

    /// [`Registry::with_toolbox`] for a server's project: an in-process
    /// agent's conversation is rebuilt from the project's history store
    /// (`store`), where its pane records it, not the user's root one.
    #[must_use]
    pub fn for_project(self, toolbox: ToolboxFactory, store: crate::history::Store) -> Self {
        self.in_process(toolbox, Some(store))
    }

    fn in_process(mut self, toolbox: ToolboxFactory, store: Option<crate::history::Store>) -> Self {
        for d in self.providers.values_mut() {
            if let Operations::InProcess(with) = d.operations {
                d.factory = with(toolbox.clone(), store.clone());
            }
        }
        self
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.providers.keys().copied().collect()
    }

    pub(crate) fn descriptors(&self) -> impl Iterator<Item = &ProviderDescriptor> {
        self.providers.values()
    }

    pub(crate) fn descriptor(&self, name: &str) -> Result<&ProviderDescriptor, ProviderError> {
        self.providers
            .get(name)
            .ok_or_else(|| ProviderError::Unknown {
                name: name.to_owned(),
                known: self.names().join(", "),
            })
    }

    pub fn get(&self, name: &str) -> Result<Arc<dyn ProviderFactory>, ProviderError> {
        self.descriptor(name).map(|d| Arc::clone(&d.factory))
    }

    /// The agent as its provider gets it: an agent with `hive_tools` whose
    /// provider takes hive's operations through MCP gets `hive_mcp`, the
    /// `hive mcp` server of its pane, when the control socket is up.
    pub(crate) fn with_hive_mcp(&self, agent: &AgentConfig, socket: Option<&Path>) -> AgentConfig {
        let mut agent = agent.clone();
        if self.wants_hive_mcp(&agent) {
            agent.hive_mcp = socket.and_then(|s| server_for(&agent.id, s));
            if agent.hive_mcp.is_none() {
                tracing::warn!(agent = %agent.id, "hive_tools: no control socket, so no hive mcp");
            }
        }
        agent
    }

    /// Whether `agent` reaches hive's operations through `hive mcp` (and so
    /// needs the control socket): it asks for them and its provider takes
    /// them over MCP, not in-process.
    pub(crate) fn wants_hive_mcp(&self, agent: &AgentConfig) -> bool {
        agent.hive_tools
            && self
                .providers
                .get(agent.provider.as_str())
                .is_none_or(|d| matches!(d.operations, Operations::Mcp(_)))
    }

    /// `hive doctor`'s facts for an agent, or why its config cannot work.
    pub(crate) fn facts(&self, agent: &AgentConfig, probe: &Probe) -> Result<Facts, String> {
        match self.providers.get(agent.provider.as_str()) {
            Some(d) => (d.doctor)(agent, probe),
            None => Err(format!(
                "unknown provider `{}`; known: {}",
                agent.provider,
                self.names().join(", ")
            )),
        }
    }

    /// The transcript reader `hive import <name>` uses.
    pub(crate) fn importer(&self, name: &str) -> Option<&'static (dyn Importer + Sync)> {
        self.providers.get(name)?.importer
    }

    /// The npm package that installs the program called `program`.
    pub(crate) fn npm_package(&self, program: &str) -> Option<&'static str> {
        self.providers
            .values()
            .flat_map(|d| d.npm)
            .find(|p| p.program == program)
            .map(|p| p.package)
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

/// Each agent's own keys are its provider's to check. A key that another
/// provider reads is let through, as it always was (one `[[agent]]`
/// table type held them all); a key no provider reads is an error.
impl ProviderSettings for Registry {
    fn check(&self, agent: &AgentConfig) -> Result<(), SettingsError> {
        let own = self.providers.get(agent.provider.as_str());
        for key in agent.settings.keys() {
            if !self
                .descriptors()
                .any(|d| d.settings.keys.contains(&key.as_str()))
            {
                let reads = match own.map(|d| d.settings.keys) {
                    Some(keys) if !keys.is_empty() => format!(
                        " (besides the common keys, provider `{}` reads {})",
                        agent.provider,
                        keys.join(", ")
                    ),
                    _ => String::new(),
                };
                return Err(SettingsError {
                    key: key.clone(),
                    message: format!("unknown field `{key}`{reads}"),
                });
            }
        }
        own.map_or(Ok(()), |d| (d.settings.check)(agent))
    }
}

#[cfg(test)]
mod tests {
    use super::Registry;

    #[test]
    fn the_consoles_list_of_providers_is_the_registrys() {
        assert_eq!(
            Registry::builtin().names(),
            crate::protocol::agent::PROVIDER_NAMES,
            "a console's new-pane picker offers protocol::agent::PROVIDER_NAMES"
        );
    }
}
