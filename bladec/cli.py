"""The ``bladec`` command line: read input, call the library, print. Nothing else lives here.

Results go to stdout, diagnostics to stderr; exit 0 on success, 1 on a user error
(``FILE:LINE:COL: error: ...``), 2 on a usage error. Set ``BLADEC_DEBUG=1`` to see the
Python traceback of an internal error instead of a one-line report.
"""
from __future__ import annotations

import functools
import gc
import json
import os
import sys
from typing import Any, Callable

import click

from bladec import __version__
from bladec.errors import BladecError
from bladec.passes import DEFAULT_PIPELINE, parse_pipeline, run_pipeline
from bladec.analysis.report import analysis_report
from bladec.printer import format_module
from bladec.units import format_size, parse_dims, parse_size
from bladec.source import load_module
from bladec.verify import verify


GC_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)


def _reports_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one line on stderr and exit 1, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BladecError as exc:
            click.echo(str(exc), err=True)
            sys.exit(1)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
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
    # A command builds a large graph of small objects once and keeps it to the end; the
    # collector's default thresholds scan all of it again and again (a quarter of the
    # time of `optimize` on 10,000 ops, measured), for the few cycles there are.
    gc.set_threshold(GC_THRESHOLD, 10, 10)


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


@main.command()
@click.argument("file", default="-")
@click.option("--dims", default=None, help="Values of the free symbols: S1=100,S2=8.")
@click.option("--mem-limit", default=None, help="A memory limit (40GiB, 512MiB, bytes).")
@click.option("--solve", default=None, metavar="SYMBOL",
              help="With --mem-limit: the largest value of SYMBOL whose peak fits.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@_reports_errors
def analyze(file: str, dims: str | None, mem_limit: str | None, solve: str | None,
            as_json: bool) -> None:
    """Print the symbolic shapes and memory of FILE (or '-'), in its current op order.

    \b
    Examples:
      bladec analyze samples/listing1.mlir
      bladec analyze samples/listing1.mlir --dims S1=100 --json
      bladec analyze samples/listing1.mlir --mem-limit 1GiB --solve S1
    """
    module = _load_verified(file)
    report = analysis_report(module, parse_dims(dims),
                             parse_size(mem_limit) if mem_limit else None, solve)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(_analysis_text(report))


def _analysis_text(report: dict) -> str:
    lines = ["symbols:"]
    for s in report["free_symbols"]:
        lo, hi = report["ranges"][s]
        lines.append(f"  {s} in [{lo}, {hi if hi is not None else 'inf'}]")
    lines.append("relations:")
    lines += [f"  {r}" for r in report["relations"]] or ["  (none)"]
    exact = report.get("bytes_at", {})
    width = max((len(v) for v in report["values"]), default=4)
    lines.append("values:")
    for name, v in report["values"].items():
        shape = "[" + ", ".join(v["shape"]) + "]"
        extra = f"  = {format_size(exact[name])}" if name in exact else ""
        lines.append(f"  {name:<{width}}  {shape} {v['dtype']}  {v['bytes']} bytes{extra}")
    for name, peak in report.get("versions", {}).items():
        lines.append(f"version @{name}: peak {peak}")
    lines.append(f"memory by step (order of @{report['version']}):")
    step_bytes = report.get("step_bytes")
    for i, step in enumerate(report["steps"]):
        extra = f"  = {format_size(step_bytes[i])}" if step_bytes else ""
        lines.append(f"  {i:>4}  {step['op']:<28} {step['bytes']}{extra}")
    lines.append(f"peak: {report['peak']}" + (f"  = {format_size(report['peak_bytes'])} "
                                             f"({report['peak_bytes']} bytes)"
                                             if "peak_bytes" in report else ""))
    lines.append(f"lower bound: {report['lower_bound']}" + (
        f"  = {format_size(report['lower_bound_bytes'])}" if "lower_bound_bytes" in report else ""))
    if "fits" in report:
        verdict = "fits within" if report["fits"] else "does NOT fit"
        lines.append(f"the peak {verdict} {format_size(report['mem_limit'])}")
    for s, v in report.get("solution", {}).items():
        lines.append(f"largest {s} within {format_size(report['mem_limit'])}: {v}")
    return "\n".join(lines)


@main.command()
@click.argument("file", default="-")
@click.option("--mem-limit", default=None, help="Memory limit (40GiB, 512MiB, bytes); "
              "default: none.")
@click.option("--dims", default=None, help="Values of symbols not fixed by the inputs: S1=64.")
@click.option("--inputs", "inputs_path", type=click.Path(exists=True, dir_okay=False),
              default=None, help="An .npz with one array per graph input (by name, no '%').")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), default=None,
              help="Write the outputs to this .npz.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@click.option("-p", "--passes", "pipeline", default=DEFAULT_PIPELINE, show_default=True,
              help="Passes to run first ('none': run the listing as it is).")
