//! One guardrail of a `pre` or `post` list, checked with the run time's own rules
//! (`perago_workspace::spec`), and the guardrails of one list that no workspace passes together.

use super::written;
use crate::ctxt::Ctxt;
use crate::spec::Guardrail;
use perago_workspace::spec::{check_glob, check_path, compile_glob};
use quote::ToTokens;
use syn::{Expr, ExprCall, Lit, LitStr};

/// Every guardrail of `pre = [...]` / `post = [...]`, in the order messages list them.
pub const GUARDRAILS: &[&str] = &[
    "require_glob",
    "forbid_glob",
    "require_file",
    "max_total_bytes",
    "max_files",
];

/// Every form of a guardrail, for error messages.
const GUARDRAIL_SHAPES: &str = "a guardrail is one of: `require_glob(\"pattern\", min_count = N)` \
    (`min_count` defaults to 1), `forbid_glob(\"pattern\")`, `require_file(\"path\")`, \
    `max_total_bytes(N)`, `max_files(N)`";

/// How a guardrail is written, for error messages.
fn example(name: &str) -> &'static str {
    match name {
        "require_glob" => "`require_glob(\"raw/**/*.parquet\", min_count = 1)`",
        "forbid_glob" => "`forbid_glob(\"**/*.tmp\")`",
        "require_file" => "`require_file(\"manifest.json\")`",
        "max_total_bytes" => "`max_total_bytes(1_000_000_000)` or `max_total_bytes(\"1 GB\")`",
        _ => "`max_files(1000)`",
    }
}

/// Reads one guardrail, recording every problem of it.
pub(super) fn read(cx: &Ctxt, expr: &Expr) -> Option<Guardrail> {
    let (call, name) = call(cx, expr)?;
    let example = example(&name);
    let mut args = call.args.iter();
    let Some(first) = args.next() else {
        let what = match name.as_str() {
            "require_glob" | "forbid_glob" => "a glob pattern",
            "require_file" => "a path",
            "max_total_bytes" => "a size in bytes",
            _ => "a number of files",
        };
        cx.error_spanned_by(call, format!("`{name}` needs {what}: {example}"));
        return None;
    };
    let guardrail = first_arg(cx, &name, first, example);
    let min_count = other_args(cx, &name, args, example);
    match (guardrail?, min_count?) {
        (Guardrail::RequireGlob { pattern, .. }, min_count) => {
            Some(Guardrail::RequireGlob { pattern, min_count })
        }
        (guardrail, _) => Some(guardrail),
    }
}

/// The call of a known guardrail, and its name.
fn call<'a>(cx: &Ctxt, expr: &'a Expr) -> Option<(&'a ExprCall, String)> {
    let known = |p: &syn::ExprPath| {
        p.path
            .get_ident()
            .map(|i| i.to_string())
            .filter(|n| GUARDRAILS.contains(&n.as_str()))
    };
    let call = match expr {
        Expr::Call(call) => call,
        // A guardrail named without its arguments.
        Expr::Path(p) if known(p).is_some() => {
            let name = known(p).unwrap_or_default();
            cx.error_spanned_by(
                expr,
                format!("`{name}` takes arguments: {}", example(&name)),
            );
            return None;
        }
        _ => {
            cx.error_spanned_by(expr, GUARDRAIL_SHAPES);
            return None;
        }
    };
    let name = match &*call.func {
        Expr::Path(p) => known(p),
        _ => None,
    };
    let Some(name) = name else {
        cx.error_spanned_by(
            &call.func,
            format!(
                "unknown guardrail `{}`; {GUARDRAIL_SHAPES}",
                written(&call.func),
            ),
        );
        return None;
    };
    Some((call, name))
}

/// The guardrail from its first argument (`min_count` left at 1).
fn first_arg(cx: &Ctxt, name: &str, first: &Expr, example: &str) -> Option<Guardrail> {
    match name {
        "require_glob" | "forbid_glob" => {
            let lit = string_arg(cx, first, name, "glob pattern", example)?;
            let pattern = checked(cx, lit, check_glob)?;
            Some(if name == "forbid_glob" {
                Guardrail::ForbidGlob { pattern }
            } else {
                Guardrail::RequireGlob {
                    pattern,
                    min_count: 1,
                }
            })
        }
        "require_file" => {
            let lit = string_arg(cx, first, name, "path", example)?;
            let path = checked(cx, lit, check_path)?;
            Some(Guardrail::RequireFile { path })
        }
        "max_total_bytes" => size_arg(cx, first, example).map(Guardrail::MaxTotalBytes),
        _ => count_arg(cx, first, "max_files", example).map(Guardrail::MaxFiles),
    }
}

