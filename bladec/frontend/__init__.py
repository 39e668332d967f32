"""Frontends: importing graphs written in other frameworks (JAX) as bladec listings."""
from bladec.frontend.jax_import import Imported, import_function, trace

__all__ = ["Imported", "import_function", "trace"]
