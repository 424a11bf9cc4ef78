"""Entry points: `rummy-game`, `rummy-matchmaker`, and `rummy-dev` (both, for `make run`).

Each reads its settings from the environment (services.common.config), uses
DATABASE_URL or starts an embedded PostgreSQL, and stops cleanly on SIGTERM or
Ctrl-C: health turns NOT_SERVING, running calls get the grace period, streams
end with a status clients treat as "reconnect".
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
from collections.abc import Awaitable, Callable

import structlog

from services.common import metrics
from services.common.config import ConfigError, Env
from services.common.db import resolve_database
from services.common.heap import keep_heap_small
from services.common.limits import Limits
from services.common.logs import configure
from services.game.server import GameConfig, GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer

log = structlog.get_logger(__name__)


def _game_config(env: Env, dsn: str, secret: str) -> GameConfig:
    return GameConfig(
        dsn=dsn,
        secret=secret,
        address=env.address("RUMMY_GAME_LISTEN"),
        allow_test_decks=env.flag("RUMMY_ALLOW_TEST_DECKS"),
        pool_size=env.integer("RUMMY_DB_POOL_SIZE", low=2, high=200),
        grace=env.integer("RUMMY_SHUTDOWN_GRACE_S", high=600),
        bot_delay_ms=env.integer("RUMMY_BOT_DELAY_MS", high=60_000),
        event_retention_days=env.integer("RUMMY_EVENT_RETENTION_DAYS", high=36_500),
        limits=Limits.from_env(env),
    )


def _matchmaker_config(env: Env, dsn: str, secret: str) -> MatchmakerConfig:
    return MatchmakerConfig(
        dsn=dsn,
        secret=secret,
        game_target=env.address("RUMMY_GAME_TARGET"),
        public_game_target=env.text("RUMMY_GAME_PUBLIC_TARGET"),
        address=env.address("RUMMY_MATCHMAKER_LISTEN"),
        ticket_ttl_s=env.integer("RUMMY_TICKET_TTL_S", low=5, high=86_400),
        pool_size=env.integer("RUMMY_DB_POOL_SIZE", low=2, high=200),
        grace=env.integer("RUMMY_SHUTDOWN_GRACE_S", high=600),
        limits=Limits.from_env(env),
    )


async def _until_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def _serve(run: Callable[[Env], Awaitable[None]]) -> None:
    async with keep_heap_small():  # a server's RSS must not creep up over days
        env = Env()
        configure(
            fmt=env.choice("RUMMY_LOG_FORMAT", ("auto", "json", "console")),
            level=env.choice("RUMMY_LOG_LEVEL", ("debug", "info", "warning", "error")),
        )
        await run(env)


def _main(run: Callable[[Env], Awaitable[None]]) -> int:
    try:
        asyncio.run(_serve(run))
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    return 0


async def _game(env: Env) -> None:
    secret = env.secret()
    metrics.serve(env.integer("RUMMY_GAME_METRICS_PORT", high=65535))
    async with resolve_database(data_dir=env.text("RUMMY_DATA_DIR")) as dsn:
        server = GameServer(_game_config(env, dsn, secret))
        await server.start()
        await _until_signal()
        await server.stop()


async def _matchmaker(env: Env) -> None:
    secret = env.secret()
    metrics.serve(env.integer("RUMMY_MATCHMAKER_METRICS_PORT", high=65535))
    async with resolve_database(data_dir=env.text("RUMMY_DATA_DIR")) as dsn:
        server = MatchmakerServer(_matchmaker_config(env, dsn, secret))
        await server.start()
        await _until_signal()
        await server.stop()


async def _dev(env: Env) -> None:
    secret = env.secret(generate=True)
    metrics_port = env.integer("RUMMY_GAME_METRICS_PORT", high=65535)
    metrics.serve(metrics_port)
    async with resolve_database(data_dir=env.text("RUMMY_DATA_DIR")) as dsn:
        game = GameServer(_game_config(env, dsn, secret))
        await game.start()
        mm_config = _matchmaker_config(env, dsn, secret)
        host = mm_config.game_target.rpartition(":")[0]
        mm_config = dataclasses.replace(mm_config, game_target=f"{host}:{game.port}")
        matchmaker = MatchmakerServer(mm_config)
        await matchmaker.start()
        print(
            f"\nRummy is running.\n"
            f"  game service        127.0.0.1:{game.port}\n"
            f"  matchmaker          127.0.0.1:{matchmaker.port}\n"
            f"  database            {'DATABASE_URL' if env.text('DATABASE_URL') else 'embedded'}\n"
            f"  metrics             http://127.0.0.1:{metrics_port}/metrics\n"
            f"\nPlay in another terminal:\n"
            f"  .venv/bin/rummy play --server 127.0.0.1:{matchmaker.port} --bots\n"
            f"Press Ctrl-C to stop.\n",
            flush=True,
        )
        await _until_signal()
        print("stopping...", flush=True)
        await matchmaker.stop()
        await game.stop()


def game_main() -> int:
    return _main(_game)


def matchmaker_main() -> int:
    return _main(_matchmaker)


def dev_main() -> int:
    return _main(_dev)
