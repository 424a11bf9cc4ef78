"""Entry points: `rummy-game`, `rummy-matchmaker`, and `rummy-dev` (both, for `make run`).

Each reads its settings from the environment (services.common.config), uses
DATABASE_URL or starts an embedded PostgreSQL, and stops cleanly on SIGTERM or
Ctrl-C: health turns NOT_SERVING, running calls get the grace period, streams
end with a status clients treat as "reconnect".

A database that cannot be reached at start-up is waited for (logged, with
backoff) rather than ending the process: meanwhile a server's address answers
gRPC health only, alive (`LIVENESS`) but not ready, so an orchestrator neither
sends it players nor restarts it over and over. A DATABASE_URL the database
refuses (malformed, wrong password, no such database) stops start-up with a
message naming it, like any other bad setting.

Traces are turned on here, for the whole process, when the OTEL_* variables ask
for them (services.common.tracing), before any server or channel is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

import asyncpg
import grpc
import structlog
from grpc_health.v1 import health, health_pb2_grpc

from services.common import eventloop, metrics, tracing
from services.common.config import ConfigError, Env
from services.common.db import EmbeddedPostgresError, resolve_database
from services.common.db.resolve import DATABASE_URL
from services.common.errors import DB_ERRORS
from services.common.health import LIVENESS, NOT_SERVING, SERVING
from services.common.heap import keep_heap_small
from services.common.limits import Limits
from services.common.logs import configure
from services.common.ports import Listen, check_free
from services.common.secret_file import kept_secret, secret_path
from services.game.server import GameConfig, GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer

log = structlog.get_logger(__name__)

FIRST_RETRY_S = 1.0
LAST_RETRY_S = 30.0
"""Waits between start-up attempts while the database is out of reach: doubling,
then every 30 s, so a long outage costs a log line per half minute."""
SLOW_START_S = 2.0
"""A start that takes longer waits on the database: health answers meanwhile."""
STOP_TIMEOUT_S = 10.0
"""Bounds the clean-up of an attempt that failed half-way (its pool may hang)."""


def _game_config(env: Env, dsn: str, secret: str) -> GameConfig:
    return GameConfig(
        dsn=dsn,
        secret=secret,
        address=env.address("RUMMY_GAME_LISTEN"),
        allow_test_decks=env.flag("RUMMY_ALLOW_TEST_DECKS"),
        pool_size=env.integer("RUMMY_DB_POOL_SIZE", low=2, high=200),
        grace=env.integer("RUMMY_SHUTDOWN_GRACE_S", high=600),
        bot_delay_ms=env.integer("RUMMY_BOT_DELAY_MS", high=60_000),
        bot_pace=env.number("RUMMY_BOT_PACE", high=10.0),
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
        event_retention_days=env.integer("RUMMY_EVENT_RETENTION_DAYS", high=36_500),
        limits=Limits.from_env(env),
    )


class Startable(Protocol):
    async def start(self) -> None: ...

    async def stop(self, grace: float | None = None) -> None: ...


S = TypeVar("S", bound=Startable)


def _stop_event() -> asyncio.Event:
    """Set by SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


def _refused_by_database(error: BaseException) -> ConfigError | None:
    """The configuration error behind a failed start, if the database said it is one."""
    if isinstance(error, asyncpg.ClientConfigurationError):
        return ConfigError(f"{DATABASE_URL} cannot be used: {error}")
    if isinstance(
        error, asyncpg.InvalidAuthorizationSpecificationError | asyncpg.InvalidCatalogNameError
    ):
        return ConfigError(f"{DATABASE_URL}: PostgreSQL refused the connection: {error}")
    return None


