"""Tests of bladec/models: the Llama training step imported and run."""
