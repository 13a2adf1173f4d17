//! Conductor's rules for a TaskDef (`docs/src/reference/conductor.md` §1–§3), stated once. The task macro
//! checks a task's options against them at compile time, each error at the offending token;
//! the TaskDef check applies them again before anything is written or published, each error
//! naming the task and the field, since a TaskDef also takes values from the command line or
//! the environment (the owner's email). Two copies of one rule drift: `"@x"` once passed the
//! macro and failed the check.
//!
//! No dependencies: the macro's compile and the worker's both link it.

/// Java's `int` maximum: most of Conductor's TaskDef numbers are one.
pub const JAVA_INT_MAX: u64 = i32::MAX as u64;
/// Java's `long` maximum: the timeouts are one.
pub const JAVA_LONG_MAX: u64 = i64::MAX as u64;

/// Conductor's `responseTimeoutSeconds` default (one hour): what a TaskDef that sets none
/// gets, and so what a polled task without one is leased for.
pub const DEFAULT_RESPONSE_TIMEOUT_SECONDS: u64 = 3600;

/// A task name, Conductor's TaskDef `name`: letters, digits and `_`, at least one. `Err` says
/// what is wrong, for the caller to place.
pub fn task_name(name: &str) -> Result<(), String> {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(())
    } else {
        Err(format!(
            "{name:?} must match [A-Za-z0-9_]+ (Conductor task names are letters, digits and `_`)"
        ))
    }
}

/// An owner, Conductor's TaskDef `ownerEmail`: an email address, one `@` with text on each
/// side and no whitespace.
pub fn owner_email(email: &str) -> Result<(), String> {
    let (local, domain) = email.split_once('@').unwrap_or_default();
    if !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && !email.chars().any(char::is_whitespace)
    {
        Ok(())
    } else {
        Err(format!(
            "{email:?} is not an email address (one `@` with text on each side, no spaces)"
        ))
    }
}

/// An integer of a TaskDef: the `#[perago::task]` option that sets it (if one does), the
/// TaskDef field, and Conductor's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntField {
    /// The option of `#[perago::task]`, e.g. `retry_count`.
    pub option: Option<&'static str>,
    /// The TaskDef field, e.g. `retryCount`.
    pub field: &'static str,
    /// The least value Conductor accepts.
    pub min: u64,
    /// The greatest: the field's Java type's maximum.
    pub max: u64,
}

impl IntField {
    /// What is wrong with `n`, when something is.
    pub fn check(&self, n: u64) -> Result<(), String> {
        if n < self.min {
            Err(format!("{n} must be ≥ {}", self.min))
        } else if n > self.max {
            Err(format!("{n} is above Conductor's maximum {}", self.max))
        } else {
            Ok(())
        }
    }
}

/// Every integer of a TaskDef, and the schema version of its SchemaDefs.
pub const INT_FIELDS: &[IntField] = &[
    int(Some("retry_count"), "retryCount", 0, JAVA_INT_MAX),
    int(Some("timeout_seconds"), "timeoutSeconds", 0, JAVA_LONG_MAX),
    int(
        Some("retry_delay_seconds"),
        "retryDelaySeconds",
        0,
        JAVA_INT_MAX,
    ),
    int(
        Some("response_timeout_seconds"),
        "responseTimeoutSeconds",
        1,
        JAVA_LONG_MAX,
    ),
    int(
        Some("concurrent_exec_limit"),
        "concurrentExecLimit",
        0,
        JAVA_INT_MAX,
    ),
    int(
        Some("rate_limit_per_frequency"),
        "rateLimitPerFrequency",
        0,
        JAVA_INT_MAX,
    ),
    int(
        Some("rate_limit_frequency_in_seconds"),
        "rateLimitFrequencyInSeconds",
        0,
        JAVA_INT_MAX,
    ),
    int(
        Some("poll_timeout_seconds"),
        "pollTimeoutSeconds",
        0,
        JAVA_INT_MAX,
    ),
    int(
        Some("backoff_scale_factor"),
        "backoffScaleFactor",
        1,
        JAVA_INT_MAX,
    ),
    int(None, "maxRetryDelaySeconds", 0, JAVA_INT_MAX),
    int(None, "backoffJitterMs", 0, JAVA_INT_MAX),
    int(
        Some("total_timeout_seconds"),
        "totalTimeoutSeconds",
        0,
        JAVA_LONG_MAX,
    ),
    int(Some("schema_version"), "version", 1, JAVA_INT_MAX),
];

