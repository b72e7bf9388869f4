//! Models behind one object type, for front ends that pick a model at run time.

use cmc_model::{Model, ModelParam};

use crate::{replay, DotError, ReplayError, ReplayFile, Report, SearchOptions};

/// A model whose state and action types are hidden: what the `cmc` command
/// line holds after looking a model up by name. Every `Model` is one.
pub trait AnyModel: Send + Sync {
    /// The model's name.
    fn name(&self) -> String;
    /// The model's parameters.
    fn params(&self) -> Vec<ModelParam>;
    /// `(kind, name)` of each declared property, in declaration order.
    fn property_names(&self) -> Vec<(&'static str, String)>;
    /// Runs a search and reports it.
    fn check(&self, options: &SearchOptions) -> Report;
    /// Replays `file` and reports it (strategy `replay`).
    fn replay(&self, file: &ReplayFile) -> Result<Report, ReplayError>;
    /// The model itself, for a front end that knows its concrete type (e.g.
    /// to run it on another search engine) and takes it back by downcasting.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send + Sync>;
    /// The reachable state graph in Graphviz DOT, `highlight`'s path in
    /// bold red; `Err` past `max_states` states (see [`crate::state_graph_dot`]).
    fn state_graph_dot(
        &self,
        max_states: usize,
        highlight: Option<&ReplayFile>,
    ) -> Result<String, DotError>;
}

impl<M: Model + Send + 'static> AnyModel for M {
    fn name(&self) -> String {
        Model::name(self)
    }

    fn params(&self) -> Vec<ModelParam> {
        Model::params(self)
    }

    fn property_names(&self) -> Vec<(&'static str, String)> {
        self.properties()
            .iter()
            .map(|p| (p.kind_name(), p.name.clone()))
            .collect()
    }

    fn check(&self, options: &SearchOptions) -> Report {
        let outcome = crate::checker::search(self, options);
        Report::new(self, options, &outcome)
    }

    fn replay(&self, file: &ReplayFile) -> Result<Report, ReplayError> {
        let outcome = replay(self, file)?;
        let options = SearchOptions {
            workers: 1,
            ..SearchOptions::default()
        };
        let mut report = Report::new(self, &options, &outcome);
        report.strategy = "replay".into();
        report.settings = file.settings.clone();
        Ok(report)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send + Sync> {
        self
    }

    fn state_graph_dot(
        &self,
        max_states: usize,
        highlight: Option<&ReplayFile>,
    ) -> Result<String, DotError> {
        crate::state_graph_dot(self, max_states, highlight)
    }
}
