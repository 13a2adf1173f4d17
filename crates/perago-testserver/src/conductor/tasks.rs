//! Tasks and their queues: enqueue (test side), poll and update (worker side),
//! response timeouts, and the decider's retries when enabled (`docs/src/reference/conductor.md` §4).
//!
//! There are no workflows here: each enqueued task stands for one SIMPLE task
//! of its own workflow instance. Queues are keyed by task type and domain, as
//! Conductor's `domain:taskType` queue names are. Time-driven transitions use
//! the monotonic clock and are applied lazily by [`Tasks::advance`].

use super::ids::{new_id, now_ms, random_u64};
use super::jackson;
use super::reply::{Reply, ValidationError};
use super::{RetryDelays, TaskSpec, TaskState, TaskStatus};
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// `TaskResult.Status`: what a worker may report (spec §4.4).
const RESULT_STATUSES: &[&str] = &[
    "IN_PROGRESS",
    "FAILED",
    "FAILED_WITH_TERMINAL_ERROR",
    "COMPLETED",
    "CANCELED",
];

/// `reasonForIncompletion` is cut to this many UTF-16 units (spec §4.3).
const REASON_LIMIT: usize = 500;

impl TaskStatus {
    /// The wire name, e.g. `IN_PROGRESS`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::InProgress => "IN_PROGRESS",
            TaskStatus::Canceled => "CANCELED",
            TaskStatus::Failed => "FAILED",
            TaskStatus::FailedWithTerminalError => "FAILED_WITH_TERMINAL_ERROR",
            TaskStatus::Completed => "COMPLETED",
            TaskStatus::CompletedWithErrors => "COMPLETED_WITH_ERRORS",
            TaskStatus::Scheduled => "SCHEDULED",
            TaskStatus::TimedOut => "TIMED_OUT",
            TaskStatus::Skipped => "SKIPPED",
        }
    }

    /// Whether the status is final (`Task.Status.isTerminal`, spec §4.4).
    pub fn is_terminal(self) -> bool {
        !matches!(self, TaskStatus::InProgress | TaskStatus::Scheduled)
    }

    fn from_result(status: &str) -> TaskStatus {
        match status {
            "FAILED" => TaskStatus::Failed,
            "FAILED_WITH_TERMINAL_ERROR" => TaskStatus::FailedWithTerminalError,
            "COMPLETED" => TaskStatus::Completed,
            "CANCELED" => TaskStatus::Canceled,
            _ => TaskStatus::InProgress,
        }
    }
}

/// Queue identity: task type and domain (`None` = no domain).
type QueueKey = (String, Option<String>);

/// One task.
#[derive(Debug, Clone)]
struct Task {
    id: String,
    workflow_instance_id: String,
    task_type: String,
    reference_task_name: String,
    workflow_type: String,
    correlation_id: Option<String>,
    domain: Option<String>,
    status: TaskStatus,
    input_data: Value,
    output_data: Value,
    reason: Option<String>,
    worker_id: Option<String>,
    retry_count: i32,
    /// The attempt this one retries (`retriedTaskId`).
    retried_task_id: Option<String>,
    /// The attempt that retries this one; `Some` is Conductor's `retried: true`.
    retry_task_id: Option<String>,
    poll_count: u32,
    seq: u64,
    /// The retry delay this attempt was queued with (`startDelayInSeconds`).
    start_delay_seconds: i64,
    callback_after_seconds: i64,
    response_timeout_seconds: i64,
    scheduled_time: i64,
    start_time: i64,
    end_time: i64,
    update_time: i64,
    /// The registered TaskDef at enqueue time, as `taskDefinition` shows it.
    task_def: Option<Value>,
    /// When an IN_PROGRESS task times out unless updated (monotonic).
    lease_deadline: Option<Instant>,
    /// When a queued task may be polled (monotonic; callbackAfterSeconds).
    ready_at: Instant,
    updates: Vec<Value>,
    logs: Vec<Value>,
}

impl Task {
    fn queue_key(&self) -> QueueKey {
        (self.task_type.clone(), self.domain.clone())
    }