const fn int(option: Option<&'static str>, field: &'static str, min: u64, max: u64) -> IntField {
    IntField {
        option,
        field,
        min,
        max,
    }
}

/// The integer field an option sets.
pub fn int_option(option: &str) -> Option<&'static IntField> {
    INT_FIELDS.iter().find(|f| f.option == Some(option))
}

/// The integer field of a TaskDef field name.
pub fn int_field(field: &str) -> Option<&'static IntField> {
    INT_FIELDS.iter().find(|f| f.field == field)
}

/// `retryLogic`'s values.
pub const RETRY_LOGIC: &[&str] = &["FIXED", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF"];
/// `timeoutPolicy`'s values.
pub const TIMEOUT_POLICY: &[&str] = &["RETRY", "TIME_OUT_WF", "ALERT_ONLY"];

/// A relation between timeouts that Conductor refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutRule {
    /// `responseTimeoutSeconds` above a `timeoutSeconds` that is > 0.
    ResponseOverTimeout {
        /// `responseTimeoutSeconds`.
        response: u64,
        /// `timeoutSeconds`.
        timeout: u64,
    },
    /// `timeoutSeconds` above a `totalTimeoutSeconds`, both > 0.
    TimeoutOverTotal {
        /// `timeoutSeconds`.
        timeout: u64,
        /// `totalTimeoutSeconds`.
        total: u64,
    },
}

/// The timeout relations that `timeout`, `response` and `total` break (an absent value is
/// `None`; 0 means no limit).
pub fn timeouts(
    timeout: Option<u64>,
    response: Option<u64>,
    total: Option<u64>,
) -> Vec<TimeoutRule> {
    let mut broken = Vec::new();
    if let (Some(response), Some(timeout)) = (response, timeout)
        && timeout > 0
        && response > timeout
    {
        broken.push(TimeoutRule::ResponseOverTimeout { response, timeout });
    }
    if let (Some(timeout), Some(total)) = (timeout, total)
        && timeout > 0
        && total > 0
        && timeout > total
    {
        broken.push(TimeoutRule::TimeoutOverTotal { timeout, total });
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_names() {
        for ok in ["validate_song", "A1", "_"] {
            assert_eq!(task_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "validate-song", "a b", "é"] {
            assert!(task_name(bad).is_err(), "{bad}");
        }
    }

    /// The case that once passed the macro and failed the TaskDef check.
    #[test]
    fn owner_emails() {
        assert_eq!(owner_email("songs@example.com"), Ok(()));
        for bad in ["@x", "x@", "a@b@c", "nobody", "", "a b@c", " @"] {
            assert!(owner_email(bad).is_err(), "{bad}");
        }
        assert_eq!(
            owner_email("@x").unwrap_err(),
            "\"@x\" is not an email address (one `@` with text on each side, no spaces)"
        );
    }

    #[test]
    fn numbers_and_timeouts() {
        let retry = int_option("retry_count").unwrap();
        assert_eq!(retry.field, "retryCount");
        assert!(retry.check(0).is_ok() && retry.check(JAVA_INT_MAX + 1).is_err());
        assert_eq!(
            int_field("responseTimeoutSeconds")
                .unwrap()
                .check(0)
                .unwrap_err(),
            "0 must be ≥ 1"
        );
        assert_eq!(
            timeouts(Some(60), Some(120), Some(30)),
            [
                TimeoutRule::ResponseOverTimeout {
                    response: 120,
                    timeout: 60
                },
                TimeoutRule::TimeoutOverTotal {
                    timeout: 60,
                    total: 30
                }
            ]
        );
        assert!(timeouts(Some(0), Some(3600), None).is_empty());
    }
}
