"""Human review of attack items: approve, reject or edit, in the database, shared by reviewers.

Why in the database: two reviewers (two browsers, or a page and the CLI) can split one
set; each action is one short transaction. Last write wins per item, unless the caller
passes `expected_status` (the status it showed the reviewer): the update then only
happens if the item still has that status, else `ReviewConflictError` says who changed
it and when. Only explicit actions approve a flagged item: `approve_unflagged` never
touches items with flags. Every action records the reviewer and the time (UTC) on the
item and, in the same transaction, as a `ReviewEvent`: the item shows the latest state,
`review_log` the whole history (an approval later reverted is still on record).

An edit replaces the attacked text in the AttackItem AND in the derived dataset's Item
(what runs ask), re-runs the engine's `check_attack` (new similarity and flags), sets
`edited`, and leaves the item pending unless the reviewer approves it in the same step.
A reviewer may also edit the attacked options (labels and answer key never change): they
go to the derived Item's choices (what runs ask and the export's attacked_choiceN), the
guard's option checks re-run, and the log's text lists them under the question.
`pairs` (each tagged with where it is once any is in an option) and `attack_num` (distinct
swaps plus insertions/deletions, as the generator counts) are recomputed from the edited
texts (`item_changes`): what differs from the original now, not what the generator did.
"""
from __future__ import annotations

import difflib
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Optional

from evalcore.dataset import get_dataset
from evalcore.dataset.language import detect_language
from evalcore.dataset.numbering import item_positions, question_label
from evalcore.dataset.records import Question
from evalcore.perturb.attack import _option_similarities, option_flags
from evalcore.perturb.degenerate import flag_reasons
from evalcore.perturb.guard import DEFAULT_SIMILARITY_THRESHOLD, check_attack
from evalcore.perturb.sets import AttackSetError
from evalcore.perturb.tokens import segment
from evalcore.store import reviews
from evalcore.store.types import utcnow
from evalcore.values import validated

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import AttackItem, AttackSet

Status = Literal["pending", "approved", "rejected"]
STATUSES: tuple[str, ...] = ("pending", "approved", "rejected")


class ReviewConflictError(AttackSetError):
    """Another reviewer changed the item since it was shown."""


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise AttackSetError(f"unknown review status {status!r}; use one of {', '.join(STATUSES)}")


def _check_reviewer(reviewer: str) -> str:
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise AttackSetError("say who reviews (reviewer name): the review log records it")
    return reviewer


def get_attack_item(engine: "Engine", attack_item_id: int) -> "AttackItem":
    """One attack item; AttackSetError if there is none."""
    item = reviews.get_item(engine, attack_item_id)
    if item is None:
        raise AttackSetError(f"no attack item {attack_item_id}; list a set's items with "
                             "`attacks show ID`")
    return item


def list_attack_items(engine: "Engine", attack_set_id: int, *, status: Optional[str] = None,
                      flag: Optional[str] = None, flagged: Optional[bool] = None,
                      offset: int = 0, limit: Optional[int] = None) -> list["AttackItem"]:
    """The set's items in source order, filtered by status, by one flag, or by having flags."""
    if status is not None:
        _check_status(status)
    items = reviews.set_items(engine, attack_set_id, status)
    # flags are a JSON list: filtered here, the same on SQLite and PostgreSQL
    if flag is not None:
        items = [i for i in items if flag in (i.flags or [])]
    if flagged is not None:
        items = [i for i in items if bool(i.flags) == flagged]
    return items[offset: None if limit is None else offset + limit]


def question_numbers(engine: "Engine", items: list["AttackItem"]) -> dict[int, int]:
    """attack item id -> the question's 1-based number in its source dataset.

    Reviewers know questions by their place in the file; attack item ids keep counting
    across sets (set #2 starts at 31), so they label nothing a reviewer can look up.
    """
    found = item_positions(engine, (int(i.source_item_id) for i in items))
    return {int(i.id): found[i.source_item_id] + 1 for i in items if i.source_item_id in found}


def question_labels(engine: "Engine", items: list["AttackItem"]) -> dict[int, str]:
    """attack item id -> "Q5", the label the review cards show (`question_label`)."""
    numbers = question_numbers(engine, items)
    return {int(i.id): question_label(numbers[int(i.id)] - 1 if int(i.id) in numbers else None)
            for i in items}


