"""The ``bladec`` command line: read input, call the library, print. Nothing else lives here.

Results go to stdout, diagnostics to stderr; exit codes as :data:`EXIT_CODES` says
(and the README's table). Set ``BLADEC_DEBUG=1`` to see the Python traceback of an
internal error instead of a one-line report.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import shutil
import sys
import warnings
from typing import Any, Callable, Iterator

import click

from bladec import __version__
from bladec.errors import BladecError, BladecWarning
from bladec.passes import DEFAULT_PIPELINE, Pass, parse_pipeline, passes_help
from bladec.analysis.report import analysis_report
from bladec.printer import format_module
from bladec.units import format_size, parse_dims, parse_size
from bladec.source import load_module
from bladec.verify import verify


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


class _ProgressLine:
    """Progress (bladec/progress.py) as one tqdm line on ``stream``: the stage, the
    executables compiled in it, the time spent; gone when the work ends. Shown only when
    ``stream`` is a terminal and not ``quiet``: a log file or a pipe gets nothing."""

    def __init__(self, quiet: bool, stream: Any = None) -> None:
        from tqdm import tqdm
        self.stream = stream if stream is not None else sys.stderr
        shown = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())
        self._own = None
        if shown and self.stream is sys.stderr:
            # tqdm wrote nothing to sys.stderr itself on a pseudo-terminal (script(1),
            # tqdm 4.70); a handle of our own on the same descriptor works
            self._own = self.stream = os.fdopen(os.dup(sys.stderr.fileno()), "w")
        width = shutil.get_terminal_size((100, 20)).columns or 100  # 0 in some ptys
        self.bar = tqdm(total=None, file=self.stream, leave=False, disable=not shown,
                        bar_format="{desc} [{elapsed}]{postfix}", mininterval=0.2,
                        ncols=width)

    def stage(self, what: str) -> None:
        self.bar.set_description_str(what, refresh=False)
        self.bar.set_postfix_str("", refresh=False)
        self.bar.reset()

    def tick(self) -> None:
        self.bar.update(1)
        self.bar.set_postfix_str(f" {self.bar.n} compiled", refresh=True)

    def __enter__(self) -> "_ProgressLine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.close()
        if self._own is not None:
            self._own.close()


_QUIET = click.option("-q", "--quiet", is_flag=True,
                      help="No progress line on stderr (it is shown only on a terminal).")


GC_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)


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
            click.echo(str(exc), err=True)
            if as_json:
                click.echo(_error_object(exc))
            sys.exit(EXIT_USER)
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


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES)
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


@main.command(epilog=EXIT_CODES)
@click.argument("file", default="-")
@click.option("-p", "--passes", "pipeline", default=DEFAULT_PIPELINE, show_default=True,
              help="Comma-separated passes, options in braces: 'schedule,remat{k=v}'; "
                   "'none' only verifies and prints. Passes: " + passes_help() + ".")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the listing here instead of stdout.")
@_QUIET
@_reports_errors
def optimize(file: str, pipeline: str, output: str | None, quiet: bool) -> None:
    """Verify FILE (or '-' for stdin), run the passes, print the listing.

    \b
    Examples:
      bladec optimize samples/listing1.mlir
      bladec optimize -p none samples/listing1.mlir
    """
    passes = _pipeline(pipeline)
    if output:
        _check_writable(output, "-o")
    from bladec.runtime.engine import optimize as run_passes
    with _ProgressLine(quiet) as progress:
        module = run_passes(_load_verified(file, passes=passes), passes, progress)
    text = format_module(module)
    if output:
        _write_text(output, text, "-o")
    else:
        click.echo(text, nl=False)


def _pipeline(text: str) -> list[Pass]:
    """The passes of ``-p``; a bad pipeline is a usage error (exit 2), like a bad option."""
    try:
        return parse_pipeline(text)
    except BladecError as exc:
        raise click.UsageError(exc.diagnostic.message) from None


@main.command(epilog=EXIT_CODES)
@click.argument("file", default="-")
@click.option("--dims", default=None, help="Values of the free symbols: S1=100,S2=8.")
@click.option("--mem-limit", default=None, help="A memory limit (40GiB, 512MiB, bytes); "
              "with --dims, exit 4 when the peak does not fit it.")
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
      bladec analyze m.mlir --dims S1=100 --mem-limit 1GiB; [ $? = 4 ] && echo too big
    """
    limit = parse_size(mem_limit) if mem_limit is not None else None
    binding = parse_dims(dims)   # a bad argument before the listing is read
    module = _load_verified(file)
    report = analysis_report(module, binding, limit, solve)
    click.echo(json.dumps(report, indent=2) if as_json else _analysis_text(report))
    if report.get("fits") is False:
        sys.exit(EXIT_DOES_NOT_FIT)


