"""The memory timeline of a run, original order vs the executed plan, as CSV or a PNG plot.

Both are drawn against one axis: the ops of the original listing, in its order. The plan
runs those ops in another order, with reloads and recomputes between them, so a plan's
step index means nothing beside the original's; what compares is the memory each side
holds while it runs a given op. For the plan that is the most memory of the op's own
step and of the reloads and recomputes that bring its operands back just before it
(regeneration steps belong to the op they serve); evictions belong to the op after which
they happen. Each row (CSV) or point (PNG) is one op of the original listing.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bladec.errors import BladecError
from bladec.units import format_size

if TYPE_CHECKING:
    from bladec.runtime.session import RunResult
    from bladec.runtime.planning.trace import Step

SUFFIXES = (".csv", ".png")


@dataclass
class OpRow:
    """One op of the original listing: its memory in both runs, and the plan's events."""
    index: int
    name: str            # the op's first result (or the op's name when it has none)
    kind: str            # the op, e.g. "dot"
    original_bytes: int
    plan_bytes: int | None = None    # None: the plan did not run this op (never so today)
    plan_position: int | None = None  # where the plan ran it, counting its ops from 0
    evicted_after: list[str] = field(default_factory=list)
    reloaded_before: list[str] = field(default_factory=list)
    recomputed_before: list[str] = field(default_factory=list)


def check_timeline_path(path: str) -> None:
    """A BladecError for a --timeline the run could not write, before the run: a name
    with neither suffix, or a .png without matplotlib."""
    if not path.lower().endswith(SUFFIXES):
        raise BladecError(f"--timeline {path}: use a .csv or .png file name")
    if path.lower().endswith(".png"):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BladecError("--timeline .png needs matplotlib (pip install "
                              "'matplotlib>=3.7'); or write a .csv") from None


def _key(op) -> str:
    return op.result_names[0] if op.result_names else op.name


def op_rows(original_trace: list[Step], original_memory: list[int],
            plan_trace: list[Step], plan_memory: list[int]) -> list[OpRow]:
    """Rows for the ops of ``original_trace`` (an unoptimized run: one step and one memory
    entry per op), with the plan's memory and events mapped onto them by op result name."""
    rows: list[OpRow] = []
    at: dict[str, OpRow] = {}
    for step, memory in zip((s for s in original_trace if s.kind == "op"), original_memory):
        row = OpRow(len(rows), _key(step.op), step.op.name, memory)
        rows.append(row)
        at[row.name] = row
    pending_memory: list[int] = []      # regeneration entries waiting for their op
    pending: list[tuple[str, str]] = []  # (method, value) waiting for their op
    last: OpRow | None = None
    early_evictions: list[str] = []      # evictions before any op (none in practice)
    entries = iter(plan_memory)
    position = 0
    for step in plan_trace:
        if step.kind == "evict":
            (last.evicted_after if last else early_evictions).append(step.value)
        elif step.kind == "regen":
            count = 1 if step.method == "reload" else len(step.region)
            pending_memory += [next(entries) for _ in range(count)]
            pending.append((step.method, step.value))
        else:
            memory = next(entries)
            row = at.get(_key(step.op))
            if row is None:  # an op the original does not have: nothing to draw it at
                pending_memory, pending = [], []
                continue
            row.plan_bytes = max([memory, *pending_memory])
            row.plan_position = position
            position += 1
            for method, value in pending:
                (row.reloaded_before if method == "reload"
                 else row.recomputed_before).append(value)
            if early_evictions:
                row.evicted_after += early_evictions
                early_evictions = []
            pending_memory, pending = [], []
            last = row
    return rows


def rows_of(result: RunResult) -> list[OpRow]:
    if result.original_trace is None or result.plan_trace is None:
        raise RuntimeError("a RunResult without its traces can not be drawn")
    return op_rows(result.original_trace, result.original_timeline, result.plan_trace,
                   result.report.timeline)


def title_of(result: RunResult, source: str) -> str:
    r = result.report
    binding = ", ".join(f"{k}={v}" for k, v in r.binding.items()) or "no symbols"
    limit = format_size(r.limit) if r.limit is not None else "none"
    order = f", order @{r.version}" if r.version and r.version != "main" else ""
    return (f"{source or 'listing'}: {binding}\nlimit {limit}, peak "
            f"{format_size(max(result.original_timeline, default=0))} (original order) -> "
            f"{format_size(r.peak_bytes)} (plan{order}); evictions {r.evictions}, reloads "
            f"{r.reloads}, recomputes {r.recomputes}")


def write_timeline(path: str, result: RunResult, source: str = "") -> None:
    """Write the timeline of ``result`` to ``path`` (.csv or .png); ``source`` names the
    listing in the plot's title. OSError is the caller's to report."""
    check_timeline_path(path)
    rows = rows_of(result)
    limit = result.report.limit
    if path.lower().endswith(".csv"):
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["op", "name", "kind", "original_bytes", "plan_bytes", "plan_position",
                        "evicted_after", "reloaded_before", "recomputed_before",
                        "limit_bytes"])
            for r in rows:
                w.writerow([r.index, r.name, r.kind, r.original_bytes,
                            "" if r.plan_bytes is None else r.plan_bytes,
                            "" if r.plan_position is None else r.plan_position,
                            " ".join(r.evicted_after), " ".join(r.reloaded_before),
                            " ".join(r.recomputed_before), "" if limit is None else limit])
        return
    _plot(path, rows, limit, title_of(result, source))


def _plot(path: str, rows: list[OpRow], limit: int | None, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mib = 1 << 20
    fig, ax = plt.subplots(figsize=(10, 4.5))
    xs = [r.index for r in rows]
    ax.plot(xs, [r.original_bytes / mib for r in rows], lw=1.2, color="tab:blue",
            label="original order, no eviction")
    ran = [r for r in rows if r.plan_bytes is not None]
    ax.plot([r.index for r in ran], [r.plan_bytes / mib for r in ran], lw=1.2,
            color="tab:orange", marker=".", ms=3, label="bladec plan (at the same op)")
    for attr, marker, color, label in (
            ("evicted_after", "v", "tab:red", "evictions after the op"),
            ("reloaded_before", "^", "tab:green", "reloads before the op"),
            ("recomputed_before", "D", "tab:purple", "recomputes before the op")):
        marked = [r for r in ran if getattr(r, attr)]
        if marked:
            count = sum(len(getattr(r, attr)) for r in marked)
            ax.scatter([r.index for r in marked], [r.plan_bytes / mib for r in marked],
                       marker=marker, color=color, s=28, zorder=3, label=f"{label} ({count})")
    if limit is not None:
        ax.axhline(limit / mib, color="red", ls="--", lw=1, label="limit")
    if 0 < len(rows) <= 40:
        ax.set_xticks(xs, [r.name for r in rows], rotation=60, fontsize=7)
    ax.set_xlabel("op of the original listing, in its order (the plan runs them in its own)")
    ax.set_ylabel("resident MiB (memory model)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
