"""Tests of docs/ and README.md: generated references are current, examples run as
written."""
