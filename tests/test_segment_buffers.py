"""The model of XLA's accounting of a segment's outputs (runtime/trace.py): what a
segment hands on is held from its first step, except what it writes into a donated
argument of the same shape and dtype, which takes that buffer where it is freed.
Worked by hand on a four-op chain, sizes chosen so that every sum reads off its digits.
"""
from __future__ import annotations

from bladec.parse import parse_module
from bladec.runtime.budget import Budget
from bladec.runtime.plan import Program
from bladec.runtime.replay import Replay
from bladec.runtime.trace import Step, segment_buffers, simulate, walk, held_until

CHAIN = """
func.func @main(%x: tensor<4>) {
  %a = exp(%x) -> tensor<4>
  %b = tanh(%a) -> tensor<4>
  %c = exp(%b) -> tensor<4>
  %d = add(%c, %a) -> tensor<4>
  return %d
}
"""
SIZES = {"%x": 1, "%a": 10, "%b": 100, "%c": 1000, "%d": 100}
# %b and %d alike (as if both were 25 floats); the others each their own
AVALS = {"%x": ((1,), "f32"), "%a": ((10,), "f32"), "%b": ((25,), "f32"),
         "%c": ((250,), "f32"), "%d": ((25,), "f32")}


def _program(xla: bool, avals: dict | None = None) -> Program:
    ops = parse_module(CHAIN, "<chain>").main.ops[:4]
    uses: dict[str, list[int]] = {}
    for i, op in enumerate(ops):
        for n in op.operands:
            uses.setdefault(n, []).append(i)
    return Program(ops, ["%x"], {"%d"}, {}, {}, uses, frozenset(), xla, avals)


def _steps(program: Program, cut: bool) -> list[Step]:
    ops = [Step("op", op, index=i) for i, op in enumerate(program.ops)]
    if not cut:
        return ops
    # %b offloaded after op 1 and reloaded before op 2: segments [op0, op1], [op2, op3]
    return ops[:2] + [Step("evict", value="%b", method="reload"),
                      Step("regen", value="%b", method="reload")] + ops[2:]


def _memory(program: Program, cut: bool) -> list[int]:
    trace = _steps(program, cut)
    measured = program.measure(trace, SIZES).memory
    replay = Replay(program, SIZES, Budget(10 ** 6))
    replay.load(trace)
    assert replay.memory == measured   # the consolidation's replay models the same
    return measured


def test_one_segment_holds_the_graph_output_from_its_start() -> None:
    # as ops make them: x+a, +b, +c (b freed after), +d (c, a freed after)
    assert _memory(_program(False), cut=False) == [11, 111, 1111, 1111]
    # %d, made by the last op, is held from the first: 100 more until then
    assert _memory(_program(True), cut=False) == [111, 211, 1211, 1111]
    # no donated argument here (%x is a kept input): pairing changes nothing
    assert _memory(_program(True, AVALS), cut=False) == [111, 211, 1211, 1111]


def test_a_cut_segment_hands_on_from_its_start_and_outputs_take_donated_buffers() -> None:
    steps = _steps(_program(True, AVALS), cut=True)
    w = walk(steps)
    held = held_until(steps, w)
    assert (w.first, w.final) == ([0, 4], [1, 5])
    pinned = {"%x", "%d"}
    # the first segment hands on %a (made at its first step anyway) and %b (ahead)
    assert segment_buffers(steps, 0, 1, held, {"%d"}, pinned, AVALS) == (["%b"], [], [])
    # the second is donated %b and %a (freed after it): %d takes %b's buffer
    assert segment_buffers(steps, 4, 5, held, {"%d"}, pinned, AVALS) == ([], ["%d"], [])
    assert segment_buffers(steps, 4, 5, held, {"%d"}, pinned, None) == (["%d"], [], [])
    # the model before the rule: [x+a, +b, reload b, +c, +d]
    assert _memory(_program(False), cut=True) == [11, 111, 111, 1111, 1211]
    # %b from the first step; %d held ahead in the second segment without pairing...
    assert _memory(_program(True), cut=True) == [111, 111, 111, 1211, 1211]
    # ...and in %b's buffer with it: counted only once %b is freed
    assert _memory(_program(True, AVALS), cut=True) == [111, 111, 111, 1111, 1111]
    # after the step: %x and %d, as every model ends
    trace = _steps(_program(True, AVALS), cut=True)
    assert simulate(trace, SIZES, ["%x"], {"%d"}, outputs_from_start=True,
                    avals=AVALS).peak == 1111