def _analysis_text(report: dict) -> str:
    lines = ["symbols:"]
    for s in report["free_symbols"]:
        lo, hi = report["ranges"][s]
        lines.append(f"  {s} in [{lo}, {hi if hi is not None else 'inf'}]")
    lines.append("relations:")
    lines += [f"  {r}" for r in report["relations"]] or ["  (none)"]
    exact = report.get("bytes_at", {})
    width = max((len(v) for v in report["values"]), default=4)
    mesh = report.get("mesh")
    where = ""
    if mesh:
        where = " (per device of mesh {" + ", ".join(f"{a} = {n}" for a, n in mesh.items()) + "})"
    lines.append(f"values{where}:")
    for name, v in report["values"].items():
        shape = "[" + ", ".join(v["shape"]) + "]"
        extra = f"  = {format_size(exact[name])}" if name in exact else ""
        split = f" in {v['blocks']} blocks" if v.get("blocks", 1) > 1 else ""
        lines.append(f"  {name:<{width}}  {shape} {v['dtype']}{split}  {v['bytes']} bytes{extra}")
    for name, peak in report.get("versions", {}).items():
        lines.append(f"version @{name}: peak {peak}")
    lines.append(f"memory by step{where} (order of @{report['version']}):")
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


@main.command(epilog=EXIT_CODES)
@click.argument("file", default="-")
@click.option("--mem-limit", default=None, help="Memory limit (40GiB, 512MiB, bytes); "
              "default: none.")
@click.option("--dims", default=None, help="Values of symbols not fixed by the inputs: S1=64.")
@click.option("--inputs", "inputs_path", type=click.Path(),
              default=None, help="An .npz with one array per graph input (by name, no '%').")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), default=None,
              help="Write the outputs to this .npz.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random inputs (a non-negative integer).")
@click.option("-p", "--passes", "pipeline", default=DEFAULT_PIPELINE, show_default=True,
              help="Passes to run first ('none': run the listing as it is); as for "
                   "optimize. Without -p, a listing already optimized (it has the "
                   "remat.plan that optimize writes) runs as it is.")
@click.option("--backend", type=click.Choice(["jax", "numpy"]), default="jax",
              show_default=True)
@click.option("--bitwise", is_flag=True, help="Keep every op its own XLA kernel, so that "
              "every plan computes bit for bit what the unoptimized listing computes "
              "(slower; for verification). By default XLA fuses, and plans agree to rounding.")
@click.option("--fuse", is_flag=True, hidden=True, help="The default now; kept for scripts.")
@click.option("--pad", "pad", multiple=True, metavar="SYM=N",
              help="Zero-pad the inputs so that symbol SYM becomes a multiple of N, at most "
                   "its declared max (repeatable, or S0=8,S1=64); bounds compilations (the "
                   "listing must mask padding itself).")
@click.option("--pad-multiple", type=click.IntRange(min=1), default=None,
              help="The same multiple for every free symbol not given by --pad (each at "
                   "most its declared max).")
@click.option("--timeline", type=click.Path(dir_okay=False), default=None,
              help="Write memory per step, original vs optimized, as .csv or .png.")
@click.option("--coordinator", default=None, metavar="HOST:PORT",
              help="Sharded listings: run on several processes through jax.distributed "
                   "(every process runs the same command with its --process-id).")
