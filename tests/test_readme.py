"""The README stays true: its configuration table is the one the code reads."""

from __future__ import annotations

from pathlib import Path

from services.common.config import settings_table

ROOT = Path(__file__).resolve().parent.parent


def test_readme_lists_every_setting_as_the_code_defines_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert settings_table() in readme


def test_readme_shows_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
