"""The host runtime: binds symbols, plans evictions for the binding, runs segments."""
