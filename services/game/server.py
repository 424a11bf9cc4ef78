"""The game server: GameService, PlayerService and AuthService over one
PostgreSQL (with the operators' TableAdminService and the services'
TableService), plus the fan-out of live events, the table layer's loops (the
sweeper, the clock's beat), presence, retention, health and reflection."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import asyncpg
import grpc
import structlog
from grpc_health.v1 import health

from services.common import tracing
from services.common.db import migrate, open_pool
from services.common.errors import DB_ERRORS
from services.common.health import HealthMonitor
from services.common.interceptors import Gate
from services.common.limits import Limits
from services.common.looplag import LoopLag
from services.common.metrics import ACTIVE_TABLES
from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, player_pb2, player_pb2_grpc
from services.common.serving import CLIENT_PING_MS, KEEPALIVE_MS, serve, server_options

from . import retention
from .admin_servicer import TableAdminServicer
from .clockstop import BEAT_S, CLOCK_STOP_S
from .fanout import CUT_OFF_S, Fanout
from .internal_servicer import TableServicer
from .pacing import BOT_DELAY_MS, BotPace
from .player_servicer import PlayerServicer
from .presence import Presence, PresenceTimings
from .rules.ruleset import preset
from .servicer import GameServicer
from .tables import Tables

log = structlog.get_logger(__name__)

TABLE_COUNT_INTERVAL_S = 15.0
MAX_CONNECTION_AGE_MS = 15 * 60 * 1000


async def _ended(task: asyncio.Task[None]) -> None:
    """Cancel a background task and wait for it; however it ended (a failure it
    died of included) is logged, never raised: shutdown goes on."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise  # this stop() itself is being cancelled
    except Exception:
        log.exception("background_task_failed", task=task.get_name())


LOCK_TIMEOUT_S = 5.0
"""The longest a move waits for a table's lock: held longer, its holder is in
trouble (its session ends after `IDLE_IN_TRANSACTION_S`), and the move gets
UNAVAILABLE rather than holding a pooled connection for the query timeout."""


@dataclass(frozen=True, slots=True)
class GameConfig:
    dsn: str
    secret: str
    address: str = "127.0.0.1:0"
    allow_test_decks: bool = False
    sweep_interval: float = 0.05
    pool_size: int = 10
    grace: float = 5.0
    limits: Limits = field(default_factory=Limits)
    bot_delay_ms: int = BOT_DELAY_MS
    """Where bots play whole turns (`bot_pace` 0, tables of bots alone): how long
    after the turn began."""
    bot_pace: float = 1.0
    """Bots' think times at a person's table are multiplied by this (`pacing`);
    0: they play each turn whole, as at a table of bots alone."""
    event_retention_days: int = 30
    """Finished tables older than this are purged (0: never)."""
    answer_retention_s: float = retention.ANSWER_RETENTION_S
    """Finished tables' stored request answers are purged this long after the end."""
    purge_interval_s: float = 600.0
    keepalive_ms: int = KEEPALIVE_MS
    """A quiet connection is pinged after this, and closed if it does not answer."""
    client_ping_ms: int = CLIENT_PING_MS
    """The most often a client may ping a quiet connection."""
    lock_timeout_s: float = LOCK_TIMEOUT_S
    """The longest a move waits for a table's lock (0: no limit)."""
    watch_cut_off_s: float = CUT_OFF_S
    """Live watchers resume once the replica has not reached the database this long."""
    beat_s: float = BEAT_S
    """How often the replica marks that it reached the database."""
    clock_stop_s: float = CLOCK_STOP_S
    """A gap in every replica's marks this long stops the turns' clock: the turns in
    play then get back the time they had left (`clockstop`)."""
    presence: PresenceTimings = field(default_factory=PresenceTimings)
    """Leases of the players' streams, and how soon a drop is told (`presence`)."""


ACTIVE_TABLES_SQL = (
    "SELECT count(*) FROM tables WHERE status = 'active' AND turn_deadline IS NOT NULL"
)
"""Every active table has its clock running (a turn, a claim window), so this counts
them all, from the sweeper's small index rather than a scan of every table kept."""


