"""Screens kept as SVG files beside the tests (`__snapshots__/`), so a reviewer
sees each one and a test fails when one changes. After a deliberate change:
`RUMMY_UPDATE_SNAPSHOTS=1 pytest tests/cli/test_snapshots.py`, then look at them."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from textual.app import App

from clients.cli.tui.table_screen import TableScreen

from .screen import press, until

FOLDER = Path(__file__).parent / "__snapshots__" / "test_snapshots"
UPDATE = "RUMMY_UPDATE_SNAPSHOTS"


async def matches_snapshot(
    app: App[str],
    name: str,
    *,
    size: tuple[int, int],
    keys: Sequence[str] = (),
    then: Callable[[TableScreen], None] | None = None,
) -> None:
    """Run ``app`` at ``size``, press ``keys``, and compare the screen with the kept
    SVG ``name`` (written instead when asked to, or when there is none yet outside CI)."""
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        screen = pilot.app.screen
        assert isinstance(screen, TableScreen)
        screen.digit_wait_s = 0.0  # a typed position is taken at once
        await pilot.pause(0.2)
        if then is not None:
            then(screen)
        if keys:
            await press(pilot, *keys)
        await pilot.pause(0.3)
        svg = app.export_screenshot(title=name)
    path = FOLDER / f"{name}.svg"
    if os.environ.get(UPDATE) == "1" or (not path.exists() and not os.environ.get("CI")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with {UPDATE}=1 and look at it"
    assert svg == path.read_text(encoding="utf-8"), (
        f"the screen differs from {path.name}: look at it, then run with {UPDATE}=1"
    )
