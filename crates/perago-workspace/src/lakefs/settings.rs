//! Where lakeFS is and who calls it, under lakectl's environment variable names.

use crate::store::StoreError;
use std::fmt;

/// lakeFS's URL: `http://host:8000`, or with the API prefix, `http://host:8000/api/v1`.
pub const ENDPOINT_ENV: &str = "LAKECTL_SERVER_ENDPOINT_URL";

/// The access key id (the user name of HTTP Basic auth).
pub const ACCESS_KEY_ID_ENV: &str = "LAKECTL_CREDENTIALS_ACCESS_KEY_ID";

/// The secret access key (the password of HTTP Basic auth).
pub const SECRET_ACCESS_KEY_ENV: &str = "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY";

/// A secret: `Debug` shows `Secret(<redacted>)`, and there is no `Display`, so it cannot end
/// up in a message or a log line by accident. [`Secret::expose`] is the one way to the text.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `secret`.
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    /// The secret itself, for the `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(secret: String) -> Secret {
        Secret(secret)
    }
}

impl From<&str> for Secret {
    fn from(secret: &str) -> Secret {
        Secret(secret.to_owned())
    }
}

/// How to reach lakeFS: its URL and an access key. `Debug` redacts the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeFsSettings {
    /// The server root, e.g. `http://host:8000` (a trailing `/api/v1` is accepted and dropped
    /// by [`LakeFsSettings::new`] and [`crate::lakefs::LakeFs::new`]).
    pub endpoint_url: String,
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Secret,
}

impl LakeFsSettings {
    /// Settings for the server at `endpoint_url` (normalised to the server root), with an
    /// access key. `Invalid` when the URL is not an `http://` or `https://` URL of a host, or
    /// carries credentials of its own.
    pub fn new(
        endpoint_url: &str,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<Secret>,
    ) -> Result<LakeFsSettings, StoreError> {
        Ok(LakeFsSettings {
            endpoint_url: normalize_endpoint(endpoint_url)?,
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
        })
    }

    /// The settings from the environment ([`ENDPOINT_ENV`], [`ACCESS_KEY_ID_ENV`],
    /// [`SECRET_ACCESS_KEY_ENV`]); see [`LakeFsSettings::from_lookup`].
    pub fn from_env() -> Result<Option<LakeFsSettings>, StoreError> {
        for var in [ENDPOINT_ENV, ACCESS_KEY_ID_ENV, SECRET_ACCESS_KEY_ENV] {
            if let Err(std::env::VarError::NotUnicode(_)) = std::env::var(var) {
                return Err(StoreError::Invalid(format!("{var} is not valid UTF-8")));
            }
        }
        LakeFsSettings::from_lookup(|var| std::env::var(var).ok())
    }

    /// The settings from `lookup` (an environment variable's value by name; values are
    /// trimmed, and an empty one counts as unset). `Ok(None)` when no endpoint is set: lakeFS
    /// is not configured. `Invalid` when the endpoint is set but a credential is not (the
    /// message names the variable) or the endpoint is not a usable URL. No message carries
    /// a credential's value.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<LakeFsSettings>, StoreError> {
        let get = |var: &str| {
            lookup(var)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let Some(endpoint) = get(ENDPOINT_ENV) else {
            return Ok(None);
        };
        let missing = |var: &str| {
            StoreError::Invalid(format!(
                "{ENDPOINT_ENV} is set, but {var} is not: lakeFS needs an access key \
                 ({ACCESS_KEY_ID_ENV} and {SECRET_ACCESS_KEY_ENV})"
            ))
        };
        let access_key_id = get(ACCESS_KEY_ID_ENV).ok_or_else(|| missing(ACCESS_KEY_ID_ENV))?;
        let secret = get(SECRET_ACCESS_KEY_ENV).ok_or_else(|| missing(SECRET_ACCESS_KEY_ENV))?;
        let endpoint_url = normalize_endpoint(&endpoint)
            .map_err(|e| StoreError::Invalid(format!("{ENDPOINT_ENV}: {e}")))?;
        Ok(Some(LakeFsSettings {
            endpoint_url,
            access_key_id,
            secret_access_key: Secret(secret),
        }))
    }
}

