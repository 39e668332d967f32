"""Indexing ops: gathers and scatters. ``row`` holds the row forms along dim 0 (the
embedding lookup and its gradient); ``addressing`` holds XLA's general form, slices at
computed start indices (what JAX emits for the rest of indexing). bladec/ops imports
both, so that they register.
"""
