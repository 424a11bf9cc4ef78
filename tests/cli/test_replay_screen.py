"""`rummy replay` on the full screen at 80×24, driven with keys: a finished game
stepped through forward and back, by turn and by round, every hand shown, and
every shuffle checked (a reveal tampered with in the database is named)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import asyncpg
from textual.pilot import Pilot

from clients.cli import replay_cmd
from clients.cli.replay_table import Replay
from clients.cli.tui.replay_screen import ReplayApp
from services.game.event_kinds import BY_CLASS
from services.game.eventlog import decode, encode
from services.game.rules import events as ev

from .harness import Servers, servers
from .players import Person, finished_game, people
from .screen import PLAIN, SMALL, press, screen_lines, screen_text, status_lines, until
from .test_full_screen_terminal import Screen as Terminal80x24

HAND_ROW = re.compile(r"│ [▶ ] (\S+) +(.*?) *│$")
CARD = re.compile(r"(?:10|[2-9AJQK])[♠♥♦♣]|JK")


async def loaded(running: Servers, person: Person, table_id: str) -> Replay:
    conn = await person.connection(running)
    try:
        return await replay_cmd.load(conn, table_id, PLAIN)
    finally:
        await conn.close()


def hands_on_screen(pilot: Pilot[Any]) -> dict[str, str]:
    """Name → what the hands box shows after it."""
    lines = screen_lines(pilot)
    top = next(i for i, line in enumerate(lines) if "─ Every hand " in line or "─ Hands " in line)
    shown = {}
    for line in lines[top + 1 :]:
        if line.startswith("╰"):
            break
        found = HAND_ROW.match(line)
        assert found is not None, "\n".join(lines)
        shown[found.group(1)] = found.group(2)
    return shown


def assert_hands(pilot: Pilot[Any], replay: Replay, index: int) -> None:
    """The hands box shows every seat's hand of step ``index``, card for card."""
    step = replay.steps[index]
    shown = hands_on_screen(pilot)
    for seat, hand in zip(replay.first.seats, step.hands, strict=True):
        assert hand is not None
        expected = sorted(PLAIN.card(c.code) for c in hand)
        assert sorted(CARD.findall(shown[seat.display_name])) == expected, shown


def position(pilot: Pilot[Any]) -> str:
    return status_lines(pilot)[0]


async def sees(pilot: Pilot[Any], text: str) -> None:
    await until(pilot, lambda: text in screen_text(pilot), repr(text))


async def shows(pilot: Pilot[Any], where: str, *, whole: bool = False) -> None:
    """Wait until the status line starts with ``where`` (is it, with ``whole``)."""

    def there() -> bool:
        return position(pilot) == where if whole else position(pilot).startswith(where)

    await until(pilot, there, f"the status line {where!r}")