async def _health_only(addresses: Sequence[str]) -> grpc.aio.Server | None:
    """While the database is awaited: gRPC health on the servers' addresses, alive
    (`LIVENESS`) and not ready (every other name). None when nothing can listen."""
    if not addresses:
        return None
    servicer = health.aio.HealthServicer()
    await servicer.set("", NOT_SERVING)
    await servicer.set(LIVENESS, SERVING)
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    try:
        for address in addresses:
            server.add_insecure_port(address)
    except RuntimeError:
        return None  # cannot listen there: the attempts go on without it
    await server.start()
    return server


async def _start(
    make: Callable[[], S], stop: asyncio.Event, *, listen: Sequence[str] = ()
) -> S | None:
    """A started server (a new one from ``make`` each attempt), once the database can
    be reached (``listen``: the addresses that answer health meanwhile); None when a
    signal came first. A database that refuses the configuration raises ConfigError."""
    delay = FIRST_RETRY_S
    waiting: grpc.aio.Server | None = None
    try:
        while True:
            server = make()
            try:
                starting = asyncio.ensure_future(server.start())
                done, _ = await asyncio.wait({starting}, timeout=SLOW_START_S)
                if not done and waiting is None:
                    # Waiting on the database (another replica's migration holds
                    # the lock, say): alive meanwhile, or the startup probe kills it.
                    waiting = await _health_only(listen)
                await starting
                return server
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(server.stop(0), STOP_TIMEOUT_S)
                refused = _refused_by_database(error)
                if refused is not None:
                    raise refused from None
                if not isinstance(error, DB_ERRORS) or isinstance(
                    error, asyncpg.QueryCanceledError
                ):
                    raise  # not an outage: a bug, or a migration that ran out of time
                log.warning(
                    "database_unreachable_at_start",
                    error=str(error) or type(error).__name__,
                    retry_in_s=delay,
                )
            if waiting is None:
                waiting = await _health_only(listen)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
                return None
            delay = min(delay * 2, LAST_RETRY_S)
    finally:
        if waiting is not None:
            await waiting.stop(0)


Run = Callable[[str], Awaitable[None]]
"""A server's life, given the database's DSN."""


async def _serve(prepare: Callable[[Env], Run]) -> None:
    async with keep_heap_small():  # a server's RSS must not creep up over days
        env = Env()
        configure(
            fmt=env.choice("RUMMY_LOG_FORMAT", ("auto", "json", "console")),
            level=env.choice("RUMMY_LOG_LEVEL", ("debug", "info", "warning", "error")),
        )
        url = env.database_url()
        run = prepare(env)  # every other setting is checked before a database is started
        data_dir = env.text("RUMMY_DATA_DIR")
        async with resolve_database(environ={DATABASE_URL: url}, data_dir=data_dir) as dsn:
            await run(dsn)


def _main(prepare: Callable[[Env], Run]) -> int:
    try:
        eventloop.run(_serve(prepare))
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    except EmbeddedPostgresError as error:
        print(f"embedded PostgreSQL: {error}", file=sys.stderr)
        return 1
    return 0


async def _serve_until_signal(make: Callable[[], Startable], address: str) -> None:
    stop = _stop_event()
    server = await _start(make, stop, listen=[address])
    if server is None:
        return
    await stop.wait()
    await server.stop()


C = TypeVar("C", GameConfig, MatchmakerConfig)


def _metrics(port: int, setting: str) -> Listen:
    return Listen(f"0.0.0.0:{port}", "metrics", setting)


def _service(config: C, metrics_port: int, make: Callable[[C], Startable]) -> Run:
    """One server's life: its metrics, then the server on the given database."""

    async def run(dsn: str) -> None:
        metrics.serve(metrics_port)
        with_dsn = dataclasses.replace(config, dsn=dsn)
        await _serve_until_signal(lambda: make(with_dsn), config.address)

    return run


def _game(env: Env) -> Run:
    tracing.setup_tracing("rummy-game")
    config = _game_config(env, "", env.secret())
    port = env.integer("RUMMY_GAME_METRICS_PORT", high=65535)
    check_free(
        [
            Listen(config.address, "game service", "RUMMY_GAME_LISTEN"),
            _metrics(port, "RUMMY_GAME_METRICS_PORT"),
        ]
    )
    return _service(config, port, GameServer)


