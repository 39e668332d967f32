"""The memory model of DESIGN.md section 4 by hand: timelines, peaks, lower bounds,
outputs resident to the end, frees after the last use."""
from __future__ import annotations

from bladec.analysis.memory import (exact_lower_bound, exact_peak, exact_sizes,
    exact_timeline, lower_bound_steps, peak_terms, symbolic_lower_bound, symbolic_timeline)
from bladec.symbolic.expr import const

from tests.support.shapecase import S0, analyze


# -- the memory model by hand ----------------------------------------------------------------

TINY = """
    func.func @main(%a: tensor<10>, %b: tensor<20>) {
      %1 = neg(%a) -> tensor<10>
      %2 = neg(%b) -> tensor<20>
      %3 = add(%1, %1) -> tensor<10>
      %4 = concatenate(%3, %2) {dim = 0} -> tensor<30>
      %5 = neg(%a) -> tensor<10>
      return %4
    }
"""


def _exact(text: str, binding: dict[str, int] | None = None):
    module, info = analyze(text)
    sizes = exact_sizes(info, binding or {})
    return module, info, sizes, exact_timeline(module.main, sizes)


def test_memory_model_by_hand():
    module, info, sizes, tl = _exact(TINY)
    # inputs: 40 + 80 bytes, resident throughout
    assert tl.inputs == 120
    assert tl.steps == [
        120 + 40,              # %1
        160 + 80,              # %2
        240 + 40,              # %3 allocated while %1 (last use) is still resident
        240 + 120,             # %4 allocated before %3 and %2 are freed (240 - 40 + 120)
        240 + 40,              # %5, unused and not an output: freed right after
    ]
    assert exact_peak(module.main, sizes) == 360
    # the symbolic timeline is the same numbers as constants
    st = symbolic_timeline(module.main, info)
    assert st.steps == [const(v) for v in tl.steps]
    assert st.inputs == 120


def test_lower_bound_by_hand():
    module, info, sizes, _ = _exact(TINY)
    # per op: inputs (120) + non-input operands + results
    assert lower_bound_steps(module.main, sizes.__getitem__, 0) == [
        120 + 40, 120 + 80, 120 + 40 + 40, 120 + 40 + 80 + 120, 120 + 40]
    assert exact_lower_bound(module.main, sizes) == 360
    assert symbolic_lower_bound(module.main, info) == [const(360)]


OUTPUT_TEXT = """
    func.func @main(%a: tensor<10>) {
      %1 = broadcast_in_dim(%a) {dims = [0]} -> tensor<10x10>
      %2 = neg(%a) -> tensor<10>
      %3 = neg(%2) -> tensor<10>
      return RETURNS
    }
"""


def test_outputs_stay_resident_to_the_end():
    _, _, _, tl = _exact(OUTPUT_TEXT.replace("RETURNS", "%1, %3"))
    # %1 (400 bytes) is an output: never freed although nothing uses it
    assert tl.steps == [40 + 400, 440 + 40, 480 + 40]
    # not an output and never used: freed right after the op that made it
    _, _, _, tl = _exact(OUTPUT_TEXT.replace("RETURNS", "%3"))
    assert tl.steps == [40 + 400, 40 + 40, 80 + 40]


def test_without_return_the_unused_results_are_the_outputs():
    _, _, _, tl = _exact(OUTPUT_TEXT.replace("return RETURNS", ""))
    assert tl.steps == [440, 480, 520]


CHAIN = """
    func.func @main(%a: tensor<1>) {
      %1 = broadcast_in_dim(%a) {dims = [0]} -> tensor<1000>
      %2 = slice(%1) {start = [0], limit = [10]} -> tensor<10>
      EVICT
      %3 = neg(%2) -> tensor<10>
      %4 = neg(%3) -> tensor<10>
      return %4
    }
"""


def test_a_value_is_freed_after_its_last_use():
    _, _, _, tl = _exact(CHAIN.replace("EVICT", ""))
    # %1 (4000 bytes) is resident at steps 0 and 1 only; the step that uses it last
    # counts it together with its result
    assert tl.steps == [4 + 4000, 4 + 4000 + 40, 4 + 40 + 40, 4 + 40 + 40]


def test_remat_ops_are_not_uses():
    _, _, _, tl = _exact(CHAIN.replace("EVICT", "remat.evict(%1) {pruned = 0}"))
    assert tl.steps == [4004, 4044, 84, 84]


def test_symbolic_memory_model_by_hand():
    module, info = analyze("""
        func.func @main(%a: tensor<?x64, [@S0, @C64]>, %w: tensor<64x256>) {
          %1 = dot(%a, %w) -> tensor<?x256>
          %2 = logistic(%1) -> tensor<?x256>
          %3 = mul(%1, %2) -> tensor<?x256>
          %4 = reduce(%3) {dims = [1]} -> tensor<?>
          return %4
        }
    """)
    tl = symbolic_timeline(module.main, info)
    inputs = 256 * S0 + 65536
    assert tl.inputs == inputs
    assert tl.steps == [inputs + 1024 * S0, inputs + 2048 * S0, inputs + 3072 * S0,
                        inputs + 1024 * S0 + 4 * S0]
    assert peak_terms(tl, info.compare) == [inputs + 3072 * S0]
    assert symbolic_lower_bound(module.main, info) == [inputs + 3072 * S0]
