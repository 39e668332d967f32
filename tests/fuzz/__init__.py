"""Random and mutated listings: the differential test (optimized against original), the
CLI fuzzer and its found bugs, the two backends against each other.

Campaigns are sized by their time: ``make test`` runs the first cases of each fixed seed
(the CLI fuzzer's first 500 of 2,000, the backends' first 50 of 2,000, the differential
test's first 52 of 210 NumPy graphs and first 5 of 40 JAX graphs and its regression
seed: 5-14 s of CPU each); ``make fuzz`` (marker ``fuzz``, also run by ``make bench``) the
whole campaigns: test_fuzz.py's 2,000 and 10,000 cases, test_fuzz_backends.py's 2,000
(about 37 s of CPU), test_differential.py's other graphs.
"""