def option_diffs(engine: "Engine", items: list["AttackItem"], *, every: bool = False
                 ) -> dict[int, list[tuple[int, str, str]]]:
    """attack item id -> (index, original option, attacked option) of each option the
    attack changed (word attacks of choice items), from the clean and attacked items.

    `every`: all options of an item that has them, changed or not (a review card: a
    question stem is judged with its endings, and any option may need an edit).
    """
    ids = sorted({int(i.source_item_id) for i in items}
                 | {int(i.attacked_item_id) for i in items if i.attacked_item_id is not None})
    choices = reviews.item_choices(engine, ids)
    out: dict[int, list[tuple[int, str, str]]] = {}
    for item in items:
        clean = choices.get(int(item.source_item_id), [])
        if item.attacked_item_id is None:
            attacked = clean if every else []
        else:
            attacked = choices.get(int(item.attacked_item_id)) or clean
        found = (list(enumerate(zip(clean, attacked))) if every
                 else [(i, pair) for i, pair in enumerate(zip(clean, attacked))
                       if pair[0] != pair[1]])
        if found:
            out[int(item.id)] = [(i, a, b) for i, (a, b) in found]
    return out


def unique_pairs(pairs: list[Any]) -> list[list[str]]:
    """[original, replacement] pairs, each once, in first-seen order (a word replaced twice
    in one question is one pair); a stored [old, new, where] counts as [old, new]."""
    seen: dict[tuple[str, str], None] = {}
    for pair in pairs or []:
        if len(pair) in (2, 3) and pair[0] != pair[1]:
            seen.setdefault((str(pair[0]), str(pair[1])), None)
    return [list(p) for p in seen]


def option_pairs(pairs: list[Any]) -> list[list[str]]:
    """The stored [old, new, where] pairs made in options, narrowed to their options."""
    out = []
    for pair in pairs or []:
        if len(pair) == 3:
            where = ", ".join(w for w in str(pair[2]).split(", ") if w != "question")
            if where:
                out.append([str(pair[0]), str(pair[1]), where])
    return out


def option_changes(original: list[str], attacked: list[str]) -> list[tuple[int, str, str]]:
    """(index, original option, attacked option) for each option the attack changed."""
    return [(i, a, b) for i, (a, b) in enumerate(zip(original, attacked)) if a != b]


def _trim(old: str, new: str) -> tuple[str, str]:
    """Drop the characters both ends share ("买书" -> "购书" is "买" -> "购")."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start:len(old) - end], new[start:len(new) - end]


def _diff(original: str, attacked: str, language: str) -> tuple[list[list[str]], int]:
    """([old, new] replaced stretches, in order, repeats kept; inserted or deleted stretches)
    from `original` to `attacked`, diffed on the attack engine's words (jieba for Chinese)."""
    lang = language if language in ("zh", "en") else detect_language(original)
    old = [t.text for t in segment(original, lang)]
    new = [t.text for t in segment(attacked, lang)]
    pairs, other = [], 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            a, b = "".join(old[i1:i2]), "".join(new[j1:j2])
            pair = list(_trim(a, b) if lang == "zh" else (a.strip(), b.strip()))
            if pair[0] and pair[1]:
                pairs.append(pair)
                continue
        if tag != "equal":
            other += 1
    return pairs, other


def changes(original: str, attacked: str, language: str) -> tuple[list[list[str]], int]:
    """(replaced [old, new] pairs without repeats, changed stretches) from `original` to
    `attacked`, diffed on the attack engine's words (jieba for Chinese)."""
    pairs, other = _diff(original, attacked, language)
    return unique_pairs(pairs), len(pairs) + other


def item_changes(texts: list[tuple[str, str, str]], language: str
                 ) -> tuple[list[list[str]], int]:
    """(swaps, edits) of an item's (where, original, attacked) texts ("question", "option 2").

    A swap is one distinct old -> new pair wherever it was made: "I will -> I'll" in four
    options is 1 swap, "exam -> test" and "receive -> get" in one option are 2. Swaps are
    [old, new, where] with every place ", "-joined once any is an option, else [old, new]
    (the generator's storage, `set_storage.pairs_where`). `edits` counts places, as the
    method's attack_num and the generator do ("I will -> I'll" in four options is 4),
    plus inserted or deleted stretches (not swaps, still changes): the new attack_num.
    """
    places: dict[tuple[str, str], list[str]] = {}
    other = 0
    for where, before, after in texts:
        if before == after:
            continue
        pairs, extra = _diff(before, after, language)
        other += extra + len(pairs)
        for old, new in unique_pairs(pairs):
            places.setdefault((old, new), [])
            if where not in places[(old, new)]:
                places[(old, new)].append(where)
    in_options = any(w != "question" for ws in places.values() for w in ws)
    swaps = [[old, new, ", ".join(ws)] if in_options else [old, new]
             for (old, new), ws in places.items()]
    return swaps, other


