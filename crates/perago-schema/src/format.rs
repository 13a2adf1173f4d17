//! `format` as an assertion: the formats of JSON Schema 2020-12 that have one reading, checked
//! by their RFCs' grammars (the same in every dialect perago reads: a name means one format). A format name outside this list is an annotation, as the
//! specification says of formats an implementation does not know.

/// A checked format (generated readers name one by its variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Uri,
    UriReference,
    Iri,
    IriReference,
    Uuid,
    Regex,
    JsonPointer,
    RelativeJsonPointer,
}

impl Format {
    /// The format of this name, when perago checks it.
    pub fn named(name: &str) -> Option<Format> {
        Some(match name {
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "time" => Format::Time,
            "duration" => Format::Duration,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "uri" => Format::Uri,
            "uri-reference" => Format::UriReference,
            "iri" => Format::Iri,
            "iri-reference" => Format::IriReference,
            "uuid" => Format::Uuid,
            "regex" => Format::Regex,
            "json-pointer" => Format::JsonPointer,
            "relative-json-pointer" => Format::RelativeJsonPointer,
            _ => return None,
        })
    }

    /// The violation's message.
    pub fn message(self) -> &'static str {
        match self {
            Format::DateTime => "must be a date-time (RFC 3339, e.g. 2026-12-01T21:30:00Z)",
            Format::Date => "must be a date (RFC 3339 full-date, e.g. 2026-12-01)",
            Format::Time => "must be a time (RFC 3339 full-time, e.g. 21:30:00Z)",
            Format::Duration => "must be a duration (ISO 8601, e.g. P1DT2H)",
            Format::Email => "must be an email address",
            Format::Hostname => "must be a hostname",
            Format::Ipv4 => "must be an IPv4 address",
            Format::Ipv6 => "must be an IPv6 address",
            Format::Uri => "must be an absolute URI",
            Format::UriReference => "must be a URI reference",
            Format::Iri => "must be an absolute IRI",
            Format::IriReference => "must be an IRI reference",
            Format::Uuid => "must be a UUID",
            Format::Regex => "must be an ECMA-262 regular expression",
            Format::JsonPointer => "must be a JSON Pointer",
            Format::RelativeJsonPointer => "must be a relative JSON Pointer",
        }
    }

    /// True when `s` is in the format.
    pub fn is_valid(self, s: &str) -> bool {
        match self {
            Format::DateTime => date_time(s),
            Format::Date => date(s.as_bytes()),
            Format::Time => time(s.as_bytes()),
            Format::Duration => duration(s),
            Format::Email => email(s),
            Format::Hostname => hostname(s),
            Format::Ipv4 => ipv4(s),
            Format::Ipv6 => s.parse::<std::net::Ipv6Addr>().is_ok(),
            Format::Uri => uri(s, true, false),
            Format::UriReference => uri(s, false, false),
            Format::Iri => uri(s, true, true),
            Format::IriReference => uri(s, false, true),
            Format::Uuid => uuid(s),
            Format::Regex => !matches!(
                perago_regex::translate(s),
                Err(perago_regex::PatternError::Invalid(_))
            ),
            Format::JsonPointer => json_pointer(s),
            Format::RelativeJsonPointer => relative_json_pointer(s),
        }
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u32, |n, d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

fn date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10]))
    else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)`; a leap second only at 23:59:60 UTC.
fn time(b: &[u8]) -> bool {
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(s)) = (digits(&b[0..2]), digits(&b[3..5]), digits(&b[6..8])) else {
        return false;
    };
    if h > 23 || m > 59 || s > 60 {
        return false;
    }
    let mut rest = &b[8..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    let offset: i32 = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
            let (Some(oh), Some(om)) = (digits(&[*oh1, *oh2]), digits(&[*om1, *om2])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = (oh * 60 + om) as i32;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    if s == 60 {
        let utc = ((h * 60 + m) as i32 - offset).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

fn date_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 11 && matches!(b[10], b'T' | b't') && date(&b[..10]) && time(&b[11..])
}

/// RFC 3339 Appendix A: `P` then a date part (`nY[nM[nD]]`, `nM[nD]`, `nD`) and/or a time
/// part (`T` then `nH[nM[nS]]`, `nM[nS]`, `nS`), or `nW` alone.
fn duration(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('P') else {
        return false;
    };
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    if let Some(n) = date.strip_suffix('W') {
        return time.is_none() && digits(n.as_bytes()).is_some();
    }
    let units = |part: &str, order: &[char]| -> Option<usize> {
        // Elements in order, each used once, consecutive from the first one present.
        let mut rest = part;
        let mut last: Option<usize> = None;
        let mut n = 0;
        while !rest.is_empty() {
            let d = rest.find(|c: char| !c.is_ascii_digit())?;
            if d == 0 {
                return None;
            }
            let unit = rest[d..].chars().next()?;
            let i = order.iter().position(|u| *u == unit)?;
            if let Some(l) = last
                && i != l + 1
            {
                return None;
            }
            last = Some(i);
            n += 1;
            rest = &rest[d + unit.len_utf8()..];
        }
        Some(n)
    };
    let Some(date_n) = units(date, &['Y', 'M', 'D']) else {
        return false;
    };
    match time {
        Some(t) => matches!(units(t, &['H', 'M', 'S']), Some(n) if n > 0),
        None => date_n > 0,
    }
}

/// RFC 1123 host names: labels of letters, digits and hyphens, none starting or ending with a
/// hyphen, at most 63 octets each and 253 in all, no trailing dot (a host, not the root's
/// child). A label with `--` in its 3rd and 4th positions must be an A-label (RFC 5890):
/// `xn--` and Punycode that decodes to a U-label IDNA2008 allows ([`u_label`]).
fn hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
                && (b.len() < 4 || &b[2..4] != b"--" || a_label(label))
        })
}

/// An A-label: `xn--` (any case), then Punycode whose U-label passes UTS #46's validity
/// criteria without mapping (hyphens, joiners, bidi, each code point valid) and IDNA2008's
/// contextual rules ([`u_label`]).
fn a_label(label: &str) -> bool {
    use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};
    if !label
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("xn--"))
    {
        return false;
    }
    let lower = label.to_ascii_lowercase();
    let valid = Uts46::new()
        .to_ascii(
            lower.as_bytes(),
            AsciiDenyList::STD3,
            Hyphens::Check,
            DnsLength::Ignore,
        )
        .is_ok_and(|ascii| ascii == lower);
    valid
        && idna::punycode::decode_to_string(&lower[4..])
            .is_some_and(|u| !u.is_ascii() && u_label(&u))
}

/// IDNA2008's rules for a U-label that UTS #46 does not apply: the code points RFC 5892 §2.6
/// disallows, and the CONTEXTO rules of its Appendix A (A.3–A.9).
fn u_label(label: &str) -> bool {
    let chars: Vec<char> = label.chars().collect();
    let greek = |c: char| matches!(c, '\u{370}'..='\u{3FF}' | '\u{1F00}'..='\u{1FFF}');
    let hebrew = |c: char| matches!(c, '\u{591}'..='\u{5F4}' | '\u{FB1D}'..='\u{FB4F}');
    let japanese = |c: char| {
        c != '\u{30FB}'
            && matches!(c,
                '\u{3041}'..='\u{30FF}' // Hiragana, Katakana
                | '\u{31F0}'..='\u{31FF}' | '\u{FF66}'..='\u{FF9D}'
                | '\u{2E80}'..='\u{2FDF}' | '\u{3005}' | '\u{3007}' | '\u{3021}'..='\u{3029}'
                | '\u{3038}'..='\u{303B}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}'
                | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{3134F}') // Han
    };
    let arabic_indic = chars.iter().any(|c| matches!(c, '\u{660}'..='\u{669}'));
    let extended_arabic_indic = chars.iter().any(|c| matches!(c, '\u{6F0}'..='\u{6F9}'));
    if arabic_indic && extended_arabic_indic {
        return false; // A.8, A.9
    }
    chars.iter().enumerate().all(|(i, c)| {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        match c {
            // RFC 5892 §2.6: DISALLOWED exceptions.
            '\u{640}'
            | '\u{7FA}'
            | '\u{302E}'
            | '\u{302F}'
            | '\u{3031}'..='\u{3035}'
            | '\u{303B}' => false,
            '\u{B7}' => before == Some('l') && after == Some('l'), // A.3
            '\u{375}' => after.is_some_and(greek),                 // A.4
            '\u{5F3}' | '\u{5F4}' => before.is_some_and(hebrew),   // A.5, A.6
            '\u{30FB}' => chars.iter().any(|c| japanese(*c)),      // A.7
            _ => true,
        }
    })
}

fn ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            let b = p.as_bytes();
            !b.is_empty()
                && b.len() <= 3
                && (b.len() == 1 || b[0] != b'0')
                && digits(b).is_some_and(|n| n <= 255)
        })
}

fn email(s: &str) -> bool {
    let Some(at) = s.rfind('@') else {
        return false;
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        let inner = &local[1..local.len() - 1];
        let mut escaped = false;
        inner.chars().all(|c| {
            if escaped {
                escaped = false;
                return c.is_ascii() && c != '\n' && c != '\r';
            }
            if c == '\\' {
                escaped = true;
                return true;
            }
            c.is_ascii() && c != '"' && !c.is_ascii_control()
        }) && !escaped
    } else {
        !local.is_empty()
            && local.len() <= 64
            && local.split('.').all(|atom| {
                !atom.is_empty()
                    && atom
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c))
            })
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
            None => ipv4(literal),
        },
        None => hostname(domain) && !domain.ends_with('.'),
    };
    local_ok && domain_ok
}

fn uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn json_pointer(s: &str) -> bool {
    (s.is_empty() || s.starts_with('/')) && escapes_ok(s)
}

fn escapes_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, c)| *c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
}

fn relative_json_pointer(s: &str) -> bool {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || (n > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = &s[n..];
    rest == "#" || json_pointer(rest)
}

/// RFC 3987's `ucschar`: the characters beyond ASCII an IRI may hold anywhere (spaces such as
/// U+00A0 and U+3000 among them; not the C1 controls, surrogates or noncharacters).
fn ucschar(c: char) -> bool {
    let c = u32::from(c);
    matches!(c, 0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF)
        || ((0x1_0000..=0xE_FFFF).contains(&c)
            && c & 0xFFFF <= 0xFFFD
            && !(0xE_0000..0xE_1000).contains(&c))
}

/// RFC 3987's `iprivate`: private-use characters, allowed in an IRI's query only.
fn iprivate(c: char) -> bool {
    let c = u32::from(c);
    matches!(c, 0xE000..=0xF8FF | 0xF_0000..=0xF_FFFD | 0x10_0000..=0x10_FFFD)
}

/// A URI's parts (RFC 3986 §3).
pub(crate) struct Parts<'a> {
    pub scheme: Option<&'a str>,
    pub authority: Option<&'a str>,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub fragment: Option<&'a str>,
}

pub(crate) fn parts(uri: &str) -> Parts<'_> {
    let (rest, fragment) = match uri.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (uri, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let scheme_end = rest.find(':').filter(|&i| {
        i > 0
            && rest[..i].starts_with(|c: char| c.is_ascii_alphabetic())
            && rest[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let (scheme, rest) = match scheme_end {
        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
        None => (None, rest),
    };
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find('/').unwrap_or(r.len());
            (Some(&r[..end]), &r[end..])
        }
        None => (None, rest),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

/// RFC 3986's `IPvFuture`: `v` (either case, as ABNF literals are), hex digits, `.`, then
/// unreserved, sub-delims or `:`.
fn ipv_future(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['v', 'V']) else {
        return false;
    };
    let Some((version, address)) = rest.split_once('.') else {
        return false;
    };
    !version.is_empty()
        && version.bytes().all(|c| c.is_ascii_hexdigit())
        && !address.is_empty()
        && address
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:".contains(c))
}

/// RFC 3986 (RFC 3987 when `iri`): an absolute URI when `absolute`, else any reference.
fn uri(s: &str, absolute: bool, iri: bool) -> bool {
    // `query`: RFC 3987 allows private-use characters there only.
    let allowed = |c: char, extra: &str, query: bool| {
        c.is_ascii_alphanumeric()
            || "-._~!$&'()*+,;=".contains(c)
            || extra.contains(c)
            || (iri && (ucschar(c) || (query && iprivate(c))))
    };
    // Percent-encodings are %HH; every other character must be allowed where it is.
    let chars_ok = |part: &str, extra: &str, query: bool| {
        let b = part.as_bytes();
        let mut i = 0;
        for (pos, c) in part.char_indices() {
            if pos < i {
                continue;
            }
            if c == '%' {
                if !(b.len() > pos + 2
                    && b[pos + 1].is_ascii_hexdigit()
                    && b[pos + 2].is_ascii_hexdigit())
                {
                    return false;
                }
                i = pos + 3;
            } else if !allowed(c, extra, query) {
                return false;
            }
        }
        true
    };
    let Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    } = parts(s);
    if absolute && scheme.is_none() {
        return false;
    }
    // A relative path's first segment cannot hold a colon.
    if scheme.is_none() && authority.is_none() && !path.starts_with('/') {
        let first = path.split('/').next().unwrap_or("");
        if first.contains(':') {
            return false;
        }
    }
    if let Some(authority) = authority {
        let host_port = authority
            .rsplit_once('@')
            .map_or(authority, |(userinfo, hp)| {
                if chars_ok(userinfo, ":", false) {
                    hp
                } else {
                    "\u{0}"
                }
            });
        let host_ok = if let Some(literal) = host_port.strip_prefix('[') {
            match literal.split_once(']') {
                Some((ip, port)) => {
                    (ip.parse::<std::net::Ipv6Addr>().is_ok() || ipv_future(ip))
                        && (port.is_empty()
                            || port
                                .strip_prefix(':')
                                .is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit())))
                }
                None => false,
            }
        } else {
            let (host, port) = match host_port.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_port, None),
            };
            chars_ok(host, "", false) && port.is_none_or(|p| p.bytes().all(|c| c.is_ascii_digit()))
        };
        if !host_ok {
            return false;
        }
    }
    chars_ok(path, ":@/", false)
        && query.is_none_or(|q| chars_ok(q, ":@/?", true))
        && fragment.is_none_or(|f| chars_ok(f, ":@/?", false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_accept_and_refuse_what_their_rfcs_say() {
        let cases: &[(Format, &str, bool)] = &[
            (Format::DateTime, "1963-06-19T08:30:06.283185Z", true),
            (Format::DateTime, "1998-12-31T23:59:60Z", true),
            (Format::DateTime, "1998-12-31T15:59:60.123-08:00", true),
            (Format::DateTime, "1998-12-31T22:59:60Z", false),
            (Format::DateTime, "1990-02-31T15:59:59.123-08:00", false),
            (Format::DateTime, "2013-350T01:01:01", false),
            (Format::Date, "2020-02-29", true),
            (Format::Date, "2021-02-29", false),
            (Format::Time, "08:30:06Z", true),
            (Format::Time, "08:30:06", false),
            (Format::Duration, "P4DT12H30M5S", true),
            (Format::Duration, "P2W", true),
            (Format::Duration, "PT", false),
            (Format::Duration, "P1D2H", false),
            (Format::Email, "joe.bloggs@example.com", true),
            (Format::Email, "2962", false),
            (Format::Email, "joe..bloggs@example.com", false),
            (Format::Hostname, "www.example.com", true),
            (Format::Hostname, "-a-host-name-that-starts-with--", false),
            (Format::Hostname, "xn--4gbwdl.xn--wgbh1c", true),
            (Format::Hostname, "XN--4gbwdl.xn--wgbh1c", true),
            (Format::Hostname, "xn--ihqwcrb4cv8a8dqg056pqjye", true),
            (Format::Hostname, "example.com.", false),
            (Format::Hostname, "xn--X", false),
            (Format::Hostname, "XN--aa---o47jg78q", false),
            (Format::Hostname, "ab--c", false),
            (Format::Uri, "http://[v1.fe80::a+en1]/", true),
            (Format::Iri, "http://[V1.fe80::a+en1]/", true),
            (Format::Uri, "http://[v.x]/", false),
            (Format::Ipv4, "192.168.0.1", true),
            (Format::Ipv4, "087.10.0.1", false),
            (Format::Ipv6, "::1", true),
            (Format::Ipv6, "12345::", false),
            (Format::Uri, "http://foo.bar/?baz=qux#quux", true),
            (Format::Uri, "//foo.bar/?baz=qux#quux", false),
            (Format::Uri, "http:// shouldfail.com", false),
            (Format::UriReference, "/abc", true),
            (Format::IriReference, "/a\u{3000}b", true),
            (Format::Iri, "http://例え.テスト/\u{a0}", true),
            (Format::Iri, "http://example.com/?q=\u{e000}", true),
            (Format::Iri, "http://example.com/\u{e000}", false),
            (Format::Iri, "http://example.com/\u{85}", false),
            (Format::Iri, "http://example.com/\u{fffe}", false),
            (Format::Iri, "http://example.com/a b", false),
            (Format::UriReference, "\\\\WINDOWS\\fileshare", false),
            (Format::Uuid, "2EB8AA08-AA98-11EA-B4AA-73B441D16380", true),
            (Format::Uuid, "2eb8aa08-aa98-11ea-b4aa-73b441d1638", false),
            (Format::Regex, "([abc])+\\s+$", true),
            (Format::Regex, "^(abc]", false),
            (Format::JsonPointer, "/foo/bar~0/baz~1/%a", true),
            (Format::JsonPointer, "/foo/bar~", false),
            (Format::RelativeJsonPointer, "1#", true),
            (Format::RelativeJsonPointer, "-1/foo", false),
        ];
        for (f, s, want) in cases {
            assert_eq!(f.is_valid(s), *want, "{f:?} {s:?}");
        }
    }

    /// The U-labels of the suite's `idn-hostname` cases as A-labels: `hostname` holds an
    /// A-label to the rules `idn-hostname` holds its U-label to.
    #[test]
    fn hostname_a_labels_are_held_to_idna2008() {
        let cases: &[(&str, bool)] = &[
            ("xn--hello-txk", false),    // Begins with a Spacing Combining Mark
            ("xn--hello-zed", false),    // Begins with a Nonspacing Mark
            ("xn--hello-6bf", false),    // Begins with an Enclosing Mark
            ("xn--zca29lwxobi7a", true), // Exceptions that are PVALID, left-to-right chars
            ("xn--qmbc", true),          // Exceptions that are PVALID, right-to-left chars
            ("xn--chb89f", false),       // Exceptions that are DISALLOWED, right-to-left chars
            ("xn--07jceefgh4c", false),  // Exceptions that are DISALLOWED, left-to-right chars
            ("xn--al-0ea", false),       // MIDDLE DOT with no preceding 'l'
            ("xn--l-fda", false),        // MIDDLE DOT with nothing preceding
            ("xn--la-0ea", false),       // MIDDLE DOT with no following 'l'
            ("xn--l-gda", false),        // MIDDLE DOT with nothing following
            ("xn--ll-0ea", true),        // MIDDLE DOT with surrounding 'l's
            ("xn--S-jib3p", false),      // Greek KERAIA not followed by Greek
            ("xn--wva3j", false),        // Greek KERAIA not followed by anything
            ("xn--wva3je", true),        // Greek KERAIA followed by Greek
            ("xn--A-2hc5h", false),      // Hebrew GERESH not preceded by Hebrew
            ("xn--5db1e", false),        // Hebrew GERESH not preceded by anything
            ("xn--4dbc5h", true),        // Hebrew GERESH preceded by Hebrew
            ("xn--A-2hc8h", false),      // Hebrew GERSHAYIM not preceded by Hebrew
            ("xn--5db3e", false),        // Hebrew GERSHAYIM not preceded by anything
            ("xn--4dbc8h", true),        // Hebrew GERSHAYIM preceded by Hebrew
            ("xn--defabc-k64e", false),  // KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han
            ("xn--vek", false),          // KATAKANA MIDDLE DOT with no other characters
            ("xn--k8j5u", true),         // KATAKANA MIDDLE DOT with Hiragana
            ("xn--bck0j", true),         // KATAKANA MIDDLE DOT with Katakana
            ("xn--vek778f", true),       // KATAKANA MIDDLE DOT with Han
            ("xn--ngb6iyr", false), // Arabic-Indic digits mixed with Extended Arabic-Indic digits
            ("xn--ngba1o", true), // Arabic-Indic digits not mixed with Extended Arabic-Indic digits
            ("xn--0-gyc", true),  // Extended Arabic-Indic digits not mixed with Arabic-Indic digits
            ("xn--11b2er09f", false), // ZERO WIDTH JOINER not preceded by Virama
            ("xn--02b508i", false), // ZERO WIDTH JOINER not preceded by anything
            ("xn--11b2ezcw70k", true), // ZERO WIDTH JOINER preceded by Virama
            ("xn--11b2ezcs70k", true), // ZERO WIDTH NON-JOINER preceded by Virama
            ("xn--ngba5hb2804a", true), // ZERO WIDTH NON-JOINER not preceded by Virama but matches regexp
        ];
        for (label, want) in cases {
            assert_eq!(Format::Hostname.is_valid(label), *want, "{label}");
        }
    }
}
