//! Pagination (`docs/src/reference/lakefs.md` §1.5) with `prefix`, `delimiter` and `after`, shared by
//! the object, branch and diff listings.

use serde_json::{Value, json};

/// `Pagination.max_per_page`: always 1000 (`DefaultMaxPerPage`).
pub(crate) const MAX_PER_PAGE: usize = 1000;

/// One row of a page: an item, or a common prefix standing for a group.
#[derive(Debug)]
pub(crate) enum Row<'a, T> {
    Item(&'a str, T),
    Prefix(String),
}

impl<T> Row<'_, T> {
    pub(crate) fn key(&self) -> &str {
        match self {
            Row::Item(key, _) => key,
            Row::Prefix(prefix) => prefix,
        }
    }
}

/// How to cut a listing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Paging {
    pub(crate) prefix: String,
    pub(crate) delimiter: String,
    pub(crate) after: String,
    /// Already defaulted (absent, 0 or −1 → 100) and bounded (≤ 1000).
    pub(crate) amount: usize,
}

/// A page and whether another exists.
#[derive(Debug)]
pub(crate) struct Page<'a, T> {
    pub(crate) rows: Vec<Row<'a, T>>,
    pub(crate) has_more: bool,
}

impl<T> Page<'_, T> {
    /// The `pagination` object: `next_offset` is the last row's key when
    /// another page exists, else `""`.
    pub(crate) fn pagination(&self) -> Value {
        let next_offset = match (self.has_more, self.rows.last()) {
            (true, Some(row)) => row.key(),
            _ => "",
        };
        pagination(self.has_more, next_offset, self.rows.len())
    }
}

/// A `Pagination` object.
pub(crate) fn pagination(has_more: bool, next_offset: &str, results: usize) -> Value {
    json!({
        "has_more": has_more,
        "max_per_page": MAX_PER_PAGE,
        "next_offset": next_offset,
        "results": results,
    })
}

/// Where a sorted listing should start for `paging`: at the prefix, or just
/// after `after` when that is later.
pub(crate) fn start(paging: &Paging) -> std::ops::Bound<&str> {
    if paging.after.as_str() >= paging.prefix.as_str() {
        std::ops::Bound::Excluded(paging.after.as_str())
    } else {
        std::ops::Bound::Included(paging.prefix.as_str())
    }
}

/// Cuts one page out of `items` (sorted by key, byte order): keys with the
/// prefix, grouped by the delimiter, strictly after `after` (a group whose
/// prefix is `after` or before is skipped whole), `amount` rows plus a look
/// at one more for `has_more`.
pub(crate) fn paginate<'a, T>(
    items: impl Iterator<Item = (&'a str, T)>,
    paging: &Paging,
) -> Page<'a, T> {
    let mut rows: Vec<Row<'a, T>> = Vec::new();
    let mut has_more = false;
    for (key, item) in items {
        if key <= paging.after.as_str() {
            continue;
        }
        let Some(rest) = key.strip_prefix(paging.prefix.as_str()) else {
            if key > paging.prefix.as_str() {
                break;
            }
            continue;
        };
        let row = match rest.find(paging.delimiter.as_str()) {
            Some(at) if !paging.delimiter.is_empty() => {
                let end = paging.prefix.len() + at + paging.delimiter.len();
                let group = &key[..end];
                if group <= paging.after.as_str()
                    || rows.last().is_some_and(|last| last.key() == group)
                {
                    continue;
                }
                Row::Prefix(group.to_owned())
            }
            _ => Row::Item(key, item),
        };
        if rows.len() == paging.amount {
            has_more = true;
            break;
        }
        rows.push(row);
    }
    Page { rows, has_more }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(page: &Page<'_, ()>) -> Vec<String> {
        page.rows.iter().map(|r| r.key().to_owned()).collect()
    }

    #[test]
    fn groups_skip_and_count() {
        let all = ["a", "b/1", "b/2", "b0", "c/x/1", "d"];
        let items = || all.iter().map(|k| (*k, ()));
        let paging = |delimiter: &str, after: &str, amount| Paging {
            prefix: String::new(),
            delimiter: delimiter.into(),
            after: after.into(),
            amount,
        };
        let page = paginate(items(), &paging("/", "", 3));
        assert_eq!(keys(&page), ["a", "b/", "b0"]);
        assert!(page.has_more);
        assert_eq!(page.pagination()["next_offset"], "b0");
        let page = paginate(items(), &paging("/", "b/", 10));
        assert_eq!(keys(&page), ["b0", "c/", "d"]);
        assert!(!page.has_more);
        assert_eq!(page.pagination()["next_offset"], "");
        let mut with_prefix = paging("/", "", 10);
        with_prefix.prefix = "c/".into();
        assert_eq!(keys(&paginate(items(), &with_prefix)), ["c/x/"]);
        assert_eq!(
            keys(&paginate(items(), &paging("", "b/1", 2))),
            ["b/2", "b0"]
        );
    }
}
