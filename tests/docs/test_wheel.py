"""The installed bladec: the wheel built from the working tree, installed into a fresh
venv outside it, runs ``bladec import`` of a model, ``bladec run`` of a sample and a
``bladec.jit`` step, from a directory with no source on the path.

``make test`` installs bladec editable, so a subpackage or a data file that the wheel
leaves out goes unseen there (issue 30: ``bladec.frontend.rules`` was missing, and the
installed bladec could not import). This test builds the wheel from a copy of the files
git knows (tracked, and new ones not ignored), so nothing left over in ``build/`` of an
earlier build can hide a missing file.

Cheap by design: the wheel is built ``--no-build-isolation`` with the project venv's
setuptools, and installed ``--no-deps`` into a venv made ``--without-pip`` (pip is the
project venv's, pointed at it with ``--python``). The dependencies (JAX, lark, ...) are
the project venv's, reached through a ``.pth`` line naming its site-packages: a
directory named there is only appended to ``sys.path``, its own ``.pth`` files (the
editable install's finder among them) are not run, so ``import bladec`` can only find
the wheel's copy, and the test checks that it did.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT  # noqa: E402


def _run(args: list, cwd: Path, env: dict | None = None, timeout: float = 600) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (f"{args} exited {done.returncode}\nstdout: "
                                  f"{done.stdout[-2000:]}\nstderr: {done.stderr[-4000:]}")
    return done.stdout


BUILD_LEFTOVERS = (".git", ".venv", "build", "dist", "out", "*.egg-info", "__pycache__",
                   ".pytest_cache", ".hypothesis")


def _source_copy(dest: Path) -> Path:
    """The files git knows, copied to ``dest`` (tracked and untracked, not ignored);
    outside a git checkout, the tree less what builds and runs leave behind."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return Path(shutil.copytree(ROOT, dest,
                                    ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS)))
    listed = subprocess.run(["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict]:
    """(the fresh venv's python, a working directory outside the tree, its environment)."""
    base = tmp_path_factory.mktemp("wheel")
    src = _source_copy(base / "src")
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
          "--no-build-isolation", "-w", dist, src], cwd=base)
    wheel, = dist.glob("bladec-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=base)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
          "--no-deps", "--no-index", wheel], cwd=base)
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True,
                               text=True, check=True).stdout.strip())
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(BLADEC_COMPILATION_CACHE=str(base / "cache"), JAX_PLATFORMS="cpu")
    return python, work, {"env": env, "wheel": wheel, "site": site}


def test_wheel_has_every_package_and_its_data(installed) -> None:
    """Every package of the tree and the grammar are in the wheel."""
    _, _, info = installed
    names = set(zipfile.ZipFile(info["wheel"]).namelist())
    for init in (ROOT / "bladec").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names
    assert "bladec/grammar/listing.lark" in names


@pytest.mark.slow   # issue 36: 3.3 s; `make test` keeps the wheel's contents (above)
def test_installed_bladec_imports_runs_and_jits(installed) -> None:
    python, work, info = installed
    env, bin_ = info["env"], python.parent
    where = _run([python, "-c", "import bladec; print(bladec.__file__)"], work, env)
    assert where.strip().startswith(str(info["site"])), where
    listing = work / "llama.mlir"
    _run([bin_ / "bladec", "import", "bladec.models.llama:small_train_spec", "-q",
          "-o", listing], work, env)
    assert "func.func @main" in listing.read_text()
    sample = work / "sample.mlir"
    shutil.copy(ROOT / "samples" / "listing1-runnable.mlir", sample)
    out = _run([bin_ / "bladec", "run", sample, "--dims", "S1=64", "--mem-limit", "4MiB",
                "-q", "--json"], work, env)
    report = json.loads(out)
    assert report["binding"] == {"S1": 64} and 0 < report["peak_bytes"] <= 4 << 20, report
    step = textwrap.dedent("""\
        import numpy as np
        import bladec
        f = bladec.jit(lambda x, w: (x @ w).sum(), mem_limit="64MiB", dynamic={"x": "B,_"})
        x = np.ones((8, 16), np.float32)
        w = np.ones((16, 4), np.float32)
        assert float(f(x, w)) == 8 * 16 * 4, f(x, w)
        print("step", f.report().compilations)
        """)
    out = _run([python, "-c", step], work, env)
    assert "step" in out
