//! Python's `str.strip()` whitespace, which decides both "blank" and the prose sniff. Rust's
//! `char::is_whitespace` lacks U+001C–U+001F (Python counts them as separators), so the set is
//! spelled out rather than borrowed.

/// True for the characters Python's `str.strip()` removes (`docs/src/reference/completion-contract.md` §1).
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `text.strip()` in Python.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_whitespace)
}

/// True when nothing is left after [`strip`]: the contract's "blank".
pub fn is_blank(text: &str) -> bool {
    text.chars().all(is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §1, as ranges.
    const SPEC: &[(u32, u32)] = &[
        (0x09, 0x0d),
        (0x1c, 0x1f),
        (0x20, 0x20),
        (0x85, 0x85),
        (0xa0, 0xa0),
        (0x1680, 0x1680),
        (0x2000, 0x200a),
        (0x2028, 0x2029),
        (0x202f, 0x202f),
        (0x205f, 0x205f),
        (0x3000, 0x3000),
    ];

    #[test]
    fn exactly_the_python_set() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let listed = SPEC.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)));
            assert_eq!(is_whitespace(c), listed, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn is_rusts_set_plus_the_information_separators() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let separator = ('\u{1c}'..='\u{1f}').contains(&c);
            assert_eq!(is_whitespace(c), c.is_whitespace() || separator);
        }
    }

    #[test]
    fn strips_and_detects_blank_text() {
        assert_eq!(strip("\u{1c}\u{3000} {x} \u{85}"), "{x}");
        assert!(is_blank(""));
        assert!(is_blank("\u{1c}\u{1d}\u{1e}\u{1f}"));
        assert!(is_blank("\u{3000}\u{2028}\t\n"));
        assert!(!is_blank("\u{200b}"), "zero-width space is not whitespace");
        assert!(!is_blank(" . "));
    }
}
