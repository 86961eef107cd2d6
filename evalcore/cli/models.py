"""`python -m evalcore models add|list|test|remove|import|export`: manage the model list
(models.toml, or the database in team mode) from a shell.

Calls the same functions as the pages (`providers.registry`, `providers.client.test_connection`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import msgspec

from evalcore.service.models import add_model, import_models, remove_model, test_model
from evalcore.cli.common import acting_user, engine_and_settings
from evalcore.config import load_settings
from evalcore.errors import ModelConfigError
from evalcore.providers.base import ModelConfig
from evalcore.providers.catalog import provider_settings, providers
from evalcore.providers.local import stop_local
from evalcore.providers.registry import (DEFAULT_MODEL, export_models, get_model, load_models,
                                         validate_model)


FLAGS = {"gguf_path": "gguf"}
"""A provider setting whose flag is not its field's name."""


def _models_path(args: argparse.Namespace):
    return load_settings().models_path


def _add(args: argparse.Namespace) -> int:
    path = _models_path(args)
    entry: dict[str, Any] = {"kind": args.kind}
    for option, key in (
        ("base_url", "base_url"),
        ("model", "model"),
        ("api_key_env", "api_key_env"),
        ("concurrency", "concurrency"),
        ("rpm", "rpm"),
        ("rate_limit_wait", "rate_limit_wait"),
        ("timeout", "timeout"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("max_tokens", "max_tokens"),
        ("deadline", "deadline"),
        ("max_reply_bytes", "max_reply_bytes"),
        ("api_key_header", "api_key_header"),
        ("price_in", "price_in"),
        ("price_out", "price_out"),
        *((field, field) for field in provider_settings()),
    ):
        value = getattr(args, option)
        if value is not None:
            entry[key] = value
    if args.api_key_env and args.api_key_env.startswith(("sk-", "sk_")):
        raise ModelConfigError(
            "--api-key-env takes the NAME of an environment variable "
            "(e.g. OPENAI_API_KEY), not the key itself"
        )
    engine, _ = engine_and_settings()
    config = add_model(acting_user(engine), engine, path,
                               validate_model(entry, args.name, path))
    print(f"added model '{config.name}' ({config.kind}) to {path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    path = _models_path(args)
    models = load_models(path)
    if args.json:
        print(json.dumps(msgspec.to_builtins(list(models.values())), ensure_ascii=False, indent=2))
        return 0
    source = path if path.exists() else f"{path} (not created yet: built-in defaults)"
    print(f"models in {source}:")
    for name, model in models.items():
        target = model.base_url or "(embedded llama.cpp)"
        key = f" key from ${model.api_key_env}" if model.api_key_env else ""
        mark = " (default)" if name == DEFAULT_MODEL else ""
        print(
            f"  {name}{mark}: {model.kind} {model.model or '-'} @ {target} "
            f"concurrency={model.concurrency}{key}"
        )
    return 0


def _test(args: argparse.Namespace) -> int:
    config = get_model(_models_path(args), args.name)
    engine, _ = engine_and_settings()
    try:
        reply = test_model(acting_user(engine), engine, config)
    finally:
        stop_local()
    if args.json:
        print(json.dumps({"model": config.name, **msgspec.to_builtins(reply), "ok": reply.ok},
                         ensure_ascii=False))
    elif reply.ok:
        print(
            f"{config.name}: OK in {reply.latency_ms:.0f} ms ({reply.attempts} attempt(s)): "
            f"{reply.text.strip()!r}"
        )
    else:
        print(
            f"{config.name}: FAILED after {reply.latency_ms:.0f} ms: {reply.error}", file=sys.stderr
        )
    return 0 if reply.ok else 1


def _remove(args: argparse.Namespace) -> int:
    path = _models_path(args)
    engine, _ = engine_and_settings()
    remove_model(acting_user(engine), engine, path, args.name)
    print(f"removed model '{args.name}' from {path}")
    return 0


def _import(args: argparse.Namespace) -> int:
    path = _models_path(args)
    engine, _ = engine_and_settings()
    names = import_models(acting_user(engine), engine, path, args.file,
                                  replace=args.replace)
    print(f"imported {len(names)} model(s) into {path}: {', '.join(names)}")
    return 0


def _export(args: argparse.Namespace) -> int:
    path = _models_path(args)
    names = export_models(path, args.file)
    print(f"exported {len(names)} model(s) from {path} to {args.file}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `models` command and its sub-commands."""
    parser = subparsers.add_parser("models", help="add, list, test or remove models (models.toml)")
    sub = parser.add_subparsers(dest="models_command", required=True, metavar="ACTION")

    add = sub.add_parser("add", help="add a model to models.toml")
    add.add_argument("name")
    known = providers()
    add.add_argument("--kind", choices=list(known), required=True,
                     help="the provider: " + "; ".join(f"{name}: {p.summary}"
                                                      for name, p in known.items()))
    add.add_argument(
        "--base-url",
        dest="base_url",
        help="e.g. " + ", ".join(f"{p.base_url_example} ({name})" for name, p in known.items()
                                 if p.base_url_example) + "; no key in it: use --api-key-env",
    )
    add.add_argument("--model", help="model id sent to the endpoint")
    add.add_argument(
        "--api-key-env",
        dest="api_key_env",
        help="NAME of the environment variable holding the key (never the key)",
    )
    add.add_argument("--concurrency", type=int)
    add.add_argument("--rpm", type=int, help="requests per minute, 0 = no limit")
    add.add_argument("--rate-limit-wait", dest="rate_limit_wait", type=float,
                     help="total seconds a call may wait on HTTP 429 answers (default 600)")
    add.add_argument("--timeout", type=float, help="seconds per HTTP attempt")
    add.add_argument("--temperature", type=float, help="0-2")
    add.add_argument("--top-p", dest="top_p", type=float, help="0-1")
    add.add_argument("--max-tokens", dest="max_tokens", type=int, help=">= 1")
    add.add_argument("--deadline", type=float,
                     help="seconds one call may take in all, retries and waits included "
                          "(default 300)")
    add.add_argument("--max-reply-bytes", dest="max_reply_bytes", type=int,
                     help="largest reply read; larger is an error (default 1048576)")
    add.add_argument("--api-key-header", dest="api_key_header", metavar="HEADER",
                     help="send the key in this header instead of 'Authorization: Bearer' "
                          "(e.g. api-key for Azure OpenAI)")
    for field, (label, text, owner) in provider_settings().items():
        kind = type(getattr(ModelConfig(name="defaults"), field))
        add.add_argument("--" + FLAGS.get(field, field.replace("_", "-")), dest=field,
                         type=kind if kind in (int, float) else str,
                         help=f"{owner} only: {label}; {text}")
    add.add_argument("--price-in", dest="price_in", type=float, metavar="PRICE",
                     help="price per million prompt tokens (cost figures, estimates, --budget)")
    add.add_argument("--price-out", dest="price_out", type=float, metavar="PRICE",
                     help="price per million completion tokens")
    add.set_defaults(func=_add)

    lst = sub.add_parser("list", help="show the configured models")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)

    test = sub.add_parser("test", help="send 'Reply with the word OK' and show latency and reply")
    test.add_argument("name")
    test.add_argument("--json", action="store_true")
    test.set_defaults(func=_test)

    remove = sub.add_parser("remove", help="delete a model from models.toml")
    remove.add_argument("name")
    remove.set_defaults(func=_remove)

    imp = sub.add_parser("import", help="copy the models of a TOML file into the model list "
                                        "(the database in team mode)")
    imp.add_argument("file", help="a models.toml")
    imp.add_argument("--replace", action="store_true", help="overwrite models of the same name")
    imp.set_defaults(func=_import)

    exp = sub.add_parser("export", help="write the model list to a TOML file")
    exp.add_argument("file")
    exp.set_defaults(func=_export)
