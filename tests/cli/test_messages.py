"""How failures read (issue 30, item 5): a usage error's first line is the error, not
click's usage; ``--json`` answers a failure with a JSON error object on stdout; a
missing ``--inputs`` file is a user error (exit 1), as a missing listing is."""
from __future__ import annotations

import json

import pytest

from bladec.cli import main
from tests.support.clirunner import make_runner
from tests.support.runtimecase import LISTING1


def _invoke(*args: str):
    return make_runner().invoke(main, list(args))


@pytest.mark.parametrize("args, said", [
    (["run", "--frob", str(LISTING1)], "No such option '--frob'"),
    (["frob"], "No such command 'frob'"),
    (["--frob"], "No such option '--frob'"),
    (["optimize", "-p", "nosuchpass", str(LISTING1)], "nosuchpass"),
    (["run", str(LISTING1), "--seed", "-1"], "Invalid value for '--seed'"),
    (["run", str(LISTING1), "--process-id", "2"], "--process-id 2 must be below"),
    (["run", str(LISTING1), "--bitwise", "--fuse"], "--bitwise and --fuse contradict"),
])
def test_a_usage_error_says_the_error_first(args, said) -> None:
    result = _invoke(*args)
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ") and said in lines[0], result.stderr
    assert lines[1].startswith("Usage: ") and "for help" in lines[2]
    assert result.stdout == ""


@pytest.mark.parametrize("args, said", [
    (["run", "--frob", str(LISTING1), "--json"], "No such option '--frob'"),
    (["analyze", str(LISTING1), "--json", "--solve"], "'--solve' requires an argument"),
    (["run", str(LISTING1), "--json", "-p", "nosuchpass"], "nosuchpass"),
])
def test_json_answers_a_usage_error_with_an_error_object(args, said) -> None:
    result = _invoke(*args)
    assert result.exit_code == 2, result.stderr
    answer = json.loads(result.stdout)
    assert said in answer["error"] and answer["location"] is None
    assert result.stderr.startswith("error: ")


def test_json_answers_a_bad_listing_with_its_location(tmp_path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%x: tensor<4>) {\n  %a = tanhh(%x) -> tensor<4>\n}\n")
    for command in (["analyze", str(bad), "--json"], ["run", str(bad), "--json", "-q"]):
        result = _invoke(*command)
        assert result.exit_code == 1
        answer = json.loads(result.stdout)
        assert answer == {"error": "unknown op 'tanhh'", "location": f"{bad}:2:3"}
        assert result.stderr.strip() == f"{bad}:2:3: error: unknown op 'tanhh'"


def test_json_answers_a_missing_file_and_a_refused_limit(tmp_path) -> None:
    gone = tmp_path / "gone.mlir"
    answer = json.loads(_invoke("run", str(gone), "--json").stdout)
    assert answer["error"].startswith(f"cannot read {gone}") and \
        answer["location"] == f"{gone}:1:1"
    result = _invoke("run", str(LISTING1), "--dims", "S1=64", "--mem-limit", "1KiB",
                     "--backend", "numpy", "--json", "-q")
    assert result.exit_code == 1
    answer = json.loads(result.stdout)
    assert answer["error"].startswith("no plan fits the limit of 1.00 KiB")
    assert answer["limit"] == 1024 and answer["smallest_limit"] > 1024
    assert str(answer["smallest_limit"]) in answer["error"]


def test_without_json_a_failure_writes_nothing_on_stdout(tmp_path) -> None:
    result = _invoke("run", str(tmp_path / "gone.mlir"))
    assert result.exit_code == 1 and result.stdout == ""


@pytest.mark.parametrize("make, said", [
    (lambda p: p / "gone.npz", "no such file"),
    (lambda p: p, "it is a directory"),
])
def test_a_missing_inputs_file_is_exit_1_like_a_missing_listing(tmp_path, make, said
                                                                ) -> None:
    path = make(tmp_path)
    result = _invoke("run", str(LISTING1), "--inputs", str(path), "--json", "-q")
    assert result.exit_code == 1, result.stderr
    errors = [x for x in result.stderr.splitlines() if "error" in x]
    assert errors == [f"error: cannot read --inputs {path}: {said}"]
    assert json.loads(result.stdout)["error"] == f"cannot read --inputs {path}: {said}"


def test_no_arguments_at_all_shows_the_help() -> None:
    """Not an error line: ``bladec`` alone is asking what there is."""
    result = _invoke()
    assert result.exit_code in (0, 2)   # click 8.2 and later: 2
    assert result.output.lstrip().startswith("Usage: ") and "error:" not in result.output
