"""Every test runs with no credentials and with every data path inside its own tmp dir."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Clear ANTHROPIC_* and SCHEDULER_AGENT_*, and point HOME and the SDK's config dir at tmp."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(home / ".config" / "anthropic"))
    monkeypatch.setenv("NO_COLOR", "1")
    yield tmp_path
