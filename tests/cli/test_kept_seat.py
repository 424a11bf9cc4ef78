"""A seat kept from an earlier run: `host` and `join` say so instead of going back
to it unasked, and a game that ended while the client was stopped is told before
the client queues again."""

from __future__ import annotations

from pathlib import Path

import grpc

from clients.cli.identity import Identity, LastMatch
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2
from tests.game.harness import table_db

from .harness import (
    Servers,
    Terminal,
    a_friend_takes_the_seat,
    run_cli,
    seat_with_a_bot,
    servers,
    sign_in,
)


def remembered(running: Servers, config_dir: Path, table_id: str) -> None:
    """The config folder remembers the seat, as a client stopped mid-game leaves it."""
    Identity(config_dir).remember_match(
        LastMatch(running.address, table_id, 0, running.game_address, "")
    )


async def still_in_play(dsn: str, table_id: str) -> bool:
    async with table_db(dsn) as db:
        _, state = await db.state(table_id)
    return bool(state.phase.name != "GAME_OVER" and state.status[0].name == "PLAYING")


async def test_host_with_a_kept_seat_says_so_and_opens_no_table(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, `rummy host` went back to the kept table without a word about hosting."""
    async with servers(fresh_dsn) as running:
        table_id = await seat_with_a_bot(running, tmp_path)
        remembered(running, tmp_path, table_id)
        code, out = await run_cli(
            "host", "--server", running.address, "--config-dir", str(tmp_path)
        )
        assert code == 1, out
        assert (
            f"Error: You already have a seat at table {table_id}, and its game is still in"
            " play: finish it, or leave it, before you host a new table." in out
        )
        back = f"rummy play --server {running.address} --config-dir {tmp_path}"
        assert f"Go back to it with `{back}`, and type q there to leave it for good." in out
        assert "[ALREADY_SEATED]" in out
        assert "Invite code" not in out and "Rejoining" not in out, out
        assert await still_in_play(fresh_dsn, table_id)
        assert Identity(tmp_path).last_match(running.address) is not None, "the seat is kept"


async def test_join_with_a_seat_only_the_matchmaker_knows_says_so(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """The config folder knows nothing of the seat: the matchmaker's ALREADY_SEATED
    stops `rummy join` the same way (before, it went back to that table)."""
    async with servers(fresh_dsn) as running:
        host = Terminal("host", "--server", running.address, "--config-dir", str(tmp_path / "h"))
        try:
            await host.expect(r"Invite code: (\w+)")
            invite = host.group(1)
            seated = tmp_path / "seated"
            table_id = await seat_with_a_bot(running, seated)
            code, out = await run_cli(
                "join", invite.lower(), "--server", running.address, "--config-dir", str(seated)
            )
            assert code == 1, out
            assert (
                f"You already have a seat at table {table_id}, and its game is still in"
                f" play: finish it, or leave it, before you join table {invite}." in out
            )
            assert f"Go back to it with `rummy play --server {running.address} --config-dir" in out
            assert "going back to it" not in out and "Table " not in out, out
            assert await still_in_play(fresh_dsn, table_id)
            # The private table is still open for a friend.
            await a_friend_takes_the_seat(running, invite, host, tmp_path / "friend")
        finally:
            host.kill()


async def test_a_game_that_ended_meanwhile_is_told_before_queueing_again(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the finished table was forgotten without a word, and a new queue began."""
    async with servers(fresh_dsn) as running:
        pia = await sign_in(running, "device-cli-test-pia1", "Pia")
        table_id = await seat_with_a_bot(running, tmp_path, opponent=pia)
        remembered(running, tmp_path, table_id)
        # While Sam's client is stopped, Pia resigns: Sam wins.
        async with grpc.aio.insecure_channel(running.game_address) as channel:
            left = await game_pb2_grpc.GameServiceStub(channel).Leave(
                game_pb2.LeaveRequest(table_id=table_id, request_id="pia-leaves"),
                metadata=(("authorization", f"Bearer {pia.token}"),),
            )
        assert left.view.phase == table_pb2.PHASE_GAME_OVER
        code, out = await run_cli(
            *("play", "--server", running.address, "--bots", "--config-dir", str(tmp_path))
        )
    assert code == 0, out
    told = (
        f"While you were away, your game at table {table_id} ended.\n"
        "Game over: you win (everyone else left).\n"
        "  Final totals: you 0, Pia 0\n"
    )
    assert told in out, out
    assert out.index(told) < out.index("Looking for a 2-player cafe table"), out
    assert f"Table {table_id} found" not in out
