"""The memory timeline of a run, original order vs optimized plan, as CSV or a PNG plot."""
from __future__ import annotations

import csv

from bladec.errors import BladecError


def write_timeline(path: str, original: list[int], optimized: list[int],
                   limit: int | None) -> None:
    if path.endswith(".csv"):
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["step", "original_bytes", "optimized_bytes", "limit_bytes"])
            for i in range(max(len(original), len(optimized))):
                w.writerow([i, original[i] if i < len(original) else "",
                            optimized[i] if i < len(optimized) else "",
                            limit if limit is not None else ""])
        return
    if not path.endswith(".png"):
        raise BladecError(f"--timeline {path}: use a .csv or .png file name")
    try:
        import matplotlib
    except ImportError:
        raise BladecError("--timeline .png needs matplotlib (pip install matplotlib); "
                          "or write a .csv") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4))
    mib = 1 << 20
    ax.plot([b / mib for b in original], label="original order, no eviction", lw=1.2)
    ax.plot([b / mib for b in optimized], label="bladec plan", lw=1.2)
    if limit is not None:
        ax.axhline(limit / mib, color="red", ls="--", lw=1, label="limit")
    ax.set_xlabel("step (ops, reloads and recomputes)")
    ax.set_ylabel("resident MiB (memory model)")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
