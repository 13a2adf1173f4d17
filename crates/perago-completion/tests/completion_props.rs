//! Properties of worker-completion/v1: canonical forms round-trip, classification never
//! panics, and the primary violation is always the one the reference implementation reports.

use perago_completion::{
    Completion, Outcome, Payload, Refusal, Verification, classify_payload, classify_text, validate,
    validate_text, whitespace,
};
use perago_schema::Path;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value};

const KEYS: &[&str] = &[
    "contract",
    "kind",
    "summary",
    "detail",
    "files_changed",
    "verification",
    "receipt_ref",
    "question",
    "proposed_split",
    "blocking_dep",
    "command",
    "exit_code",
    "extra",
    "odd key",
];

const KINDS: &[&str] = &[
    "awaiting_operator",
    "scope_exceeded",
    "underspecified",
    "blocked_on_dependency",
];

// ---------------------------------------------------------------------------------------------
// Strategies

/// Text that is never blank: at least one character outside Python's whitespace set.
fn non_blank() -> impl Strategy<Value = String> {
    (
        "[ \t\u{1c}\u{3000}]{0,2}",
        "[^\t-\r\u{1c}-\u{20}\u{85}\u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}]",
        "\\PC{0,20}",
    )
        .prop_map(|(a, b, c)| format!("{a}{b}{c}"))
}

/// Non-blank text within the 2000 code point cap.
fn capped() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => non_blank(),
        1 => (non_blank(), 0usize..=1990).prop_map(|(s, n)| {
            let mut s: String = s.chars().take(10).collect();
            s.extend(std::iter::repeat_n('é', n));
            s
        }),
    ]
}

fn completion() -> impl Strategy<Value = Completion> {
    (
        capped(),
        prop::collection::vec(non_blank(), 0..4),
        prop::option::of((non_blank(), any::<i64>())),
        prop::option::of(non_blank()),
    )
        .prop_map(
            |(summary, files_changed, verification, receipt_ref)| Completion {
                summary,
                files_changed,
                verification: verification
                    .map(|(command, exit_code)| Verification { command, exit_code }),
                receipt_ref,
            },
        )
}

fn refusal() -> impl Strategy<Value = Refusal> {
    prop_oneof![
        (capped(), non_blank())
            .prop_map(|(detail, question)| Refusal::AwaitingOperator { detail, question }),
        (capped(), prop::collection::vec(non_blank(), 1..5)).prop_map(
            |(detail, proposed_split)| Refusal::ScopeExceeded {
                detail,
                proposed_split
            }
        ),
        (capped(), non_blank())
            .prop_map(|(detail, question)| Refusal::Underspecified { detail, question }),
        (capped(), non_blank()).prop_map(|(detail, blocking_dep)| {
            Refusal::BlockedOnDependency {
                detail,
                blocking_dep,
            }
        }),
    ]
}

fn payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        completion().prop_map(Payload::Completion),
        refusal().prop_map(Payload::Refusal),
    ]
}

/// Any JSON value, keys biased towards the contract's.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        "\\PC{0,12}".prop_map(Value::String),
        "[ \u{1c}\u{3000}]{0,3}".prop_map(Value::String),
    ];
    let key = prop_oneof![select(KEYS).prop_map(str::to_owned), "\\PC{0,6}"];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Mostly valid, sometimes wrong, values for each of the contract's fields.
fn field_value(key: &str) -> BoxedStrategy<Value> {
    let text = || {
        prop_oneof![
            6 => Just(Value::from("s")),
            1 => Just(Value::from("")),
            1 => Just(Value::from(" \u{1c}\u{3000}")),
            1 => Just(Value::Null),
            1 => Just(Value::from(1)),
        ]
    };
    let list = || {
        let item = prop_oneof![
            6 => Just(Value::from("a")),
            1 => Just(Value::from("")),
            1 => Just(Value::from("\u{1f}")),
            1 => Just(Value::from(2)),
        ];
        prop_oneof![
            6 => prop::collection::vec(item, 0..4).prop_map(Value::Array),
            1 => Just(Value::Null),
            1 => Just(Value::from("a")),
            1 => Just(Value::Object(Map::new())),
        ]
    };
    match key {
        "contract" => prop_oneof![
            12 => Just(Value::from("worker-completion/v1")),
            1 => Just(Value::from("worker-completion/v2")),
            1 => Just(Value::Null),
            1 => Just(Value::from(1)),
        ]
        .boxed(),
        "kind" => prop_oneof![
            8 => select(KINDS).prop_map(Value::from),
            1 => Just(Value::from("nope")),
            1 => Just(Value::Null),
            1 => Just(Value::from(1)),
        ]
        .boxed(),
        "summary" | "detail" => prop_oneof![
            8 => text(),
            1 => Just(Value::from("é".repeat(2000))),
            1 => Just(Value::from("é".repeat(2001))),
            1 => Just(Value::from(" ".repeat(2001))),
        ]
        .boxed(),
        "files_changed" | "proposed_split" => list().boxed(),
        "verification" => {
            let exit_code = prop_oneof![
                6 => Just(Value::from(0)),
                1 => Just(Value::from(-1)),
                1 => Just(Value::from(0.0)),
                1 => Just(Value::from(1.5)),
                1 => Just(Value::Bool(true)),
                1 => Just(Value::from("0")),
                1 => Just(Value::from(u64::MAX)),
            ];
            let entries = (
                prop::option::weighted(0.9, text()),
                prop::option::weighted(0.9, exit_code),
                prop::option::weighted(0.1, Just(Value::from("/"))),
                Just(vec!["command", "exit_code", "cwd"]).prop_shuffle(),
            )
                .prop_map(|(command, exit_code, cwd, order)| {
                    let mut map = Map::new();
                    for key in order {
                        let value = match key {
                            "command" => command.clone(),
                            "exit_code" => exit_code.clone(),
                            _ => cwd.clone(),
                        };
                        if let Some(value) = value {
                            map.insert(key.to_owned(), value);
                        }
                    }
                    Value::Object(map)
                });
            prop_oneof![
                6 => entries,
                1 => Just(Value::Null),
                1 => Just(Value::from("pytest")),
            ]
            .boxed()
        }
        _ => text().boxed(),
    }
}

