"""Params and result models of thirteen Conductor tasks, written as a team writes them with
Pydantic 2: closed (`extra="forbid"`), with the constructs such models use. `generate.py`
writes each model's `model_json_schema()` to `schemas/`, as Pydantic emits it."""

from __future__ import annotations

import datetime
import enum
import uuid
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Shared enums and literals: the same values under the same name in several models.


class Currency(str, enum.Enum):
    EUR = "EUR"
    USD = "USD"
    GBP = "GBP"
    JPY = "JPY"


class Priority(enum.IntEnum):
    LOW = 1
    NORMAL = 2
    HIGH = 3


Environment = Literal["staging", "production"]


# 1. resize_image


class ImageFormat(str, enum.Enum):
    PNG = "png"
    JPEG = "jpeg"
    WEBP = "webp"


class ResizeImageParams(Closed):
    image_id: uuid.UUID
    width: Annotated[int, Field(ge=1, le=8192)]
    height: Annotated[int, Field(ge=1, le=8192)]
    format: ImageFormat = ImageFormat.PNG
    quality: int = Field(85, ge=1, le=100)
    keep_aspect: bool = True


class ResizeImageResult(Closed):
    image_id: uuid.UUID
    url: str
    size_bytes: Annotated[int, Field(ge=0)]
    dimensions: tuple[int, int]


# 2. charge_card


class ChargeCardParams(Closed):
    customer_id: uuid.UUID
    amount: Decimal = Field(gt=0)
    currency: Currency
    card_token: SecretStr
    description: Optional[str] = None
    idempotency_key: Annotated[str, Field(min_length=8, max_length=64)]


class ChargeCardResult(Closed):
    charge_id: str
    status: Literal["succeeded", "pending", "failed"]
    captured_at: Optional[datetime.datetime]
    fee: Optional[Decimal] = None


# 3. send_notification: a discriminated union of channels


class Email(Closed):
    kind: Literal["email"]
    to: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+$")]
    subject: Annotated[str, Field(max_length=200)]


class Sms(Closed):
    kind: Literal["sms"]
    phone: Annotated[str, Field(pattern=r"^\+[1-9][0-9]{6,14}$")]


class Push(Closed):
    kind: Literal["push", "web_push"]
    device_token: str
    badge: Optional[int] = None


class SendNotificationParams(Closed):
    channel: Union[Email, Sms, Push] = Field(discriminator="kind")
    body: Annotated[str, Field(min_length=1)]
    priority: Priority = Priority.NORMAL


class SendNotificationResult(Closed):
    delivered: bool
    provider_message_id: Optional[str] = None
    attempts: int
    priority: Priority


# 4. convert_balances: maps keyed by an enum


class ConvertBalancesParams(Closed):
    balances: dict[Currency, int]
    target: Currency
    as_of: datetime.date


class ConvertBalancesResult(Closed):
    converted: dict[Currency, int]
    total: int
    rate_date: datetime.date


# 5. process_order: nested models, lists, sets


class Address(Closed):
    street: str
    city: str
    postal_code: Annotated[str, Field(min_length=3, max_length=10)]
    country: Annotated[str, Field(pattern=r"^[A-Z]{2}$")]


class OrderLine(Closed):
    sku: Annotated[str, Field(pattern=r"^[A-Z0-9-]{4,20}$")]
    quantity: Annotated[int, Field(ge=1)]
    unit_price: Decimal


class OrderState(str, enum.Enum):
    ACCEPTED = "accepted"
    BACKORDERED = "backordered"
    REJECTED = "rejected"


class ProcessOrderParams(Closed):
    order_id: uuid.UUID
    lines: Annotated[list[OrderLine], Field(min_length=1)]
    shipping: Address
    billing: Optional[Address] = None
    tags: set[str] = set()
    coupon: Optional[str] = None


class ProcessOrderResult(Closed):
    order_id: uuid.UUID
    total: Decimal
    currency: Currency
    state: OrderState
    shipped_on: Optional[datetime.date] = None


# 6. summarise_tree: a recursive model


class TreeNode(Closed):
    name: str
    size: Annotated[int, Field(ge=0)] = 0
    children: list[TreeNode] = []


class SummariseTreeParams(Closed):
    root: TreeNode
    max_depth: Optional[Annotated[int, Field(ge=1)]] = None


class SummariseTreeResult(Closed):
    node_count: int
    depth: int
    largest: Optional[TreeNode] = None


# 7. schedule_job: literal integers, times, tuples of a rest


class ScheduleJobParams(Closed):
    cron: Annotated[str, Field(pattern=r"^(\S+\s+){4}\S+$")]
    start_at: Optional[datetime.datetime] = None
    quiet_hours: Optional[tuple[datetime.time, datetime.time]] = None
    retries: Literal[0, 1, 2, 3] = 1
    environment: Environment


class ScheduleJobResult(Closed):
    job_id: uuid.UUID
    next_runs: list[datetime.datetime]
    environment: Environment


