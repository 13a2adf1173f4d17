//! typify, the generator a user would pick instead of perago, as the peer it is: on the
//! corpora of `perago_tests::user_corpus` (documents written as the benchmarks' are, a fifth
//! of them broken), for every schema typify takes (`perago_tests::typify_types`, made by
//! `build.rs`):
//!
//! - every document perago's generated reader accepts, typify's types deserialize;
//! - the pipeline a user would assemble instead (the `jsonschema` crate's check, then typify's
//!   types) gives perago's verdict on every document;
//! - what typify's types alone accept that the schema refuses is counted and printed: the
//!   checks a user gives up without a validator in front of them.

use perago::Contract;
use perago_tests::corpus::Corpus;
use perago_tests::typify_types as typify;
use perago_tests::user_contracts::agent_result::AgentResult;
use perago_tests::user_contracts::train_model_input::TrainModelInput;
use perago_tests::user_corpus;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// How the three verdicts compared over one corpus.
#[derive(Debug, Default)]
struct Tally {
    documents: usize,
    accepted: usize,
    /// Accepted by perago, refused by typify's types: must stay 0.
    typify_refused: Vec<String>,
    /// jsonschema + typify's verdict differs from perago's: must stay 0.
    pipeline_differs: Vec<String>,
    /// Refused by perago, accepted by typify's types alone.
    typify_alone_accepted: usize,
}

fn compare<P: Contract, T: DeserializeOwned>(
    corpus: &Corpus,
    checker: &jsonschema::Validator,
) -> Tally {
    let mut tally = Tally::default();
    for doc in &corpus.docs {
        tally.documents += 1;
        let perago = P::from_slice(doc).is_ok();
        let typify_alone = serde_json::from_slice::<T>(doc).is_ok();
        let pipeline = serde_json::from_slice::<Value>(doc).is_ok_and(|value| {
            checker.is_valid(&value) && serde_json::from_value::<T>(value).is_ok()
        });
        let text = || String::from_utf8_lossy(doc).into_owned();
        tally.accepted += usize::from(perago);
        if perago && !typify_alone {
            tally.typify_refused.push(text());
        }
        if pipeline != perago {
            tally.pipeline_differs.push(text());
        }
        tally.typify_alone_accepted += usize::from(!perago && typify_alone);
    }
    tally
}

/// typify takes the user schemas written with `oneOf`s, and stops on those written with
/// `if`/`then`/`else` (`unimplemented!`): then perago alone types them.
#[test]
fn typify_takes_the_user_schemas_but_the_conditional_ones() {
    let user = |file: &&str| user_corpus::SCHEMAS.iter().any(|(f, _)| f == file);
    let taken: Vec<&str> = typify::TAKEN.iter().copied().filter(user).collect();
    assert_eq!(
        taken,
        ["agent-result.schema.json", "train-model-input.schema.json"]
    );
    let refused: Vec<(&str, &str)> = typify::REFUSED
        .iter()
        .copied()
        .filter(|(f, _)| user(f))
        .collect();
    let why = "typify panicked: not implemented: if/then/else schemas are not supported";
    assert_eq!(
        refused,
        [
            ("agent-report.schema.json", why),
            ("agent-result-cases.schema.json", why),
            ("agent-result-conditional.schema.json", why)
        ]
    );
}

#[test]
fn typify_deserializes_what_perago_accepts_and_the_pipeline_agrees() {
    let set = user_corpus::schemas();
    let mut failures = Vec::new();
    for corpus in user_corpus::all(user_corpus::DEFAULT_SEED) {
        let file = set
            .find(corpus.schema)
            .expect("the corpus schema is in the set");
        let checker = jsonschema::draft202012::options()
            .build(&file.normalised)
            .expect("jsonschema compiles the closed schema");
        let tally = match corpus.schema {
            // typify takes none of them (above).
            user_corpus::CONDITIONAL_SCHEMA
            | user_corpus::CASES_SCHEMA
            | user_corpus::REPORT_SCHEMA => continue,
            user_corpus::COMPLETION_SCHEMA => {
                compare::<AgentResult, typify::agent_result::AgentResult>(&corpus, &checker)
            }
            user_corpus::TASK_INPUT_SCHEMA => compare::<
                TrainModelInput,
                typify::train_model_input::TrainModelInput,
            >(&corpus, &checker),
            other => panic!("no types for corpus schema {other}"),
        };
        eprintln!(
            "{}: {} documents, {} accepted by perago; typify's types alone accept {} that the \
             schema refuses; typify refuses {} perago accepts; the jsonschema + typify pipeline \
             differs on {}",
            corpus.name,
            tally.documents,
            tally.accepted,
            tally.typify_alone_accepted,
            tally.typify_refused.len(),
            tally.pipeline_differs.len()
        );
        assert!(tally.accepted > 0 && tally.accepted < tally.documents);
        for doc in tally.typify_refused.iter().take(3) {
            failures.push(format!(
                "{}: typify refuses a valid document: {doc}",
                corpus.name
            ));
        }
        for doc in tally.pipeline_differs.iter().take(3) {
            failures.push(format!(
                "{}: the pipeline's verdict differs: {doc}",
                corpus.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
