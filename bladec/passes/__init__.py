"""Passes and pipelines: ``-p schedule,remat{max_recompute=2}`` picks passes from the registry.

A pass is a small class with a ``name``, its ``options`` (a schema: each option's type,
range and default, checked when the pipeline is parsed, so that a bad value is named with
the valid ones before any work), and ``apply(module) -> module``; passes do no I/O. Each
pass module registers itself with :func:`register` (pipeline.py).

A pass may also declare what it ``discards``: the passes whose work it undoes when it
runs after them (``schedule`` reorders the ops and drops the evict and regenerate points
that ``remat`` wrote for the old order). Such a pipeline is refused, not reordered: the
user asked for that order, and silently doing something else, or silently dropping the
remat plan, would both hide the mistake.
"""
from bladec.passes.pipeline import (DEFAULT_PIPELINE, PASSES, ChoiceOption, IntOption,  # noqa: F401
                                    NamesOption, Option, Pass, describe_options, parse_options,
                                    parse_pipeline, passes_help, register, run_pipeline)
from bladec.passes import amp, analyze, grad, mask, propagate, redistribute, remat, schedule, verify_pass  # noqa: E402,F401,E501
