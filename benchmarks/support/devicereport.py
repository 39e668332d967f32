"""bench_device.py's rows and what they say: the table of each case, issue 13's goals,
the Pareto set and the plot of device peak against step time.

Apart from the measuring (bench_device.py) so that the rows can be judged from numbers
given by hand, as the tests do, and so that bench_grad.py can share the MiB format and
XLA's device peak.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIB = 1 << 20


def mib(nbytes: float) -> str:
    """MiB with one decimal, three below 10 MiB (the tiny model's rows)."""
    return f"{nbytes / MIB:.1f}" if nbytes >= 10 * MIB else f"{nbytes / MIB:.3f}"


def xla_device_peak(stats: Any) -> int:
    """argument + output + temp - alias bytes: the device memory one call of the
    executable needs, by XLA's own accounting (host-memory fields are not counted)."""
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes
            + stats.temp_size_in_bytes - stats.alias_size_in_bytes)


@dataclass
class Row:
    """One configuration's device peak, step times and what else it reported."""
    name: str
    kind: str                       # jit | checkpoint | bladec
    peak: int | None = None         # device bytes; None where it did not run
    limit: int | None = None        # bladec's limit
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)   # the process's CPU seconds
    faults: list[int] = field(default_factory=list)        # minor page faults per step
    info: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def ran(self) -> bool:
        return self.peak is not None and not self.error

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu_times) if self.cpu_times else None


@dataclass
class Case:
    """One optimizer at one batch x sequence: its rows, the jit row first among them."""
    optimizer: str
    batch: int
    seq: int
    rows: list[Row]

    @property
    def title(self) -> str:
        return f"{self.optimizer} {self.batch}x{self.seq}"

    @property
    def jit(self) -> Row:
        return next(r for r in self.rows if r.name == "jit")


def pareto(rows: list[Row]) -> set[str]:
    """Rows no other row beats on both device peak and step time."""
    ran = [r for r in rows if r.ran and r.times]
    return {r.name for r in ran if not any(
        o.peak <= r.peak and o.median <= r.median and (o.peak, o.median) != (r.peak, r.median)
        for o in ran)}


def goal_lines(case: Case) -> list[tuple[bool, str]]:
    """Issue 13's goals for one case, each (met, the line with its numbers)."""
    jit = case.jit
    out: list[tuple[bool, str]] = []
    rows = {r.name: r for r in case.rows}
    ours = [r for r in case.rows if r.kind == "bladec" and r.ran and r.times]

    def fig(r: Row) -> str:
        return (f"{r.name} {mib(r.peak)} MiB ({r.peak / jit.peak:.2f}x), "
                f"{r.median * 1e3:.1f} ms ({r.median / jit.median:.2f}x)")
    free = rows.get("bladec, no limit")
    if free is None or not free.ran:
        out.append((False, "no limit: bladec did not run" + (f" ({free.error})" if free else "")))
    else:
        ok = free.peak <= jit.peak and jit.median / free.median >= 0.95
        out.append((ok, f"no limit: {fig(free)}; goal peak <= jit's {mib(jit.peak)} MiB "
                        f"and speed >= 0.95x jit's ({jit.median / free.median:.2f}x)"))
    for r in case.rows:
        if r.kind != "checkpoint" or not r.ran:
            continue
        fits = [o for o in ours if o.peak <= r.peak]
        if not fits:
            out.append((False, f"{fig(r)}: no bladec row at <= {mib(r.peak)} MiB"))
            continue
        best = min(fits, key=lambda o: o.median)
        out.append((best.median <= r.median,
                    f"{fig(r)}: fastest bladec at no more memory is {fig(best)}"))
    half = rows.get("bladec, 0.5x")
    if half is None:
        out.append((False, "0.5x jit's peak: not run (--fractions)"))
    elif not half.ran:
        out.append((False, f"0.5x jit's peak: bladec refused ({half.error})"))
    else:
        out.append((half.peak <= 0.5 * jit.peak and half.median <= 1.3 * jit.median,
                    f"0.5x jit's peak: {fig(half)}; goal peak <= 0.5x, time <= 1.3x"))
    return out