/// The fields of each shape.
const FIELDS: &[&str] = &[
    "contract",
    "kind",
    "summary",
    "detail",
    "files_changed",
    "verification",
    "receipt_ref",
    "question",
    "proposed_split",
    "blocking_dep",
];

/// The keys a payload of this `kind` (absent: a completion) may have.
fn allowed(kind: Option<&Value>) -> &'static [&'static str] {
    match kind.map(|k| k.as_str()) {
        None => &[
            "contract",
            "summary",
            "files_changed",
            "verification",
            "receipt_ref",
        ],
        Some(Some("scope_exceeded")) => &["contract", "kind", "detail", "proposed_split"],
        Some(Some("awaiting_operator" | "underspecified")) => {
            &["contract", "kind", "detail", "question"]
        }
        Some(Some("blocked_on_dependency")) => &["contract", "kind", "detail", "blocking_dep"],
        Some(_) => &["contract", "kind", "detail"],
    }
}

/// Near-valid payloads of either shape, in any key order, sometimes with a stray key.
fn payload_like() -> impl Strategy<Value = Value> {
    let values: Vec<_> = FIELDS
        .iter()
        .map(|key| prop::option::weighted(0.85, field_value(key)))
        .collect();
    (
        values,
        any::<bool>(),
        prop::option::weighted(0.2, select(KEYS)),
        Just((0..FIELDS.len()).collect::<Vec<_>>()).prop_shuffle(),
    )
        .prop_map(|(values, refusal, stray, order)| {
            let kind = if refusal { values[1].as_ref() } else { None };
            let keep = allowed(kind);
            let mut map = Map::new();
            for i in order {
                let key = FIELDS[i];
                if let Some(value) = &values[i]
                    && (keep.contains(&key) || stray == Some(key))
                {
                    map.insert(key.to_owned(), value.clone());
                }
            }
            if let Some(stray) = stray.filter(|k| !FIELDS.contains(k)) {
                map.insert(stray.to_owned(), Value::from(1));
            }
            Value::Object(map)
        })
}

// ---------------------------------------------------------------------------------------------
// The reference: the first violation only, as the public implementation reports it (with
// perago's bracket form for keys that are not identifiers).

type Found = (String, String);

fn found(path: String, message: &str) -> Result<(), Found> {
    Err((path, message.to_owned()))
}

fn at(key: &str) -> String {
    Path::Root.key(key).render()
}

fn non_empty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !whitespace::is_blank(s))
}

fn required_text(map: &Map<String, Value>, key: &str, cap: bool) -> Result<(), Found> {
    let Some(v) = map.get(key) else {
        return found(at(key), "required field is missing");
    };
    if !non_empty(Some(v)) {
        return found(at(key), "must be a non-empty string");
    }
    if cap && v.as_str().is_some_and(|s| s.chars().count() > 2000) {
        return found(at(key), "exceeds the 2000-character cap");
    }
    Ok(())
}

fn tag(map: &Map<String, Value>) -> Result<(), Found> {
    match map.get("contract") {
        Some(v) if v != "worker-completion/v1" => found(
            at("contract"),
            "unsupported contract version (expected worker-completion/v1)",
        ),
        _ => Ok(()),
    }
}

fn keys(map: &Map<String, Value>, allowed: &[&str]) -> Result<(), Found> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => found(at(k), "unknown field"),
        None => Ok(()),
    }
}

/// The list's items, or the first bad one.
fn string_list(map: &Map<String, Value>, key: &str) -> Result<usize, Found> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Array(items)) => match items.iter().position(|i| !non_empty(Some(i))) {
            Some(i) => found(format!("{}[{i}]", at(key)), "must be a non-empty string").map(|_| 0),
            None => Ok(items.len()),
        },
        Some(_) => found(at(key), "must be a list of strings").map(|_| 0),
    }
}