@click.option("--num-processes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--process-id", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--compilation-cache", "cache_dir", type=click.Path(file_okay=False),
              default=None, envvar="BLADEC_COMPILATION_CACHE", show_envvar=True,
              metavar="DIRECTORY|off",
              help="Keep compiled executables (JAX's persistent compilation cache, and "
                   "bladec's by what each segment computes), optimized listings and the "
                   "searches' answers in this directory, so that a later run loads the "
                   "listing it optimized before and the segments it compiled at the same "
                   "shapes. Default: $XDG_CACHE_HOME/bladec/xla (~/.cache/bladec/xla), "
                   "JAX's executables at most 1 GiB, bladec's the last 512 written (at "
                   "most 512 MiB), the last 32 listings (at most 256 MiB); 'off': none.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@_QUIET
@_reports_errors
def run(file: str, mem_limit: str | None, dims: str | None, inputs_path: str | None,
        outputs_path: str | None, seed: int, pipeline: str, backend: str, bitwise: bool,
        fuse: bool,
        pad: tuple[str, ...], pad_multiple: int | None, timeline: str | None,
        coordinator: str | None, num_processes: int, process_id: int,
        cache_dir: str | None, as_json: bool, quiet: bool) -> None:
    """Optimize FILE (or '-') and run it under a memory limit; print a report.

    \b
    Examples:
      bladec run samples/listing1-runnable.mlir --dims S1=64 --mem-limit 4MiB
      bladec optimize model.mlir | bladec run - --mem-limit 40GiB --json
    """
    from bladec.runtime.padding import parse_pad
    from bladec.runtime.session import run_listing
    from bladec.runtime.timeline import check_timeline_path, write_timeline
    given = click.get_current_context().get_parameter_source("pipeline")
    passes = _pipeline(pipeline) if given != click.core.ParameterSource.DEFAULT else None
    limit = parse_size(mem_limit) if mem_limit is not None else None
    binding, padding = parse_dims(dims), parse_pad(pad)
    if inputs_path:
        _check_readable(inputs_path, "--inputs")
    if outputs_path:
        _check_writable(outputs_path, "--outputs")
    if timeline:
        check_timeline_path(timeline)
        _check_writable(timeline, "--timeline")
    if process_id >= num_processes:
        raise click.UsageError(f"--process-id {process_id} must be below --num-processes "
                               f"{num_processes}")
    if bitwise and fuse:
        raise click.UsageError("--bitwise and --fuse contradict each other (fusion is the "
                               "default; --fuse is kept only for old scripts)")
    listings = None   # optimized listings, kept beside the executables
    if backend == "jax":
        from bladec.runtime.backends import cache
        from bladec.runtime.store.listings import ListingCache
        try:
            kept = cache.use_default_compilation_cache() if cache_dir is None \
                else cache.use_compilation_cache(cache_dir)
        except OSError as exc:
            raise BladecError(f"cannot use --compilation-cache {cache_dir}: "
                              f"{exc.strerror or exc}") from None
        if kept is not None:
            listings = ListingCache(kept)
    module = _load_verified(file, runnable=True, passes=passes)
    if (coordinator is not None or num_processes > 1) and (module.mesh is None
                                                            or backend != "jax"):
        raise BladecError("--coordinator and --num-processes run sharded listings (with a "
                          "mesh) on the jax backend")
    if module.mesh is not None and backend == "jax":
        from bladec.runtime.mesh import Cluster, run_sharded
        if timeline or padding or pad_multiple or bitwise:
            raise BladecError("--timeline, --pad and --bitwise are not available for sharded "
                              "listings on the jax backend (one shard_map program runs them; "
                              "--backend numpy runs them bit for bit on whole arrays)")
        if num_processes > 1 and coordinator is None:
            raise BladecError("--num-processes needs --coordinator HOST:PORT")
        cluster = (Cluster(coordinator, num_processes, process_id)
                   if coordinator is not None else None)
        result = run_sharded(module, passes, limit=limit, dims=binding,
                             inputs_path=inputs_path, seed=seed, cluster=cluster)
    else:  # NumPy runs a sharded listing on whole arrays: collectives are identities
        from bladec.sharding import whole_arrays
        with _ProgressLine(quiet) as progress:
            result = run_listing(whole_arrays(module), passes, limit=limit, dims=binding,
                                 inputs_path=inputs_path, seed=seed, backend=backend,
                                 bitwise=bitwise, pad=padding, pad_multiple=pad_multiple,
                                 listings=listings, progress=progress)
    failures = []  # saving comes after the report is printed: a failed save loses nothing
    click.echo(json.dumps(result.summary(), indent=2) if as_json else result.text())
    if outputs_path:
        try:
            result.save_outputs(outputs_path)
        except OSError as exc:
            failures.append(f"cannot write --outputs {outputs_path}: {exc.strerror or exc}")
    if timeline:
        try:
            write_timeline(timeline, result, source=_source_name(file))
        except OSError as exc:
            failures.append(f"cannot write --timeline {timeline}: {exc.strerror or exc}")
    if failures:
        raise BladecError("; ".join(failures))


def _source_name(file: str) -> str:
    return "<stdin>" if file == "-" else file


@main.command("import", epilog=EXIT_CODES)
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
@_QUIET
@_reports_errors
def import_cmd(target: str, shapes: str | None, ranges: str | None, no_hints: bool,
               output: str | None, quiet: bool) -> None:
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
    if output:
        _check_writable(output, "-o")
    with _ProgressLine(quiet) as progress:
        progress.stage(f"tracing {target}")
        imported = import_target(target, shapes, ranges, hints=not no_hints)
    text = format_module(imported.module)
    if output:
        _write_text(output, text, "-o")
    else:
        click.echo(text, nl=False)
    symbols = ", ".join(f"{k} -> @{v}" for k, v in imported.symbols.items()) or "none"
    click.echo(f"imported {len(imported.module.main.ops)} ops; symbols: {symbols}; "
               f"hints: {len(imported.hints)}", err=True)


@main.command("autobatch", epilog=EXIT_CODES)
@click.argument("target", metavar="MODULE:MODEL")
@click.argument("instances_path", metavar="INSTANCES", type=click.Path(dir_okay=False))
@click.option("--params", "params_target", default=None, metavar="MODULE:FUNCTION",
              help="A function of no arguments returning the parameters (a pytree of "
                   "arrays). Default: MODULE:init_params.")
@click.option("--batch", type=click.IntRange(min=1), default=64, show_default=True,
              help="Instances per batch.")
@click.option("--train", "lr", type=float, default=None, metavar="LR",
              help="Train instead: one SGD step of this learning rate per batch on the "
                   "summed loss (the model returns a scalar loss); prints each batch's loss.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON lines on stdout (outputs, or losses), the report on stderr.")
@_reports_errors
def autobatch_cmd(target: str, instances_path: str, params_target: str | None, batch: int,
                  lr: float | None, as_json: bool) -> None:
    """Run a per-instance model over a file of instances, batched (bladec.autobatch).

    INSTANCES is a JSON array of instances, or one JSON instance per line; each is
    passed to MODEL(params, instance) as parsed. Each instance's output is printed, one
    line each (its leaves as lists), and each batch's report goes to stderr.

    \b
    Example:
      bladec autobatch bladec.models.treelstm:model trees.json --batch 8
    """
    import jax
    import numpy as np

    from bladec.batching import autobatch
    from bladec.frontend.jax_import import load_target
    instances = _read_instances(instances_path)
    model = load_target(target)
    module = target.partition(":")[0]
    params = load_target(params_target or f"{module}:init_params")()
    batched = autobatch(model)
    for start in range(0, len(instances), batch):
        part = instances[start:start + batch]
        if lr is not None:
            loss, params = batched.train_step(params, part, lr)
            click.echo(json.dumps({"batch": start // batch, "loss": float(loss)})
                       if as_json else f"batch {start // batch}: loss {float(loss):.6g}")
        else:
            out = jax.device_get(batched(params, part))
            leaves, _ = jax.tree_util.tree_flatten(out)
            for i in range(len(part)):
                values = [np.asarray(x[i]).tolist() for x in leaves]
                value = values[0] if len(values) == 1 else values
                click.echo(json.dumps({"instance": start + i, "output": value})
                           if as_json else f"{start + i}: {value}")
        click.echo(str(batched.report()), err=True)


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
