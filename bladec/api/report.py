"""What ``bladec.jit`` tells about its steps: :class:`JitReport`, the last step's figures
(the device peak measured where it is spent, DESIGN.md section 4) and the totals over the
wrapper's life, as ``Jitted.report()`` returns them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bladec.units import format_size


@dataclass
class JitReport:
    """The last step's figures (device peak per DESIGN.md section 4: held arrays plus the
    running segment's XLA outputs and temporaries) and totals over the wrapper's life."""
    peak_bytes: int = 0            # the last step's device peak (per device where sharded)
    devices: int = 1               # the devices the last step ran on (a mesh: per device)
    model_peak_bytes: int = 0      # the per-op model over the same step, for comparison
    limit: int | None = None
    binding: dict[str, int] = field(default_factory=dict)   # JAX dim names -> sizes run
    evictions: int = 0
    reloads: int = 0
    recomputes: int = 0
    segments: int = 0
    executables: int = 0           # distinct compiled functions the last step ran
    compilations: int = 0          # executables compiled by the last step
    compile_seconds: float = 0.0
    seconds: float = 0.0           # the last step's wall time (compiling included)
    steps: int = 0                 # totals from here on
    traces: int = 0
    trace_seconds: float = 0.0     # tracing and optimizing, all traces
    total_compilations: int = 0
    total_compile_seconds: float = 0.0
    total_compile_cpu_seconds: float = 0.0   # the process's CPU time over the same calls
    total_executables: int = 0     # distinct executables run (fewer than compilations
                                   # where a plan XLA's figures rejected was compiled)
    buckets: int = 0               # distinct bindings run

    def __str__(self) -> str:
        lim = format_size(self.limit) if self.limit is not None else "none"
        dims = ", ".join(f"{k}={v}" for k, v in self.binding.items()) or "static"
        each = f" per device of {self.devices}" if self.devices > 1 else ""
        return (f"step {self.steps} ({dims}): device peak{each} "
                f"{format_size(self.peak_bytes)} (limit{each} {lim}; model "
                f"{format_size(self.model_peak_bytes)}), "
                f"{self.segments} segment(s), {self.evictions} eviction(s), "
                f"{self.reloads} reload(s), {self.recomputes} recompute(s), "
                f"{self.compilations} compilation(s) in {self.compile_seconds:.2f} s, "
                f"{self.seconds:.3f} s; in all: {self.traces} trace(s) in "
                f"{self.trace_seconds:.2f} s, {self.buckets} bucket(s), "
                f"{self.total_compilations} compilation(s) in "
                f"{self.total_compile_seconds:.2f} s")
