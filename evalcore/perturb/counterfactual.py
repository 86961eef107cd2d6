"""Counterfactual fairness suites: prompts that differ only in a sensitive attribute.

A generator is a TOML table in `perturb/suites/<generator>.<lang>.toml` (see the README
there), never a function per case: slots x templates give the pairs, the axes give the
variants inside a pair. The page shows and edits the same data (`load_templates`,
`dump_templates`, `parse_templates`) and `generate_suite` turns it into a
`ParsedDataset` (format "fairness_suite", task type "open") whose items carry in `meta`
what the fairness metrics need: suite, category, pair_id, attributes, expected,
template_id, variant, label.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import string
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

import msgspec

from evalcore.dataset import store_parsed
from evalcore.dataset.records import ParsedDataset, Question
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from evalcore.store.tables import Dataset

Language = Literal["zh", "en"]
SUITES_DIR = Path(__file__).with_name("suites")
SUITE_FORMAT = "fairness_suite"
GENERATORS = ("occupations", "names", "age", "disability", "income", "intersection")
"""Built-in generators, one TOML per language in SUITES_DIR."""
RESERVED_FILL = "attributes"
"""Key inside an axis value that records the attributes it carries (names: gender + ethnicity)."""
PAIR_SEP = "|"
VARIANT_SEP = "×"


class SuiteError(EvalcoreError):
    """A suite template cannot be used (message names the generator, template or axis)."""


def list_generators(directory: Path | None = None) -> list[str]:
    """Generator names: the built-in ones, plus any `<name>.<lang>.toml` in `directory`."""
    names = list(GENERATORS)
    for folder in (SUITES_DIR, directory):
        if folder is not None and Path(folder).is_dir():
            for path in sorted(Path(folder).glob("*.*.toml")):
                name = path.name.split(".")[0]
                if name not in names:
                    names.append(name)
    return names


def template_path(generator: str, lang: Language, directory: Path | None = None) -> Path:
    """Where a generator's data lives: `directory` (user edits) first, then the built-ins."""
    for folder in (directory, SUITES_DIR):
        if folder is not None:
            path = Path(folder) / f"{generator}.{lang}.toml"
            if path.is_file():
                return path
    raise SuiteError(f"no templates for generator {generator!r} in language {lang!r} "
                     f"(looked for {generator}.{lang}.toml in {directory or ''} {SUITES_DIR}); "
                     f"generators: {', '.join(list_generators(directory))}")


def load_templates(generator: str, lang: Language, *, directory: Path | None = None
                   ) -> dict[str, Any]:
    """The editable data of a generator (slots, axes, templates ...), validated."""
    path = template_path(generator, lang, directory)
    return parse_templates(path.read_text(encoding="utf-8"), source=str(path))


def parse_templates(text: str, *, source: str = "templates") -> dict[str, Any]:
    """TOML text (as edited in the page) -> a validated spec dict; SuiteError names the problem."""
    import tomllib

    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{source}: not valid TOML ({exc}); fix the line it names") from None
    check_spec(spec, source=source)
    return spec


def dump_templates(spec: dict[str, Any]) -> str:
    """A spec dict as TOML text, for a text area or a file."""
    import tomli_w

    return tomli_w.dumps(spec, multiline_strings=True)


def save_templates(spec: dict[str, Any], directory: Path) -> Path:
    """Write an edited spec to `directory/<generator>.<lang>.toml`; user edits win over
    the built-ins in `load_templates(..., directory=...)`."""
    check_spec(spec)
    path = Path(directory) / f"{spec['generator']}.{spec['language']}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_templates(spec), encoding="utf-8")
    return path


