"""CPU seconds per phase of one `bladec run`, in fresh processes, one checkout against another.

    python benchmarks/bench_phases.py [--base ../other-checkout] [--runs 8]
        [-- run samples/llama-train-paper.mlir --dims S0=1,S1=64 --mem-limit 1GiB]

Each run is a new process, as a user's is: ``bladec`` with the given arguments (default:
the refusal of issue 14, item 7), with timers around reading and verifying the listing,
the pass pipeline, the engine (pipeline, backend and executor) and ``Fitter.prepare``
(planning, compiling or loading from JAX's persistent cache, the smallest-limit search),
and the process's CPU time to its end. With ``--base``, runs of that checkout alternate
with this one's (paired against the same load on shared cores) and both are printed.

Each process runs with the checkout as its working directory: ``python -m`` puts the
working directory first on ``sys.path``, so run from one checkout it would import that
checkout's bladec whatever ``PYTHONPATH`` says.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ARGS = ["run", "samples/llama-train-paper.mlir", "--dims", "S0=1,S1=64",
                "--mem-limit", "1GiB"]

# Run in the child: time the phases, then bladec's own main with the given arguments.
_CHILD = r"""
import atexit, sys, time
start = time.process_time()
import bladec.cli as cli, bladec.runtime.engine as engine, bladec.runtime.planning.fitting as fitting
spent = {}
def timed(owner, name, label):
    fn, active = getattr(owner, name), [False]
    def wrapper(*args, **kwargs):
        if active[0]:   # (prepare calls itself: the outermost call counts)
            return fn(*args, **kwargs)
        active[0], t = True, time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            active[0] = False
            spent[label] = spent.get(label, 0.0) + time.process_time() - t
    setattr(owner, name, wrapper)
timed(cli, "_load_verified", "parse+verify")
timed(engine, "optimize", "pipeline")
timed(engine.Engine, "__init__", "engine")
timed(fitting.Fitter, "prepare", "prepare")
atexit.register(lambda: print("PHASES", " ".join(f"{k}={v:.4f}" for k, v in spent.items()),
                              f"total={time.process_time() - start:.4f}", file=sys.stderr))
sys.argv = ["bladec"] + sys.argv[1:]
cli.main()
"""


def one_run(checkout: Path, args: list[str]) -> dict[str, float]:
    """The phases of one process run in ``checkout`` (its bladec, its samples)."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], cwd=checkout,
                          capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    found = re.search(r"^PHASES (.*)$", proc.stderr, re.M)
    if not found:
        raise SystemExit(f"no phases from {checkout}: {proc.stderr[-2000:]}")
    return {k: float(v) for k, v in (kv.split("=") for kv in found.group(1).split())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, default=None,
                        help="another checkout, run in turn with this one")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("args", nargs="*", default=DEFAULT_ARGS,
                        help="bladec's arguments (after --)")
    opts = parser.parse_args()
    trees = {"this": ROOT} | ({"base": opts.base.resolve()} if opts.base else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(opts.runs):
        for name, tree in trees.items():
            runs[name].append(one_run(tree, opts.args))
    phases = list(runs["this"][0])
    print(f"CPU seconds, median (min) of {opts.runs} fresh processes each"
          + (", alternating" if opts.base else "") + f": bladec {' '.join(opts.args)}")
    print(f"| phase | {' | '.join(trees)} |")
    print(f"| --- |{' --- |' * len(trees)}")
    for phase in phases:
        cells = []
        for name in trees:
            seen = [r[phase] for r in runs[name] if phase in r]   # (a run may stop early)
            cells.append(f"{statistics.median(seen):.3f} ({min(seen):.3f})" if seen else "-")
        print(f"| {phase} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
