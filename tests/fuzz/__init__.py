"""Random and mutated listings: the differential test (optimized against original), the
CLI fuzzer and its found bugs, the two backends against each other. ``make test`` runs
small fixed-seed campaigns; ``make fuzz`` the full ones."""
