"""What ``bladec.autobatch`` reports of a batch: its calls, padding, host and compile
time, the figures its benchmark compares with DyNet's."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class AutobatchReport:
    """The last batch's figures and the totals since the wrapper was made."""
    instances: int = 0
    invocations: int = 0
    calls: int = 0               # batched calls (kernel launches from the host)
    depths: int = 0
    padding: float = 0.0         # share of the calls' lanes that were padding
    trace_seconds: float = 0.0   # running the model's Python over the instances
    schedule_seconds: float = 0.0
    host_cpu_seconds: float = 0.0  # the same two in this thread's CPU time (a figure the
                                   # load of a shared machine inflates less than wall time)
    dispatch_seconds: float = 0.0  # issuing the calls (includes waiting where the device
                                   # runs synchronously, as XLA's CPU client may)
    seconds: float = 0.0         # the batch's wall time, results ready
    compilations: int = 0        # executables compiled by the last batch
    kernels: int = 0             # kernels (cell signatures x forward/backward) imported
    total_compilations: int = 0
    total_compile_seconds: float = 0.0
    batches: int = 0

    @property
    def host_seconds(self) -> float:
        """Host scheduling: tracing the instances and building the schedule."""
        return self.trace_seconds + self.schedule_seconds

    def __str__(self) -> str:
        return (f"batch {self.batches}: {self.instances} instance(s), {self.invocations} "
                f"invocation(s) in {self.calls} call(s) over {self.depths} depth(s) "
                f"({self.padding:.0%} padding); {self.seconds * 1e3:.1f} ms, host "
                f"scheduling {self.host_seconds * 1e3:.1f} ms; {self.compilations} "
                f"compilation(s); in all {self.kernels} kernel(s), "
                f"{self.total_compilations} compilation(s) in "
                f"{self.total_compile_seconds:.2f} s")
