"""The command line's files: inputs and outputs checked before any work is done, text
written, the listing read and verified, instances read (the library never touches a file).
"""
from __future__ import annotations

import json
import os
from typing import Any

import click

from bladec.errors import BladecError
from bladec.passes import Pass
from bladec.source import load_module
from bladec.verify import verify


def _check_writable(path: str, option: str) -> None:
    """Refuse an output path that can not be written, before any work is done: a run of
    minutes should not end in a lost result because of a typo in a directory name."""
    if os.path.isdir(path):
        raise BladecError(f"cannot write {option} {path}: it is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        why = "is not a directory" if os.path.exists(parent) else "does not exist"
        raise BladecError(f"cannot write {option} {path}: {parent} {why}")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise BladecError(f"cannot write {option} {path}: permission denied")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise BladecError(f"cannot write {option} {path}: directory {parent} is not writable")


def _check_readable(path: str, option: str) -> None:
    """Refuse an input file that is not there, before any work is done: a user error
    (exit 1), as a missing listing is."""
    if not os.path.exists(path):
        raise BladecError(f"cannot read {option} {path}: no such file")
    if os.path.isdir(path):
        raise BladecError(f"cannot read {option} {path}: it is a directory")
    if not os.access(path, os.R_OK):
        raise BladecError(f"cannot read {option} {path}: permission denied")


def _write_text(path: str, text: str, option: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise BladecError(f"cannot write {option} {path}: {exc.strerror or exc}") from None


def _load_verified(file: str, runnable: bool = False, passes: list[Pass] | None = None):
    """The listing, verified; a pipeline that starts with ``propagate`` writes the
    shardings of the results, so their rules are checked on its output, not here."""
    module = load_module(file)
    propagating = bool(passes) and passes[0].name == "propagate"
    for warning in verify(module, runnable, shardings=not propagating):
        click.echo(str(warning), err=True)
    return module


def _source_name(file: str) -> str:
    return "<stdin>" if file == "-" else file


def _read_instances(path: str) -> list[Any]:
    """A JSON array, or JSON lines; a syntax error as ``file:line:col: error: ...``."""
    from bladec.ir import Loc
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise BladecError(f"cannot read {path}: {exc.strerror or exc}") from None
    stripped = text.lstrip()
    items: list[Any] = []
    try:
        if stripped.startswith("["):
            items = json.loads(text)
        else:
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        items.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise BladecError(exc.msg, Loc(path, n, exc.colno)) from None
    except json.JSONDecodeError as exc:
        raise BladecError(exc.msg, Loc(path, exc.lineno, exc.colno)) from None
    if not isinstance(items, list):
        raise BladecError(f"{path}: expected a JSON array of instances, or JSON lines")
    if not items:
        raise BladecError(f"{path}: no instances")
    return items
