"""docs/ops.md is generated from the op registry by docs/gen_ops.py and must be current."""
from __future__ import annotations

import importlib.util
import re

import pytest

from bladec.ops import REGISTRY

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "ops.md"


def _gen_ops():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "docs" / "gen_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ops_md_is_up_to_date():
    text = _gen_ops().render()
    assert DOC.read_text(encoding="utf-8") == text, (
        "docs/ops.md is out of date: run `python docs/gen_ops.py`")


def test_every_op_is_documented_with_its_attributes():
    text = DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^### `([^`]+)`$", text, flags=re.M)
    assert sorted(headings) == sorted(REGISTRY)
    for name, opdef in REGISTRY.items():
        section = text.split(f"### `{name}`\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
        assert " ".join(opdef.doc.split()) in section
        for attr in opdef.attrs:
            need = "required" if attr in opdef.required else "optional"
            assert re.search(rf"^  - `{re.escape(attr)}`: .*, {need}$", section, flags=re.M), (name, attr)
        if not opdef.attrs:
            assert "- attributes: none" in section


def test_index_links_resolve():
    text = DOC.read_text(encoding="utf-8")
    anchors = {_gen_ops()._anchor(h) for h in re.findall(r"^### `([^`]+)`$", text, flags=re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert len(links) == len(REGISTRY)
    assert set(links) <= anchors


def test_readme_links_the_op_reference():
    assert "docs/ops.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_primitives_md_is_up_to_date():
    """docs/primitives.md lists every primitive of the importer's rule table."""
    spec = importlib.util.spec_from_file_location("gen_primitives",
                                                  ROOT / "docs" / "gen_primitives.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "docs" / "primitives.md").read_text(encoding="utf-8")
    assert text == module.render(), "run `python docs/gen_primitives.py`"
    from bladec.frontend.rule import RULES
    for name in RULES:
        assert f"`{name}`" in text


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Training from Python: `bladec.jit`", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow   # issue 36: 11.7 s of CPU; `make test` keeps bladec.jit's training over
# buckets under a limit (tests/api/test_jit.py::test_train_under_a_limit[smoke])
def test_readme_training_loop_runs_as_written(capsys):
    """The README's bladec.jit example, exactly as written: it asserts its own losses
    against jax.jit's; here also that it stayed within its limit and compiled only on
    the first step of each of its two buckets."""
    namespace: dict = {}
    exec(compile(_readme_example(), "README.md", "exec"), namespace)
    lean = namespace["lean"]
    report = lean.report()
    # 5 MiB: on CPU (one memory) the 48 bucket needs 4.26 MiB; 3 MiB needed reloads
    assert report.steps == 4 and report.buckets == 2 and report.limit == 5 << 20
    assert report.peak_bytes <= report.limit and report.compilations == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 4 and all("limit 5.00 MiB" in line for line in printed)


@pytest.mark.slow   # issue 36: 5.0 s of CPU; `make test` keeps the tree LSTM batched against
# its reference (tests/batching/test_autobatch.py)
@pytest.mark.usefixtures("one_order_at_no_limit")   # values and batching, not the order
def test_readme_autobatch_example_runs_as_written(capsys):
    """The README's bladec.autobatch example, exactly as written: it asserts its batched
    losses against the same model run unbatched; here also that it batched (one call per
    cell and depth, fewer calls than invocations)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Batching per-instance models: `bladec.autobatch`", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    report = namespace["batched"].report()
    assert report.instances == 3 and report.calls < report.invocations
    assert "batch 3" in capsys.readouterr().out