def table_lines(case: Case) -> list[str]:
    jit, front = case.jit, pareto(case.rows)
    lines = [f"### {case.title}", "",
             "| config | device peak MiB | x jit peak | median step ms | x jit time "
             "| CPU ms | x jit CPU | faults/step | notes |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in case.rows:
        notes = []
        if r.name in front:
            notes.append("Pareto")
        if r.kind == "bladec":
            if r.limit is not None:
                notes.append(f"limit {mib(r.limit)} MiB")
            if r.info.get("model_peak_bytes") is not None:
                notes.append(f"model peak {mib(r.info['model_peak_bytes'])} MiB")
            if r.ran:
                notes.append(f"{r.info.get('segments', '?')} segments, "
                             f"{r.info.get('evictions', '?')} evictions")
        if "offloaded" in r.info:
            notes.append("offload lowered" if r.info["offloaded"]
                         else "offload not lowered on this backend (saved on device)")
        if r.error:
            notes.append(r.error.replace("|", "/"))
        if not r.ran:
            lines.append(f"| {r.name} | - | - | - | - | - | - | - | {'; '.join(notes)} |")
            continue
        cpu = cpu_ratio = faults = "-"
        if r.cpu_median is not None:
            cpu = f"{r.cpu_median * 1e3:.1f}"
            if jit.cpu_median:
                cpu_ratio = f"{r.cpu_median / jit.cpu_median:.3f}"
        if r.faults:
            faults = f"{statistics.median(r.faults):.0f}"
        lines.append(f"| {r.name} | {mib(r.peak)} | {r.peak / jit.peak:.3f} | "
                     f"{r.median * 1e3:.1f} | {r.median / jit.median:.3f} | {cpu} | "
                     f"{cpu_ratio} | {faults} | {'; '.join(notes)} |")
    return lines


def _style(r: Row) -> tuple[str, str, bool]:
    """(colour, marker, filled) of a row in the plot."""
    if r.kind == "jit":
        return "k", "*", "donated" not in r.name
    if r.kind == "checkpoint":
        return "tab:blue", "o", "barriers kept" not in r.name
    return "tab:red", ("D" if r.name.startswith("bladec @") else "s"), \
        not r.name.startswith("bladec @")


def _label(name: str) -> str:
    for long, short in (("checkpoint ", ""), ("bladec @ ", "@"), (", barriers kept", " (kept)"),
                        ("_saveable", ""), ("save_and_offload_only_these_names", "names"),
                        ("bladec, ", "")):
        name = name.replace(long, short)
    return name


def plot(cases: list[Case], path: Path) -> None:
    """Device peak against median step time, one panel per case (matplotlib, Agg)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = min(2, len(cases))
    rows = -(-len(cases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.8 * rows), squeeze=False)
    for ax, case in zip(axes.flat, cases):
        ran = [r for r in case.rows if r.ran and r.times]
        for r in ran:
            color, marker, filled = _style(r)
            t, p = r.median * 1e3, r.peak / MIB
            ax.scatter(t, p, c=color if filled else "none", edgecolors=color, marker=marker,
                       s=70 if marker == "*" else 40, zorder=3)
            ax.annotate(_label(r.name), (t, p), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
        line = sorted((r.peak / MIB, r.median * 1e3) for r in ran
                      if r.kind == "bladec" and not r.name.startswith("bladec @"))
        if line:
            ax.plot([t for _, t in line], [p for p, _ in line], c="tab:red", lw=1, zorder=2)
        ax.set_title(case.title)
        ax.set_xlabel("median step time (ms)")
        ax.set_ylabel("device peak (MiB)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(cases):]:
        ax.set_visible(False)
    legend = [("jit", "k", "*", True), ("jit, donated", "k", "*", False),
              ("checkpoint", "tab:blue", "o", True),
              ("checkpoint, barriers kept", "tab:blue", "o", False),
              ("bladec (no limit, fractions, min)", "tab:red", "s", True),
              ("bladec @ a checkpoint row's peak", "tab:red", "D", False)]
    handles = [plt.Line2D([], [], ls="", marker=m, markeredgecolor=c,
                          markerfacecolor=c if filled else "none", label=k)
               for k, c, m, filled in legend]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("Device peak against median step time")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
