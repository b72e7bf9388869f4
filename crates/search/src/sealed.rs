//! What ties a checkpoint's manifest to its contents and to the executable
//! that wrote it, for every engine: a sealed text ends with a line holding
//! the XXH3-128 checksum of all the lines before it, so that a changed digit
//! is refused; and the executable's checksum names the build (a rebuilt
//! model is another model).

use std::sync::OnceLock;

/// The line that closes a sealed text, before its checksum.
const SEAL: &str = "xxh3-128 ";

/// `body` followed by a line with its checksum.
pub fn seal(body: &str) -> String {
    format!(
        "{body}\n{SEAL}{:032x}\n",
        xxhash_rust::xxh3::xxh3_128(body.as_bytes())
    )
}

/// The body of a sealed text, if its checksum line matches it.
pub fn unseal(text: &str) -> Option<&str> {
    let (body, last) = text.strip_suffix('\n')?.rsplit_once('\n')?;
    let recorded = u128::from_str_radix(last.strip_prefix(SEAL)?, 16).ok()?;
    (recorded == xxhash_rust::xxh3::xxh3_128(body.as_bytes())).then_some(body)
}

/// XXH3-128 of the running executable's contents (hexadecimal), computed once.
pub fn executable_checksum() -> Result<String, String> {
    static CHECKSUM: OnceLock<Result<String, String>> = OnceLock::new();
    CHECKSUM
        .get_or_init(|| {
            std::fs::File::open("/proc/self/exe")
                .and_then(|mut file| cmc_store::nofollow_files::digest(&mut file))
                .map(|(checksum, _)| format!("{checksum:032x}"))
                .map_err(|problem| format!("cannot read this executable to checksum it: {problem}"))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_text_unseals_only_unchanged() {
        let sealed = seal("{\n  \"depth\": 7\n}");
        assert_eq!(unseal(&sealed), Some("{\n  \"depth\": 7\n}"));
        assert_eq!(unseal(&sealed.replace('7', "8")), None);
        assert_eq!(unseal(&sealed[..sealed.len() - 2]), None);
        assert_eq!(unseal(""), None);
    }
}