    /// The Task JSON of spec §4.6, as poll and `GET /api/tasks/{id}` return it.
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        let mut put = |k: &str, v: Value| {
            out.insert(k.to_owned(), v);
        };
        put("taskType", json!(self.task_type));
        put("status", json!(self.status.as_str()));
        put("inputData", self.input_data.clone());
        put("referenceTaskName", json!(self.reference_task_name));
        put("retryCount", json!(self.retry_count));
        put("seq", json!(self.seq));
        if let Some(c) = &self.correlation_id {
            put("correlationId", json!(c));
        }
        put("pollCount", json!(self.poll_count));
        put("taskDefName", json!(self.task_type));
        put("scheduledTime", json!(self.scheduled_time));
        put("startTime", json!(self.start_time));
        put("endTime", json!(self.end_time));
        put("updateTime", json!(self.update_time));
        put("startDelayInSeconds", json!(self.start_delay_seconds));
        put("retried", json!(self.retry_task_id.is_some()));
        if let Some(r) = &self.retried_task_id {
            put("retriedTaskId", json!(r));
        }
        put("executed", json!(self.status.is_terminal()));
        put("callbackFromWorker", json!(true));
        put(
            "responseTimeoutSeconds",
            json!(self.response_timeout_seconds),
        );
        put("workflowInstanceId", json!(self.workflow_instance_id));
        put("workflowType", json!(self.workflow_type));
        put("taskId", json!(self.id));
        if let Some(r) = &self.reason {
            put("reasonForIncompletion", json!(r));
        }
        put("callbackAfterSeconds", json!(self.callback_after_seconds));
        if let Some(w) = &self.worker_id {
            put("workerId", json!(w));
        }
        put("outputData", self.output_data.clone());
        put(
            "workflowTask",
            json!({
                "name": self.task_type,
                "taskReferenceName": self.reference_task_name,
                "type": "SIMPLE",
                "startDelay": 0,
                "optional": false,
                "asyncComplete": false,
            }),
        );
        if let Some(d) = &self.domain {
            put("domain", json!(d));
        }
        put("rateLimitPerFrequency", json!(0));
        put("rateLimitFrequencyInSeconds", json!(0));
        put("workflowPriority", json!(0));
        put("iteration", json!(0));
        put("subworkflowChanged", json!(false));
        put("firstStartTime", json!(self.start_time));
        put("loopOverTask", json!(false));
        if let Some(def) = &self.task_def {
            put("taskDefinition", def.clone());
        }
        let queue_wait = if self.start_time > 0 {
            self.start_time - self.scheduled_time
        } else {
            0
        };
        put("queueWaitTime", json!(queue_wait.max(0)));
        Value::Object(out)
    }

    fn snapshot(&self) -> TaskState {
        TaskState {
            task_id: self.id.clone(),
            workflow_instance_id: self.workflow_instance_id.clone(),
            task_type: self.task_type.clone(),
            reference_task_name: self.reference_task_name.clone(),
            domain: self.domain.clone(),
            status: self.status,
            retry_count: self.retry_count,
            retried_task_id: self.retried_task_id.clone(),
            retried: self.retry_task_id.is_some(),
            input_data: self.input_data.clone(),
            output_data: self.output_data.clone(),
            reason_for_incompletion: self.reason.clone(),
            worker_id: self.worker_id.clone(),
            poll_count: self.poll_count,
            response_timeout_seconds: self.response_timeout_seconds,
            updates: self.updates.clone(),
            logs: self.logs.clone(),
            json: self.to_json(),
        }
    }
}

/// Every task, the queues, and the set of IN_PROGRESS tasks whose leases run.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    by_id: HashMap<String, Task>,
    order: Vec<String>,
    queues: HashMap<QueueKey, VecDeque<String>>,
    /// The IN_PROGRESS tasks by lease deadline: what [`Tasks::advance`] and
    /// [`Tasks::next_timer`] look at on every access, so it must not take a scan.
    leases: BTreeSet<(Instant, String)>,
    /// When delayed re-queues become pollable; an entry may outlive its task's
    /// stay in the queue, which costs one spurious wake-up at most.
    delayed: BTreeSet<Instant>,
    /// Kept as counts so `wait_terminal` and `wait_final` stay cheap with many tasks.
    terminal: usize,
    /// Terminal tasks that were retried (so not final).
    retried: usize,
    next_seq: u64,
    /// `None`: FAILED and TIMED_OUT are final (the default).
    pub(crate) retries: Option<RetryDelays>,
}

