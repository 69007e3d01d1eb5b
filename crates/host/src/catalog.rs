//! Every tool lumo exposes, from every source, by name, in one deterministic order.

use std::collections::HashMap;
use std::sync::Arc;

use lumo_browser::{Session, Tool, ToolSpec};

/// The tools lumo exposes.
pub struct Catalog {
    session: Arc<Session>,
    builtin: Vec<Tool<Arc<Session>>>,
    index: HashMap<String, usize>,
}

impl Catalog {
    /// The built-in browser tools over `session`.
    pub fn builtin(session: Arc<Session>) -> Self {
        let builtin = lumo_browser::builtin_tools();
        let index = builtin.iter().enumerate().map(|(i, t)| (t.spec.name.clone(), i)).collect();
        Self { session, builtin, index }
    }

    /// Every tool's spec, in listing order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.builtin.iter().map(|t| &t.spec)
    }

    /// A tool by name.
    pub(crate) fn get(&self, name: &str) -> Option<&Tool<Arc<Session>>> {
        self.index.get(name).map(|&i| &self.builtin[i])
    }

    /// The browser session the built-in tools drive.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}
