//! Finding a model by name: the bundled models of `cmc-models`.

use cmc_search::AnyModel;

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

/// Builds the bundled model `name` with `params`.
pub fn build(name: &str, params: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    let entries = cmc_models::registry::bundled();
    let entry = entries
        .iter()
        .find(|entry| entry.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = entries.iter().map(|entry| entry.name).collect();
            format!(
                "unknown model `{name}`; the bundled models are: {} (see `cmc list`)",
                names.join(", ")
            )
        })?;
    (entry.build)(params).map_err(|problem| format!("model `{name}`: {problem}"))
}

/// One line per bundled model: name, summary and parameters.
pub fn list_lines() -> Vec<String> {
    cmc_models::registry::bundled()
        .iter()
        .map(|entry| {
            let params: Vec<String> = entry
                .params
                .iter()
                .map(|param| format!("{}={} ({})", param.name, param.default, param.meaning))
                .collect();
            format!(
                "{:<14} {}{}{}",
                entry.name,
                entry.summary,
                if params.is_empty() { "" } else { "; params: " },
                params.join(", ")
            )
        })
        .collect()
}
