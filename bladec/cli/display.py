"""What the command line shows besides results: the progress line on stderr, and the
analysis report as text (``bladec analyze`` without ``--json``).
"""
from __future__ import annotations

import os
import shutil
import sys
from typing import Any

import click

from bladec.units import format_size


class _ProgressLine:
    """Progress (bladec/progress.py) as one tqdm line on ``stream``: the stage, the
    executables compiled in it, the time spent; gone when the work ends. Shown only when
    ``stream`` is a terminal and not ``quiet``: a log file or a pipe gets nothing."""

    def __init__(self, quiet: bool, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        shown = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())
        self._own = None
        self.bar: Any = None   # none where nothing is shown: tqdm is not even imported
        if not shown:          # (with the multiprocessing locks it makes: 15-20 ms)
            return
        from tqdm import tqdm
        if self.stream is sys.stderr:
            # tqdm wrote nothing to sys.stderr itself on a pseudo-terminal (script(1),
            # tqdm 4.70); a handle of our own on the same descriptor works
            self._own = self.stream = os.fdopen(os.dup(sys.stderr.fileno()), "w")
        width = shutil.get_terminal_size((100, 20)).columns or 100  # 0 in some ptys
        self.bar = tqdm(total=None, file=self.stream, leave=False,
                        bar_format="{desc} [{elapsed}]{postfix}", mininterval=0.2,
                        ncols=width)

    def stage(self, what: str) -> None:
        if self.bar is None:
            return
        self.bar.set_description_str(what, refresh=False)
        self.bar.set_postfix_str("", refresh=False)
        self.bar.reset()

    def tick(self) -> None:
        if self.bar is None:
            return
        self.bar.update(1)
        self.bar.set_postfix_str(f" {self.bar.n} compiled", refresh=True)

    def __enter__(self) -> "_ProgressLine":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()
        if self._own is not None:
            self._own.close()


_QUIET = click.option("-q", "--quiet", is_flag=True,
                      help="No progress line on stderr (it is shown only on a terminal).")


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
