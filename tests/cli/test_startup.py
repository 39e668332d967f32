"""What every bladec process pays before its command starts: JAX's imports.

A cold refusal (issue 37) is a whole process, so its start counts against the 2 s goal;
ml_dtypes 0.7.0, which every ``import jax`` imports, took 1.0-1.3 s of CPU to register its
NumPy ufunc loops (`perf`: mostly ``PyUFunc_AddLoop`` and its tuple comparisons), 0.6.0
about 0.03 s (setup.cfg pins below 0.7)."""
from __future__ import annotations

import subprocess
import sys

# the cost of the import in a fresh process, numpy imported first (ml_dtypes' own import
# alone); 0.6.0: 0.03 s, 0.7.0: 1.0-1.3 s on the 2-core CI machine
_MEASURE = ("import time, numpy; t = time.process_time(); import ml_dtypes; "
            "print(time.process_time() - t)")


def test_ml_dtypes_imports_in_a_fraction_of_a_second() -> None:
    done = subprocess.run([sys.executable, "-c", _MEASURE], capture_output=True,
                          text=True, check=True)
    assert float(done.stdout) < 0.4, f"import ml_dtypes took {done.stdout.strip()} s CPU"
