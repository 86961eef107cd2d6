"""The database schema: datasets and their items, runs, and one row per model call.

The database is the truth about a run: its status, its progress and every call. A page
or process can die at any moment; what was stored stays stored. Schema changes go
through Alembic migrations in `evalcore/store/migrations/`.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import JSON, Column, DateTime, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evalcore.store.types import NEVER_REUSE_IDS, utcnow


class Dataset(SQLModel, table=True):
    """An imported question set."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    format: str = Field(description="detected or chosen format, e.g. codah, math23k, mapped")
    task_type: str = Field(description="task type of most items; items carry their own")
    language: str = Field(default="en")
    source_file: str = ""
    sha256: str = Field(default="", index=True, description="content hash, to notice re-imports")
    item_count: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    created_by: str = Field(default="", description="who imported it (migration 0006)")
    meta: dict[str, Any] = Field(default_factory=dict,
                                 sa_column=Column(JSON, nullable=False, default=dict))


class Item(SQLModel, table=True):
    """One question of a dataset, normalised (question, reference, choices, task type)."""

    __table_args__ = (UniqueConstraint("dataset_id", "idx", name="uq_item_dataset_idx"),
                      NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="dataset.id", index=True)
    idx: int = Field(description="0-based position in the source file")
    question: str = Field(sa_column=Column(Text, nullable=False))
    reference: Optional[str] = Field(default=None, sa_column=Column(Text))
    choices: list[str] = Field(default_factory=list,
                               sa_column=Column(JSON, nullable=False, default=list))
    task_type: str
    language: str = "en"
    meta: dict[str, Any] = Field(default_factory=dict,
                                 sa_column=Column(JSON, nullable=False, default=dict))


