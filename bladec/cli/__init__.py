"""The ``bladec`` command line: read input, call the library, print. Nothing else lives here.

Results go to stdout, diagnostics to stderr; exit codes as :data:`EXIT_CODES` says
(and the README's table). Set ``BLADEC_DEBUG=1`` to see the Python traceback of an
internal error instead of a one-line report. The commands are in ``command``, how they
fail in ``failure``, their files in ``file``, what they show besides results in
``display``; the library itself never reads a file or writes to a stream.
"""
from bladec.cli.command import main
from bladec.cli.failure import EXIT_CODES

__all__ = ["EXIT_CODES", "main"]