def check_spec(spec: dict[str, Any], *, source: str = "templates") -> None:
    """Raise SuiteError unless every template's placeholders are filled by slots or by every
    value of every axis (a variant missing a fill would silently change more than the
    attribute)."""
    where = f"{source} ({spec.get('generator', '?')}.{spec.get('language', '?')})"
    for key in ("generator", "language"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise SuiteError(f"{where}: set `{key} = \"...\"` at the top")
    if spec["language"] not in ("zh", "en"):
        raise SuiteError(f"{where}: language must be \"zh\" or \"en\", not {spec['language']!r}")
    axes = spec.get("axes")
    if not isinstance(axes, dict) or not axes:
        raise SuiteError(f"{where}: add at least one axis, e.g. [axes.gender.female] with "
                         "what that value fills in (possessive = \"her\")")
    slots = spec.get("slots") or {}
    for name, values in slots.items():
        if not isinstance(values, list) or not values:
            raise SuiteError(f"{where}: slot {name!r} must be a non-empty list")
    templates = spec.get("templates")
    if not isinstance(templates, list) or not templates:
        raise SuiteError(f"{where}: add at least one [[templates]] with an id and a text")
    fills_per_axis: dict[str, set[str]] = {}
    for attribute, values in axes.items():
        if not isinstance(values, dict) or len(values) < 2:
            raise SuiteError(f"{where}: axis {attribute!r} needs at least two values "
                             "(a pair compares variants)")
        keysets = {value: set(fills) - {RESERVED_FILL} for value, fills in values.items()}
        common = set.intersection(*keysets.values())
        for value, keys in keysets.items():
            if keys != common:
                raise SuiteError(f"{where}: value {value!r} of axis {attribute!r} fills "
                                 f"{sorted(keys)} but other values fill {sorted(common)}; "
                                 "every value must fill the same placeholders")
        fills_per_axis[attribute] = common
    known = set(slots).union(*fills_per_axis.values())
    seen: set[str] = set()
    for position, template in enumerate(templates):
        tid = template.get("id") if isinstance(template, dict) else None
        if not tid or not isinstance(template.get("text"), str):
            raise SuiteError(f"{where}: template #{position + 1} needs an `id` and a `text`")
        if tid in seen:
            raise SuiteError(f"{where}: template id {tid!r} is used twice; ids must be unique")
        seen.add(tid)
        try:
            used = {f for _, f, _, _ in string.Formatter().parse(template["text"]) if f}
        except ValueError as exc:
            raise SuiteError(f"{where}: template {tid!r} has broken braces ({exc}); write "
                             "placeholders as {occupation}") from None
        unknown = used - known
        if unknown:
            raise SuiteError(f"{where}: template {tid!r} uses {sorted(unknown)}, which no slot "
                             f"or axis fills; known placeholders: {sorted(known)}")
        if "label" in template and template["label"] not in (0, 1):
            raise SuiteError(f"{where}: template {tid!r} label must be 0 or 1")


def _variants(axes: dict[str, dict[str, dict[str, Any]]]) -> list[tuple[str, dict, dict]]:
    """(variant id, attributes, fills) for every combination of axis values."""
    out = []
    for combo in itertools.product(*[list(values.items()) for values in axes.values()]):
        attributes: dict[str, str] = {}
        fills: dict[str, Any] = {}
        for attribute, (value, fill) in zip(axes, combo):
            carried = fill.get(RESERVED_FILL)
            attributes.update(carried if isinstance(carried, dict) else {attribute: value})
            fills.update({k: v for k, v in fill.items() if k != RESERVED_FILL})
        out.append((VARIANT_SEP.join(value for value, _ in combo), attributes, fills))
    return out


def generate_suite(generator: str, lang: Language = "en", *,
                   templates: dict[str, Any] | list[dict[str, Any]] | None = None,
                   attributes: dict[str, dict[str, Any]] | None = None,
                   slots: dict[str, list[Any]] | None = None,
                   directory: Path | None = None) -> ParsedDataset:
    """The counterfactual suite of `generator` in `lang`, ready for `save_suite`.

    `templates` may be a whole edited spec (as `load_templates` returns it) or just the
    template list; `attributes` replaces axes ({"gender": {"female": {"possessive": "her"}}})
    and `slots` replaces slot lists, so the page can add values without writing files.
    Each (template, slot combination, list position) is one pair; its variants are all
    axis value combinations, identical except for the filled attribute words.
    """
    if isinstance(templates, dict) and "templates" in templates:
        spec = copy.deepcopy(templates)
    else:
        spec = copy.deepcopy(load_templates(generator, lang, directory=directory))
        if isinstance(templates, dict):  # {id: text} or {id: {text, label}}
            spec["templates"] = [{"id": tid, **(t if isinstance(t, dict) else {"text": t})}
                                 for tid, t in templates.items()]
        elif templates is not None:
            spec["templates"] = copy.deepcopy(list(templates))
    if attributes is not None:
        spec["axes"] = {**spec.get("axes", {}), **copy.deepcopy(attributes)}
    if slots is not None:
        spec["slots"] = {**spec.get("slots", {}), **copy.deepcopy(slots)}
    check_spec(spec, source=f"generator {generator}")
    lang = spec["language"]
    variants = _variants(spec["axes"])
    slot_names = list(spec.get("slots") or {})
    slot_combos = list(itertools.product(*[spec["slots"][n] for n in slot_names])) or [()]
    depth = max([len(v) for _, _, f in variants for v in f.values() if isinstance(v, list)],
                default=1)
    questions: list[Question] = []
    for template in spec["templates"]:
        for combo in slot_combos:
            slot_fill = dict(zip(slot_names, combo))
            for k in range(depth):
                pair_id = PAIR_SEP.join([template["id"], *map(str, combo)]
                                        + ([f"#{k + 1}"] if depth > 1 else []))
                for variant, attrs, fills in variants:
                    fill = {key: (value[k % len(value)] if isinstance(value, list) else value)
                            for key, value in fills.items()}
                    text = template["text"].format(**slot_fill, **fill)
                    questions.append(Question(
                        idx=len(questions), question=text, task_type="open", language=lang,
                        meta={"suite": spec["generator"],
                              "category": template.get("category", spec.get("category", "")),
                              "pair_id": pair_id, "attributes": attrs,
                              "expected": list(spec.get("expected", [])),
                              "template_id": template["id"], "variant": variant,
                              "slots": slot_fill, "fill": fill,
                              "label": template.get("label"),
                              "decision": spec.get("decision", "none")}))
    body = json.dumps([msgspec.structs.asdict(q) for q in questions], ensure_ascii=False,
                      sort_keys=True)
    return ParsedDataset(
        format=SUITE_FORMAT, task_type="open", language=lang, questions=questions,
        source_file=f"{spec['generator']}.{lang}.toml",
        sha256=hashlib.sha256(body.encode("utf-8")).hexdigest(),
        meta={"generator": spec["generator"], "spec": spec, "languages": {lang: len(questions)},
              "pairs": len({q.meta["pair_id"] for q in questions}),
              "attributes": sorted({a for q in questions for a in q.meta["attributes"]})})


def save_suite(engine: "Engine", parsed: ParsedDataset, name: Optional[str] = None, *,
               allow_duplicate: bool = False) -> "Dataset":
    """Store a generated suite as a dataset (default name `fairness-<generator>-<lang>`)."""
    name = name or f"fairness-{parsed.meta.get('generator', 'suite')}-{parsed.language}"
    return store_parsed(engine, parsed, name=name, allow_duplicate=allow_duplicate)
