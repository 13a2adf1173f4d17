//! Schema compatibility: whether every document one JSON Schema accepts, another accepts too.
//!
//! [`compare`] walks schema A and schema B side by side and reports each difference as a
//! [`Change`] at its JSON Pointers: `type_narrowed`, `required_added`, `bound_loosened`, …,
//! each [`Compatible`](Effect::Compatible), [`Breaking`](Effect::Breaking) (with a witness
//! document A accepts and B refuses, checked by perago's interpreter against both) or
//! [`Unproven`](Effect::Unproven) (what the analysis cannot decide, to be treated as breaking).
//! The analysis never calls a breaking change compatible: A is over-approximated and every
//! keyword of B is compared or reported unproven; a change is breaking only with a checked
//! witness.
//!
//! The same question serves two checks:
//! - the seam between two tasks: every value the producer's result schema allows at some path
//!   is accepted by the consumer's params schema at another (A the producer, B the consumer);
//! - a schema's evolution: a task's new params accept every document the old ones did (A old,
//!   B new), and its old result schema accepts every result the new one allows (A new, B old).
//!
//! Schemas are read as JSON Schema 2020-12 writes them: compare the closed form perago
//! publishes (a TaskDef's `inputSchema`/`outputSchema`), in which every object says whether it
//! is open.

mod change;
mod evolution;
mod example;
mod schema;
mod types;
mod walk;

pub use change::{Change, Code, Effect, Step, json_path};
pub use evolution::{Direction, Evolved, evolve, is_compatible};
pub use example::example;
pub use schema::{Loc, Schema};
pub use types::Types;
pub use walk::Labels;

use example::example_at;

/// Every change between A at `a_at` and B at `b_at` that bears on "B accepts every document A
/// accepts", in walk order. Witnesses are documents at `a_at`, checked against both places.
pub fn compare(a: &Schema, a_at: &Loc, b: &Schema, b_at: &Loc, labels: &Labels) -> Vec<Change> {
    let mut walk = walk::Walk::new(a, b, labels);
    walk.node(a_at, Types::ALL, b_at, &[]);
    let mut changes = walk.changes;
    for change in &mut changes {
        let Some(local) = change.witness.take() else {
            continue;
        };
        // The witness was checked where the change is; checked again as a whole document.
        let whole = example_at(
            a,
            a_at,
            Types::ALL,
            &change.path[..change.witness_at],
            Some(&local),
        );
        change.witness =
            whole.filter(|w| a.accepts(a_at, w) == Some(true) && b.accepts(b_at, w) == Some(false));
        if change.witness.is_none() && change.effect == Effect::Breaking {
            change.effect = Effect::Unproven;
        }
    }
    changes
}

/// Whether the changes keep "B accepts every document A accepts".
pub fn compatible(changes: &[Change]) -> bool {
    changes.iter().all(|c| !c.effect.breaks())
}

#[cfg(test)]
mod tests;
