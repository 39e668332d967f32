"""What several test folders share: CLI runners, listing generators, shared cases and
checks, the repository's paths. No tests here; pytest collects nothing from this folder."""