async def test_stepping_through_a_game_turn_by_turn_and_by_round(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia, cyd = await people(running, tmp_path, ["Sam", "Pia", "Cyd"])
        table_id = await finished_game(running, [sam, pia, cyd], seed=5, rounds=2)
        replay = await loaded(running, pia, table_id)
    steps = replay.steps
    total = len(steps)
    turns = [i for i, s in enumerate(steps) if s.event.HasField("turn_started")]
    second_deal = next(i for i, s in enumerate(steps) if s.event.dealt.round == 2)
    async with ReplayApp(replay, PLAIN).run_test(size=SMALL) as pilot:
        await until(pilot, lambda: "step 1/" in position(pilot), "the first step")
        lines = screen_lines(pilot)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert re.fullmatch(r"Replay · cafe · (Sam|Pia|Cyd|you) won · 3 seats", lines[0].strip())
        await shows(pilot, f"Round 1 · step 1/{total} · every shuffle verifies", whole=True)
        assert "Round 1 dealt: 13 cards each." in "\n".join(lines)
        assert_hands(pilot, replay, 0)

        await press(pilot, "right", "right")
        await shows(pilot, f"Round 1 · turn 1 · step 3/{total}")
        assert_hands(pilot, replay, 2)  # the first player drew: 14 cards
        await sees(pilot, "Sam drew")
        await press(pilot, "left")
        await shows(pilot, f"Round 1 · turn 1 · step 2/{total}")

        await press(pilot, "n", "n")
        await shows(pilot, f"Round 1 · turn 3 · step {turns[2] + 1}/{total}")
        assert_hands(pilot, replay, turns[2])
        await press(pilot, "l")
        await shows(pilot, f"Round 1 · turn 3 · step {turns[2] + 2}/")
        await press(pilot, "p")  # mid-turn: back to the turn's start
        await shows(pilot, f"Round 1 · turn 3 · step {turns[2] + 1}/")
        await press(pilot, "h", "p")
        await shows(pilot, f"Round 1 · turn 2 · step {turns[1] + 1}/")

        await press(pilot, "r")
        await until(pilot, lambda: "Jump to round (1 to 2)" in screen_text(pilot), "a question")
        await press(pilot, "2", "enter")
        await until(pilot, lambda: position(pilot).startswith("Round 2 · step"), "round 2")
        shuffles = "every shuffle verifies"
        await shows(pilot, f"Round 2 · step {second_deal + 1}/{total} · {shuffles}", whole=True)
        await until(pilot, lambda: "No melds on the table yet." in screen_text(pilot), "no meld")
        assert_hands(pilot, replay, second_deal)
        await press(pilot, "left")
        assert "Round 1's deck revealed: it matches the commitment" in "\n".join(
            screen_lines(pilot)
        )

        await press(pilot, "G")
        await shows(pilot, f"Game over · step {total}/{total} · every shuffle verifies", whole=True)
        await sees(pilot, "Final totals")
        assert_hands(pilot, replay, total - 1)
        await press(pilot, "right")  # no step after the last
        await shows(pilot, f"Game over · step {total}/")
        await press(pilot, "g")
        await shows(pilot, f"Round 1 · step 1/{total}")

        await press(pilot, "r")
        await until(pilot, lambda: "Jump to round" in screen_text(pilot), "a question")
        await press(pilot, "9", "enter")
        await until(pilot, lambda: "no round 9" in status_lines(pilot)[1], "the refusal")
        assert status_lines(pilot)[1] == "There is no round 9: this game has rounds 1 to 2."
        await shows(pilot, "Round 1 · step 1/")
        await press(pilot, "q")
        await until(pilot, lambda: not pilot.app.is_running, "the end")
    assert pilot.app.return_code == 0


async def test_a_tampered_reveal_is_named_and_a_spectator_sees_no_hand(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia, olga = await people(running, tmp_path, ["Sam", "Pia", "Olga"])
        table_id = await finished_game(running, [sam, pia], seed=5, rounds=2)
        kind = BY_CLASS[ev.DeckRevealed].name
        con = await asyncpg.connect(fresh_dsn)
        try:
            row = await con.fetchrow(
                "SELECT seq, payload FROM table_events"
                " WHERE table_id = $1 AND kind = $2 ORDER BY seq LIMIT 1",
                table_id,
                kind,
            )
            assert row is not None
            revealed = decode(kind, row["payload"])
            assert isinstance(revealed, ev.DeckRevealed) and revealed.round_no == 1
            flipped = ("1" if revealed.salt[0] == "0" else "0") + revealed.salt[1:]
            # The log is append-only (a trigger says so): tampering goes around it.
            await con.execute("SET session_replication_role = replica")
            await con.execute(
                "UPDATE table_events SET payload = $3 WHERE table_id = $1 AND seq = $2",
                table_id,
                row["seq"],
                encode(dataclasses.replace(revealed, salt=flipped)),
            )
        finally:
            await con.close()
        replay = await loaded(running, olga, table_id)
    assert [(c.round, c.verified) for c in replay.checks] == [(1, False), (2, True)]
    second_deal = next(i for i, s in enumerate(replay.steps) if s.event.dealt.round == 2)
    async with ReplayApp(replay, PLAIN).run_test(size=SMALL) as pilot:
        await until(pilot, lambda: "step 1/" in position(pilot), "the first step")
        assert position(pilot).endswith("· round 1's shuffle does NOT verify")
        assert hands_on_screen(pilot) == {"Sam": "13 cards", "Pia": "13 cards"}
        await sees(pilot, "Hands hidden: you did not sit at this table")
        await press(pilot, "right", "right")
        assert hands_on_screen(pilot)["Sam"] == "14 cards"
        await press(pilot, "r")
        await until(pilot, lambda: "Jump to round" in screen_text(pilot), "a question")
        await press(pilot, "2", "enter")
        await until(pilot, lambda: position(pilot).startswith("Round 2 ·"), "round 2")
        await shows(pilot, f"Round 2 · step {second_deal + 1}/")
        await press(pilot, "left")
        await sees(pilot, "Round 1's deck revealed: it does NOT verify (the revealed deck")


async def test_rummy_replay_on_a_terminal_draws_the_table_and_q_quits(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia = await people(running, tmp_path, ["Sam", "Pia"])
        table_id = await finished_game(running, [sam, pia], seed=11)
        screen = Terminal80x24("replay", table_id, *sam.args(running))
        try:
            await screen.until(r"Round 1 · step 1/\d+ · every shuffle verifies")
            assert re.search(r"─ Every hand ─", screen.text())
            screen.type("G")
            await screen.until(r"Game over · step (\d+)/\1 · every shuffle verifies")
            screen.type("q")
            assert await screen.wait() == 0
        finally:
            screen.kill()
