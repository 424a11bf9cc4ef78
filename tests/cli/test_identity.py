"""The config folder: the device id survives restarts, the last table is remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.cli.arguments import identity_of
from clients.cli.identity import Identity, LastMatch, default_config_dir
from clients.cli.main import build_parser


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


@pytest.mark.parametrize("command", [["play"], ["host"], ["join", "K7QX2M"], ["me"]])
def test_a_profile_is_chosen_by_rummy_profile_and_profile_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    """`RUMMY_PROFILE=bob rummy play` plays as bob; `--profile ana` plays as ana
    whatever the variable says; neither: the machine's one player."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("RUMMY_PROFILE", raising=False)
    assert identity_of(build_parser().parse_args(command)).folder == tmp_path / "rummy"
    monkeypatch.setenv("RUMMY_PROFILE", "bob")
    bob = identity_of(build_parser().parse_args(command))
    assert bob.folder == tmp_path / "rummy" / "profiles" / "bob"
    ana = identity_of(build_parser().parse_args([*command, "--profile", "ana"]))
    assert ana.folder == tmp_path / "rummy" / "profiles" / "ana"
    assert ana.device_id() != bob.device_id()
    mine = build_parser().parse_args([*command, "--config-dir", str(tmp_path / "mine")])
    assert identity_of(mine).folder == tmp_path / "mine", "a folder named outright wins"


def test_a_profile_name_that_is_no_folder_name_stops_at_the_command_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("RUMMY_PROFILE", "../elsewhere")
    with pytest.raises(SystemExit) as stopped:
        identity_of(build_parser().parse_args(["play"]))
    assert stopped.value.code == 2
    assert "'../elsewhere' is not a profile name" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists()


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
