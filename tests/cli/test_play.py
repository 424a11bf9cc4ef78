"""`rummy play` through a pseudo-terminal, against real servers and a bot seat."""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path

import pytest

from clients.cli import main as cli_main
from clients.cli import play as line_play
from clients.cli.arguments import connection_of
from tests.game.harness import table_db

from .harness import (
    HAND,
    TABLE_ID,
    Servers,
    Terminal,
    parse_hand,
    play_args,
    run_cli,
    servers,
)

DEALS = 5


async def test_queueing_alone_in_line_mode_suggests_bots(
    fresh_dsn: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nobody else in the queue after a while (20 s; here a moment): the line mode says
    how to play bots now. With --bots there is nothing to suggest."""
    monkeypatch.setattr(line_play, "SLOW_WAIT_S", 0.3)
    async with servers(fresh_dsn) as running:
        argv = ["play", "--plain", "--server", running.address, "--config-dir", str(tmp_path)]
        args = cli_main.build_parser().parse_args(argv)
        assert not cli_main._seek(cli_main.build_parser().parse_args([*argv, "--bots"])).slow
        conn, identity = connection_of(args)
        try:
            await conn.login()
            finding = asyncio.create_task(line_play._find(cli_main._seek(args), conn, identity))
            said = ""
            for _ in range(100):
                said += capsys.readouterr().out
                if cli_main.NOBODY_YET in said:
                    break
                await asyncio.sleep(0.05)
            assert "Nobody else is looking for this table yet." in said, said
            assert "the same command with --bots" in said
            assert not finding.done(), "still waiting for a table"
            finding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await finding
        finally:
            await conn.close()


async def test_a_person_plays_a_whole_game_against_a_bot(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        term = Terminal(*play_args(running, "Alice", tmp_path))
        try:
            await term.expect(TABLE_ID)
            table_id = term.group(1)
            await term.expect(HAND)
            hand = parse_hand(term.group(2))
            assert len(hand) == 13
            assert await term.next_turn()
            # A move the rules refuse: the server's sentence, then the hand again. The
            # card is typed with tab completion when its rank is alone in the hand.
            alone = [c for c in hand if c != "JK" and [h[0] for h in hand].count(c[0]) == 1]
            if alone:  # without completion this would be "'9' is not a card"
                await term.send_raw(f"x {alone[0][0].lower()}\t")
                await term.send("")
            else:
                await term.send(f"x {hand[0]}")
            await term.expect(r"Refused: Draw a card first[^\r\n]*\[MUST_DRAW_FIRST\]")
            await term.expect(HAND)
            # A move the client cannot even send.
            await term.send("x 7Z")
            await term.expect(r"'7Z' is not a card")
            await term.play_turn()
            await term.play_to_end()
            assert await term.finish() == 0
        finally:
            term.kill()
        assert re.search(r"Game over: [^\r\n]+ wins? \(", term.log.getvalue())
        async with table_db(fresh_dsn) as db:
            _, state = await db.state(table_id)
        assert state.phase.name == "GAME_OVER"

        # The same device watches its finished table from its seat; a stranger as a spectator.
        code, seat_out = await run_cli(
            "watch", table_id, "--server", running.address, "--config-dir", str(tmp_path)
        )
        assert code == 0, seat_out
        assert "from your seat" in seat_out and "Game over" in seat_out
        code, spectator_out = await run_cli(
            "watch",
            table_id,
            "--server",
            running.address,
            "--game",
            running.game_address,
            "--config-dir",
            str(tmp_path / "stranger"),
        )
        assert code == 0, spectator_out
        assert "as a spectator" in spectator_out and "Your hand" not in spectator_out


async def _cut_twice(running: Servers, term: Terminal) -> str | None:
    """Bob plays on while the game server restarts, then stops his client at his turn:
    the table id, or None when the deal ended before both cuts were made."""
    await term.expect(TABLE_ID)
    table_id = term.group(1)
    if not await term.next_turn():
        return None
    await term.play_turn()
    if not await term.next_turn():
        return None

    # The game server goes away mid-game; a new replica takes its place.
    await running.restart_game()
    await term.expect(r"Connection to the table lost")
    await term.expect(r"Reconnected: resuming after event \d+")
    if not await term.next_turn():
        return None
    await term.play_turn()

    # The client itself stops; started again, it rejoins the same table.
    if not await term.next_turn():
        return None
    await term.send_raw("\x03")  # Ctrl-C
    await term.expect(r"Your seat is kept")
    return table_id


async def test_a_lost_connection_and_a_restarted_client_resume_the_game(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        args = play_args(running, "Bob", tmp_path)
        # The matchmaker deals at random and some deals end within a few turns: a game
        # over before both cuts is finished and another one started.
        for _ in range(DEALS):
            term = Terminal(*args)
            try:
                table_id = await _cut_twice(running, term)
                code = await term.finish()
                assert table_id is not None or code == 0, term.transcript()
            finally:
                term.kill()
            if table_id is not None:
                break
        else:
            raise AssertionError(f"{DEALS} deals in a row ended within four turns")

        again = Terminal(*args)
        try:
            await again.expect(rf"Rejoining your table {table_id}")
            await again.play_to_end()
            assert await again.finish() == 0
        finally:
            again.kill()
        async with table_db(fresh_dsn) as db:
            _, state = await db.state(table_id)
        assert state.phase.name == "GAME_OVER"
