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
    assert all(int(r[3]) > 0 and float(r[5]) >= 0 for r in rows)


def test_nothing_is_logged_without_the_variable(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    LazyCompiled(JaxBackend(), _double, [((8, 8), "f32")], ()).compile()
    assert list(tmp_path.iterdir()) == []
