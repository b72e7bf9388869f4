//! Finding a model by name in the running program's catalog (the bundled
//! models of `cmc-models` for `cmc`; see [`crate::Cli`]).

use cmc_search::AnyModel;

// Without the `explore` feature, the same names refuse to serve.
#[cfg(not(feature = "explore"))]
use crate::without_explore as cmc_explore;

/// Splits `NAME=VALUE` words into pairs; a word without `=` is an error.
pub fn parse_params(words: &[String]) -> Result<Vec<(String, String)>, String> {
    words
        .iter()
        .map(|word| match word.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
            _ => Err(format!(
                "model parameter `{word}` is not of the form NAME=VALUE (e.g. RM=5)"
            )),
        })
        .collect()
}

/// Builds the model `name` of the running program's catalog with `params`.
pub fn build(name: &str, params: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    let catalog = crate::catalog::current();
    let entry = catalog
        .model(name)
        .ok_or_else(|| unknown_model(&catalog, name))?;
    catalog
        .build(entry, params)
        .map_err(|problem| format!("model `{name}`: {problem}"))
}

/// Builds the model `name` with `params` and binds the web explorer to it on
/// `port` (a program's own models too: their registration knows their type).
pub fn explore(
    name: &str,
    params: &[(String, String)],
    port: u16,
) -> Result<cmc_explore::Server, String> {
    let catalog = crate::catalog::current();
    let entry = catalog
        .model(name)
        .ok_or_else(|| unknown_model(&catalog, name))?;
    catalog
        .explore(entry, params, port)
        .map_err(|problem| format!("model `{name}`: {problem}"))
}

fn unknown_model(catalog: &crate::catalog::Catalog, name: &str) -> String {
    format!(
        "unknown model `{name}`; the models of {} are: {} (see `{} list`)",
        catalog.program,
        catalog.model_names().join(", "),
        catalog.program
    )
}

/// One line per model (name, summary and parameters), then one per Rust core
/// the program registered.
pub fn list_lines() -> Vec<String> {
    crate::catalog::current().list_lines()
}

/// The running program's name (`cmc`, or a front end's own).
pub fn program() -> String {
    crate::catalog::current().program.clone()
}

/// The gate file `gate` runs when none is named, if the program has one.
pub fn default_gate() -> Option<std::path::PathBuf> {
    crate::catalog::current().default_gate.clone()
}
