"""The config folder: the device id survives restarts, the last table is remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.cli.identity import Identity, LastMatch, default_config_dir


def test_the_device_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = Identity(tmp_path).device_id()
    assert 8 <= len(first) <= 128
    assert Identity(tmp_path).device_id() == first
    assert Identity(tmp_path / "other").device_id() != first


def test_the_config_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_config_dir() == tmp_path / "rummy"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_config_dir() == tmp_path / "home" / ".config" / "rummy"


def test_the_last_match_and_the_name_are_remembered(tmp_path: Path) -> None:
    identity = Identity(tmp_path)
    match = LastMatch("mm:1", "table-1", 0, "game:2", "ticket-1")
    identity.remember_match(match)
    assert Identity(tmp_path).last_match("mm:1") == match
    assert Identity(tmp_path).last_match("elsewhere:1") is None
    assert Identity(tmp_path).game_target("mm:1") == "game:2"
    identity.forget_match()
    assert Identity(tmp_path).last_match("mm:1") is None
    assert Identity(tmp_path).game_target("mm:1") == "game:2", "where games are is kept"
    assert identity.display_name("  Zoé   the  Great ") == "Zoé the Great"
    assert Identity(tmp_path).display_name(None) == "Zoé the Great"
