"""`rummy bots`: bot players that queue and play real games through the API."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess

import asyncpg
import grpc
import pytest

from clients.cli.bots import BotPlayer, Stats
from clients.cli.matchmaking import QueueChoice
from services.common.limits import Limits
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import DrawStock
from services.game.rules.ruleset import CONTRACT

from ..game.harness import LONG_TURNS_MS, login, service_auth
from ..rules.helpers import deck_order as scripted_order
from ..rules.test_claims import HANDS, WANTS_QD
from .harness import ROOT, cli, cli_env, run_cli, servers


@pytest.mark.parametrize(("size", "bots", "games"), [(2, 4, 2), (3, 3, 1), (4, 4, 1)])
async def test_bots_finish_games_at_every_table_size(
    fresh_dsn: str, size: int, bots: int, games: int
) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *f"bots {bots} --players {size} --games {games}".split(), "--server", running.address
        )
    assert code == 0, out
    assert re.search(rf"games finished\s+{games}\b", out), out
    assert re.search(r"errors\s+0\b", out), out
    assert re.search(r"action latency\s+p50", out), out


async def test_the_load_generator_keeps_tables_going_for_a_duration(fresh_dsn: str) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *("bots", "2", "--players", "2", "--tables", "3", "--rate", "200"),
            *("--duration", "4", "--json", "--server", running.address),
        )
    assert code == 0, out
    assert out.startswith("6 bots queueing for 2-player cafe tables"), out
    assert re.search(r"tables in play\s+\d+\s+games\s+\d+\s+actions\s+\d+ \(\s*[\d.]+/s\)", out)
    numbers = json.loads(out.strip().splitlines()[-1])
    assert numbers["errors"] == 0 and not numbers["error_messages"], out
    assert numbers["latency_ms"]["p50"] > 0, out
    con = await asyncpg.connect(fresh_dsn)
    try:
        tables = await con.fetchrow(
            "SELECT count(*) AS made, count(*) FILTER (WHERE status = 'finished') AS finished"
            " FROM tables"
        )
        seated = await con.fetchval("SELECT count(DISTINCT player_id) FROM table_seats")
    finally:
        await con.close()
    # Every bot sat down: the three tables asked for were made (and maybe more since).
    assert tables["made"] >= 3 and seated == 6, (dict(tables), seated, out)
    # Each game the run counts ended at a table the game service finished.
    assert tables["finished"] >= numbers["games"], (dict(tables), out)


async def test_bots_wait_out_the_rate_limit_instead_of_failing(fresh_dsn: str) -> None:
    """Greedy bots call as fast as they can; under a tight per-player limit the
    servers turn calls away (RATE_LIMITED, with retry_after_ms) and the bots
    wait that long and call again: every game ends and no bot gives up."""
    tight = Limits(player_rate=20, player_burst=5, peer_rate=0, streams_per_player=8)
    async with servers(fresh_dsn, limits=tight) as running:
        code, out = await run_cli(
            *("bots", "2", "--players", "2", "--games", "2", "--json"),
            *("--server", running.address),
        )
    assert code == 0, out
    numbers = json.loads(out.strip().splitlines()[-1])
    assert numbers["games"] == 2 and numbers["errors"] == 0, out
    assert numbers["rate_limited"] > 0, out  # the limit was met, and waited out


async def test_an_unexpected_error_makes_the_run_fail(fresh_dsn: str) -> None:
    """`--game` names the matchmaker, which serves no games: each bot's table is
    out of reach, and the run says so."""
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *("bots", "2", "--games", "1", "--server", running.address),
            *("--game", running.address),
        )
    assert code == 1, out
    assert re.search(r"errors\s+2\b", out), out
    assert f"{running.address} is not a game service" in out, out


def test_a_bad_bot_count_or_rule_set_stops_at_the_command_line() -> None:
    for argv, says in (
        (["bots", "-3"], "argument count: -3: give a number from 0"),
        (["bots", "2", "--rules", "nope"], "argument --rules: invalid choice: 'nope'"),
    ):
        done = subprocess.run(
            cli(*argv), cwd=ROOT, env=cli_env(), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2 and says in done.stderr, done.stderr


async def test_a_bot_claims_a_passed_over_discard_that_it_wants(fresh_dsn: str) -> None:
    """`contract`'s "Puis-je ?" from a CLI bot: it follows its table's stream and
    claims the QD the player before it passed over, which completes its group."""
    async with servers(fresh_dsn) as running:
        stats = Stats()
        bot = BotPlayer(running.address, "Bot", QueueChoice(3, "contract"), stats)
        await bot.conn.login()
        bot.conn.use_game(running.game_address)
        async with grpc.aio.insecure_channel(running.game_address) as channel:
            human, other = await login(channel, "Human"), await login(channel, "Other")
            seated = [
                (human.player_id, "Human"),
                (bot.conn.player_id, "Bot"),
                (other.player_id, "Other"),
            ]
            created = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
                tables_pb2.CreateTableRequest(
                    ruleset="contract",
                    options=table_pb2.TableOptions(
                        turn_timer_ms=LONG_TURNS_MS, claim_window_ms=60_000
                    ),
                    players=[
                        tables_pb2.SeatedPlayer(player_id=p, display_name=n) for p, n in seated
                    ],
                    deck_order=scripted_order([*WANTS_QD, HANDS[2]], "QD", "KS", ruleset=CONTRACT),
                ),
                metadata=service_auth(),
            )
            watcher = human.watch(created.table_id)
            playing = asyncio.create_task(bot.play_table(created.table_id))
            try:
                await human.send(created.table_id, DrawStock())
                claim = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_CLAIM_MADE)
                assert claim.seat == 1
            finally:
                playing.cancel()
                watcher.cancel()
                await bot.conn.close()
    assert stats.errors == 0, stats.messages
