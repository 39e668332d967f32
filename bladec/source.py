"""Reading a listing from a file or stdin, as text with a name for diagnostics."""
from __future__ import annotations

import sys
from pathlib import Path

from bladec.errors import BladecError
from bladec.ir import Loc, Module
from bladec.parse import parse_module

MAX_BYTES = 512 * 1024 * 1024
BOM = b"\xef\xbb\xbf"


def read_source(path: str) -> tuple[str, str]:
    """Return ``(text, name)``; ``-`` is stdin. Non-UTF-8 input is an error at its byte;
    a UTF-8 byte order mark at the start (as some Windows editors write) is dropped, and
    columns on the first line count from after it."""
    name = "<stdin>" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise BladecError(f"cannot read {name}: {exc.strerror}", Loc(name, 1, 1)) from None
    if len(data) > MAX_BYTES:
        raise BladecError(f"input is larger than {MAX_BYTES >> 20} MiB", Loc(name, 1, 1))
    if data.startswith(BOM):
        data = data[len(BOM):]
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise BladecError("input is not UTF-8 text; is it a binary file?",
                          Loc(name, line, col)) from None


def load_module(path: str) -> Module:
    text, name = read_source(path)
    return parse_module(text, name)