@click.option("--backend", type=click.Choice(["jax", "numpy"]), default="jax",
              show_default=True)
@click.option("--fuse", is_flag=True, help="Let XLA fuse ops (faster; results then match "
              "other plans only to rounding).")
@click.option("--pad", "pad", multiple=True, metavar="SYM=N",
              help="Zero-pad the inputs so that symbol SYM becomes a multiple of N, at most "
                   "its declared max (repeatable, or S0=8,S1=64); bounds compilations (the "
                   "listing must mask padding itself).")
@click.option("--pad-multiple", type=click.IntRange(min=1), default=None,
              help="The same multiple for every free symbol not given by --pad (each at "
                   "most its declared max).")
@click.option("--timeline", type=click.Path(dir_okay=False), default=None,
              help="Write memory per step, original vs optimized, as .csv or .png.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@_reports_errors
def run(file: str, mem_limit: str | None, dims: str | None, inputs_path: str | None,
        outputs_path: str | None, seed: int, pipeline: str, backend: str, fuse: bool,
        pad: tuple[str, ...], pad_multiple: int | None, timeline: str | None,
        as_json: bool) -> None:
    """Optimize FILE (or '-') and run it under a memory limit; print a report.

    \b
    Examples:
      bladec run samples/listing1-runnable.mlir --dims S1=64 --mem-limit 4MiB
      bladec optimize model.mlir | bladec run - --mem-limit 40GiB --json
    """
    from bladec.runtime.session import parse_pad, run_listing
    try:
        passes = parse_pipeline(pipeline)
    except BladecError as exc:
        raise click.UsageError(exc.diagnostic.message) from None
    result = run_listing(_load_verified(file), passes, limit=parse_size(mem_limit)
                         if mem_limit else None, dims=parse_dims(dims),
                         inputs_path=inputs_path, seed=seed, backend=backend, fuse=fuse,
                         pad=parse_pad(pad), pad_multiple=pad_multiple)
    if outputs_path:
        result.save_outputs(outputs_path)
    if timeline:
        result.write_timeline(timeline)
    click.echo(json.dumps(result.summary(), indent=2) if as_json else result.text())


@main.command("import")
@click.argument("target", metavar="MODULE:FUNCTION")
@click.option("--shapes", default=None, metavar="SPECS",
              help="One spec per parameter, ';'-separated: NAME:DIMS[:DTYPE], DIMS "
                   "comma-separated numbers or JAX dimension variables, DTYPE default f32: "
                   "'tokens:B,S:i32;w:64,64;lr::f32'. Without it, FUNCTION is called with no "
                   "arguments and returns an import spec (a dict of bladec.frontend.trace "
                   "arguments: fn, arg_specs, ranges, ...).")
@click.option("--range", "ranges", default=None, metavar="RANGES",
              help="Ranges of the dimension variables: 'B=1:32,S=1:512'.")
@click.option("--no-hints", is_flag=True,
              help="Fail instead of binding dims the analysis can not rediscover.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the listing here instead of stdout.")
@_reports_errors
def import_cmd(target: str, shapes: str | None, ranges: str | None, no_hints: bool,
               output: str | None) -> None:
    """Trace a JAX function with symbolic dims and print it as a listing.

    The inputs' dimension variables become @S0, @S1, ... (in order of appearance); every
    other dynamic dim is written '?', for bladec's analysis to rediscover. A summary
    (ops, symbols, hints) goes to stderr.

    \b
    Examples:
      bladec import mymodel:loss --shapes 'x:B,S,64;w:64,64' --range B=1:32
      bladec import bladec.models.llama:small_train_spec -o samples/llama-train-small.mlir
    """
    from bladec.frontend.jax_import import import_target
    imported = import_target(target, shapes, ranges, hints=not no_hints)
    text = format_module(imported.module)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    symbols = ", ".join(f"{k} -> @{v}" for k, v in imported.symbols.items()) or "none"
    click.echo(f"imported {len(imported.module.main.ops)} ops; symbols: {symbols}; "
               f"hints: {len(imported.hints)}", err=True)
