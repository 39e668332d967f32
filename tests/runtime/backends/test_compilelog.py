"""The compile log (BLADEC_DEBUG_COMPILES): one line per XLA compilation, saying what it
was for and whether the same program was compiled before in the process (issue 37: the
evidence that a refusal's 38 compilations of an imported GPT-2 are 38 programs)."""
from __future__ import annotations

from bladec.runtime.backends.compilelog import VARIABLE
from bladec.runtime.backends.jax_backend import JaxBackend, LazyCompiled


def _double(x):
    return [x * 2.0 + 1.0]


def _halve(x):
    return [x * 0.5]


def _rows(path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()]


def test_each_compilation_is_logged_with_its_fingerprint(tmp_path, monkeypatch) -> None:
    log = tmp_path / "compiles.tsv"
    monkeypatch.setenv(VARIABLE, str(log))
    backend = JaxBackend()
    args = [((8, 8), "f32")]
    probe = LazyCompiled(backend, _double, args, ())
    probe.figures_only = True
    probe.memory()                                        # figures only
    LazyCompiled(backend, _double, args, ()).compile()    # the same program, to run
    LazyCompiled(backend, _halve, args, ()).compile()     # another program
    rows = _rows(log)
    assert [r[1] for r in rows] == ["figures", "run", "run"]
    assert rows[0][2] == rows[1][2] != rows[2][2]         # fingerprints
    assert [r[7] for r in rows] == ["-", "figures", "-"]  # compiled before, for what
    assert all(int(r[3]) > 0 and float(r[5]) >= float(r[8]) >= 0 for r in rows)


def test_nothing_is_logged_without_the_variable(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    LazyCompiled(JaxBackend(), _double, [((8, 8), "f32")], ()).compile()
    assert list(tmp_path.iterdir()) == []


def test_a_refusal_compiles_no_program_twice(tmp_path, monkeypatch) -> None:
    """A refusal's search (the whole steps, the plans checked, XLA's order) compiles each
    program once: segments alike share one executable (backend.segment_key), and a plan
    asked again is answered from the caches. The log sees every compilation."""
    from pytest import raises

    from bladec.runtime.engine import optimize
    from bladec.runtime.executor import Executor
    from bladec.runtime.planning.limit import LimitError
    from tests.support.paths import SAMPLES
    from tests.support.runtimecase import module_of

    log = tmp_path / "compiles.tsv"
    monkeypatch.setenv(VARIABLE, str(log))
    ex = Executor(optimize(module_of(path=SAMPLES / "attention.mlir")), JaxBackend())
    dims = {"S0": 3, "S1": 40}
    shapes = ex.shapes_for(dict(dims))
    binding = ex.bind({n: shapes[n] for n in ex.inputs}, dims)
    with raises(LimitError):
        ex.prepare(binding, 1)
    rows = _rows(log)
    assert len(rows) == ex.backend.compilations > 1
    assert all(r[7] == "-" for r in rows)   # no fingerprint compiled before