/// The decoded parameters of a poll.
#[derive(Debug, Clone)]
pub(crate) struct PollRequest {
    pub(crate) task_type: String,
    pub(crate) domain: Option<String>,
    pub(crate) worker_id: Option<String>,
    pub(crate) count: usize,
}

impl Tasks {
    /// Adds a SCHEDULED task and queues it. `registered` is the TaskDef of that
    /// name (as GET returns it), whose `responseTimeoutSeconds` applies unless
    /// the spec overrides it; else Conductor's ad-hoc default 3600 (§1).
    pub(crate) fn enqueue(&mut self, spec: TaskSpec, registered: Option<Value>) -> String {
        let id = new_id();
        let response_timeout_seconds = spec
            .response_timeout_seconds
            .or_else(|| registered.as_ref()?.get("responseTimeoutSeconds")?.as_i64())
            .unwrap_or(3600);
        self.next_seq += 1;
        let now = now_ms();
        let task = Task {
            id: id.clone(),
            workflow_instance_id: spec.workflow_instance_id.unwrap_or_else(new_id),
            reference_task_name: spec
                .reference_task_name
                .unwrap_or_else(|| format!("{}_ref", spec.task_type)),
            workflow_type: spec
                .workflow_type
                .unwrap_or_else(|| format!("{}_workflow", spec.task_type)),
            task_type: spec.task_type,
            correlation_id: spec.correlation_id,
            domain: spec.domain.filter(|d| !d.is_empty()),
            status: TaskStatus::Scheduled,
            input_data: spec.input_data,
            output_data: json!({}),
            reason: None,
            worker_id: None,
            retry_count: spec.retry_count,
            retried_task_id: None,
            retry_task_id: None,
            poll_count: 0,
            seq: self.next_seq,
            start_delay_seconds: 0,
            callback_after_seconds: 0,
            response_timeout_seconds,
            scheduled_time: now,
            start_time: 0,
            end_time: 0,
            update_time: now,
            task_def: registered,
            lease_deadline: None,
            ready_at: Instant::now(),
            updates: Vec::new(),
            logs: Vec::new(),
        };
        self.insert(task);
        id
    }

    /// Adds `task`: at the back of its queue, last in creation order, and by its id.
    fn insert(&mut self, task: Task) {
        self.queues
            .entry(task.queue_key())
            .or_default()
            .push_back(task.id.clone());
        self.order.push(task.id.clone());
        self.by_id.insert(task.id.clone(), task);
    }

    pub(crate) fn get(&self, id: &str) -> Option<TaskState> {
        self.by_id.get(id).map(Task::snapshot)
    }

    pub(crate) fn all(&self) -> Vec<TaskState> {
        self.order.iter().filter_map(|id| self.get(id)).collect()
    }

    pub(crate) fn terminal_count(&self) -> usize {
        self.terminal
    }

    /// Terminal tasks that no retry follows: the last attempt of each task.
    pub(crate) fn final_count(&self) -> usize {
        self.terminal - self.retried
    }

    /// `task_id` and the retries that followed it, in order.
    pub(crate) fn attempts(&self, task_id: &str) -> Vec<TaskState> {
        let mut attempts = Vec::new();
        let mut next = self.by_id.get(task_id);
        while let Some(task) = next {
            attempts.push(task.snapshot());
            next = task.retry_task_id.as_ref().map(|id| &self.by_id[id]);
        }
        attempts
    }

    /// Queued tasks of `task_type` in `domain`, delayed ones included
    /// (`GET /api/tasks/queue/size`).
    pub(crate) fn queue_size(&self, task_type: &str, domain: Option<&str>) -> usize {
        let key = (
            task_type.to_owned(),
            domain.filter(|d| !d.is_empty()).map(str::to_owned),
        );
        self.queues.get(&key).map_or(0, VecDeque::len)
    }