class GameServer:
    """One game replica. `start()` returns once it listens; `port` says where."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.port = 0
        self._server: grpc.aio.Server | None = None
        self._gate: Gate | None = None
        self._pool: asyncpg.Pool | None = None
        self._fanout: Fanout | None = None
        self.presence: Presence | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._beater: asyncio.Task[None] | None = None
        self._health = health.aio.HealthServicer()
        self.health: HealthMonitor | None = None
        self._gauges: asyncio.Task[None] | None = None
        self._purger: asyncio.Task[None] | None = None
        self.tables: Tables | None = None
        self.loop_lag = LoopLag()

    @property
    def watch_streams(self) -> int:
        """Watch streams open on this replica."""
        return self._fanout.streams if self._fanout is not None else 0

    async def start(self) -> None:
        config = self.config
        self._pool = pool = await open_pool(
            config.dsn, max_size=config.pool_size, lock_timeout_s=config.lock_timeout_s
        )
        await migrate(pool)
        self._fanout = fanout = Fanout(pool, config.dsn, cut_off_s=config.watch_cut_off_s)
        await fanout.start()
        self.tables = tables = Tables.open(
            pool,
            fanout,
            dsn=config.dsn,
            rulesets=preset,
            allow_test_decks=config.allow_test_decks,
            bot_pace=BotPace(scale=config.bot_pace, delay_ms=config.bot_delay_ms),
            clock_stop_s=config.clock_stop_s,
            beat_s=config.beat_s,
        )
        self._gate = Gate(config.limits, secret=config.secret)
        server = grpc.aio.server(
            interceptors=[self._gate, *tracing.server_interceptors()],
            options=server_options(
                # Clients re-resolve the headless Service as replicas come and go;
                # a Watch cut by this resumes from its last seq like any reconnect.
                ("grpc.max_connection_age_ms", MAX_CONNECTION_AGE_MS),
                ("grpc.max_connection_age_grace_ms", 30_000),
                keepalive_ms=config.keepalive_ms,
                client_ping_ms=config.client_ping_ms,
            ),
        )
        self.presence = presence = Presence(pool, fanout, config.presence)
        game_pb2_grpc.add_GameServiceServicer_to_server(
            GameServicer(tables, fanout, pool, presence), server
        )
        admin_pb2_grpc.add_TableAdminServiceServicer_to_server(
            TableAdminServicer(tables, pool), server
        )
        tables_pb2_grpc.add_TableServiceServicer_to_server(TableServicer(tables), server)
        player_pb2_grpc.add_PlayerServiceServicer_to_server(
            PlayerServicer(pool, retention_days=config.event_retention_days), server
        )
        self.port, self.health = await serve(
            server,
            game_pb2.DESCRIPTOR.services_by_name["GameService"].full_name,
            pool=pool,
            secret=config.secret,
            health_servicer=self._health,
            address=config.address,
            beside=[
                admin_pb2.DESCRIPTOR.services_by_name["TableAdminService"].full_name,
                tables_pb2.DESCRIPTOR.services_by_name["TableService"].full_name,
                player_pb2.DESCRIPTOR.services_by_name["PlayerService"].full_name,
            ],
        )
        self._server = server
        self._beater = asyncio.create_task(tables.clock.run(), name="clock-beat")
        self._sweeper = asyncio.create_task(
            tables.sweeper.run(config.sweep_interval), name="sweeper"
        )
        self._gauges = asyncio.create_task(self._count_tables(), name="gauges")
        purging = retention.run(
            pool,
            keep_days=config.event_retention_days,
            answer_retention_s=config.answer_retention_s,
            interval_s=config.purge_interval_s,
        )
        self._purger = asyncio.create_task(purging, name="retention")
        presence.start()
        self.loop_lag.start()
        log.info("game_server_started", port=self.port)

    async def _count_tables(self) -> None:
        assert self._pool is not None
        while True:
            with contextlib.suppress(*DB_ERRORS, asyncpg.PostgresError):
                ACTIVE_TABLES.set(await self._pool.fetchval(ACTIVE_TABLES_SQL))
            await asyncio.sleep(TABLE_COUNT_INTERVAL_S)

    async def stop(self, grace: float | None = None) -> None:
        if self.health is not None:
            await self.health.shutdown()
        if self._gate is not None:
            self._gate.close_streams()  # health watchers: the replica is leaving
        if self._gauges is not None:
            self._gauges.cancel()
        if self._purger is not None:
            self._purger.cancel()
        if self._fanout is not None:
            # Watchers resume on another replica now rather than at the end of grace.
            self._fanout.close_streams()
        if self._sweeper is not None:
            await _ended(self._sweeper)
        if self._beater is not None:
            await _ended(self._beater)
        if self._server is not None:
            await self._server.stop(self.config.grace if grace is None else grace)
        if self.presence is not None:
            await self.presence.stop()  # after the streams: their leases are ended
        if self._fanout is not None:
            await self._fanout.stop()
        if self._pool is not None:
            await self._pool.close()
        await self.loop_lag.stop()  # last: the drain above is when the loop is busiest

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()
