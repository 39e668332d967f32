"""How the command line fails: exit codes, one-line errors on stderr (never a traceback),
usage errors shown error line first, ``--json``'s error object, the library's warnings.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import warnings
from typing import Any, Callable, Iterator

import click

from bladec.errors import BladecError, BladecWarning, DeviceMemoryError


EXIT_USER, EXIT_BUG, EXIT_DOES_NOT_FIT = 1, 3, 4  # 0 success, 2 click's usage errors
EXIT_CODES = """\b
Exit codes: 0 success; 1 a user error (a bad listing, input file, output path or
value), with a one-line message; 2 a usage error (unknown command or option, a
malformed -p pipeline or pass option, an option value of the wrong type); 3 an
internal error (a bug: please report it); 4 (analyze) the peak does not fit
--mem-limit."""


@contextlib.contextmanager
def _warnings_to_stderr() -> Iterator[None]:
    """Print the library's BladecWarnings on stderr as they come (``warning: ...``)."""
    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, BladecWarning):
            click.echo(f"warning: {message}", err=True)
        else:
            previous(message, category, *rest, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("always", BladecWarning)
        previous = warnings.showwarning
        warnings.showwarning = show
        yield


def _json_error(message: str, location: str | None = None, **extra: Any) -> str:
    """The JSON object ``--json`` writes on stdout instead of a result when a command
    fails, so that a pipeline's JSON reader gets an answer, not nothing: the message
    (as stderr has it, less the location and ``error:``), where (``FILE:LINE:COL`` or
    null), and what else the error knows (a refused limit's smallest limit)."""
    return json.dumps({"error": message, "location": location, **extra}, indent=2)


def _error_object(exc: BladecError) -> str:
    loc = exc.loc
    where = None if loc is None or loc.line == 0 else f"{loc.file}:{loc.line}:{loc.col}"
    extra = {}
    if hasattr(exc, "smallest") and hasattr(exc, "limit"):   # a LimitError
        extra = {"limit": exc.limit, "smallest_limit": exc.smallest}
    return _json_error(exc.diagnostic.message, where, **extra)


def _user_error(exc: BladecError, as_json: bool) -> None:
    """A library error as one line on stderr (and ``--json``'s error object), exit 1."""
    click.echo(str(exc), err=True)
    if as_json:
        click.echo(_error_object(exc))
    sys.exit(EXIT_USER)


def _reports_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one line on stderr and exit 1, never a traceback; with
    ``--json``, a JSON error object on stdout as well (:func:`_json_error`)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            with _warnings_to_stderr():
                return fn(*args, **kwargs)
        except BladecError as exc:
            _user_error(exc, as_json)
        except click.UsageError as exc:
            raise _Usage(exc, as_json) from None
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except (RecursionError, MemoryError) as exc:
            message = f"input too large or too deeply nested ({type(exc).__name__})"
            click.echo(f"error: {message}", err=True)
            if as_json:
                click.echo(_json_error(message))
            sys.exit(EXIT_USER)
        except Exception as exc:  # a bug: say so in one line unless debugging
            memory = DeviceMemoryError.of(exc)   # (where the engine's call did not see it)
            if memory is not None:
                _user_error(memory, as_json)
            if os.environ.get("BLADEC_DEBUG"):
                raise
            message = f"internal error: {type(exc).__name__}: {exc}"
            click.echo(f"bladec: {message} (set BLADEC_DEBUG=1 for details; please "
                       "report it)", err=True)
            if as_json:
                click.echo(_json_error(message))
            sys.exit(EXIT_BUG)
    return wrapper


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())   # click >= 8.2


class _Usage(click.UsageError):
    """A usage error (exit 2) shown error line first, then the usage and where help
    is (click shows the usage first and the error on the fourth line, where a reader of
    the first line of stderr misses it); with ``--json``, a JSON error object on stdout."""

    def __init__(self, exc: click.UsageError, as_json: bool) -> None:
        super().__init__(exc.format_message(), exc.ctx)
        self.as_json = as_json

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)
        if self.ctx is not None:
            hint = f"Try '{self.ctx.command_path} {self.ctx.help_option_names[0]}' for help."
            click.echo(f"{self.ctx.get_usage()}\n{hint}", err=True)
        if self.as_json:
            click.echo(_json_error(self.format_message()))


class _Commands(click.Group):
    """bladec's group: every usage error, its own or a command's, shown as :class:`_Usage`
    shows it (``--json`` anywhere among the arguments: a JSON error object too)."""

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        self._args = list(args) if args is not None else sys.argv[1:]
        return super().main(args, *rest, **kwargs)

    def _usage(self, exc: click.UsageError) -> click.UsageError:
        if isinstance(exc, (_Usage, _NO_ARGS)):   # no arguments at all: click's help
            return exc
        return _Usage(exc, "--json" in getattr(self, "_args", ()))

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as exc:
            raise self._usage(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise self._usage(exc) from None