# 8. geocode: tuples of floats, constrained floats


class GeocodeParams(Closed):
    query: Annotated[str, Field(min_length=1, max_length=500)]
    country: Optional[Literal["DE", "FR", "GB", "US"]] = None
    limit: Annotated[int, Field(ge=1, le=50)] = 5


class GeocodeMatch(Closed):
    label: str
    coordinates: tuple[float, float]
    confidence: Annotated[float, Field(ge=0, le=1)]
    precision: Literal["street", "city", "region"]


class GeocodeResult(Closed):
    matches: list[GeocodeMatch]


# 9. run_query: a plain union of scalars, Any


class RunQueryParams(Closed):
    sql: Annotated[str, Field(min_length=1)]
    parameters: dict[str, Union[str, int, bool, None]] = {}
    timeout_seconds: Annotated[int, Field(gt=0)] = 30


class RunQueryResult(Closed):
    rows: list[dict[str, Any]]
    row_count: int
    truncated: bool


# 10. moderate_content: a discriminated union as a result, sets and maps of an enum


class Category(str, enum.Enum):
    SPAM = "spam"
    ABUSE = "abuse"
    ADULT = "adult"


class Approve(Closed):
    decision: Literal["approve"]


class Reject(Closed):
    decision: Literal["reject"]
    reasons: Annotated[list[Category], Field(min_length=1)]


class Escalate(Closed):
    decision: Literal["escalate"]
    queue: str
    priority: Priority


class ModerateContentParams(Closed):
    text: Annotated[str, Field(max_length=10000)]
    language: Optional[Annotated[str, Field(pattern=r"^[a-z]{2}$")]] = None
    categories: set[Category]


class ModerateContentResult(Closed):
    verdict: Annotated[Union[Approve, Reject, Escalate], Field(discriminator="decision")]
    scores: dict[Category, float]


# 11. deploy_service: secrets, a discriminated union of strategies, an int enum


class Rolling(Closed):
    type: Literal["rolling"]
    max_unavailable: Annotated[int, Field(ge=0)] = 1


class Canary(Closed):
    type: Literal["canary"]
    percent: Annotated[int, Field(ge=1, le=100)]
    duration_minutes: Annotated[int, Field(ge=1)]


class DeployStatus(enum.IntEnum):
    QUEUED = 0
    RUNNING = 1
    DONE = 2
    FAILED = 3


class DeployServiceParams(Closed):
    service: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{1,62}$")]
    version: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]
    environment: Environment
    replicas: Annotated[int, Field(ge=1, le=50)] = 2
    secrets: dict[str, SecretStr] = {}
    strategy: Union[Rolling, Canary] = Field(discriminator="type")


class DeployServiceResult(Closed):
    deployment_id: uuid.UUID
    status: DeployStatus
    started_at: datetime.datetime
    finished_at: Optional[datetime.datetime] = None


# 12. extract_invoice: nested models reused, Decimals, dates


class Party(Closed):
    name: str
    vat_id: Optional[str] = None
    address: Address


class InvoiceLine(Closed):
    description: str
    quantity: Decimal
    unit_price: Decimal
    tax_rate: Annotated[Decimal, Field(ge=0, le=1)]


class ExtractInvoiceParams(Closed):
    document_url: str
    pages: Optional[tuple[int, int]] = None
    currency_hint: Optional[Currency] = None


class ExtractInvoiceResult(Closed):
    invoice_number: str
    issued_on: datetime.date
    due_on: Optional[datetime.date] = None
    total: Decimal
    currency: Currency
    vendor: Party
    buyer: Party
    lines: list[InvoiceLine]


# 13. sync_inventory: Literal[1, 2], mixed literals, lists of optional fields


class SyncIssue(Closed):
    sku: str
    expected: Optional[int]
    found: Optional[int]
    severity: Literal["warning", 1, 2]


class SyncInventoryParams(Closed):
    warehouse_id: Annotated[int, Field(ge=1)]
    counts: dict[str, Annotated[int, Field(ge=0)]]
    mode: Literal[1, 2]
    dry_run: bool = False


class SyncInventoryResult(Closed):
    changed: int
    issues: list[SyncIssue]
    checked_at: datetime.datetime
    mode: Literal[1, 2]


MODELS = [
    ResizeImageParams,
    ResizeImageResult,
    ChargeCardParams,
    ChargeCardResult,
    SendNotificationParams,
    SendNotificationResult,
    ConvertBalancesParams,
    ConvertBalancesResult,
    ProcessOrderParams,
    ProcessOrderResult,
    SummariseTreeParams,
    SummariseTreeResult,
    ScheduleJobParams,
    ScheduleJobResult,
    GeocodeParams,
    GeocodeResult,
    RunQueryParams,
    RunQueryResult,
    ModerateContentParams,
    ModerateContentResult,
    DeployServiceParams,
    DeployServiceResult,
    ExtractInvoiceParams,
    ExtractInvoiceResult,
    SyncInventoryParams,
    SyncInventoryResult,
]
