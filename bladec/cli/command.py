"""The ``bladec`` commands: each reads its arguments, calls the library, prints.

Errors are reported as bladec/cli/failure.py says, files checked and read as
bladec/cli/file.py does, progress and text reports shown by bladec/cli/display.py.
"""
from __future__ import annotations

import atexit
import gc
import json
import sys

import click

from bladec import __version__
from bladec.analysis.report import analysis_report
from bladec.cli.display import _QUIET, _ProgressLine, _analysis_text
from bladec.cli.failure import EXIT_CODES, EXIT_DOES_NOT_FIT, _Commands, _reports_errors
from bladec.cli.file import (_check_readable, _check_writable, _load_verified,
                             _read_instances, _source_name, _write_text)
from bladec.errors import BladecError
from bladec.passes import DEFAULT_PIPELINE, Pass, parse_pipeline, passes_help
from bladec.printer import format_module
from bladec.units import parse_dims, parse_size


GC_THRESHOLD = 10_000  # allocations between young collections (Python's default: 700)


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
    if not _EXIT_FROZEN:
        _EXIT_FROZEN.append(True)
        atexit.register(gc.freeze)


# Whether the collection at exit is skipped (registered once per process). At exit,
# Python collects every object still tracked, JAX's and XLA's among them: 0.43-0.48 s
# of CPU after a refusal of the paper-size step had ended (4.65 s in the process, 5.13
# s by /usr/bin/time; 0.05 s after it with the objects frozen first; 2026-11-27). What
# the collection would free goes with the process; atexit's own finalizers (temporary
# directories) still run, and the standard streams are still flushed.
_EXIT_FROZEN: list[bool] = []


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
                   "(every process runs the same command with its --process-id). Each "
                   "process's --inputs holds its own devices' part of every input (a "
                   "replicated input whole, a batch split across processes its rows) and "
                   "its --outputs gets its part of every output.")
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
@click.option("--cpus", type=int, default=None, metavar="N",
              help="Run on N of the CPUs this process may use. On CPU, XLA splits loop "
                   "fusions over a thread pool of one thread per CPU, which costs small "
                   "batched kernels more CPU time than it saves (1: none split).")
@_reports_errors
def autobatch_cmd(target: str, instances_path: str, params_target: str | None, batch: int,
                  lr: float | None, as_json: bool, cpus: int | None) -> None:
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
    from bladec.runtime.backends.cpus import confine
    if cpus is not None:
        confine(cpus)
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
