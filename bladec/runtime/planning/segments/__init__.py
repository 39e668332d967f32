"""A plan's trace cut into compiled segments, evictions and reloads: what the executor runs.

Segments are maximal runs of ops (recomputed ones included) with no eviction or reload
between them, each one compiled function; where the backend keeps a recompute inside an
executable (one memory, the order held), an eviction to recompute a value the segment
made cuts nothing (:func:`split`). Values whose last use is in a segment are
freed after it, and donated to it so XLA may reuse their buffers for its outputs; a
value evicted by reload is offloaded once (a second eviction reuses the host copy).
"""
from bladec.runtime.planning.segments.cut import split
from bladec.runtime.planning.segments.steps import (EvictStep, PreparedRun, ReloadStep,
                                                    SegmentStep, Step, donated_into,
                                                    held_after, segment_fn)

__all__ = ["EvictStep", "PreparedRun", "ReloadStep", "SegmentStep", "Step", "donated_into",
           "held_after", "segment_fn", "split"]