class Run(SQLModel, table=True):
    """One evaluation run. Status and progress are updated as calls finish."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    kind: str = Field(index=True, description="eval, stability, robustness, fairness")
    status: str = Field(default="queued", index=True,
                        description="queued, running, done, failed, cancelled")
    name: str = ""
    dataset_id: Optional[int] = Field(default=None, foreign_key="dataset.id", index=True)
    model: str = ""
    judge: str = Field(default="rules", description="'rules' or a judge model name")
    rounds: int = 1
    config: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    heartbeat_at: Optional[datetime] = None
    total: int = 0
    done: int = 0
    errors: int = 0
    retries: int = 0
    cancel_requested: bool = False
    error: Optional[str] = Field(default=None, sa_column=Column(Text))


class Call(SQLModel, table=True):
    """One model call (stage 'answer' or 'judge') of one item in one round of a run."""

    __table_args__ = (
        UniqueConstraint("run_id", "item_id", "round", "stage", name="uq_call_unit"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    round: int = Field(description="1-based round number")
    stage: str = Field(default="answer", description="answer or judge")
    model: str = ""
    prompt: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    answer: Optional[str] = Field(default=None, sa_column=Column(Text))
    score: Optional[float] = None
    correct: Optional[bool] = None
    reason: Optional[str] = Field(default=None, sa_column=Column(Text))
    extracted: Optional[str] = Field(default=None, sa_column=Column(Text))
    """What the rules scorer read from the answer (a number, an option index ...): the
    answer that consistency counts, so "800" and "The answer is 800 m" agree."""
    latency_ms: Optional[float] = None
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    error: Optional[str] = Field(default=None, sa_column=Column(Text))
    attempts: int = 1
    created_at: datetime = Field(default_factory=utcnow)


class AttackSet(SQLModel, table=True):
    """A perturbed copy of a dataset with its lineage (source, level, parameters, seed).

    The attacked questions live as Items of `dataset_id` (a derived dataset), so runs
    evaluate them like any other item; `AttackItem` links each one to its clean source
    and carries the checks and the human review.
    """

    __tablename__ = "attack_set"
    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    source_dataset_id: int = Field(foreign_key="dataset.id", index=True)
    dataset_id: Optional[int] = Field(default=None, foreign_key="dataset.id",
                                      description="the derived dataset holding attacked items")
    level: str = Field(description="char, word, sentence")
    origin: str = Field(default="generated", description="generated or imported")
    seed: Optional[int] = None
    params: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    item_count: int = 0


class AttackItem(SQLModel, table=True):
    """One attacked question: original vs attacked, what changed, checks, review state."""

    __tablename__ = "attack_item"
    __table_args__ = (
        UniqueConstraint("attack_set_id", "source_item_id", name="uq_attack_item_source"),
        NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    attack_set_id: int = Field(foreign_key="attack_set.id", index=True)
    source_item_id: int = Field(foreign_key="item.id", index=True)
    attacked_item_id: Optional[int] = Field(default=None, foreign_key="item.id")
    original: str = Field(sa_column=Column(Text, nullable=False))
    attacked: str = Field(sa_column=Column(Text, nullable=False))
    attack_num: int = 0
    """Insertions (char level) or replacements (word level) made."""
    pairs: list[Any] = Field(default_factory=list,
                             sa_column=Column(JSON, nullable=False, default=list))
    """Word level: [original, replacement] pairs."""
    similarity: Optional[float] = None
    """Semantic similarity original vs attacked (multilingual embeddings), 0..1."""
    flags: list[str] = Field(default_factory=list,
                             sa_column=Column(JSON, nullable=False, default=list))
    """Safeguard findings, e.g. number_changed, option_dropped, low_similarity."""
    status: str = Field(default="pending", index=True,
                        description="pending, approved, rejected")
    reviewer: str = ""
    reviewed_at: Optional[datetime] = None
    edited: bool = False
    note: str = ""


class ReviewEvent(SQLModel, table=True):
    """One review action on an attack item, kept for good: the audit trail of a set.

    `AttackItem` holds the current state (status, last reviewer); this keeps every step,
    so an approval that was later reverted, or an edit, can still be traced to a person.
    """

    __tablename__ = "review_event"
    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    attack_set_id: int = Field(foreign_key="attack_set.id", index=True)
    attack_item_id: int = Field(foreign_key="attack_item.id", index=True)
    status: str = Field(description="the item's status after the action")
    previous_status: str = Field(description="its status before")
    edited: bool = False
    """The action replaced the attacked text (then `attacked` is the new text)."""
    attacked: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    reviewer: str
    note: str = ""
    at: datetime = Field(default_factory=utcnow)


class Job(SQLModel, table=True):
    """One piece of long work (a run, a re-judge pass, a judge-analysis pass, an attack-set
    generation) that any worker process may claim.

    The lease makes the database the arbiter of who works on what: a worker holds a job
    while `lease_expires_at` lies ahead and renews it as it goes; an expired lease means
    the worker died, and any other worker takes the job over. Every claim increments
    `token` (a fencing token): each write of a worker checks it in the same transaction,
    so a worker that was only paused cannot write after its job was taken over.
    """

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    kind: str = Field(index=True,
                      description="run, rejudge, judge_analysis, attack, attack_import")
    status: str = Field(default="queued", index=True,
                        description="queued, running, done, failed, cancelled")
    run_id: Optional[int] = Field(default=None, foreign_key="run.id", index=True)
    attack_set_id: Optional[int] = Field(default=None, foreign_key="attack_set.id", index=True)
    params: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    label: str = ""
    owner: str = Field(default="", description="the worker holding the lease")
    token: int = Field(default=0, description="fencing token: +1 at every claim")
    lease_expires_at: Optional[datetime] = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True))
    heartbeat_at: Optional[datetime] = Field(default=None,
                                             sa_column=Column(DateTime(timezone=True)))
    attempts: int = Field(default=0, description="claims so far (a release gives one back)")
    max_attempts: int = 3
    done: int = 0
    total: int = 0
    cancel_requested: bool = False
    error: Optional[str] = Field(default=None, sa_column=Column(Text))
    result: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), default=utcnow))
    started_at: Optional[datetime] = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    finished_at: Optional[datetime] = Field(default=None,
                                            sa_column=Column(DateTime(timezone=True)))


class ModelBudget(SQLModel, table=True):
    """The share of one model's concurrency a running job holds, so that all workers
    together never have more calls in flight than the model's `concurrency`.

    A holder renews its row like a lease; a row past `expires_at` belongs to a dead
    worker and is freed by the next holder that syncs (`store.model_share.sync_share`).
    """

    __tablename__ = "model_budget"

    model: str = Field(primary_key=True)
    holder: str = Field(primary_key=True, description="job<id>:<stage>")
    capacity: int = Field(description="the model's concurrency as this holder knows it")
    want: int = Field(description="slots the holder could use")
    slots: int = Field(description="slots held: its calls in flight never exceed this")
    expires_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class RunItem(SQLModel, table=True):
    """One question of a run, in the order the run asks them, with its rendered prompt:
    stored once per run (not once per round), so a 100-round run keeps one copy."""

    __tablename__ = "run_item"
    __table_args__ = (UniqueConstraint("run_id", "item_id", name="uq_run_item"),)

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    position: int = Field(primary_key=True, description="0-based order in the run")
    item_id: int = Field(foreign_key="item.id", index=True)
    prompt: Optional[str] = Field(default=None, sa_column=Column(Text))
    """The prompt as sent (None for runs made before prompts were stored here)."""
# ------------------------------------------------------------------ team mode (migration 0006)


class AppUser(SQLModel, table=True):
    """A person who signed in (or was added by an admin) and their role (evalcore.auth.roles)."""

    __tablename__ = "app_user"

    id: Optional[int] = Field(default=None, primary_key=True)
    email: str = Field(unique=True, description="lower-cased; the identity every action carries")
    name: str = ""
    role: str = Field(description="viewer, evaluator, reviewer or admin")
    created_at: datetime = Field(default_factory=utcnow)
    last_seen: Optional[datetime] = None


class AuditEvent(SQLModel, table=True):
    """One state change: who did what to which object, kept for good (evalcore.auth.audit)."""

    __tablename__ = "audit_event"
    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, index=True)
    actor: str = Field(index=True)
    action: str = Field(description="e.g. run.start, dataset.delete, review.approve")
    object_type: str = ""
    object_id: str = ""
    detail: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))


class ModelEntry(SQLModel, table=True):
    """One model of the shared registry (team mode): the models.toml table as JSON.

    Keys stay the NAMES of environment variables, resolved where the call is made.
    """

    __tablename__ = "model_entry"

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    config: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    updated_by: str = ""
    updated_at: datetime = Field(default_factory=utcnow)


class Upload(SQLModel, table=True):
    """A file a user handed in for a job to process (an attacked file to import): kept in
    the database so a worker on any machine can read it, deleted when the job is done.
    """

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    filename: str
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))


class Submission(SQLModel, table=True):
    """One start form submission: its idempotency key and what it created (a run, or a
    job), so a double click or a resent request never creates a second one (migration
    0009). The key is unique; the row is written before the object, filled in after."""

    key: str = Field(primary_key=True, description="idempotency key of the submission")
    object_type: str = Field(description="run or job")
    object_id: Optional[int] = Field(default=None, description="None while being created")
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))


class Worker(SQLModel, table=True):
    """A worker process's heartbeat (migration 0010): who executes jobs, and the state of
    the embedded model in its process (`state["local"]`: stopped / starting / running),
    so the app describes the model runs really use."""

    name: str = Field(primary_key=True)
    host: str
    pid: int
    started_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    heartbeat_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    state: dict[str, Any] = Field(default_factory=dict,
                                  sa_column=Column(JSON, nullable=False, default=dict))


# ------------------------------------------------------------------ review queues (migration 0022)


class ReviewQueue(SQLModel, table=True):
    """Items a team reviews together (evalcore.store.review_queues): attacked questions of
    an attack set ("does the attack keep the meaning?") or a run's judged answers ("is the
    judge's verdict right?"), with the guidelines every card shows."""

    __tablename__ = "review_queue"
    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    kind: str = Field(description="attack or answers")
    attack_set_id: Optional[int] = Field(default=None, index=True)
    run_id: Optional[int] = Field(default=None, index=True)
    items: str = Field(default="all", description="all, flagged or unflagged")
    sample: Optional[int] = Field(default=None, description="items drawn, None: every one")
    seed: int = 0
    guidelines: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    double_share: float = Field(default=0.0, description="share of items reviewed twice, 0..1")
    reserve_s: float = Field(default=900.0, description="how long a reservation lasts")
    item_count: int = 0
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))