    /// Applies the transitions due at `now`; true when any happened.
    ///
    /// - IN_PROGRESS past its lease (`responseTimeoutSeconds` since the last
    ///   poll or update) → TIMED_OUT (§4.2, `DeciderService.isResponseTimedOut`),
    ///   then retried if retries are on.
    /// - A delayed re-queue whose time came is a change too: pollers must look again.
    pub(crate) fn advance(&mut self, now: Instant) -> bool {
        let mut changed = false;
        while self
            .leases
            .first()
            .is_some_and(|(deadline, _)| *deadline <= now)
        {
            let (_, id) = self.leases.pop_first().expect("a lease is due");
            let task = self.by_id.get_mut(&id).expect("leased ids exist");
            task.status = TaskStatus::TimedOut;
            task.lease_deadline = None;
            task.end_time = now_ms();
            task.update_time = task.end_time;
            task.reason = Some(format!(
                "responseTimeout: {} exceeded for the taskId: {} with Task Definition: {}",
                task.response_timeout_seconds, task.id, task.task_type
            ));
            self.terminal += 1;
            self.retry(&id, now);
            changed = true;
        }
        while self.delayed.first().is_some_and(|ready| *ready <= now) {
            self.delayed.pop_first();
            changed = true;
        }
        changed
    }

