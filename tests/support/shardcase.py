"""The meshes every pair of shardings is checked on, and the one-reshard program of a pair:
the ``redistribute`` tests (tests/passes/test_redistribute.py) check the pass's programs
by simulation, tests/support/sharded_check.py runs them on 8 CPU devices."""
from __future__ import annotations

from bladec.ir import Func, Mesh, Module, Op, TensorType, Value
from bladec.types import Sharding

MESHES = [Mesh((("x", 4), ("y", 2))), Mesh((("x", 2), ("y", 2), ("z", 2)))]


def program(mesh: Mesh, shape: tuple, src: Sharding, dst: Sharding) -> Module:
    t0, t1 = TensorType(shape, "f32", None, src), TensorType(shape, "f32", None, dst)
    func = Func("main", [Value("%a", t0)], [Op("reshard", ["%a"], [Value("%b", t1)])], ["%b"])
    return Module([func], mesh=mesh)
