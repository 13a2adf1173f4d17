//! `tasks [--format text|json]`.

use super::{CommandError, output_error};
use perago::task::{Registry, TaskKind};
use serde_json::json;
use std::io::Write;

/// The arguments of `tasks`.
#[derive(Debug, clap::Args)]
pub struct TasksArgs {
    /// `text`: aligned columns; `json`: one array.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// A JSON array.
    Json,
}

fn kind(kind: &TaskKind) -> String {
    match kind {
        TaskKind::WorkspaceFree => "workspace-free".to_owned(),
        TaskKind::Workspace(spec) => format!("workspace ({})", spec.access.as_str()),
    }
}

/// Lists the tasks.
pub fn run(registry: &Registry, args: &TasksArgs, out: &mut dyn Write) -> Result<u8, CommandError> {
    let text = match args.format {
        Format::Json => {
            let tasks: Vec<_> = registry
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "kind": t.kind.as_str(),
                        "access": t.workspace().map(|w| w.access.as_str()),
                        "params": {"type": t.params.name, "location": t.params.location},
                        "result": {"type": t.result.name, "location": t.result.location},
                        "description": t.options.description,
                    })
                })
                .collect();
            serde_json::to_string_pretty(&tasks).map_err(|e| e.to_string())? + "\n"
        }
        Format::Text => {
            let mut rows = vec![[
                "NAME".to_owned(),
                "KIND".to_owned(),
                "PARAMS".to_owned(),
                "RESULT".to_owned(),
            ]];
            for t in registry {
                rows.push([
                    t.name.to_owned(),
                    kind(&t.kind),
                    t.params.name.to_owned(),
                    t.result.name.to_owned(),
                ]);
            }
            let mut widths = [0; 4];
            for row in &rows {
                for (w, cell) in widths.iter_mut().zip(row) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            let mut text = String::new();
            for row in &rows {
                let line = format!(
                    "{:w0$}  {:w1$}  {:w2$}  {}",
                    row[0],
                    row[1],
                    row[2],
                    row[3],
                    w0 = widths[0],
                    w1 = widths[1],
                    w2 = widths[2]
                );
                text.push_str(line.trim_end());
                text.push('\n');
            }
            text
        }
    };
    out.write_all(text.as_bytes()).map_err(output_error)?;
    Ok(super::EXIT_OK)
}
