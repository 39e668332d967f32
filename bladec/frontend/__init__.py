"""Frontends: graphs written with other tools, imported as bladec listings (JAX)."""
from bladec.frontend.jax_import import Imported, JaxImportError, import_function, trace

__all__ = ["Imported", "JaxImportError", "import_function", "trace"]
