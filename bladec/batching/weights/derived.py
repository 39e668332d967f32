"""Values made from parameter leaves alone (a weight transposed as the forward kernels
take it, siblings' weights stacked), kept from batch to batch while the leaves they were
made from are the same arrays.

Why: inference calls a model again and again with the same parameters, and remaking
these values every batch costs more than their arithmetic. A BiLSTM's two directions'
weights stacked and transposed are 8 MiB at hidden 256, fresh memory each batch: on
the CPU backend the process took about 2,000 page faults a batch of 64 for them
(7.8 ms of system time against 65 ms of wall time, 2026-12-07). The leaves are held by
weak reference only: an entry whose parameters are gone (a training step's old ones) is
dropped with them, so the cache never keeps a parameter alive, and holds at most one
value per key (the one made from the parameters of the last batch).
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any


class DerivedValues:
    """``key -> value made from sources``, valid while every source is still the very
    array it was made from (identity, not equality: comparing values would cost what
    remaking them does)."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[tuple[weakref.ref, ...], Any]] = {}
        self.made = 0    # values made (a hit makes none): tests read it

    def get(self, key: Hashable, sources: Sequence[Any], make: Callable[[], Any]) -> Any:
        """The value for ``key`` made from ``sources`` (``make()``), made again only where
        a source is another array than last time."""
        entry = self._entries.get(key)
        if entry is not None and len(entry[0]) == len(sources) and all(
                ref() is source for ref, source in zip(entry[0], sources)):
            return entry[1]
        value = make()
        self.made += 1
        refs = tuple(weakref.ref(source, self._dropper(key)) for source in sources)
        self._entries[key] = (refs, value)
        return value

    def _dropper(self, key: Hashable) -> Callable[[weakref.ref], None]:
        """A weak reference's callback that drops ``key``'s entry when the source dies,
        unless the entry was remade from other sources since. Holds the cache weakly
        too: a cache gone first leaves the callback nothing to do."""
        cache = weakref.ref(self)

        def drop(dead: weakref.ref) -> None:
            owner = cache()
            entry = owner._entries.get(key) if owner is not None else None
            if entry is not None and any(ref is dead for ref in entry[0]):
                del owner._entries[key]
        return drop

    def __len__(self) -> int:
        return len(self._entries)
