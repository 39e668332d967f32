"""The XLA compile options bladec chooses, and whether this XLA knows them.

jaxlib's XLA changes its options from release to release (an option a later one drops
is refused at compile time), so each option bladec sets beyond XLA's defaults is asked
about once per process (:func:`_option_known`) and left out where it is unknown; the
docstrings say, with the measurements, why each one is set.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

# the barriers keep algsimp from rewriting across ops (_BarrierJaxKernels)
BITWISE_OPTIONS = {"xla_disable_hlo_passes": "fusion"}
# XLA:CPU's YNNPACK fusions (a dot with its neighbours, one custom kernel) form with the
# fusion pass off, and differ with where a plan cuts (bitwise_options)
_NO_YNN_FUSIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}
KEEP_BARRIERS = {"xla_disable_hlo_passes": "cse_barrier_expander"}
FUSION_EMITTERS_VARIABLE = "BLADEC_CPU_FUSION_EMITTERS"
GPU_AUTOTUNE_VARIABLE = "BLADEC_GPU_AUTOTUNE"
_NO_GPU_AUTOTUNE = {"xla_gpu_autotune_level": 0}
_LEGACY_EMITTERS = {"xla_cpu_use_fusion_emitters": False}
_FUSION_EMITTERS = {"xla_cpu_use_fusion_emitters": True}
_KNOWN: dict[str, bool] = {}


def legacy_cpu_emitters() -> dict[str, Any]:
    """The XLA:CPU option that compiles fused kernels with its LLVM emitters instead of
    its MLIR fusion emitters (XLA's default in jaxlib 0.10), or nothing where this XLA
    does not know the option (an older one, or a later one that dropped it): asked once
    per process by compiling a one-op function.

    Why: a plan under a limit cuts the step into segments, and XLA:CPU's MLIR emitters
    took about twice as long to compile the 20 distinct segments of the small Llama
    step's plan at 8x448 under benchmarks/bench_jit.py's limit (5.9 s of CPU against
    2.9 s), while ``jax.jit`` of the whole step compiles in about the same time with
    either (1.81 s against 1.73 s) and runs as fast (0.30 s a step both), and the
    segmented step ran no slower (BENCHMARKS.md, 2026-11-24). Only for segments: the
    paper-size SGD step's whole steps (bladec's order and XLA's) compile slower with the
    LLVM emitters (at 2x256, 5.2-5.8 s of CPU against 3.9-4.0 s; at 1x64 a refused limit
    took 1.14x the CPU time), while the 20 segments of its plan at 16x512 under half its
    peak compiled faster (6.3-7.1 s against 7.4-7.7 s with the whole step among them)."""
    return dict(_LEGACY_EMITTERS) if _option_known(_LEGACY_EMITTERS) else {}


def gpu_options() -> dict[str, Any]:
    """The XLA:GPU option that turns its autotuner off, unless ``BLADEC_GPU_AUTOTUNE=1``
    (or this XLA does not know the option).

    Why: while XLA:GPU compiles, its autotuner times candidate GEMM and fusion
    algorithms on buffers it allocates from the device's own allocator, the one whose
    peak a limit must bound (DESIGN.md section 4), and a step compiles while the arrays
    it holds are in that allocator. On an H100 (jaxlib 0.11.2, 2026-11-27), the small
    Llama SGD step at 8x512 under 0.8 of ``jax.jit``'s device peak (a limit of
    166,997,779 B): with the autotuner, the allocator's peak was 201,001,984 B, and
    268,435,456 B in a fresh process, over the limit, where bladec's own device peak
    was 150,332,080 and 138,962,568 B; without it, 148,904,448 B (within). What the
    autotuner's choices would have saved in step time was not measured;
    ``BLADEC_GPU_AUTOTUNE=1`` keeps them, and the allocator's peak is then not bounded
    by the limit while a step compiles."""
    if os.environ.get(GPU_AUTOTUNE_VARIABLE, "0") != "0":
        return {}
    return dict(_NO_GPU_AUTOTUNE) if _option_known(_NO_GPU_AUTOTUNE) else {}


def bitwise_options(platform: str) -> dict[str, Any]:
    """The XLA options of every executable in bitwise mode (JaxBackend(bitwise=True)):
    the fusion pass off, and on CPU, where this XLA knows the option, no YNNPACK
    fusions. XLA:CPU (jaxlib 0.10.2) still groups a dot with the ops beside it into one
    YNNPACK kernel with the fusion pass off, and which ops join depends on the segment:
    the small Llama SGD step at 2x64 under limits of 0.8 and 0.7 of its peak (its plans
    recompute chains) gave 2 and 3 outputs off by 4.8e-7 from the unlimited run with
    them, none without.

    Never XLA:CPU's LLVM fusion emitters here (legacy_cpu_emitters, which cut plans use
    otherwise): with the fusion pass off they turn a transpose that feeds a dot into a
    bitcast, and the dot reads its operand untransposed. The step's attention output
    projection then came out up to 525 off (magnitude 196), and the unlimited bitwise
    run's outputs up to 139 times their magnitude off NumPy's; plans that cut between
    the transpose and the dot computed it right, so their outputs differed from the
    unlimited run's by up to 1.5e3. So the MLIR emitters are asked for by name, not
    left to XLA's default: ``XLA_FLAGS=--xla_cpu_use_fusion_emitters=false`` (a user's,
    or the test suite's, tests/conftest.py) would otherwise reach bitwise executables
    and bring the miscompile back (tests/runtime/planning/test_chain.py)."""
    options = dict(BITWISE_OPTIONS)
    if platform == "cpu":
        for known in (_NO_YNN_FUSIONS, _FUSION_EMITTERS):
            if _option_known(known):
                options.update(known)
    return options


def _option_known(options: dict[str, Any]) -> bool:
    """Whether this XLA compiles with ``options`` (asked once per process per option,
    by compiling a one-op function); an XLA that does not know one refuses it."""
    name = next(iter(options))
    if name not in _KNOWN:
        import jax
        try:
            jax.jit(lambda x: x + 1).lower(
                jax.ShapeDtypeStruct((2,), np.float32)).compile(compiler_options=options)
            _KNOWN[name] = True
        except Exception as exc:  # XLA's own error type varies across jaxlib versions
            if "compile option" not in str(exc):
                raise
            _KNOWN[name] = False
    return _KNOWN[name]