def swaps_line(pairs: list[Any]) -> str:
    """ "2 swaps, in the question and 3 options": distinct old -> new pairs and where
    (`item_changes`), the count a reviewer checks against the pairs listed."""
    swaps = unique_pairs(pairs)
    places = {w for p in pairs or [] if len(p) == 3 for w in str(p[2]).split(", ")}
    if swaps and not places:
        places = {"question"}
    options = len([w for w in places if w != "question"])
    parts = (["the question"] if "question" in places else []) + (
        [f"{options} option{'s' if options != 1 else ''}"] if options else [])
    head = f"{len(swaps)} swap{'s' if len(swaps) != 1 else ''}"
    return head + (f", in {' and '.join(parts)}" if parts else "")


def attack_item_info(item: "AttackItem", number: Optional[int] = None) -> dict[str, Any]:
    """A JSON-ready view of one item for the review table and the CLI; `number` is the
    question's 1-based number in its source dataset (`question_numbers`)."""
    return {"id": item.id, "number": number, "attack_set_id": item.attack_set_id,
            "source_item_id": item.source_item_id, "attacked_item_id": item.attacked_item_id,
            "original": item.original, "attacked": item.attacked, "attack_num": item.attack_num,
            "pairs": unique_pairs(item.pairs),
            "where": {str(p[0]): str(p[2]) for p in item.pairs or [] if len(p) == 3},
            "similarity": item.similarity, "flags": item.flags,
            "reasons": flag_reasons(item.flags, item.original, item.attacked),
            "status": item.status, "reviewer": item.reviewer,
            "reviewed_at": item.reviewed_at.isoformat() if item.reviewed_at else None,
            "edited": item.edited, "note": item.note}


def _conflict(engine: "Engine", attack_item_id: int, expected: Optional[str]) -> AttackSetError:
    """Who changed the item meanwhile, naming it as the cards do ("Q5 of set #2")."""
    item = get_attack_item(engine, attack_item_id)  # raises if it is gone
    when = f" at {item.reviewed_at:%Y-%m-%d %H:%M:%S} UTC" if item.reviewed_at else ""
    who = f" by {item.reviewer}" if item.reviewer else ""
    label = question_labels(engine, [item])[int(item.id)]
    return ReviewConflictError(
        f"{label} of attack set #{item.attack_set_id} is now '{item.status}'"
        f"{who}{when}, not '{expected}' as shown; reload it and review again")


def set_review(engine: "Engine", attack_item_id: int, status: str, *, reviewer: str,
               note: Optional[str] = None, expected_status: Optional[str] = None) -> "AttackItem":
    """Set an item's review status (approve, reject, back to pending) and record who and when."""
    _check_status(status)
    reviewer = _check_reviewer(reviewer)
    if expected_status is not None:
        _check_status(expected_status)
    values: dict[str, Any] = {"status": status, "reviewer": reviewer, "reviewed_at": utcnow()}
    if note is not None:
        values["note"] = note
    if not reviews.review_item(engine, attack_item_id, values, expected_status):
        raise _conflict(engine, attack_item_id, expected_status)
    return get_attack_item(engine, attack_item_id)


def approve(engine: "Engine", attack_item_id: int, *, reviewer: str,
            expected_status: Optional[str] = None, note: Optional[str] = None) -> "AttackItem":
    """Approve one item (flagged ones too: this is the explicit action)."""
    return set_review(engine, attack_item_id, "approved", reviewer=reviewer, note=note,
                      expected_status=expected_status)


def reject(engine: "Engine", attack_item_id: int, *, reviewer: str,
           expected_status: Optional[str] = None, note: Optional[str] = None) -> "AttackItem":
    """Reject one item: it stays stored but no robustness run uses it."""
    return set_review(engine, attack_item_id, "rejected", reviewer=reviewer, note=note,
                      expected_status=expected_status)


