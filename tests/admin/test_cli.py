"""`rummy admin`, run as an operator runs it (a subprocess) against real servers:
what it prints reads at a glance, and what it refuses says why."""

from __future__ import annotations

import time

import grpc

from services.common.auth import issue_operator_token
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.game.rules.actions import DrawStock
from tests.cli.harness import run_cli, servers
from tests.game.harness import SECRET, create_table, login
from tests.matchmaker.harness import enqueue

from .harness import OPERATOR


async def test_rummy_admin_lists_reads_ends_and_removes(fresh_dsn: str) -> None:
    async with servers(fresh_dsn) as running:
        game = grpc.aio.insecure_channel(running.game_address)
        lobby = grpc.aio.insecure_channel(running.address)
        try:
            ana, bo = [await login(game, name) for name in ("Ana", "Bo")]
            table_id = await create_table(game, [ana, bo])
            view = await ana.view(table_id)
            first = ana if view.current_seat == ana.seat else bo
            await first.send(table_id, DrawStock())
            cy = await login(lobby, "Cy")
            waiting = await enqueue(cy, table_size=3)

            token = issue_operator_token(OPERATOR, secret=SECRET, now=time.time())
            where = ("--server", running.address, "--game", running.game_address)

            async def admin(*words: str, token: str = token) -> tuple[int, str]:
                return await run_cli("admin", *words, *where, env={"RUMMY_ADMIN_TOKEN": token})

            code, out = await admin("tables", "--state", "active")
            assert code == 0, out
            assert "1 table, the longest idle first:" in out
            header, row = out.splitlines()[1:3]
            assert header.split() == ["TABLE", "STATE", "RULES", "AGE", "IDLE", "DUE", "SEATS"]
            assert row.startswith(f"{table_id}  active") and row.endswith("Ana, Bo")
            assert "in " in row, "the turn's timeout is due later"

            code, out = await admin("log", table_id)
            assert code == 0, out
            lines = out.splitlines()
            assert lines[0].startswith(f"Table {table_id} · cafe · active")
            assert "seats: Ana (0), Bo (1)" in lines[0]
            assert "Round 1 dealt: 13 cards each." in lines[1]
            assert f"Turn 1: {first.name} to play." in out
            assert lines[-1].endswith(f"{first.name} drew from the stock.")
            assert lines[-1].split()[0] == str(view.last_seq + 1), "each line starts with its seq"

            code, out = await admin("queues", "--tickets", "5")
            assert code == 0, out
            assert out.splitlines()[0].split()[:4] == ["QUEUE", "MODE", "WAITING", "SEATING"]
            assert out.splitlines()[1].split()[:4] == ["3p-cafe", "fifo", "1", "0"]
            assert f"3p-cafe: Cy ({cy.player_id}) waited" in out
            assert waiting.ticket_id in out

            code, out = await admin("tickets", "remove", cy.player_id, "--reason", "maintenance")
            assert code == 0, out
            assert out.strip() == f"Removed 1 ticket of {cy.player_id}: {waiting.ticket_id}."
            await waiting.end()
            assert waiting.final.state == mm.TICKET_STATE_CANCELLED

            code, out = await admin("end", table_id, "--reason", "Stuck after an upgrade")
            assert code == 0, out
            assert out.startswith(f"Table {table_id} ended (event ")
            assert "its players were told “Stuck after an upgrade”" in out
            code, out = await admin("log", table_id, "--after", str(view.last_seq + 1))
            assert "Game over: nobody wins (the people who run the game ended it:" in out
            assert "Stuck after an upgrade)." in out

            code, out = await admin("end", table_id, "--reason", "again")
            assert (code, out.strip()) == (1, "Error: The game is over. [GAME_OVER]")
            code, out = await admin("queues", token=ana.token)
            assert code == 1 and out.strip().endswith("[OPERATOR_CREDENTIAL_REQUIRED]"), out
            code, out = await admin("queues", token="")
            assert code == 2 and "an operator token is needed" in out, out
            code, out = await admin("tickets", "remove", cy.player_id)
            assert code == 1 and out.strip().endswith("[TICKET_NOT_FOUND]"), out
        finally:
            await game.close()
            await lobby.close()
