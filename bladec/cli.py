"""The ``bladec`` command line: read input, call the library, print. Nothing else lives here.

Results go to stdout, diagnostics to stderr; exit 0 on success, 1 on a user error
(``FILE:LINE:COL: error: ...``), 2 on a usage error. Set ``BLADEC_DEBUG=1`` to see the
Python traceback of an internal error instead of a one-line report.
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable

import click

from bladec import __version__
from bladec.errors import BladecError
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.printer import format_module
from bladec.source import load_module
from bladec.verify import verify


def _reports_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one line on stderr and exit 1, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BladecError as exc:
            click.echo(str(exc), err=True)
            sys.exit(1)
        except (RecursionError, MemoryError) as exc:
            click.echo(f"error: input too large or too deeply nested ({type(exc).__name__})",
                       err=True)
            sys.exit(1)
        except Exception as exc:  # a bug: say so in one line unless debugging
            if os.environ.get("BLADEC_DEBUG"):
                raise
            click.echo(f"bladec: internal error: {type(exc).__name__}: {exc} "
                       "(set BLADEC_DEBUG=1 for details; please report it)", err=True)
            sys.exit(3)
    return wrapper


def _load_verified(file: str):
    module = load_module(file)
    for warning in verify(module):
        click.echo(str(warning), err=True)
    return module


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bladec")
def main() -> None:
    """bladec: memory optimization of dynamic-shape tensor graphs.

    \b
    Examples:
      bladec optimize samples/listing1.mlir
      bladec optimize -p none model.mlir -o canonical.mlir
      cat model.mlir | bladec optimize - | bladec optimize -
    """


@main.command()
@click.argument("file", default="-")
@click.option("-p", "--passes", "pipeline", default=DEFAULT_PIPELINE, show_default=True,
              help="Comma-separated passes, options in braces: 'schedule,remat{k=v}'; "
                   "'none' only verifies and prints.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the listing here instead of stdout.")
@_reports_errors
def optimize(file: str, pipeline: str, output: str | None) -> None:
    """Verify FILE (or '-' for stdin), run the passes, print the listing.

    \b
    Examples:
      bladec optimize samples/listing1.mlir
      bladec optimize -p none samples/listing1.mlir
    """
    try:
        passes = parse_pipeline(pipeline)
    except BladecError as exc:
        raise click.UsageError(exc.diagnostic.message) from None
    module = run_pipeline(_load_verified(file), passes)
    text = format_module(module)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
