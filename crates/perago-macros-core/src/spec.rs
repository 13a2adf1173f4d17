//! A checked `#[perago::task]`: what `check` builds and `expand` turns into tokens.

use syn::{Ident, LitStr, Type};

/// A task whose signature and options passed every check.
pub(crate) struct TaskSpec {
    pub(crate) name: LitStr,
    pub(crate) kind: Kind,
    pub(crate) params: Type,
    /// The schema-backed type the result is validated against: the return type, or the
    /// `result = Type` option of a task returning a mapping.
    pub(crate) result: Type,
    pub(crate) returns: Returns,
    /// The `description` option, else the handler's doc comment.
    pub(crate) description: Option<String>,
    /// Every other option, in the order written.
    pub(crate) fields: Vec<Field>,
    pub(crate) workspace: WorkspaceOpts,
}

/// The task kind as the signature gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    WorkspaceFree,
    /// `mutable`: the handler takes `&mut Workspace`.
    Workspace {
        mutable: bool,
    },
}

/// What the handler returns inside `Result<_, TaskError>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returns {
    /// The result type itself.
    Typed,
    /// A JSON mapping, validated against the result type.
    Mapping,
}

/// One field of `perago::task::TaskOptions`, set by the option of the same name.
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) value: FieldValue,
}

pub(crate) enum FieldValue {
    /// `Some("...")`
    Str(LitStr),
    /// `Some(Type::Variant)`, a variant of an enum of `perago::task`.
    Enum {
        ty: &'static str,
        variant: String,
    },
    Bool(bool),
    /// A `u32`, or a `u64` where Conductor's bound is Java's `long`; `Some(n)` unless the
    /// field is not optional.
    Int {
        n: u64,
        wide: bool,
        optional: bool,
    },
}

/// The `workspace(...)` group.
#[derive(Default)]
pub(crate) struct WorkspaceOpts {
    pub(crate) prefix: Option<LitStr>,
    pub(crate) access: Option<Access>,
    pub(crate) pre: Vec<Guardrail>,
    pub(crate) post: Vec<Guardrail>,
    pub(crate) publish_budget: Option<PublishBudget>,
    /// The `workspace` key, for errors on a workspace-free task.
    pub(crate) key: Option<Ident>,
}

/// `access = read_only` or `access = read_write`.
pub(crate) struct Access {
    pub(crate) read_write: bool,
    /// As written, for errors.
    pub(crate) ident: Ident,
}

/// `publish_budget(max_files = N, max_bytes = N)`.
pub(crate) struct PublishBudget {
    /// The `publish_budget` key, for errors on a read-only task.
    pub(crate) key: Ident,
    pub(crate) max_files: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
}

/// One guardrail of a `pre` or `post` list (see `perago_workspace::Guardrail`).
pub(crate) enum Guardrail {
    RequireGlob { pattern: LitStr, min_count: u64 },
    ForbidGlob { pattern: LitStr },
    RequireFile { path: LitStr },
    MaxTotalBytes(u64),
    MaxFiles(u64),
}

impl Guardrail {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Guardrail::RequireGlob { .. } => "require_glob",
            Guardrail::ForbidGlob { .. } => "forbid_glob",
            Guardrail::RequireFile { .. } => "require_file",
            Guardrail::MaxTotalBytes(_) => "max_total_bytes",
            Guardrail::MaxFiles(_) => "max_files",
        }
    }

    /// As written in the attribute (sizes in bytes), for messages.
    pub(crate) fn source(&self) -> String {
        let name = self.name();
        match self {
            Guardrail::RequireGlob {
                pattern,
                min_count: 1,
            } => format!("{name}({:?})", pattern.value()),
            Guardrail::RequireGlob { pattern, min_count } => {
                format!("{name}({:?}, min_count = {min_count})", pattern.value())
            }
            Guardrail::ForbidGlob { pattern: text } | Guardrail::RequireFile { path: text } => {
                format!("{name}({:?})", text.value())
            }
            Guardrail::MaxTotalBytes(n) | Guardrail::MaxFiles(n) => format!("{name}({n})"),
        }
    }
}