    /// The next instant at which [`advance`](Self::advance) would change something.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        let lease = self.leases.first().map(|(deadline, _)| *deadline);
        lease.into_iter().chain(self.delayed.first().copied()).min()
    }

    /// Hands up to `count` ready tasks to a worker (`ExecutionService.poll`,
    /// §4.2): each becomes IN_PROGRESS with `pollCount`+1, `workerId`,
    /// `startTime` on first poll, `callbackAfterSeconds` reset to 0, and its
    /// response-timeout lease starts. Returns their Task JSON.
    pub(crate) fn poll(&mut self, request: &PollRequest, now: Instant) -> Vec<Value> {
        let key = (request.task_type.clone(), request.domain.clone());
        let Some(queue) = self.queues.get_mut(&key) else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        let mut index = 0;
        while taken.len() < request.count && index < queue.len() {
            let task = &self.by_id[&queue[index]];
            if task.ready_at <= now {
                taken.extend(queue.remove(index));
            } else {
                index += 1;
            }
        }
        let wall = now_ms();
        taken
            .into_iter()
            .map(|id| {
                let task = self.by_id.get_mut(&id).expect("queued ids exist");
                task.status = TaskStatus::InProgress;
                task.poll_count += 1;
                if task.start_time == 0 {
                    task.start_time = wall;
                }
                task.callback_after_seconds = 0;
                if let Some(worker) = &request.worker_id {
                    task.worker_id = Some(worker.clone());
                }
                task.update_time = wall;
                set_lease(
                    &mut self.leases,
                    task,
                    Some(now + lease(task.response_timeout_seconds)),
                );
                task.to_json()
            })
            .collect()
    }

    /// `POST /api/tasks` (§4.3, §4.5). Returns the reply and, when the update
    /// was applied, the task's queue (for `update-v2`'s next poll).
    pub(crate) fn update(&mut self, body: &str, now: Instant) -> (Reply, Option<QueueKey>) {
        let parsed = match jackson::parse_body(body) {
            Ok(v) => v,
            Err(e) => return (Reply::internal(e.0), None),
        };
        let result = match TaskResult::read(&parsed) {
            Ok(r) => r,
            Err(e) => return (Reply::internal(e.0), None),
        };
        if let Some(task) = result
            .task_id
            .as_deref()
            .and_then(|id| self.by_id.get_mut(id))
        {
            task.updates.push(parsed.clone());
        }
        let errors = result.violations();
        if !errors.is_empty() {
            return (Reply::validation(&errors), None);
        }
        let task_id = result.task_id.unwrap_or_default();
        let Some(task) = self.by_id.get_mut(&task_id) else {
            return (
                Reply::not_found(format!("No such task found by id: {task_id}")),
                None,
            );
        };
        let key = task.queue_key();
        if task.status.is_terminal() {
            // Idempotent and silent (§4.3).
            return (Reply::text(200, task_id), None);
        }
        if result.extend_lease {
            // Only the lease moves; every other field is ignored (§4.2).
            task.update_time = now_ms();
            if task.status == TaskStatus::InProgress {
                let deadline = now + lease(task.response_timeout_seconds);
                set_lease(&mut self.leases, task, Some(deadline));
            }
            return (Reply::text(200, task_id), Some(key));
        }
        let Some(status) = result.status else {
            return (
                Reply::internal(
                    "Cannot invoke \"com.netflix.conductor.common.metadata.tasks.TaskResult$Status.name()\" because the return value of \"com.netflix.conductor.common.metadata.tasks.TaskResult.getStatus()\" is null",
                ),
                None,
            );
        };
        let wall = now_ms();
        if let Some(worker) = result.worker_id {
            task.worker_id = Some(worker);
        }
        task.output_data = result.output_data;
        if let Some(reason) = result.reason {
            task.reason = Some(truncate_utf16(&reason, REASON_LIMIT));
        }
        for mut log in result.logs {
            if let Value::Object(entry) = &mut log {
                entry.insert("taskId".into(), json!(task_id));
            }
            task.logs.push(log);
        }
        task.update_time = wall;
        set_lease(&mut self.leases, task, None);
        // A SCHEDULED task (after an earlier IN_PROGRESS update) is still queued.
        if let Some(queue) = self.queues.get_mut(&key) {
            queue.retain(|queued| *queued != task_id);
        }
        let status = TaskStatus::from_result(&status);
        if status == TaskStatus::InProgress {
            // Long-running pattern: back to SCHEDULED, re-queued after the callback delay.
            let delay = u64::try_from(result.callback_after_seconds).unwrap_or(0);
            task.status = TaskStatus::Scheduled;
            task.callback_after_seconds = result.callback_after_seconds;
            task.ready_at = now + Duration::from_secs(delay);
            if delay > 0 {
                self.delayed.insert(task.ready_at);
            }
            self.queues
                .entry(key.clone())
                .or_default()
                .push_back(task_id.clone());
        } else {
            task.status = status;
            task.end_time = wall;
            self.terminal += 1;
        }
        self.retry(&task_id, now);
        (Reply::text(200, task_id), Some(key))
    }

    /// `DeciderService.retry` (§4.3), when retries are on, for a task that has
    /// just become terminal. FAILED and TIMED_OUT are retriable;
    /// FAILED_WITH_TERMINAL_ERROR and CANCELED never are (§4.4). While the TaskDef's
    /// `retryCount` allows, a copy is queued with a new taskId,
    /// `retriedTaskId` pointing back, `retryCount`+1 and `pollCount` 0, after
    /// the TaskDef's retry delay (shown as `startDelayInSeconds` and
    /// `callbackAfterSeconds`, waited as [`RetryDelays`] says).
    fn retry(&mut self, id: &str, now: Instant) {
        let Some(delays) = self.retries else {
            return;
        };
        let original = &self.by_id[id];
        if !matches!(original.status, TaskStatus::Failed | TaskStatus::TimedOut) {
            return;
        }
        let Some((seconds, jitter)) = retry_delay(original.task_def.as_ref(), original.retry_count)
        else {
            return;
        };
        self.next_seq += 1;
        let wall = now_ms();
        let retry_id = new_id();
        // `task.copy()` keeps every other field (inputData, outputData,
        // referenceTaskName, workflowInstanceId, domain, responseTimeout…).
        let retry = Task {
            id: retry_id.clone(),
            status: TaskStatus::Scheduled,
            reason: None,
            worker_id: None,
            retry_count: original.retry_count + 1,
            retried_task_id: Some(original.id.clone()),
            retry_task_id: None,
            poll_count: 0,
            seq: self.next_seq,
            start_delay_seconds: seconds,
            callback_after_seconds: seconds,
            scheduled_time: wall,
            start_time: 0,
            end_time: 0,
            update_time: wall,
            lease_deadline: None,
            ready_at: later(
                now,
                delays.stretch(Duration::from_secs(seconds.unsigned_abs()) + jitter),
            ),
            updates: Vec::new(),
            logs: Vec::new(),
            ..original.clone()
        };
        if retry.ready_at > now {
            self.delayed.insert(retry.ready_at);
        }
        self.insert(retry);
        self.by_id
            .get_mut(id)
            .expect("the original exists")
            .retry_task_id = Some(retry_id);
        self.retried += 1;
    }

    /// `POST /api/tasks/{taskId}/log`: the body is the raw log line.
    pub(crate) fn add_log(&mut self, task_id: &str, line: &str) {
        if let Some(task) = self.by_id.get_mut(task_id) {
            task.logs
                .push(json!({"log": line, "taskId": task_id, "createdTime": now_ms()}));
        }
    }

    /// `GET /api/tasks/{taskId}/log`: 204 when there is none.
    pub(crate) fn logs(&self, task_id: &str) -> Reply {
        match self.by_id.get(task_id) {
            Some(task) if !task.logs.is_empty() => {
                Reply::json(200, &Value::Array(task.logs.clone()))
            }
            _ => Reply::empty(204),
        }
    }

    /// `GET /api/tasks/{taskId}`.
    pub(crate) fn get_json(&self, task_id: &str) -> Reply {
        match self.by_id.get(task_id) {
            Some(task) => Reply::json(200, &task.to_json()),
            None => Reply::not_found(format!("Task not found for taskId: {task_id}")),
        }
    }
}

