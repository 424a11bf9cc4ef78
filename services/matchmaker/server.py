"""The matchmaker server: MatchmakerService and AuthService, the matching loop,
health and reflection. Any number of replicas share one PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

import asyncpg
import grpc
import structlog
from grpc_health.v1 import health

from services.common import tracing
from services.common.auth import issue_service_token
from services.common.db import migrate, open_pool
from services.common.errors import DB_ERRORS
from services.common.health import HealthMonitor
from services.common.interceptors import Gate
from services.common.limits import Limits
from services.common.looplag import LoopLag
from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
from services.common.pb.rummy.internal.v1 import tables_pb2_grpc
from services.common.pb.rummy.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from services.common.serving import serve, server_options

from . import retention
from .admin_servicer import QueueAdminServicer
from .game_channel import Reconnect, open_game_channel
from .matcher import GIVE_UP_S, Matcher
from .servicer import MatchmakerServicer
from .wakeups import CHANNEL, Wakeups

log = structlog.get_logger(__name__)
CREDENTIAL_TTL_S = 300
LISTEN_CHECK_S = 0.5
"""How often the LISTEN connection is checked; the first pause before re-opening it."""
LISTEN_ANSWER_S = 5.0
"""The LISTEN connection must answer a query this fast when checked, or it is replaced."""
LISTEN_RETRY_MAX_S = 5.0
"""The longest pause between two attempts to re-open the LISTEN connection."""
CANCEL_ON_STOP_S = 3.0
"""How long a stopping replica waits, once its calls are over, for the tickets of
the streams it closed to be cancelled before it closes its pool (a few
milliseconds, unless the database is out of reach). Within the margin the
deployment leaves after the shutdown grace."""


SETTLE_IDLE_S = 600.0
"""A settle's transaction waits on its CreateTables calls (up to 10 s each, a few
batches at once): PostgreSQL ends one idle this long, so a dead replica's match
locks go in minutes. A settle slower still (a game service timing out on every
call) is ended too, and `recover` finishes its matches."""


@dataclass(frozen=True, slots=True)
class MatchmakerConfig:
    dsn: str
    secret: str
    game_target: str
    """Where this replica reaches the game service (CreateTables)."""
    public_game_target: str = ""
    """What players are told in a match; empty: the same address as game_target."""
    address: str = "127.0.0.1:0"
    ticket_ttl_s: float = 300.0
    match_interval: float = 0.1
    pool_size: int = 10
    grace: float = 5.0
    listen_answer_s: float = LISTEN_ANSWER_S
    """How long the checked LISTEN connection may take to answer before it is replaced."""
    limits: Limits = field(default_factory=Limits)
    event_retention_days: int = 30
    """Ended tickets and settled matches older than this are purged (0: never)."""
    purge_interval_s: float = 600.0
    give_up_s: float = GIVE_UP_S
    """How long a match waits for its table before its tickets end, unmatched."""
    reconnect: Reconnect = field(default_factory=Reconnect)
    """How the channel to the game service connects again after losing it: far
    more often than a match waits (`give_up_s`)."""


class Credential:
    """The service token the matchmaker shows the game service, renewed before expiry."""

    def __init__(self, secret: str) -> None:
        self._secret = secret
        self._token = ""
        self._until = 0.0

    def __call__(self) -> tuple[tuple[str, str], ...]:
        now = time.time()
        if now > self._until:
            self._token = issue_service_token(
                "matchmaker", secret=self._secret, ttl_s=CREDENTIAL_TTL_S, now=now
            )
            self._until = now + CREDENTIAL_TTL_S / 2
        return (("authorization", f"Bearer {self._token}"),)


class MatchmakerServer:
    def __init__(self, config: MatchmakerConfig) -> None:
        self.config = config
        self.port = 0
        self._server: grpc.aio.Server | None = None
        self._gate: Gate | None = None
        self._pool: asyncpg.Pool | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._health = health.aio.HealthServicer()
        self.health: HealthMonitor | None = None
        self._game_channel: grpc.aio.Channel | None = None
        self.matcher: Matcher | None = None
        self._servicer: MatchmakerServicer | None = None
        self.wakeups = Wakeups()
        self.loop_lag = LoopLag()

    async def start(self, *, matching: bool = True) -> None:
        config = self.config
        self._pool = pool = await open_pool(
            config.dsn, max_size=config.pool_size, idle_in_transaction_s=SETTLE_IDLE_S
        )
        await migrate(pool)
        self._game_channel = open_game_channel(config.game_target, config.reconnect)
        game = tables_pb2_grpc.TableServiceStub(self._game_channel)
        self.matcher = Matcher(
            pool,
            game,
            Credential(config.secret),
            interval=config.match_interval,
            give_up_s=config.give_up_s,
        )
        self._gate = Gate(config.limits, secret=config.secret)
        server = grpc.aio.server(
            interceptors=[self._gate, *tracing.server_interceptors()],
            options=server_options(),
        )
        self._servicer = MatchmakerServicer(
            pool,
            self.wakeups,
            game_target=config.public_game_target or config.game_target,
            ticket_ttl_s=config.ticket_ttl_s,
        )
        matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(self._servicer, server)
        admin_pb2_grpc.add_QueueAdminServiceServicer_to_server(QueueAdminServicer(pool), server)
        self.port, self.health = await serve(
            server,
            matchmaker_pb2.DESCRIPTOR.services_by_name["MatchmakerService"].full_name,
            pool=pool,
            secret=config.secret,
            health_servicer=self._health,
            address=config.address,
            beside=[admin_pb2.DESCRIPTOR.services_by_name["QueueAdminService"].full_name],
        )
        self._server = server
        self._tasks.append(asyncio.create_task(self._listen(), name="ticket-listener"))
        if matching:
            self._tasks.append(asyncio.create_task(self.matcher.run(), name="matcher"))
        purging = retention.run(
            pool, keep_days=config.event_retention_days, interval_s=config.purge_interval_s
        )
        self._tasks.append(asyncio.create_task(purging, name="retention"))
        self.loop_lag.start()
        log.info("matchmaker_started", port=self.port)

    async def _listen(self) -> None:
        """Keep one LISTEN connection; a lost one is re-opened (streams also poll),
        whatever failed: the connection, the LISTEN, or anything else."""
        failures = 0  # attempts in a row that failed: each waits longer before the next
        while True:
            con: asyncpg.Connection | None = None
            try:
                con = await asyncpg.connect(self.config.dsn)
                await con.add_listener(CHANNEL, self.wakeups.listener)
                # Notifications sent while nobody listened here are lost: the
                # streams read their tickets again now, not at the next sweep.
                self.wakeups.wake(self.wakeups.watched())
                if failures:
                    log.info("ticket_listener_reopened", failures=failures)
                failures = 0
                while True:
                    await asyncio.sleep(LISTEN_CHECK_S)
                    # A socket the network lost without a word (no FIN, no RST: a
                    # failed-over database host) never reads as closed: ask. A
                    # closed one raises too; a timeout is an OSError.
                    await con.fetchval("SELECT 1", timeout=self.config.listen_answer_s)
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                failures += 1
                if failures == 1:
                    log.warning("ticket_listener_failed", error=str(error))
            except Exception:
                failures += 1
                log.exception("ticket_listener_crashed", failures=failures)
            finally:
                if con is not None:
                    with contextlib.suppress(Exception):
                        await con.close(timeout=1)
            await asyncio.sleep(min(LISTEN_RETRY_MAX_S, LISTEN_CHECK_S * 2**failures))

    async def stop(self, grace: float | None = None) -> None:
        if self.health is not None:
            await self.health.shutdown()
        if self._gate is not None:
            self._gate.close_streams()  # health watchers: the replica is leaving
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._server is not None:
            await self._server.stop(self.config.grace if grace is None else grace)
        if self._servicer is not None:
            # The streams still open were closed by the stop: their tickets are
            # cancelled while the pool is open (a closed stream cancels its ticket).
            await self._servicer.stopped(CANCEL_ON_STOP_S)
        if self._game_channel is not None:
            await self._game_channel.close()
        if self._pool is not None:
            await self._pool.close()
        await self.loop_lag.stop()  # last: the drain above is when the loop is busiest