def _edited_options(attack_item_id: int, source: Any, derived: Any,
                    options: "Optional[list[str] | dict[int, str]]") -> list[str]:
    """The attacked options after the edit: `options` (every option's text, or {0-based
    index: text} of those edited, the rest as stored) checked against the clean item's
    (same count, none empty), or as stored (None: the edit is of the question only)."""
    stored = list((derived.choices if derived is not None else None) or source.choices or [])
    if options is None:
        return stored
    clean = list(source.choices or [])
    if not clean or derived is None:
        raise AttackSetError(f"attack item {attack_item_id} has no options to edit; "
                             "edit the question only")
    if isinstance(options, dict):
        wrong = sorted(i for i in options if not 0 <= int(i) < len(stored))
        if wrong:
            raise AttackSetError(f"attack item {attack_item_id} has no option {wrong[0]} "
                                 f"(0-based; it has {len(stored)})")
        options = [options.get(i, o) for i, o in enumerate(stored)]
    options = [(o or "").strip() for o in options]
    if len(options) != len(clean):
        raise AttackSetError(f"attack item {attack_item_id}: {len(options)} options given, "
                             f"the question has {len(clean)}; labels and the answer key "
                             "never change, so send one text per option")
    empty = [chr(65 + i) if i < 26 else str(i + 1) for i, o in enumerate(options) if not o]
    if empty:
        raise AttackSetError(f"attack item {attack_item_id}: option {', '.join(empty)} is "
                             "empty; write its attacked text (or the original) or reject "
                             "the item")
    return options


def _option_flags(question: Question, options: list[str]) -> tuple[Optional[float], list[str]]:
    """The generator's guard on changed options (numbers, names, e5 similarity): the lowest
    similarity of a changed option and the flags (`attack.option_flags`)."""
    sims = _option_similarities([question], [options], True)[0]
    flags = option_flags(question, options, sims, DEFAULT_SIMILARITY_THRESHOLD)
    return min((s for s in sims if s is not None), default=None), flags


def event_text(attacked: str, clean: list[str], options: list[str]) -> str:
    """What the review log keeps for an edit: the question, then each attacked option that
    differs from the clean one as "option B: ..." (the log has one text column)."""
    lines = [f"option {chr(65 + i) if i < 26 else i + 1}: {o}"
             for i, (c, o) in enumerate(zip(clean, options)) if c != o]
    return "\n".join([attacked, *lines])


def edit_attack_item(engine: "Engine", attack_item_id: int, attacked: str, *, reviewer: str,
                     expected_status: Optional[str] = None, approve: bool = False,
                     note: Optional[str] = None,
                     options: "Optional[list[str] | dict[int, str]]" = None
                     ) -> "AttackItem":
    """Replace the attacked text (and with `options`, the attacked options: one text per
    option, labels and answer key unchanged), re-check it, and store it in the item and the
    derived dataset. Pairs, their places and attack_num are recomputed (`item_changes`)."""
    reviewer = _check_reviewer(reviewer)
    attacked = (attacked or "").strip()
    if not attacked:
        raise AttackSetError(f"attack item {attack_item_id}: the edited question is empty; "
                             "write the attacked question or reject the item")
    current = get_attack_item(engine, attack_item_id)
    source = reviews.get_source_item(engine, current.source_item_id)
    derived = (reviews.get_source_item(engine, current.attacked_item_id)
               if current.attacked_item_id is not None else None)
    clean = validated(Question, source, fail=lambda why: AttackSetError(  # a stored row
        f"attack item {attack_item_id}: its clean item is not a valid question ({why}); "
        "import that dataset again"))
    similarity, flags = check_attack(clean, attacked)
    edited = _edited_options(attack_item_id, source, derived, options)
    clean_options = list(source.choices or [])
    texts = [("question", current.original, attacked)] + [
        (f"option {i}", a, b) for i, (a, b) in enumerate(zip(clean_options, edited))]
    pairs, edits = item_changes(texts, source.language)
    if edited != clean_options:
        flags = [f for f in flags if f != "unchanged"]
        option_sim, more = _option_flags(clean, edited)
        flags += [f for f in more if f not in flags]
        if similarity is not None and option_sim is not None:
            similarity = min(similarity, option_sim)
    values: dict[str, Any] = {"attacked": attacked, "similarity": None if similarity is None
                              else float(similarity), "flags": [str(f) for f in flags],
                              "pairs": pairs, "attack_num": edits,
                              "edited": True, "status": "approved" if approve else "pending",
                              "reviewer": reviewer, "reviewed_at": utcnow()}
    if note is not None:
        values["note"] = note
    if expected_status is not None:
        _check_status(expected_status)
    if not reviews.review_item(engine, attack_item_id, values, expected_status,
                               attacked_item_id=current.attacked_item_id,
                               choices=edited if options is not None else None,
                               logged=event_text(attacked, clean_options, edited)):
        raise _conflict(engine, attack_item_id, expected_status)
    return get_attack_item(engine, attack_item_id)


