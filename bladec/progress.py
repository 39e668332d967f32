"""How long work tells the one waiting for it what it is doing: a small interface.

The library never writes to a stream (only the command line does), so the engine, the
passes' driver and the JAX backend report through a :class:`Progress` they are given:
``stage`` when a phase begins (optimizing with a pass, preparing a binding, running),
``tick`` when one unit of it is done (an executable compiled). The command line shows
it as a tqdm line on stderr when that is a terminal, and not at all with ``--quiet`` or
when stderr is a file or a pipe; by default nobody listens (:data:`SILENT`).
"""
from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def stage(self, what: str) -> None: ...
    def tick(self) -> None: ...


class Silent:
    """Listens to nothing: the default everywhere."""

    def stage(self, what: str) -> None:
        pass

    def tick(self) -> None:
        pass


SILENT = Silent()
