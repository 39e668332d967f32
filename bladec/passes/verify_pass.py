"""``verify``: check the listing (bladec/verify.py) and change nothing."""
from __future__ import annotations

from bladec.ir import Module
from bladec.passes.pipeline import register
from bladec.verify import verify


@register
class VerifyPass:
    name = "verify"

    def apply(self, module: Module) -> Module:
        verify(module)
        return module