def _matchmaker(env: Env) -> Run:
    tracing.setup_tracing("rummy-matchmaker")
    config = _matchmaker_config(env, "", env.secret())
    port = env.integer("RUMMY_MATCHMAKER_METRICS_PORT", high=65535)
    check_free(
        [
            Listen(config.address, "matchmaker", "RUMMY_MATCHMAKER_LISTEN"),
            _metrics(port, "RUMMY_MATCHMAKER_METRICS_PORT"),
        ]
    )
    return _service(config, port, MatchmakerServer)


class _DevPair:
    """`make run`: the game server, then a matchmaker pointed at the port it got."""

    def __init__(self, game: GameConfig, matchmaker: MatchmakerConfig) -> None:
        self.game = GameServer(game)
        self._matchmaker_config = matchmaker
        self.matchmaker: MatchmakerServer | None = None

    async def start(self) -> None:
        await self.game.start()
        host = self._matchmaker_config.game_target.rpartition(":")[0]
        config = dataclasses.replace(
            self._matchmaker_config, game_target=f"{host}:{self.game.port}"
        )
        self.matchmaker = MatchmakerServer(config)
        try:
            await self.matchmaker.start()
        except BaseException:
            await self.matchmaker.stop(0)
            raise

    async def stop(self, grace: float | None = None) -> None:
        if self.matchmaker is not None:
            await self.matchmaker.stop(grace)
        await self.game.stop(grace)


def _dev(env: Env) -> Run:
    tracing.setup_tracing("rummy-dev")  # both services: one process
    # A secret of the environment's wins; else the one kept from the last run, so
    # that the clients' tokens still work after a restart.
    if env.text("RUMMY_TOKEN_SECRET"):
        secret = env.secret()
    else:
        secret = kept_secret(secret_path(env.text("RUMMY_DATA_DIR")))
    game_config = _game_config(env, "", secret)
    matchmaker_config = _matchmaker_config(env, "", secret)
    # One process serves both services, so one /metrics endpoint has all of it.
    metrics_port = env.integer("RUMMY_GAME_METRICS_PORT", high=65535)
    check_free(
        [
            Listen(game_config.address, "game service", "RUMMY_GAME_LISTEN"),
            Listen(matchmaker_config.address, "matchmaker", "RUMMY_MATCHMAKER_LISTEN"),
            _metrics(metrics_port, "RUMMY_GAME_METRICS_PORT"),
        ]
    )
    using = "DATABASE_URL" if env.text("DATABASE_URL") else "embedded"

    async def run(dsn: str) -> None:
        game = dataclasses.replace(game_config, dsn=dsn)
        matchmaker = dataclasses.replace(matchmaker_config, dsn=dsn)
        metrics.serve(metrics_port)
        stop = _stop_event()
        pair = await _start(lambda: _DevPair(game, matchmaker), stop)
        if pair is None:
            return
        assert pair.matchmaker is not None
        shown = f"http://127.0.0.1:{metrics_port}/metrics" if metrics_port else "off"
        print(
            f"\nRummy is running.\n"
            f"  game service        127.0.0.1:{pair.game.port}\n"
            f"  matchmaker          127.0.0.1:{pair.matchmaker.port}\n"
            f"  database            {using}\n"
            f"  metrics             {shown} (both services)\n"
            f"\nPlay in another terminal:\n"
            f"  .venv/bin/rummy play --server 127.0.0.1:{pair.matchmaker.port} --bots\n"
            f"Press Ctrl-C to stop.\n",
            flush=True,
        )
        await stop.wait()
        print("stopping...", flush=True)
        await pair.stop()

    return run


def game_main() -> int:
    return _main(_game)


def matchmaker_main() -> int:
    return _main(_matchmaker)


def dev_main() -> int:
    return _main(_dev)
