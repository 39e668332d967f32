"""Tests of bladec/cli/: every command on good and bad input, exit codes, messages,
the samples' golden RUN lines."""
