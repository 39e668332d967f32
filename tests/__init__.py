"""bladec's tests, in folders that mirror the package (tests/passes for bladec/passes,
tests/runtime/planning for bladec/runtime/planning, ...); helpers they share are in
tests/support, fixtures every test gets in tests/conftest.py. Run from the repository
root: its modules import each other as ``tests.support.NAME``."""