class ReviewQueueItem(SQLModel, table=True):
    """One item of a queue, and its reservation: `holder` holds it while `held_until`
    lies ahead (a claim like a job's lease; a lapsed one returns it to the queue).

    The queue and its source (attack set, run) are linked without foreign keys: deleting a
    set or run leaves the people's verdicts, which stay countable, and a batch migration
    that rebuilds `call` is not held up by them."""

    __tablename__ = "review_queue_item"
    __table_args__ = (UniqueConstraint("queue_id", "position", name="uq_review_queue_position"),
                      NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    queue_id: int = Field(foreign_key="review_queue.id", index=True)
    position: int = Field(description="0-based order in which reviewers get the items")
    attack_item_id: Optional[int] = None
    call_id: Optional[int] = None
    needed: int = Field(default=1, description="reviews wanted: 2 when picked for a second")
    holder: str = ""
    held_until: Optional[datetime] = Field(default=None,
                                           sa_column=Column(DateTime(timezone=True)))


class ReviewDecision(SQLModel, table=True):
    """One reviewer's verdict on one queue item (approve/reject, right/wrong, or skip),
    with the edit they proposed; one row per reviewer per item."""

    __tablename__ = "review_decision"
    __table_args__ = (UniqueConstraint("queue_item_id", "reviewer", name="uq_review_decision"),
                      NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    queue_id: int = Field(foreign_key="review_queue.id", index=True)
    queue_item_id: int = Field(foreign_key="review_queue_item.id", index=True)
    reviewer: str
    verdict: str = Field(description="approve, reject, right, wrong or skip")
    question: Optional[str] = Field(default=None, sa_column=Column(Text))
    options: dict[str, Any] = Field(default_factory=dict,
                                    sa_column=Column(JSON, nullable=False, default=dict))
    """Edited options, {"index": text}."""
    at: datetime = Field(default_factory=utcnow,
                         sa_column=Column(DateTime(timezone=True), nullable=False, default=utcnow))


class ReviewAdjudication(SQLModel, table=True):
    """The final verdict on an item the reviewers disagreed on, kept beside their
    decisions (which stay as they were)."""

    __tablename__ = "review_adjudication"
    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    queue_id: int = Field(foreign_key="review_queue.id", index=True)
    queue_item_id: int = Field(foreign_key="review_queue_item.id", unique=True)
    verdict: str
    adjudicator: str
    note: str = ""
    at: datetime = Field(default_factory=utcnow,
                         sa_column=Column(DateTime(timezone=True), nullable=False, default=utcnow))


# ------------------------------------------------------------------ run summaries (migration 0023)


class RunSummary(SQLModel, table=True):
    """What a finished run's figures need, computed once from its calls, so the run's page,
    `runs show`, compare, leaderboard, trend and the trust report read one row, not every
    call (`store/run_summary.py`): `outcomes` (token usage, answered-call totals, per item
    right / wrong / no-verdict rounds) and each report's figures without its per-round
    detail. `state` is the run's state when they were computed (status, progress, its
    newest call's id): any change to the run or its calls (a resume, a retry of
    failed calls, a re-judging pass) makes the row stale, and the next read computes again."""

    __tablename__ = "run_summary"

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    name: str = Field(primary_key=True, description="what is stored, e.g. outcomes")
    state: str = Field(description="the run's state key when computed")
    data: str = Field(sa_column=Column(Text, nullable=False))
    """JSON text (not a JSON column: PostgreSQL's refuses the NaN a figure may hold)."""