fn reference_completion(map: &Map<String, Value>) -> Result<(), Found> {
    tag(map)?;
    keys(
        map,
        &[
            "contract",
            "summary",
            "files_changed",
            "verification",
            "receipt_ref",
        ],
    )?;
    required_text(map, "summary", true)?;
    string_list(map, "files_changed")?;
    match map.get("verification") {
        None | Some(Value::Null) => {}
        Some(Value::Object(v)) => {
            keys(v, &["command", "exit_code"])
                .map_err(|(p, m)| (format!("$.verification{}", &p[1..]), m))?;
            if !non_empty(v.get("command")) {
                return found(
                    "$.verification.command".into(),
                    "must be a non-empty string",
                );
            }
            // A whole number beyond 64 bits is perago's own limit, worded as validate does.
            if v.get("exit_code")
                .is_some_and(|c| c.is_u64() && !c.is_i64())
            {
                return found(
                    "$.verification.exit_code".into(),
                    "integer does not fit in a signed 64-bit value",
                );
            }
            if !v.get("exit_code").is_some_and(|c| c.is_i64()) {
                return found("$.verification.exit_code".into(), "must be an integer");
            }
        }
        Some(_) => return found("$.verification".into(), "must be an object or null"),
    }
    match map.get("receipt_ref") {
        None | Some(Value::Null) => Ok(()),
        v if non_empty(v) => Ok(()),
        Some(_) => found(at("receipt_ref"), "must be a non-empty string or null"),
    }
}

fn reference_refusal(map: &Map<String, Value>) -> Result<(), Found> {
    tag(map)?;
    let Some(kind) = map.get("kind").and_then(Value::as_str) else {
        return found(at("kind"), "must be a string refusal kind");
    };
    let field = match kind {
        "scope_exceeded" => "proposed_split",
        "underspecified" | "awaiting_operator" => "question",
        "blocked_on_dependency" => "blocking_dep",
        _ => {
            return found(
                at("kind"),
                "unknown refusal kind (allowed: awaiting_operator, scope_exceeded, underspecified, blocked_on_dependency)",
            );
        }
    };
    keys(map, &["contract", "kind", "detail", field])?;
    required_text(map, "detail", true)?;
    if field != "proposed_split" {
        return required_text(map, field, false);
    }
    if !map.contains_key(field) {
        return found(at(field), "required for scope_exceeded");
    }
    if string_list(map, field)? == 0 {
        return found(at(field), "must contain at least one item");
    }
    Ok(())
}

fn reference(value: &Value) -> Result<(), Found> {
    let Value::Object(map) = value else {
        return found("$".into(), "terminal payload must be a JSON object");
    };
    if map.contains_key("kind") {
        reference_refusal(map)
    } else {
        reference_completion(map)
    }
}

fn primary(outcome: &Outcome) -> Result<(), Found> {
    match outcome.violations().and_then(|v| v.primary()) {
        Some(v) => Err((v.path.clone(), v.message.clone())),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonical_form_round_trips(payload in payload()) {
        let canonical = payload.to_canonical();
        prop_assert_eq!(validate(&canonical), Ok(payload.clone()));
        let text = serde_json::to_string(&payload).expect("serialises");
        prop_assert_eq!(validate_text(&text), Ok(payload.clone()));
        prop_assert_eq!(classify_text(&text), Outcome::from(payload.clone()));
        let again = validate(&canonical).map(|p| p.to_canonical());
        prop_assert_eq!(again, Ok(canonical));
    }

    #[test]
    fn classify_never_panics_on_strings(text in "\\PC{0,40}|\\{\\PC{0,40}|[ \u{3000}\u{1c}]\\{\"\\PC{0,30}") {
        let outcome = classify_text(&text);
        if let Outcome::Violation(v) = &outcome {
            prop_assert!(!v.is_empty());
        }
        prop_assert_eq!(
            matches!(outcome, Outcome::Empty),
            whitespace::is_blank(&text)
        );
    }

    #[test]
    fn classify_never_panics_on_values(value in any_json()) {
        let outcome = classify_payload(&value);
        prop_assert!(matches!(
            outcome,
            Outcome::Completion(_) | Outcome::Refusal(_) | Outcome::Violation(_)
        ));
        if let Outcome::Violation(v) = &outcome {
            prop_assert!(!v.is_empty());
        }
        // The same value as text, when it is an object, is classified alike.
        if value.is_object() {
            prop_assert_eq!(classify_text(&value.to_string()), outcome);
        }
    }

    #[test]
    fn the_primary_violation_is_the_references(value in payload_like()) {
        let outcome = classify_payload(&value);
        prop_assert_eq!(primary(&outcome), reference(&value), "{}", value);
    }

    #[test]
    fn the_primary_violation_is_the_references_on_any_value(value in any_json()) {
        prop_assert_eq!(primary(&classify_payload(&value)), reference(&value), "{}", value);
    }
}
