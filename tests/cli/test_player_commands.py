"""`rummy me`, `history`, `top` and `replay --plain` as a player runs them, against
real servers and PostgreSQL, after games played to their end."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import grpc

from clients.cli.identity import Identity
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2

from .harness import Servers, run_cli, servers
from .players import Person, finished_game, game_left_at_once, people

WIDTH = 80


async def rummy(running: Servers, person: Person, *args: str) -> tuple[int, str]:
    code, out = await run_cli(*args, *person.args(running))
    assert all(len(line) <= WIDTH for line in out.splitlines()), out
    return code, out


async def final_view(running: Servers, person: Person, table_id: str) -> table_pb2.TableView:
    async with grpc.aio.insecure_channel(running.game_address) as channel:
        reply = await game_pb2_grpc.GameServiceStub(channel).GetTable(
            game_pb2.GetTableRequest(table_id=table_id),
            metadata=(("authorization", f"Bearer {person.token}"),),
        )
    view: table_pb2.TableView = reply.view
    return view


async def test_a_finished_game_shows_in_me_history_and_top(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia = await people(running, tmp_path, ["Sam", "Pia"])
        table_id = await finished_game(running, [sam, pia], seed=11)
        view = await final_view(running, sam, table_id)
        winner_seat = view.result.winner_seat
        totals = [s.score_total for s in view.seats]
        winner, loser = (sam, pia) if winner_seat == 0 else (pia, sam)

        code, out = await rummy(running, winner, "history")
        assert code == 0, out
        first, seats, table = out.splitlines()[:3]
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d  cafe +won +\+\d+\.\d → 15\d\d$", first), out
        assert seats.startswith(f"  Sam{' (you)' * (winner is sam)} {totals[0]} · Pia"), out
        assert f"Pia{' (you)' * (winner is pia)} {totals[1]}" in seats, out
        assert table.startswith(f"  table {table_id}"), out
        code, out = await rummy(running, loser, "history")
        assert re.match(r".*  cafe +2nd of 2 +-\d+\.\d → 14\d\d$", out.splitlines()[0]), out

        code, out = await rummy(running, winner, "me")
        assert code == 0, out
        assert out.splitlines()[0] == winner.name
        assert f"Player id     {winner.player_id}" in out
        standing = next(line for line in out.splitlines() if line.startswith("  cafe "))
        assert re.fullmatch(r"  cafe +15\d\d +\S+ +1 +1 +1  won 1 +\d{4}-\d\d-\d\d", standing), out
        code, out = await rummy(running, loser, "me")
        assert re.search(r"  cafe +14\d\d +\S+ +1 +1 +0  1 without a win", out), out

        code, out = await rummy(running, loser, "top", "--rules", "cafe")
        assert code == 0, out
        rows = [line for line in out.splitlines() if re.match(r" +\d+  ", line)]
        assert re.match(rf" +1  {winner.name} +15\d\d +\S+ +1 +1$", rows[0]), out
        assert re.match(rf" +2  {loser.name} \(you\) +14\d\d +\S+ +1 +0$", rows[1]), out
        assert out.splitlines()[-1].startswith("Your rank: 2, rating 14"), out

        code, out = await rummy(running, loser, "top", "--rules", "rami51")
        assert "Nobody is ranked here yet." in out and "You are not ranked in rami51" in out


async def test_pages_of_history_and_top_and_a_new_name(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia = await people(running, tmp_path, ["Sam", "Pia"])
        older = await finished_game(running, [sam, pia], seed=11)
        newer = await game_left_at_once(running, sam)

        code, out = await rummy(running, sam, "history", "--limit", "1")
        assert f"table {newer}" in out and older not in out, out
        assert re.search(r"  cafe +2nd of 2, left early +unrated$", out.splitlines()[0]), out
        assert out.splitlines()[1].startswith("  Sam (you) ") and "(left) · Bot (bot) " in out
        assert "More: `rummy history --more`" in out
        code, out = await rummy(running, sam, "history", "--more")
        assert f"table {older}" in out and newer not in out, out
        assert "That is all." in out
        code, out = await rummy(running, sam, "history", "--more")
        assert code == 0 and "No more games" in out, out

        code, out = await rummy(running, sam, "top", "--limit", "1")
        assert re.search(r"^ +1  ", out, re.M) and not re.search(r"^ +2  ", out, re.M), out
        assert "Your rank: " in out and "--more" in out
        code, out = await rummy(running, sam, "top", "--more")
        assert re.search(r"^ +2  ", out, re.M) and not re.search(r"^ +1  ", out, re.M), out
        assert "Your rank" not in out

        code, out = await rummy(running, sam, "me", "--name", "  Samuel  ")
        assert code == 0, out
        assert out.startswith("Others now see you as Samuel.\n\nSamuel\n"), out
        assert Identity(sam.config_dir).remembered_name() == "Samuel"
        code, out = await rummy(running, pia, "top")
        assert re.search(r"^ +\d  Samuel ", out, re.M), out

        code, out = await rummy(running, sam, "me", "--name", " ")
        assert code == 1 and "[NAME_INVALID]" in out, out
        state = json.loads((sam.config_dir / "state.json").read_text())
        assert state["name"] == "Samuel"


async def test_a_replay_told_in_lines(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        sam, pia, olga = await people(running, tmp_path, ["Sam", "Pia", "Olga"])
        table_id = await finished_game(running, [sam, pia], seed=5, rounds=2)

        code, out = await rummy(running, sam, "replay", table_id, "--plain")
        assert code == 0, out
        lines = out.splitlines()
        assert lines[0] == f"Replay of table {table_id} (cafe)"
        assert lines[2] == "You sat at this table: every hand is shown."
        dealt = [i for i, line in enumerate(lines) if re.match(r"Round \d dealt: 13 cards", line)]
        assert len(dealt) == 2, out
        for at in dealt:
            hands = lines[at + 1 : at + 3]
            assert [h.split()[0] for h in hands] == ["Sam", "Pia"], out
            assert all(len(re.findall(r"(?:10|[2-9AJQK])[♠♥♦♣]|JK", h)) == 13 for h in hands), out
        assert "You drew " in out and "Pia drew " in out and "Pia drew from" not in out
        assert lines[-1] == "Shuffles: every shuffle verifies.", out

        code, out = await rummy(running, olga, "replay", table_id)
        assert code == 0, out
        assert "hands stay hidden, as a spectator saw them" in out
        assert "Pia drew from the stock." in out and "Sam drew from the stock." in out
        assert not re.search(r"^[ ▶] (Sam|Pia) ", out, re.M), out
        assert out.splitlines()[-1] == "Shuffles: every shuffle verifies."

        code, out = await rummy(running, olga, "replay", str(uuid.uuid4()))
        assert code == 1 and "[GAME_NOT_FOUND]" in out, out
        code, out = await rummy(running, olga, "replay", "not-a-table")
        assert code == 1 and "[TABLE_ID_INVALID]" in out, out
        code, out = await run_cli(
            *("replay", table_id, "--server", running.address, "--game", running.address),
            *("--config-dir", str(olga.config_dir)),
        )
        assert code == 1 and f"No game service answers at {running.address}" in out, out