/// The server root of `url`: `http(s)://authority[/path]` without a trailing `/` or `/api/v1`.
/// A URL with an `@` is refused without being echoed, since it may carry `user:password@`.
pub(crate) fn normalize_endpoint(url: &str) -> Result<String, StoreError> {
    let trimmed = url.trim();
    // Checked first, so that no other message echoes it: any `@` (not only one in the
    // authority, since a secret may hold a `/`) may be the end of `user:password@`.
    if trimmed.contains('@') {
        return Err(StoreError::Invalid(
            "the lakeFS URL contains an `@`, as credentials in it (user:password@host) would; \
             give them in LAKECTL_CREDENTIALS_ACCESS_KEY_ID and \
             LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY instead"
                .to_owned(),
        ));
    }
    let invalid = |reason: &str| StoreError::Invalid(format!("lakeFS URL {trimmed:?}: {reason}"));
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| invalid("expected an http:// or https:// URL"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(invalid("the URL has no host"));
    }
    if trimmed.contains(['?', '#']) || trimmed.chars().any(char::is_whitespace) {
        return Err(invalid(
            "expected the server's URL, without query, fragment or spaces",
        ));
    }
    let mut root = trimmed.trim_end_matches('/');
    if let Some(stripped) = root.strip_suffix("/api/v1") {
        root = stripped.trim_end_matches('/');
    }
    Ok(root.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |var| vars.get(var).cloned()
    }

    #[test]
    fn endpoints_are_normalised_to_the_server_root() {
        for (given, want) in [
            ("http://host:8000", "http://host:8000"),
            ("http://host:8000/", "http://host:8000"),
            ("http://host:8000/api/v1", "http://host:8000"),
            (" https://lakefs.example/api/v1/ ", "https://lakefs.example"),
            (
                "https://proxy.example/lakefs/api/v1",
                "https://proxy.example/lakefs",
            ),
        ] {
            assert_eq!(normalize_endpoint(given).unwrap(), want, "{given}");
        }
        for bad in [
            "host:8000",
            "ftp://h",
            "http://",
            "http:///api/v1",
            "http://h/?x",
        ] {
            assert!(
                matches!(normalize_endpoint(bad), Err(StoreError::Invalid(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn credentials_in_the_url_are_refused_without_being_echoed() {
        for url in [
            "http://AKIA:sup3rs3cret@host:8000",
            "http://AKIA:sup3r/s3cret@host:8000",
            "htp://AKIA:sup3rs3cret@host:8000",
        ] {
            let e = normalize_endpoint(url).unwrap_err();
            assert!(!e.to_string().contains("s3cret"), "{e}");
            assert!(e.to_string().contains("LAKECTL_CREDENTIALS"), "{e}");
        }
    }

    #[test]
    fn settings_come_from_lakectls_variables() {
        assert_eq!(LakeFsSettings::from_lookup(lookup(&[])).unwrap(), None);
        assert_eq!(
            LakeFsSettings::from_lookup(lookup(&[(ENDPOINT_ENV, "  ")])).unwrap(),
            None
        );
        let settings = LakeFsSettings::from_lookup(lookup(&[
            (ENDPOINT_ENV, "http://127.0.0.1:8000/api/v1"),
            (ACCESS_KEY_ID_ENV, "AKIAIOSFODNN7EXAMPLE"),
            (
                SECRET_ACCESS_KEY_ENV,
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            ),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(settings.endpoint_url, "http://127.0.0.1:8000");
        assert_eq!(settings.access_key_id, "AKIAIOSFODNN7EXAMPLE");
        assert_eq!(
            settings.secret_access_key.expose(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        );
        let debug = format!("{settings:?}");
        assert!(!debug.contains("wJalrXUtnFEMI"), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
    }

    #[test]
    fn a_missing_credential_is_named_and_no_value_is_shown() {
        let e = LakeFsSettings::from_lookup(lookup(&[
            (ENDPOINT_ENV, "http://h:8000"),
            (SECRET_ACCESS_KEY_ENV, "s3cr3t-value"),
        ]))
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(ACCESS_KEY_ID_ENV), "{text}");
        assert!(!text.contains("s3cr3t-value"), "{text}");

        let e = LakeFsSettings::from_lookup(lookup(&[
            (ENDPOINT_ENV, "http://h:8000"),
            (ACCESS_KEY_ID_ENV, "AKIA"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains(SECRET_ACCESS_KEY_ENV), "{e}");

        let e = LakeFsSettings::from_lookup(lookup(&[
            (ENDPOINT_ENV, "h:8000"),
            (ACCESS_KEY_ID_ENV, "AKIA"),
            (SECRET_ACCESS_KEY_ENV, "s3cr3t-value"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains(ENDPOINT_ENV), "{e}");
        assert!(!e.to_string().contains("s3cr3t-value"), "{e}");
    }
}