fn lease(response_timeout_seconds: i64) -> Duration {
    Duration::from_secs(u64::try_from(response_timeout_seconds).unwrap_or(0))
}

/// Sets `task`'s lease deadline (`None`: it has none), keeping `leases` in step.
fn set_lease(leases: &mut BTreeSet<(Instant, String)>, task: &mut Task, deadline: Option<Instant>) {
    if let Some(old) = task.lease_deadline.take() {
        leases.remove(&(old, task.id.clone()));
    }
    if let Some(new) = deadline {
        leases.insert((new, task.id.clone()));
    }
    task.lease_deadline = deadline;
}

/// `now + delay`, or a year on if that does not fit an `Instant`.
fn later(now: Instant, delay: Duration) -> Instant {
    now.checked_add(delay)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365))
}

/// Whether `task_def` (a TaskDef as GET returns it; `None` = the ad-hoc
/// `new TaskDef(name)` of an unregistered task, spec §1) allows a retry after
/// attempt `retry_count`, and if so its delay: whole seconds
/// (`DeciderService.retry`: FIXED = retryDelaySeconds; LINEAR_BACKOFF =
/// retryDelaySeconds·backoffScaleFactor·(retryCount+1); EXPONENTIAL_BACKOFF =
/// retryDelaySeconds·2^retryCount; an int overflow becomes `Integer.MAX_VALUE`;
/// capped by maxRetryDelaySeconds when > 0), and a random jitter below
/// backoffJitterMs.
fn retry_delay(task_def: Option<&Value>, retry_count: i32) -> Option<(i64, Duration)> {
    // The TaskDef field initialisers, which the ad-hoc TaskDef keeps too.
    let field = |name: &str, default: i64| {
        task_def
            .and_then(|def| def.get(name)?.as_i64())
            .unwrap_or(default)
    };
    let attempt = i64::from(retry_count);
    if attempt >= field("retryCount", 3) {
        return None;
    }
    let base = field("retryDelaySeconds", 60);
    let logic = task_def.and_then(|def| def.get("retryLogic")?.as_str());
    let delay = match logic {
        Some("LINEAR_BACKOFF") => base
            .saturating_mul(field("backoffScaleFactor", 1))
            .saturating_mul(attempt + 1),
        Some("EXPONENTIAL_BACKOFF") => {
            base.saturating_mul(2_i64.saturating_pow(u32::try_from(attempt).unwrap_or(0)))
        }
        _ => base,
    };
    let delay = delay.clamp(0, i64::from(i32::MAX));
    let cap = field("maxRetryDelaySeconds", 0);
    let delay = if cap > 0 { delay.min(cap) } else { delay };
    let jitter = u64::try_from(field("backoffJitterMs", 0)).unwrap_or(0);
    let jitter = if jitter > 0 { random_u64() % jitter } else { 0 };
    Some((delay, Duration::from_millis(jitter)))
}

