"""What an import produced: the listing and how it maps back to the JAX function.

Its own module so that :mod:`bladec.frontend.dims` (completing and checking dims) and
:mod:`bladec.frontend.jax_import` (tracing) both use it without importing each other.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bladec.ir import Module
from bladec.symbolic.expr import SymbolicExpr


@dataclass
class Imported:
    """The result of :func:`trace`: the listing and how it maps to the JAX function."""
    module: Module
    jaxpr: Any
    symbols: dict[str, str]                 # JAX dimension variable -> bladec symbol
    input_names: list[str]                  # one per flattened input leaf
    output_names: list[str]                 # one per flattened output leaf
    in_tree: Any
    out_tree: Any
    jax_dims: dict[str, list[SymbolicExpr]]  # value -> JAX's dims over the bladec symbols
    hints: list[str] = field(default_factory=list)
    decomposed: Counter = field(default_factory=Counter)  # primitive -> times decomposed
    constants: dict[str, np.ndarray] = field(default_factory=dict)  # captured input -> value
    atoms: dict = field(default_factory=dict)  # JAX's floordiv/min/...: symbol -> atoms.Atom

    def jax_binding(self, binding: dict[str, int]) -> dict[str, int]:
        """``binding`` of the input symbols with the values of JAX's quotient and bound
        dims added (what :attr:`jax_dims` are evaluated at)."""
        out = dict(binding)
        for name, atom in self.atoms.items():  # in order: operands before their atoms
            out[name] = atom.value(out)
        return out

    def text(self) -> str:
        from bladec.printer import format_module
        return format_module(self.module)

    def flatten_inputs(self, *args: Any) -> dict[str, np.ndarray]:
        """Concrete arguments of the JAX function as the listing's named inputs."""
        import jax
        leaves, tree = jax.tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise ValueError(f"arguments have structure {tree}, expected {self.in_tree}")
        return {n: np.asarray(x) for n, x in zip(self.input_names, leaves)}

    def unflatten_outputs(self, outputs: dict[str, Any]) -> Any:
        """The listing's named outputs as the JAX function's output pytree."""
        import jax
        return jax.tree_util.tree_unflatten(self.out_tree,
                                            [outputs[n] for n in self.output_names])

    def binding(self, **values: int) -> dict[str, int]:
        """JAX dimension variables (``B=2, S=16``) as bladec symbol values."""
        return {self.symbols[k]: v for k, v in values.items()}
