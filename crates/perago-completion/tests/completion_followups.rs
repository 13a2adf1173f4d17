//! `docs/src/reference/completion-contract.md` §8: follow-ups derived from a `scope_exceeded` refusal.

use perago_completion::{
    FOLLOWUP_ORIGIN, FollowUpSpec, Outcome, Refusal, classify_text, derive_followups, followup_id,
    followup_title,
};

fn split(items: &[&str]) -> Refusal {
    Refusal::ScopeExceeded {
        detail: "Too big for one task.".into(),
        proposed_split: items.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn ids(specs: &[FollowUpSpec]) -> Vec<&str> {
    specs.iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn the_check_value() {
    let specs = derive_followups("T-1", &split(&["part one", "part two"]));
    assert_eq!(ids(&specs), ["fu-90df2783d9e0", "fu-2970de185e27"]);
    assert_eq!(followup_id("T-1", 0, "part one"), "fu-90df2783d9e0");
}

#[test]
fn every_field_of_a_spec() {
    let specs = derive_followups("T-1", &split(&["part one", "part two"]));
    assert_eq!(
        specs[1],
        FollowUpSpec {
            id: "fu-2970de185e27".into(),
            parent_task_id: "T-1".into(),
            split_index: 1,
            title: "part two".into(),
            description: "part two\n\nSplit 2 of 2 from task T-1 after a scope_exceeded refusal: Too big for one task.".into(),
            origin: FOLLOWUP_ORIGIN.into(),
            contract_version: "worker-completion/v1".into(),
        }
    );
    assert_eq!(FOLLOWUP_ORIGIN, "scope_exceeded_split");
    let json = serde_json::to_value(&specs[0]).expect("serialises");
    let keys: Vec<&String> = json.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "parent_task_id",
            "split_index",
            "title",
            "description",
            "origin",
            "contract_version"
        ]
    );
    let back: FollowUpSpec = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, specs[0]);
}

#[test]
fn derivation_is_pure_and_follows_the_split() {
    let refusal = split(&["c", "a", "b"]);
    let first = derive_followups("T-42", &refusal);
    let again = derive_followups("T-42", &refusal);
    assert_eq!(first, again, "re-deriving gives the same specs");
    let titles: Vec<&str> = first.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["c", "a", "b"]);
    let indices: Vec<usize> = first.iter().map(|s| s.split_index).collect();
    assert_eq!(indices, [0, 1, 2]);
    // The parent is part of the seed.
    assert_ne!(ids(&derive_followups("T-43", &refusal)), ids(&first));
}

#[test]
fn duplicate_items_get_distinct_ids() {
    let specs = derive_followups("T-1", &split(&["same", "same", "same"]));
    let mut unique = ids(&specs);
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 3);
}

#[test]
fn items_are_not_trimmed_in_the_seed() {
    assert_ne!(followup_id("T-1", 0, "a"), followup_id("T-1", 0, " a"));
    assert_ne!(followup_id("T-1", 0, "a"), followup_id("T-1", 1, "a"));
}

#[test]
fn ids_are_fu_and_12_lowercase_hex_digits() {
    for item in ["x", "é", "😀 emoji", ""] {
        let id = followup_id("parent", 7, item);
        let hex = id.strip_prefix("fu-").expect("fu- prefix");
        assert_eq!(hex.len(), 12);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
}

#[test]
fn the_title_rule() {
    for unit in ["a", "é", "語", "😀"] {
        let exactly_80 = unit.repeat(80);
        assert_eq!(
            followup_title(&exactly_80),
            exactly_80,
            "80 code points stay"
        );
        let title = followup_title(&unit.repeat(81));
        assert_eq!(title, format!("{}...", unit.repeat(77)), "81 are cut");
        assert_eq!(title.chars().count(), 80);
    }
    assert_eq!(followup_title("short"), "short");
    assert_eq!(followup_title(""), "");
    // The description keeps the whole item.
    let long = "x".repeat(200);
    let specs = derive_followups("T-1", &split(&[&long]));
    assert!(specs[0].description.starts_with(&long));
    assert_eq!(specs[0].title.chars().count(), 80);
}

#[test]
fn other_kinds_derive_nothing() {
    for text in [
        r#"{"kind": "awaiting_operator", "detail": "d", "question": "q"}"#,
        r#"{"kind": "underspecified", "detail": "d", "question": "q"}"#,
        r#"{"kind": "blocked_on_dependency", "detail": "d", "blocking_dep": "T-2"}"#,
    ] {
        let Outcome::Refusal(refusal) = classify_text(text) else {
            panic!("a refusal: {text}");
        };
        assert!(derive_followups("T-1", &refusal).is_empty(), "{text}");
    }
}

#[test]
fn from_the_seed_refusal() {
    let text = r#"{"contract": "worker-completion/v1", "kind": "scope_exceeded", "detail": "Task spans three subsystems; splitting.", "proposed_split": ["Migrate the auth module", "Migrate the billing module"]}"#;
    let Outcome::Refusal(refusal) = classify_text(text) else {
        panic!("a refusal");
    };
    let specs = derive_followups("task-9f3a", &refusal);
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].title, "Migrate the auth module");
    assert_eq!(
        specs[0].id,
        followup_id("task-9f3a", 0, "Migrate the auth module")
    );
}
