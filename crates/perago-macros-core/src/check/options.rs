//! The options of `#[perago::task(...)]`, each read and checked on its own with the TaskDef's
//! rules (`perago_taskdef_rules`); the rules between options are `check`'s.

use super::{known_options, workspace};
use crate::ctxt::Ctxt;
use crate::parse::{Opt, OptValue};
use crate::spec::{Field, FieldValue, WorkspaceOpts};
use perago_taskdef_rules::{self as rules, JAVA_LONG_MAX};
use syn::{Expr, Ident, Lit, LitStr, Type};

/// Every option of `#[perago::task(...)]`, in the order the error message lists them.
pub const TASK_OPTIONS: &[&str] = &[
    "name",
    "description",
    "result",
    "retry_count",
    "retry_logic",
    "retry_delay_seconds",
    "timeout_seconds",
    "response_timeout_seconds",
    "total_timeout_seconds",
    "timeout_policy",
    "concurrent_exec_limit",
    "rate_limit_per_frequency",
    "rate_limit_frequency_in_seconds",
    "poll_timeout_seconds",
    "backoff_scale_factor",
    "owner_email",
    "schema_version",
    "enforce_schema",
    "workspace",
];

/// The options as read; those with a wrong value are left out, their errors recorded.
#[derive(Default)]
pub(super) struct Options {
    pub(super) name: Option<LitStr>,
    /// Whether `name` was written, so a wrong name is not also reported as missing.
    pub(super) name_given: bool,
    pub(super) description: Option<String>,
    pub(super) result: Option<Type>,
    pub(super) fields: Vec<Field>,
    /// The integer options, with their keys for errors of rules between them.
    pub(super) ints: Vec<(&'static str, u64, Ident)>,
    pub(super) workspace: WorkspaceOpts,
}

/// Reads every option, recording each unknown, repeated or wrong one.
pub(super) fn read(cx: &Ctxt, opts: &[Opt]) -> Options {
    let mut options = Options::default();
    for (key, opt) in known_options(cx, opts, TASK_OPTIONS, "") {
        options.read_one(cx, key, opt);
    }
    options
}

impl Options {
    fn read_one(&mut self, cx: &Ctxt, key: &'static str, opt: &Opt) {
        match key {
            "name" => {
                self.name_given = true;
                self.name = name(cx, opt);
            }
            "description" => {
                self.description = opt
                    .lit_str(cx, "\"what the task does\"")
                    .map(|lit| lit.value());
            }
            "owner_email" => {
                if let Some(lit) = owner_email(cx, opt) {
                    self.push(key, FieldValue::Str(lit));
                }
            }
            "result" => self.result = result(cx, opt),
            "retry_logic" => self.enum_field(cx, opt, key, "RetryLogic", rules::RETRY_LOGIC),
            "timeout_policy" => {
                self.enum_field(cx, opt, key, "TimeoutPolicy", rules::TIMEOUT_POLICY);
            }
            "enforce_schema" => match &opt.value {
                OptValue::Expr(Expr::Lit(syn::ExprLit {
                    lit: Lit::Bool(b), ..
                })) => self.push(key, FieldValue::Bool(b.value)),
                _ => cx.error_spanned_by(
                    opt.value_tokens(),
                    "`enforce_schema` takes `true` or `false`",
                ),
            },
            "workspace" => {
                self.workspace.key = Some(opt.key.clone());
                workspace::read(cx, opt, &mut self.workspace);
            }
            int_key => self.int_field(cx, opt, int_key),
        }
    }

    fn push(&mut self, name: &'static str, value: FieldValue) {
        self.fields.push(Field { name, value });
    }

    fn enum_field(
        &mut self,
        cx: &Ctxt,
        opt: &Opt,
        key: &'static str,
        ty: &'static str,
        allowed: &[&'static str],
    ) {
        if let Some(variant) = enum_variant(cx, opt, allowed) {
            self.push(key, FieldValue::Enum { ty, variant });
        }
    }

    /// Every remaining option is an integer of the TaskDef, within Conductor's bounds.
    fn int_field(&mut self, cx: &Ctxt, opt: &Opt, key: &'static str) {
        let Some(bounds) = rules::int_option(key) else {
            cx.error_spanned_by(&opt.key, format!("`{key}` is not an option of a task"));
            return;
        };
        if let Some(n) = opt.lit_int(cx, bounds.min, bounds.max) {
            self.ints.push((key, n, opt.key.clone()));
            let value = FieldValue::Int {
                n,
                wide: bounds.max == JAVA_LONG_MAX,
                optional: key != "schema_version",
            };
            self.push(key, value);
        }
    }
}

/// `name = "..."`, a Conductor task name.
fn name(cx: &Ctxt, opt: &Opt) -> Option<LitStr> {
    let lit = opt.lit_str(cx, "\"validate_song\"")?;
    match rules::task_name(&lit.value()) {
        Ok(()) => Some(lit),
        Err(why) => {
            cx.error_spanned_by(&lit, format!("task name {why}"));
            None
        }
    }
}

/// `owner_email = "..."`, by the rule the TaskDef check applies.
fn owner_email(cx: &Ctxt, opt: &Opt) -> Option<LitStr> {
    let lit = opt.lit_str(cx, "\"team@example.com\"")?;
    match rules::owner_email(&lit.value()) {
        Ok(()) => Some(lit),
        Err(why) => {
            cx.error_spanned_by(&lit, format!("`owner_email`: {why}"));
            None
        }
    }
}

/// `result = Type`.
fn result(cx: &Ctxt, opt: &Opt) -> Option<Type> {
    match &opt.value {
        OptValue::Type(ty) => Some(ty.clone()),
        _ => {
            cx.error_spanned_by(
                &opt.key,
                "`result` takes a type: `result = MyResult`, the schema-backed type a returned \
                 mapping must validate against",
            );
            None
        }
    }
}

/// An enum option written as its Conductor spelling (`FIXED`) or a string (`"FIXED"`): the
/// name of its Rust variant (`EXPONENTIAL_BACKOFF` → `ExponentialBackoff`).
fn enum_variant(cx: &Ctxt, opt: &Opt, allowed: &[&'static str]) -> Option<String> {
    let written = match &opt.value {
        OptValue::Expr(Expr::Path(p)) => p.path.get_ident().map(|i| i.to_string()),
        OptValue::Expr(Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        })) => Some(s.value()),
        _ => None,
    };
    let Some(name) = written.filter(|w| allowed.contains(&w.as_str())) else {
        cx.error_spanned_by(
            opt.value_tokens(),
            format!("`{}` must be one of: {}", opt.key, allowed.join(", ")),
        );
        return None;
    };
    Some(
        name.split('_')
            .map(|word| word[..1].to_owned() + &word[1..].to_ascii_lowercase())
            .collect(),
    )
}
