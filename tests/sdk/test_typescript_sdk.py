"""The TypeScript SDK (clients/typescript) against real servers, with Node's
test runner: a whole game, a Watch across a restart of the game server, a
retried action applied once, refused moves that change nothing, the token's
renewal and the SDK's own rules (clients/typescript/test/*.test.ts).

The servers (a matchmaker, the game server it names, and a second game
replica) and the control endpoint run here; the Node tests run in a
subprocess, told the matchmaker's, the replica's and the endpoint's addresses
in their environment, one test file at a time (a restart must not cut another file's
game short).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re

from services.common.auth import PLAYER_TTL_S
from tests.cli.harness import servers
from tests.game.harness import UNLIMITED, start_server

from .harness import PACKAGE, build, control_endpoint

NODE_TIMEOUT_S = 150.0


async def test_the_typescript_sdk_plays_against_real_servers(fresh_dsn: str) -> None:
    await asyncio.to_thread(build)
    async with (
        servers(fresh_dsn, limits=UNLIMITED) as running,
        control_endpoint(running) as control,
    ):
        # Another replica of the game service, on the same database.
        replica = await start_server(fresh_dsn, bot_delay_ms=0)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUMMY_")}
        env.update(
            RUMMY_SERVER=f"http://{running.address}",
            RUMMY_CONTROL=control,
            RUMMY_GAME_REPLICA=f"127.0.0.1:{replica.port}",
            RUMMY_TOKEN_LIFE_S=str(PLAYER_TTL_S),
        )
        node = await asyncio.create_subprocess_exec(
            *("node", "--test", "--test-concurrency=1", "--test-reporter=tap"),
            *sorted(str(p) for p in (PACKAGE / "dist" / "test").glob("*.test.js")),
            cwd=PACKAGE,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(node.communicate(), NODE_TIMEOUT_S)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                node.kill()
            await node.wait()
            raise
        finally:
            await replica.stop(0)
    report = out.decode()
    assert node.returncode == 0, report
    counts = dict(re.findall(r"^# (pass|fail|cancelled) (\d+)$", report, re.MULTILINE))
    assert counts.keys() == {"pass", "fail", "cancelled"}, report
    assert (counts["fail"], counts["cancelled"]) == ("0", "0"), report
    # Every test of every file ran (a file that failed to load runs none).
    written = sum(
        len(re.findall(r"^test\(", path.read_text(encoding="utf-8"), re.MULTILINE))
        for path in (PACKAGE / "test").glob("*.test.ts")
    )
    assert int(counts["pass"]) == written, report
