//! A schema's evolution, old to new, in the terms schema registries use: a task's params are
//! read like a request (callers written for the old schema send to the new one: the new must
//! accept all the old did, Confluent's BACKWARD), its result like a response (consumers
//! written for the old schema read what the new one allows: the old must accept all the new
//! does, FORWARD); both is FULL.

use crate::change::{Change, Code, Effect, Step};
use crate::schema::{Loc, Schema};
use crate::walk::Labels;
use serde_json::Value;

/// Which way documents flow through the changed schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A task's params: the new schema must accept every document the old one did.
    Input,
    /// A task's result: the old schema must accept every document the new one allows.
    Output,
    /// Both.
    Both,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
            Direction::Both => "both",
        }
    }
}

/// One change from the old schema to the new, named as it reads old to new.
#[derive(Debug, Clone, PartialEq)]
pub struct Evolved {
    /// Where it is in the new schema (in the old one when the new has no such place).
    pub pointer: String,
    pub code: Code,
    pub effect: Effect,
    /// The direction whose check found it.
    pub direction: Direction,
    /// Where in documents it bears.
    pub path: Vec<Step>,
    pub message: String,
    /// A document one side accepts and the other refuses, checked by the interpreter against
    /// both: for params, one the old accepts and the new refuses; for a result, one the new
    /// allows and the old refuses.
    pub witness: Option<Value>,
}

impl Evolved {
    /// The code as reports write it: `pattern_changed`, or `pattern_changed_unproven` for what
    /// the analysis could not prove either way (treated as breaking).
    pub fn code_text(&self) -> String {
        match self.effect {
            Effect::Unproven => format!("{}_unproven", self.code),
            _ => self.code.to_string(),
        }
    }
}

/// The changes from `old` to `new` (both at their roots) that bear on `direction`: every change
/// the comparison finds, breaking or not, in walk order (input's, then output's for both).
pub fn evolve(old: &Schema, new: &Schema, direction: Direction) -> Vec<Evolved> {
    let labels = Labels {
        a: "OLD".into(),
        b: "NEW".into(),
    };
    let reversed = Labels {
        a: "NEW".into(),
        b: "OLD".into(),
    };
    let root = Loc::root();
    let mut out: Vec<Evolved> = Vec::new();
    if direction != Direction::Output {
        let changes = crate::compare(old, &root, new, &root, &labels);
        out.extend(changes.into_iter().map(|c| evolved(c, Direction::Input)));
    }
    if direction != Direction::Input {
        let changes = crate::compare(new, &root, old, &root, &reversed);
        for change in changes {
            let e = evolved(change, Direction::Output);
            // Seen both ways, a change is reported once, as the worse of the two.
            match out
                .iter_mut()
                .find(|o| o.pointer == e.pointer && o.code == e.code && o.path == e.path)
            {
                Some(o) if e.effect > o.effect => *o = e,
                Some(_) => {}
                None => out.push(e),
            }
        }
    }
    out
}

fn evolved(change: Change, direction: Direction) -> Evolved {
    let (old, new, code) = match direction {
        Direction::Output => (change.b_pointer, change.a_pointer, change.code.reversed()),
        _ => (change.a_pointer, change.b_pointer, change.code),
    };
    // A removed branch has no place in the new schema: the old one's says which it was.
    let pointer = if code == Code::BranchRemoved {
        old
    } else {
        new
    };
    Evolved {
        pointer,
        code,
        effect: change.effect,
        direction,
        path: change.path,
        message: change.message,
        witness: change.witness,
    }
}

/// Whether the evolution keeps every document flowing as it did.
pub fn is_compatible(changes: &[Evolved]) -> bool {
    changes.iter().all(|c| !c.effect.breaks())
}