/// `lit` if it passes the run time's `check`.
fn checked(cx: &Ctxt, lit: LitStr, check: fn(&str) -> Result<(), String>) -> Option<LitStr> {
    match check(&lit.value()) {
        Ok(()) => Some(lit),
        Err(why) => {
            cx.error_spanned_by(&lit, why);
            None
        }
    }
}

/// The arguments after the first: `min_count = N` for `require_glob`, nothing otherwise.
/// The `min_count` (1 unless given), or `None` if an argument was wrong.
fn other_args<'a>(
    cx: &Ctxt,
    name: &str,
    args: impl Iterator<Item = &'a Expr>,
    example: &str,
) -> Option<u64> {
    let is_min_count = |left: &Expr| matches!(left, Expr::Path(p) if p.path.is_ident("min_count"));
    let (mut ok, mut given, mut min_count) = (true, false, 1);
    for arg in args {
        if let Expr::Assign(a) = arg
            && name == "require_glob"
            && is_min_count(&a.left)
        {
            if given {
                cx.error_spanned_by(&a.left, "duplicate option `min_count`");
                ok = false;
            } else {
                given = true;
                match count_arg(cx, &a.right, "min_count", example) {
                    Some(n) => min_count = n,
                    None => ok = false,
                }
            }
            continue;
        }
        let (at, message): (&Expr, String) = match arg {
            Expr::Assign(a) if is_min_count(&a.left) => (
                &*a.left,
                format!(
                    "`min_count` is only for `require_glob`; `{name}` takes one argument: {example}"
                ),
            ),
            Expr::Assign(a) if name == "require_glob" => (
                &*a.left,
                format!(
                    "unknown option `{}` of `require_glob`; expected `min_count`",
                    a.left.to_token_stream()
                ),
            ),
            other => {
                let takes = if name == "require_glob" {
                    "a glob pattern, then optionally `min_count = N`"
                } else {
                    "one argument"
                };
                (
                    other,
                    format!("unexpected argument: `{name}` takes {takes}: {example}"),
                )
            }
        };
        cx.error_spanned_by(at, message);
        ok = false;
    }
    ok.then_some(min_count)
}

/// A string-literal argument of a guardrail.
fn string_arg(cx: &Ctxt, arg: &Expr, name: &str, what: &str, example: &str) -> Option<LitStr> {
    match arg {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        other => {
            cx.error_spanned_by(
                other,
                format!("the {what} of `{name}` is a string literal: {example}"),
            );
            None
        }
    }
}

/// An integer-literal argument ≥ 1: a count, or a size in bytes.
fn count_arg(cx: &Ctxt, arg: &Expr, what: &str, example: &str) -> Option<u64> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Int(i), ..
    }) = arg
    else {
        cx.error_spanned_by(
            arg,
            format!("`{what}` takes an integer literal >= 1: {example}"),
        );
        return None;
    };
    match i.base10_parse::<u64>() {
        Ok(0) => cx.error_spanned_by(i, format!("`{what}` takes an integer >= 1, got 0")),
        Ok(n) => return Some(n),
        Err(_) => cx.error_spanned_by(
            i,
            format!("`{what}` takes an integer >= 1 of at most {}", u64::MAX),
        ),
    }
    None
}

/// The argument of `max_total_bytes`: an integer literal, or a string such as `"500 MB"`.
fn size_arg(cx: &Ctxt, arg: &Expr, example: &str) -> Option<u64> {
    match arg {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => match parse_size(&s.value()) {
            Ok(n) => Some(n),
            Err(why) => {
                cx.error_spanned_by(s, why);
                None
            }
        },
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(_), ..
        }) => count_arg(cx, arg, "max_total_bytes", example),
        other => {
            cx.error_spanned_by(
                other,
                format!(
                    "`max_total_bytes` takes a size: an integer literal (bytes) or a string with \
                     a unit: {example}"
                ),
            );
            None
        }
    }
}

