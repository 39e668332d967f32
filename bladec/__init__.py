"""bladec: memory optimization of dynamic-shape tensor graphs from symbolic shapes.

The library API: :func:`bladec.parse.parse_module`, :func:`bladec.verify.verify`,
:func:`bladec.printer.format_module`, and the passes in :mod:`bladec.passes`.
"""
__version__ = "0.1.0"
