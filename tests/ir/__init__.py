"""Tests of the IR and its text: bladec/parse.py, printer.py, ir.py, types.py."""
