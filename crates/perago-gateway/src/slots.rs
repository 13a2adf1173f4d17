//! The slots of each task type: the claims held (the ledger's `claimed` tasks, counted at
//! start) plus the polls in flight for new claims. A slot is taken before a claim polls
//! Conductor, so a type never has more tasks handed out than it has slots; it is kept when
//! the claim is recorded, and given back when the claim ends (after the transaction that ended
//! it committed) or when the poll brought nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Held and limit per task type.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    types: Mutex<BTreeMap<String, (usize, usize)>>,
}

impl Slots {
    /// `limits` per type, `held` of them already taken by claims in the ledger.
    pub(crate) fn new(
        limits: impl IntoIterator<Item = (String, usize)>,
        held: &BTreeMap<String, usize>,
    ) -> Slots {
        let types = limits
            .into_iter()
            .map(|(name, limit)| {
                let taken = held.get(&name).copied().unwrap_or(0);
                (name, (taken, limit))
            })
            .collect();
        Slots {
            types: Mutex::new(types),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, (usize, usize)>) -> T) -> T {
        f(&mut self.types.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Takes a slot of `task_type`; `None` when all are held. The slot goes back when the
    /// guard drops, unless it is [kept](SlotGuard::keep).
    pub(crate) fn take(self: &Arc<Self>, task_type: &str) -> Option<SlotGuard> {
        self.with(|types| {
            let (held, limit) = types.get_mut(task_type)?;
            if *held >= *limit {
                return None;
            }
            *held += 1;
            Some(SlotGuard {
                slots: Arc::clone(self),
                task_type: task_type.to_owned(),
                kept: false,
            })
        })
    }

    /// The slots held per type.
    pub(crate) fn in_use(&self) -> Vec<(String, usize)> {
        self.with(|types| {
            types
                .iter()
                .map(|(name, (held, _))| (name.clone(), *held))
                .collect()
        })
    }

    /// Gives back a slot of `task_type` (a claim ended).
    pub(crate) fn release(&self, task_type: &str) {
        self.with(|types| {
            if let Some((held, _)) = types.get_mut(task_type) {
                *held = held.saturating_sub(1);
            }
        });
    }
}

/// A slot taken for a claim in the making.
#[derive(Debug)]
pub(crate) struct SlotGuard {
    slots: Arc<Slots>,
    task_type: String,
    kept: bool,
}

impl SlotGuard {
    /// The claim was recorded: the slot stays held until the claim ends.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if !self.kept {
            self.slots.release(&self.task_type);
        }
    }
}
