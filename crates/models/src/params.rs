//! Reading a model's `NAME=VALUE` parameters, with messages that say what to fix.

use std::ops::RangeInclusive;

use cmc_model::ModelParam;

/// The parameters given to one model constructor, consumed by name.
///
/// Each `take_*` call reads one parameter (or its default);
/// [`finish`](Params::finish) then rejects any name that no call asked for,
/// so a misspelt parameter is an error rather than silently ignored.
#[derive(Debug)]
pub struct Params<'a> {
    given: &'a [(String, String)],
    known: Vec<&'static str>,
}

impl<'a> Params<'a> {
    /// The parameters `given` to one model. Error messages name the
    /// parameter, not the model: the caller adds which model it was.
    pub fn new(given: &'a [(String, String)]) -> Params<'a> {
        Params {
            given,
            known: Vec::new(),
        }
    }

    fn value(&mut self, name: &'static str) -> Result<Option<&'a str>, String> {
        self.known.push(name);
        let mut values = self.given.iter().filter(|(given, _)| given == name);
        let value = values.next().map(|(_, value)| value.as_str());
        if values.next().is_some() {
            return Err(format!(
                "parameter {name} is given more than once; give it once"
            ));
        }
        Ok(value)
    }

    /// The integer parameter `name` in `range`, or `default` when absent.
    pub fn take_count(
        &mut self,
        name: &'static str,
        default: usize,
        range: RangeInclusive<usize>,
    ) -> Result<usize, String> {
        let Some(text) = self.value(name)? else {
            return Ok(default);
        };
        match text.trim().parse::<usize>() {
            Ok(value) if range.contains(&value) => Ok(value),
            _ => Err(format!(
                "{name}={text} is not allowed; use an integer from {} to {}",
                range.start(),
                range.end()
            )),
        }
    }

    /// The comma-separated list parameter `name`, each item one of `choices`
    /// (returned in the order given, without repeats), or `default` when absent.
    /// An empty list is an error: `INVARIANTS=` would check nothing and pass.
    pub fn take_choices<T: Copy + PartialEq>(
        &mut self,
        name: &'static str,
        default: &[T],
        choices: &[(&'static str, T)],
    ) -> Result<Vec<T>, String> {
        let Some(text) = self.value(name)? else {
            return Ok(default.to_vec());
        };
        let mut picked = Vec::new();
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let Some(&(_, choice)) = choices.iter().find(|(choice, _)| *choice == item) else {
                let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
                return Err(format!(
                    "{name} has no item {item:?}; choose from {}",
                    names.join(", ")
                ));
            };
            if !picked.contains(&choice) {
                picked.push(choice);
            }
        }
        if picked.is_empty() {
            let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
            return Err(format!(
                "{name}= lists nothing, so nothing would be checked; name at least one of {} \
                 (or leave {name} out for the default)",
                names.join(", ")
            ));
        }
        Ok(picked)
    }

    /// Fails if a parameter was given that no `take_*` call asked for.
    pub fn finish(self) -> Result<(), String> {
        match self
            .given
            .iter()
            .find(|(name, _)| !self.known.contains(&name.as_str()))
        {
            None => Ok(()),
            Some((name, _)) => Err(format!(
                "there is no parameter {name}; the parameters are {}",
                self.known.join(", ")
            )),
        }
    }
}

/// The parameter `name` listing `picked` by their names in `choices`, as
/// [`Params::take_choices`] reads it back.
pub fn choices_param<T: Copy + PartialEq>(
    name: &str,
    picked: &[T],
    choices: &[(&'static str, T)],
) -> ModelParam {
    let names: Vec<&str> = picked
        .iter()
        .map(|value| {
            choices
                .iter()
                .find(|(_, choice)| choice == value)
                .map(|(choice_name, _)| *choice_name)
                .expect("every picked value is one of the choices")
        })
        .collect();
    ModelParam::new(name, names.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn counts_default_parse_and_reject_out_of_range() {
        let pairs = given(&[("RM", "5")]);
        let mut params = Params::new(&pairs);
        assert_eq!(params.take_count("RM", 3, 1..=16), Ok(5));
        assert_eq!(params.take_count("OTHER", 2, 1..=4), Ok(2));
        assert_eq!(params.finish(), Ok(()));

        let pairs = given(&[("RM", "17")]);
        let error = Params::new(&pairs).take_count("RM", 3, 1..=16).unwrap_err();
        assert!(
            error.contains("RM=17") && error.contains("1 to 16"),
            "{error}"
        );
    }

    #[test]
    fn choices_parse_lists_and_name_the_alternatives() {
        let choices = [("TypeOK", 0), ("NotSolved", 1)];
        let pairs = given(&[("INVARIANTS", "NotSolved, TypeOK,NotSolved")]);
        let mut params = Params::new(&pairs);
        assert_eq!(
            params.take_choices("INVARIANTS", &[0], &choices),
            Ok(vec![1, 0])
        );
        let pairs = given(&[("INVARIANTS", "Solved")]);
        let error = Params::new(&pairs)
            .take_choices("INVARIANTS", &[0], &choices)
            .unwrap_err();
        assert!(error.contains("TypeOK, NotSolved"), "{error}");
        for empty in ["", " , ,"] {
            let pairs = given(&[("INVARIANTS", empty)]);
            let error = Params::new(&pairs)
                .take_choices("INVARIANTS", &[0], &choices)
                .unwrap_err();
            assert!(error.contains("INVARIANTS= lists nothing"), "{error}");
        }
    }

    #[test]
    fn unknown_and_repeated_names_are_errors() {
        let pairs = given(&[("RMS", "3")]);
        let mut params = Params::new(&pairs);
        params.take_count("RM", 3, 1..=16).unwrap();
        let error = params.finish().unwrap_err();
        assert!(
            error.contains("no parameter RMS") && error.contains("RM"),
            "{error}"
        );

        let pairs = given(&[("RM", "3"), ("RM", "4")]);
        assert!(Params::new(&pairs).take_count("RM", 3, 1..=16).is_err());
    }
}
