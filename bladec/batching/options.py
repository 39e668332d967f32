"""The switches of ``bladec.autobatch``: one per technique, so that each technique's
contribution can be measured by turning it off (issue 31's ablation)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Options:
    """The techniques, each of which can be switched off to measure what it gives."""
    static_depth: bool = True    # depths computed inline while tracing (else a walk)
    coarse: bool = True          # a cell is one kernel (else one batched call per op)
    fused_gathers: bool = True   # operands read through indices inside the kernel
    shared_weights: bool = True  # parameters passed whole (else gathered per invocation)
    sinks_last: bool = True      # results nobody reads (losses) computed in one last call
    align_ends: bool = True      # instances' ends aligned where that makes fewer calls
    residuals: bool = True       # training: the cells' products kept for the backward
    stack_siblings: bool = True  # inference: groups that differ only in their weights
                                 # (a BiLSTM's directions) one call per depth
    depth_runs: bool = True      # inference: consecutive calls of one kernel and bucket
                                 # (an RNN's steps) one call of several steps
    weight_grads_once: bool = True  # training: a group's weights' cotangents summed in
                                    # one call over the batch's invocations (else per
                                    # depth, reading and writing the accumulator)
    product_cotangents: bool = True  # training: the backward per depth keeps its
                                     # products' cotangents, and the weights' part is
                                     # one product per weight over them (else it runs
                                     # the cell's backward again over the batch)
    dedupe: bool = True          # invocations of a cell on the same integer data and
                                 # no lazy value (a repeated word's leaf) computed once
    tabulate: bool = True        # inference: what a cell computes from the weights and
                                 # one integer operand (a word's input projection)
                                 # made once per set of weights, read by row
                                 # (weights/tabulate.py)
    compose: bool = True         # inference: an invocation whose operands all come
                                 # from tabulated cells that read one integer (a node
                                 # over two leaves) run as one cell with them, which
                                 # its tabulation takes in (compose.py)
    batched: bool = True         # False: every invocation a call of its own
    specialize: bool = True      # tracing: each argument pattern of a cell recorded by
                                 # code generated for it (recorder.py), not by the
                                 # general walk over the arguments

    @property
    def fused(self) -> bool:
        """Whether a call is one kernel with its gathers and the whole weights inside,
        batched: the kernels that tabulation, composition and the kept residuals are
        made for (any of these four off is an ablation's simpler path)."""
        return self.coarse and self.fused_gathers and self.shared_weights and self.batched
