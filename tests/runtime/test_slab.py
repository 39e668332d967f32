"""A process's slab of a global array (runtime/slab.py): which box its devices hold, and
the global shape a slab read from its own file stands for. The devices are described
as JAX describes them (``addressable_devices_indices_map``); the runs on two processes
are in tests/runtime/test_sharded_run.py."""
from __future__ import annotations

import pytest

from bladec.errors import BladecError
from bladec.runtime.slab import box, global_shape


class _Mesh:
    shape = {"data": 4, "model": 2}


class _Sharding:
    """``P('data', None)`` on a 4x2 mesh, as seen by a process holding the devices at
    data coordinates ``rows`` (both model coordinates each)."""
    mesh = _Mesh()
    spec = ("data", None)

    def __init__(self, rows: tuple[int, ...]) -> None:
        self.rows = rows

    def addressable_devices_indices_map(self, shape):
        n = shape[0] // 4
        return {(r, m): (slice(r * n, (r + 1) * n), slice(None))
                for r in self.rows for m in range(2)}


def test_a_process_holding_data_coordinates_0_and_1_holds_the_first_half():
    s = _Sharding((0, 1))
    assert box(s, (8, 16)) == (slice(0, 4), slice(0, 16))
    assert global_shape(s, (4, 16), "input %x") == (8, 16)
    assert box(_Sharding((2, 3)), (8, 16)) == (slice(4, 8), slice(0, 16))


def test_a_slab_that_is_not_whole_blocks_is_refused():
    with pytest.raises(BladecError, match=r"input %x: dim 0 of this process's slab \(3\) "
                                          "is not a multiple of the 2 blocks"):
        global_shape(_Sharding((0, 1)), (3, 16), "input %x")


def test_devices_that_hold_no_box_are_refused():
    with pytest.raises(BladecError, match="input %x: .* not one box"):
        box(_Sharding((0, 2)), (8, 16), "input %x")