/// The units `max_total_bytes("...")` accepts, and their sizes in bytes (none: bytes).
const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("kB", 1000),
    ("KB", 1000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// `"500 MB"` → 500000000: an integer, optionally a space and a unit of [`SIZE_UNITS`].
fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = text.split_at(digits);
    let unit = unit.strip_prefix(' ').unwrap_or(unit);
    if number.is_empty() {
        return Err(format!(
            "size {text:?} must start with an integer, e.g. \"500 MB\""
        ));
    }
    if unit.starts_with(['.', ',']) {
        return Err(format!(
            "size {text:?} must be a whole number of its unit, e.g. \"1500 MB\" for 1.5 GB"
        ));
    }
    let Some((_, scale)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "size {text:?} has an unknown unit {unit:?}; the units are B, kB, MB, GB, TB \
             (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024)"
        ));
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(*scale))
    {
        Some(0) => Err(format!("size {text:?} must be at least 1 byte")),
        Some(bytes) => Ok(bytes),
        None => Err(format!("size {text:?} is over {} bytes", u64::MAX)),
    }
}

/// Guardrails of one list that no workspace can pass together, or that repeat: each error on
/// the later one.
pub(super) fn check_list(cx: &Ctxt, list: &[(Guardrail, &Expr)], key: &str) {
    for (i, (later, at)) in list.iter().enumerate() {
        for (earlier, _) in &list[..i] {
            if let Some(why) = conflict(earlier, later).or_else(|| conflict(later, earlier)) {
                cx.error_spanned_by(at, format!("in `{key}`, {why}"));
                break;
            }
        }
    }
}

/// Why `a` and `b` cannot both be in one list (checked both ways round).
fn conflict(a: &Guardrail, b: &Guardrail) -> Option<String> {
    use Guardrail::*;
    let glob_matches = |pattern: &LitStr, path: &str| {
        compile_glob(&pattern.value()).is_ok_and(|g| g.is_match(path))
    };
    match (a, b) {
        (RequireGlob { pattern: p, .. }, RequireGlob { pattern: q, .. })
        | (ForbidGlob { pattern: p }, ForbidGlob { pattern: q })
        | (RequireFile { path: p }, RequireFile { path: q })
            if p.value() == q.value() =>
        {
            Some(format!("`{}({:?})` is given twice", b.name(), q.value()))
        }
        (MaxTotalBytes(_), MaxTotalBytes(_)) | (MaxFiles(_), MaxFiles(_)) => {
            Some(format!("`{}` is given twice; keep one limit", b.name()))
        }
        (RequireGlob { pattern: p, .. }, ForbidGlob { pattern: q }) if p.value() == q.value() => {
            Some(format!(
                "`{}` and `{}` contradict each other: no workspace passes both",
                a.source(),
                b.source()
            ))
        }
        (RequireFile { path }, ForbidGlob { pattern }) if glob_matches(pattern, &path.value()) => {
            Some(format!(
                "`{}` forbids the file `{}` requires: no workspace passes both",
                b.source(),
                a.source()
            ))
        }
        (RequireGlob { min_count, .. }, MaxFiles(max)) if min_count > max => Some(format!(
            "`{}` allows fewer files than `{}` requires: no workspace passes both",
            b.source(),
            a.source()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        for (text, bytes) in [
            ("1", 1),
            ("1 B", 1),
            ("500 MB", 500_000_000),
            ("500MB", 500_000_000),
            ("2 kB", 2000),
            ("2 KB", 2000),
            ("3 GB", 3_000_000_000),
            ("1 TB", 1_000_000_000_000),
            ("1 KiB", 1024),
            ("2 MiB", 2 << 20),
            ("1 GiB", 1 << 30),
            ("1 TiB", 1 << 40),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "", "MB", "1.5 GB", "10 mb", "10  MB", " 10 MB", "-1 B", "0", "0 GB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_size("20000000 TiB"),
            Err(format!("size \"20000000 TiB\" is over {} bytes", u64::MAX))
        );
        assert_eq!(
            parse_size("1.5 GB"),
            Err(
                "size \"1.5 GB\" must be a whole number of its unit, e.g. \"1500 MB\" for 1.5 GB"
                    .into()
            )
        );
        assert_eq!(
            parse_size("10 mb"),
            Err(
                "size \"10 mb\" has an unknown unit \"mb\"; the units are B, kB, MB, GB, TB \
                 (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024)"
                    .into()
            )
        );
    }
}
