"""The importer's translation rules, one module per family of JAX primitives.

Each module registers its rules in :data:`bladec.frontend.translate.RULES` with the
``@rule("primitive")`` decorator; importing this package registers them all. The list of
supported primitives in docs/primitives.md is generated from that table
(docs/gen_primitives.py).
"""
from bladec.frontend.rules import (contraction, control, elementwise, indexing,  # noqa: F401
                                   introspection, loop, random, reduction, selection,
                                   shape, window)
