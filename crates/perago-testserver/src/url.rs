//! URL parts as both servers read them: percent-decoded path segments and query parameters.

/// The first value of query parameter `name`, form-decoded.
pub(crate) fn query_param(query: &str, name: &str) -> Option<String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .find(|(key, _)| percent_decode(key, true) == name)
        .map(|(_, value)| percent_decode(value, true))
}

/// Percent-decodes `text` (and `+` as space in query strings); invalid
/// escapes stay as they are, invalid UTF-8 is replaced.
pub(crate) fn percent_decode(text: &str, plus_as_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                if let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    out.push((high << 4) | low);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b'+' if plus_as_space => out.push(b' '),
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_queries_and_paths() {
        assert_eq!(
            query_param("a=1&workerid=w%201&b", "workerid").as_deref(),
            Some("w 1")
        );
        assert_eq!(query_param("domain=", "domain").as_deref(), Some(""));
        assert_eq!(query_param("x=1", "y"), None);
        assert_eq!(percent_decode("a+b%2Fc", false), "a+b/c");
        assert_eq!(percent_decode("100%", true), "100%");
        assert_eq!(percent_decode("%zz", true), "%zz");
    }
}
