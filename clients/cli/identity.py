"""Who this terminal is, and what it remembers between runs.

Like a phone app, the client keeps a device id (generated once) in the user's
config folder: `$XDG_CONFIG_HOME/rummy`, or `~/.config/rummy`. The same device
id always signs in as the same player. The folder also remembers the last
table (so a restarted client rejoins its game) and where each matchmaker's
game service was (so `rummy watch` knows where to look).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DEVICE_FILE = "device_id"
STATE_FILE = "state.json"
PROFILES = "profiles"
"""Beside the default identity, one folder per named profile."""
DEVICE_ID = re.compile(r"[!-~]{8,128}")
"""What the server takes as a device id (see `auth.proto`)."""
PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


class ProfileError(ValueError):
    """A profile name that cannot name a folder."""


def default_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base else Path.home() / ".config"
    return root / "rummy"


def profile_dir(profile: str | None) -> Path:
    """The folder of a named profile (a second player on this machine, with a
    device id and name of its own), or the default one when ``profile`` is empty."""
    if not profile:
        return default_config_dir()
    if not PROFILE_NAME.fullmatch(profile):
        raise ProfileError(
            f"'{profile}' is not a profile name: use up to 32 letters, digits, - and _."
        )
    return default_config_dir() / PROFILES / profile


@dataclass(frozen=True, slots=True)
class LastMatch:
    """The table this device was last seated at, through which matchmaker."""

    server: str
    table_id: str
    seat: int
    game_target: str
    ticket_id: str = ""


class Identity:
    """The config folder: device id, display name, last match, known game targets."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_config_dir()

    # --- device id ------------------------------------------------------------

    def device_id(self) -> str:
        """The device id, created on first use (8 to 128 visible ASCII characters,
        as the server takes them)."""
        path = self.folder / DEVICE_FILE
        try:
            value = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            value = ""
        if DEVICE_ID.fullmatch(value):
            return value
        value = f"cli-{uuid.uuid4()}"
        self.folder.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n", encoding="utf-8")
        return value

    def remembered_name(self) -> str | None:
        """The name given on an earlier run, if any."""
        remembered = self._load().get("name")
        return remembered if isinstance(remembered, str) and remembered else None

    def display_name(self, given: str | None) -> str:
        """The name to show: the one given now (then remembered), else the last one."""
        state = self._load()
        if given and given.strip():
            name = " ".join(given.split())[:32]
            if state.get("name") != name:
                state["name"] = name
                self._save(state)
            return name
        remembered = state.get("name")
        if isinstance(remembered, str) and remembered:
            return remembered
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = ""
        return (user or "Player")[:32]

    # --- what the last run left behind -----------------------------------------

    def last_match(self, server: str) -> LastMatch | None:
        raw = self._load().get("last_match")
        if not isinstance(raw, dict) or raw.get("server") != server:
            return None
        try:
            return LastMatch(**raw)
        except TypeError:
            return None

    def remember_match(self, match: LastMatch) -> None:
        state = self._load()
        state["last_match"] = asdict(match)
        if match.game_target:
            state.setdefault("game_targets", {})[match.server] = match.game_target
        self._save(state)

    def forget_match(self) -> None:
        state = self._load()
        if state.pop("last_match", None) is not None:
            self._save(state)

    def game_target(self, server: str) -> str:
        """Where this matchmaker last sent us to play, or ''."""
        targets = self._load().get("game_targets", {})
        value = targets.get(server, "") if isinstance(targets, dict) else ""
        return value if isinstance(value, str) else ""

    # --- where a listing stopped ----------------------------------------------------

    def next_page(self, listing: str) -> tuple[str, int] | None:
        """(page token, page size) of the page after the last one of ``listing``
        shown (`rummy history --more`), or None when that was the last page."""
        kept = self._load().get("next_pages", {})
        found = kept.get(listing) if isinstance(kept, dict) else None
        if not isinstance(found, dict):
            return None
        token, size = found.get("token"), found.get("size")
        if not isinstance(token, str) or not token or not isinstance(size, int):
            return None
        return token, size

    def keep_next_page(self, listing: str, token: str, size: int) -> None:
        """Remember where ``listing`` goes on; an empty ``token`` (the last page) forgets."""
        state = self._load()
        pages = state.get("next_pages")
        if not isinstance(pages, dict):
            pages = state["next_pages"] = {}
        if token:
            pages[listing] = {"token": token, "size": size}
        elif pages.pop(listing, None) is None:
            return
        self._save(state)

    # --- the file ----------------------------------------------------------------

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / STATE_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, state: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / STATE_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        # Atomic: a client killed mid-write never leaves a half file behind.
        temporary.replace(path)


class MemoryIdentity(Identity):
    """An identity that lives and dies with the process (the bots' own logins)."""

    def __init__(self, device_id: str) -> None:
        super().__init__(Path("."))
        self._device = device_id
        self._state: dict[str, Any] = {}

    def device_id(self) -> str:
        return self._device

    def _load(self) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(self._state))
        return copy

    def _save(self, state: dict[str, Any]) -> None:
        self._state = state