def approve_unflagged(engine: "Engine", attack_set_id: int, *, reviewer: str) -> int:
    """Approve every PENDING item without flags; returns how many. Flagged items stay pending."""
    reviewer = _check_reviewer(reviewer)
    ids = [i.id for i in list_attack_items(engine, attack_set_id, status="pending", flagged=False)]
    return reviews.approve_pending(engine, attack_set_id, ids, reviewer=reviewer, at=utcnow(),
                                   note="bulk: approve unflagged")


def review_progress(engine: "Engine", attack_set_id: int) -> dict[str, Any]:
    """Counts by status, flagged counts, share reviewed, items per reviewer, last review time."""
    items = list_attack_items(engine, attack_set_id)
    by_status = Counter(i.status for i in items)
    flags = Counter(f for i in items for f in (i.flags or []))
    reviewed = [i for i in items if i.status != "pending"]
    last: Optional[datetime] = max((i.reviewed_at for i in items if i.reviewed_at), default=None)
    return {"total": len(items), **{s: by_status.get(s, 0) for s in STATUSES},
            "reviewed_share": len(reviewed) / len(items) if items else 0.0,
            "flagged": sum(1 for i in items if i.flags),
            "flagged_pending": sum(1 for i in items if i.flags and i.status == "pending"),
            "unflagged_pending": sum(1 for i in items if not i.flags and i.status == "pending"),
            "edited": sum(1 for i in items if i.edited),
            "flags": dict(flags.most_common()),
            "reviewers": dict(Counter(i.reviewer for i in reviewed if i.reviewer).most_common()),
            "last_reviewed_at": last.isoformat() if last else None}


def review_version(engine: "Engine", attack_set_id: int) -> tuple[int, int]:
    """(review actions, newest action's id) of a set in one aggregate query: it changes with
    every approval, rejection or edit, so it keys anything built from the set's reviews."""
    return reviews.review_version(engine, attack_set_id)


def review_log(engine: "Engine", attack_set_id: int,
               limit: Optional[int] = None) -> list[dict[str, Any]]:
    """Who did what and when: every review action on the set, newest first.

    `question` is the question as the cards name it ("Q5"), `id` the attack item (for
    the CLI's `--item`); `status` its status after the action, `previous_status` before;
    `attacked` the item's text at that moment (the new text for an edit).
    """
    events = reviews.review_events(engine, attack_set_id, limit)
    labels = question_labels(engine, list_attack_items(engine, attack_set_id)) if events else {}
    return [{"question": labels.get(int(e.attack_item_id), "?"), "id": e.attack_item_id,
             "status": e.status, "previous_status": e.previous_status,
             "reviewer": e.reviewer, "reviewed_at": e.at.isoformat(), "edited": e.edited,
             "note": e.note, "attacked": e.attacked} for e in events]


def attack_set_info(engine: "Engine", attack_set: "AttackSet") -> dict[str, Any]:
    """A JSON-ready summary: lineage, counts by status and flags."""
    source = get_dataset(engine, attack_set.source_dataset_id)
    return {"id": attack_set.id, "name": attack_set.name, "level": attack_set.level,
            "origin": attack_set.origin, "seed": attack_set.seed, "params": attack_set.params,
            "source_dataset_id": attack_set.source_dataset_id, "source_dataset": source.name,
            "dataset_id": attack_set.dataset_id, "items": attack_set.item_count,
            "created_by": attack_set.created_by,
            "created_at": attack_set.created_at.isoformat(),
            "review": review_progress(engine, int(attack_set.id))}