impl RetryDelays {
    /// How long Conductor's retry `delay` lasts here.
    fn stretch(self, delay: Duration) -> Duration {
        match self {
            RetryDelays::Real => delay,
            RetryDelays::Immediate => Duration::ZERO,
            RetryDelays::Scaled(second) => {
                Duration::try_from_secs_f64(second.as_secs_f64() * delay.as_secs_f64())
                    .unwrap_or(Duration::MAX)
            }
        }
    }
}

/// Java's `StringUtils.substring(s, 0, n)` counts UTF-16 units; a surrogate
/// pair cut in half is dropped rather than left broken.
fn truncate_utf16(text: &str, limit: usize) -> String {
    let mut units = 0;
    let mut out = String::new();
    for c in text.chars() {
        units += c.len_utf16();
        if units > limit {
            break;
        }
        out.push(c);
    }
    out
}

/// The fields of a `TaskResult` body this server acts on (§4.5).
#[derive(Debug)]
struct TaskResult {
    workflow_instance_id: Option<String>,
    task_id: Option<String>,
    status: Option<String>,
    output_data: Value,
    reason: Option<String>,
    callback_after_seconds: i64,
    worker_id: Option<String>,
    logs: Vec<Value>,
    extend_lease: bool,
}

impl TaskResult {
    fn read(body: &Value) -> Result<TaskResult, jackson::NotReadable> {
        let Value::Object(o) = body else {
            return Err(jackson::NotReadable(format!(
                "JSON parse error: Cannot construct instance of `TaskResult` from {body}"
            )));
        };
        let field = |name: &str| o.get(name).unwrap_or(&Value::Null);
        let logs = match field("logs") {
            Value::Null => Vec::new(),
            Value::Array(items) if items.iter().all(|i| i.is_object() || i.is_null()) => {
                items.iter().filter(|i| i.is_object()).cloned().collect()
            }
            other => {
                return Err(jackson::NotReadable(format!(
                    "JSON parse error: Cannot deserialize value of type `java.util.ArrayList<TaskExecLog>` from {other}"
                )));
            }
        };
        Ok(TaskResult {
            workflow_instance_id: jackson::string(
                field("workflowInstanceId"),
                "workflowInstanceId",
            )?,
            task_id: jackson::string(field("taskId"), "taskId")?,
            status: jackson::enumeration(
                field("status"),
                "TaskResult$Status",
                RESULT_STATUSES,
                "status",
            )?,
            output_data: Value::Object(
                jackson::object(field("outputData"), "outputData")?.unwrap_or_default(),
            ),
            reason: jackson::string(field("reasonForIncompletion"), "reasonForIncompletion")?,
            callback_after_seconds: jackson::long(
                field("callbackAfterSeconds"),
                "callbackAfterSeconds",
            )?,
            worker_id: jackson::string(field("workerId"), "workerId")?,
            logs,
            extend_lease: jackson::boolean(field("extendLease"), "extendLease")?,
        })
    }

