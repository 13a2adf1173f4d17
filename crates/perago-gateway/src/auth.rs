//! Agents authenticate with a bearer token: `Authorization: Bearer <token>`, the token from
//! [`TOKEN_ENV`]. It is compared in constant time and never shown: not in `Debug`, errors or
//! logs.

use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

/// The environment variable holding the agents' token.
pub const TOKEN_ENV: &str = "PERAGO_GATEWAY_TOKEN";

/// The agents' bearer token. Only its SHA-256 is kept: comparing two digests of fixed length
/// in constant time says nothing about the token's length or where a guess first differs.
#[derive(Clone)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl BearerToken {
    /// The token `secret`; `None` when it is blank.
    pub fn new(secret: &str) -> Option<BearerToken> {
        let secret = secret.trim();
        (!secret.is_empty()).then(|| BearerToken {
            digest: Sha256::digest(secret.as_bytes()).into(),
        })
    }

    /// The token from [`TOKEN_ENV`] through `lookup`: an error saying what to set when it is
    /// unset or blank.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<BearerToken, String> {
        lookup(TOKEN_ENV)
            .as_deref()
            .and_then(BearerToken::new)
            .ok_or_else(|| {
                format!(
                    "{TOKEN_ENV} is not set: agents authenticate with it (`Authorization: Bearer \
                     <token>`); set it to a long random secret, e.g. `export {TOKEN_ENV}=$(openssl \
                     rand -hex 32)`"
                )
            })
    }

    /// Whether an `Authorization` header value carries this token (`Bearer`, any case).
    pub fn accepts(&self, authorization: &[u8]) -> bool {
        let Some(given) = bearer(authorization) else {
            return false;
        };
        let digest: [u8; 32] = Sha256::digest(given).into();
        digest.ct_eq(&self.digest).into()
    }
}

/// The credentials of `Bearer <credentials>`.
fn bearer(authorization: &[u8]) -> Option<&[u8]> {
    let scheme = authorization.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let credentials = authorization[7..].trim_ascii();
    (!credentials.is_empty()).then_some(credentials)
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_passes() {
        let token = BearerToken::new(" s3cret ").unwrap();
        assert!(token.accepts(b"Bearer s3cret"));
        assert!(token.accepts(b"bearer   s3cret "));
        for wrong in [
            &b"Bearer s3cre"[..],
            b"Bearer s3cret2",
            b"Basic s3cret",
            b"Bearer ",
            b"s3cret",
            b"",
        ] {
            assert!(!token.accepts(wrong), "{}", String::from_utf8_lossy(wrong));
        }
        assert!(BearerToken::new("  ").is_none());
        assert!(!format!("{token:?}").contains("s3cret"));
        let missing = BearerToken::from_lookup(|_| None).unwrap_err();
        assert!(
            missing.starts_with("PERAGO_GATEWAY_TOKEN is not set"),
            "{missing}"
        );
    }
}
