"""The CliRunner the CLI tests share."""
from __future__ import annotations

from click.testing import CliRunner


def make_runner() -> CliRunner:
    """A runner that keeps stderr apart from stdout, whatever the click version.

    click 8.2 and later always capture stderr separately (``result.stderr``) and dropped
    ``mix_stderr``; click 8.1 needs ``mix_stderr=False`` for ``result.stderr`` to exist.
    """
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()