    /// `@NotEmpty` on workflowInstanceId and taskId, checked by `@Valid` on
    /// `TaskService.updateTask(TaskResult taskResult)`.
    fn violations(&self) -> Vec<ValidationError> {
        let mut errors = Vec::new();
        let checks = [
            (
                &self.workflow_instance_id,
                "workflowInstanceId",
                "Workflow Id cannot be null or empty",
            ),
            (&self.task_id, "taskId", "Task ID cannot be null or empty"),
        ];
        for (value, field, message) in checks {
            if value.as_deref().is_none_or(str::is_empty) {
                errors.push(ValidationError {
                    path: format!("updateTask.taskResult.{field}"),
                    message: message.into(),
                    invalid_value: value.clone(),
                });
            }
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_counts_utf16_units() {
        assert_eq!(truncate_utf16("abc", 2), "ab");
        assert_eq!(truncate_utf16("a😀", 2), "a");
        assert_eq!(truncate_utf16("a😀", 3), "a😀");
    }

    #[test]
    fn retry_delay_ends_saturates_and_jitters() {
        let def = json!({"retryCount": 2, "retryLogic": "EXPONENTIAL_BACKOFF",
            "retryDelaySeconds": i32::MAX, "backoffJitterMs": 10});
        let (seconds, jitter) = retry_delay(Some(&def), 1).unwrap();
        assert_eq!(seconds, i64::from(i32::MAX));
        assert!(jitter < Duration::from_millis(10));
        assert_eq!(retry_delay(Some(&def), 2), None);
        // The ad-hoc TaskDef: three retries, 60 s apart, no jitter.
        assert_eq!(retry_delay(None, 2), Some((60, Duration::ZERO)));
        assert_eq!(retry_delay(None, 3), None);
        let negative = json!({"retryDelaySeconds": -5});
        assert_eq!(retry_delay(Some(&negative), 0), Some((0, Duration::ZERO)));
    }

    #[test]
    fn retry_delays_stretch_conductor_seconds() {
        let minute = Duration::from_secs(60);
        assert_eq!(RetryDelays::Real.stretch(minute), minute);
        assert_eq!(RetryDelays::Immediate.stretch(minute), Duration::ZERO);
        let scaled = RetryDelays::Scaled(Duration::from_millis(10)).stretch(minute);
        assert_eq!(scaled.as_millis(), 600);
    }

    #[test]
    fn response_timeout_expires_lazily() {
        let mut tasks = Tasks::default();
        let mut spec = TaskSpec::new("t", json!({}));
        spec.response_timeout_seconds = Some(1);
        let id = tasks.enqueue(spec, None);
        let start = Instant::now();
        let poll = PollRequest {
            task_type: "t".into(),
            domain: None,
            worker_id: None,
            count: 1,
        };
        assert_eq!(tasks.poll(&poll, start).len(), 1);
        assert!(!tasks.advance(start + Duration::from_millis(999)));
        assert!(tasks.advance(start + Duration::from_secs(1)));
        assert_eq!(tasks.get(&id).unwrap().status, TaskStatus::TimedOut);
    }

    #[test]
    fn an_extended_lease_expires_at_its_new_deadline_and_an_ended_task_never() {
        let mut tasks = Tasks::default();
        let mut spec = TaskSpec::new("t", json!({}));
        spec.response_timeout_seconds = Some(1);
        let (extended, ended) = (tasks.enqueue(spec.clone(), None), tasks.enqueue(spec, None));
        let start = Instant::now();
        let poll = PollRequest {
            task_type: "t".into(),
            domain: None,
            worker_id: None,
            count: 2,
        };
        assert_eq!(tasks.poll(&poll, start).len(), 2);
        let body = |id: &str, extend: bool| {
            let workflow = tasks.get(id).unwrap().workflow_instance_id;
            json!({"taskId": id, "workflowInstanceId": workflow, "status": if extend {
                "IN_PROGRESS" } else { "COMPLETED" }, "extendLease": extend})
            .to_string()
        };
        let half = start + Duration::from_millis(500);
        let (extend, end) = (body(&extended, true), body(&ended, false));
        assert_eq!(tasks.update(&extend, half).0.status, 200);
        assert_eq!(tasks.update(&end, half).0.status, 200);
        assert!(!tasks.advance(start + Duration::from_secs(1)));
        assert_eq!(tasks.next_timer(), Some(half + Duration::from_secs(1)));
        assert!(tasks.advance(half + Duration::from_secs(1)));
        assert_eq!(tasks.get(&extended).unwrap().status, TaskStatus::TimedOut);
        assert_eq!(tasks.get(&ended).unwrap().status, TaskStatus::Completed);
        assert_eq!(tasks.next_timer(), None);
    }
}
