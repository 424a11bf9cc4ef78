"""The game server: GameService and AuthService over one PostgreSQL, plus the
fan-out of live events and the turn-timeout sweeper, health and reflection."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from datetime import datetime

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
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.common.serving import CLIENT_PING_MS, KEEPALIVE_MS, serve, server_options

from . import retention
from .admin_servicer import TableAdminServicer
from .autoplay import BOT_DELAY_MS
from .clockstop import BEAT_S, BEAT_TIMEOUT_S, CLOCK_STOP_S
from .fanout import CUT_OFF_S, Fanout
from .pacing import BotPace
from .presence import Presence, PresenceTimings
from .rules.ruleset import preset
from .servicer import GameServicer
from .tables import Tables

log = structlog.get_logger(__name__)

TABLE_COUNT_INTERVAL_S = 15.0
SWEEPERS = 3
SWEEP_BATCH = 100
"""Due turns counted by one probe; the drains then fire that many before asking again."""
MAX_CONNECTION_AGE_MS = 15 * 60 * 1000
REARM_ATTEMPTS = 30
"""Tries at re-arming a stop's turns, one a beat apart."""


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
    """Finished tables and ended matchmaking rows older than this are purged (0: never)."""
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
        self.tables = tables = Tables(
            pool,
            fanout,
            rulesets=preset,
            allow_test_decks=config.allow_test_decks,
            bot_pace=BotPace(scale=config.bot_pace, delay_ms=config.bot_delay_ms),
            clock_stop_s=config.clock_stop_s,
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
        self.port, self.health = await serve(
            server,
            game_pb2.DESCRIPTOR.services_by_name["GameService"].full_name,
            pool=pool,
            secret=config.secret,
            health_servicer=self._health,
            address=config.address,
            admin=[admin_pb2.DESCRIPTOR.services_by_name["TableAdminService"].full_name],
        )
        self._server = server
        self._beater = asyncio.create_task(self._beat(), name="clock-beat")
        self._sweeper = asyncio.create_task(self._sweep(), name="sweeper")
        self._gauges = asyncio.create_task(self._count_tables(), name="gauges")
        self._purger = asyncio.create_task(self._purge(), name="retention")
        presence.start()
        self.loop_lag.start()
        log.info("game_server_started", port=self.port)

    async def _sweep(self) -> None:
        """Fire expired turns; several replicas may sweep at once (SKIP LOCKED).

        Every `sweep_interval` a cheap probe (one statement, no transaction) counts
        the turns due; only then are they claimed, one table per transaction, by up
        to `SWEEPERS` drains at once, so a burst of expiring turns (many tables
        started together) does not queue behind one drain's round trips. An idle
        replica thus costs the database one indexed read per interval.

        While the database is out of reach the loop backs off (up to 2 s) and logs
        the first failure and then every twentieth, not one line per poll. Any other
        failure is logged as an error and backed off the same way: the loop itself
        only ends when the server stops (a table that cannot be fired is put off by
        `Tables.sweep_once`, so it holds up no other table)."""
        assert self.tables is not None
        interval = self.config.sweep_interval
        failures = 0
        while True:
            try:
                due = await self.tables.due(SWEEP_BATCH)
                fired = 0
                if due:
                    drains = min(due, SWEEPERS)
                    share = -(-due // drains)
                    drained = await asyncio.gather(
                        *(self._drain(share) for _ in range(drains)), return_exceptions=True
                    )
                    for result in drained:
                        if isinstance(result, BaseException):
                            raise result
                        fired += result
                failures = 0
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                failures += 1
                if failures % 20 == 1:
                    log.warning("sweep_failed", error=str(error), failures=failures)
                await asyncio.sleep(min(2.0, interval * 2 ** min(failures, 10)))
                continue
            except Exception:
                failures += 1
                if failures % 20 == 1:
                    log.exception("sweep_crashed", failures=failures)
                await asyncio.sleep(min(2.0, interval * 2 ** min(failures, 10)))
                continue
            if not fired:  # else more may have fallen due meanwhile
                await asyncio.sleep(interval)

    async def _beat(self) -> None:
        """Mark every `beat_s` that this replica reaches the database (`Tables.beat`),
        over a connection of its own (a busy pool must not delay the mark), and
        re-arm the turns of a stop it records, apart (a mark must not wait on
        them). Failures are logged as the sweep loop's are: the first, then every
        twentieth. While no replica marks, no turn is swept (`clockstop`)."""
        tables = self.tables
        assert tables is not None
        failures = 0
        con: asyncpg.Connection | None = None
        rearming: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    if con is None or con.is_closed():
                        con = await asyncpg.connect(self.config.dsn, timeout=BEAT_TIMEOUT_S)
                    stopped_at = await tables.beat(con)
                    if stopped_at is not None:
                        task = asyncio.create_task(self._rearm(stopped_at))
                        rearming.add(task)
                        task.add_done_callback(rearming.discard)
                    failures = 0
                except (*DB_ERRORS, asyncpg.PostgresError) as error:
                    if con is not None:
                        con.terminate()  # a fresh one next time: this one may be stuck
                        con = None
                    failures += 1
                    if failures % 20 == 1:
                        log.warning("clock_beat_failed", error=str(error), failures=failures)
                except Exception:
                    failures += 1
                    if failures % 20 == 1:
                        log.exception("clock_beat_crashed", failures=failures)
                await asyncio.sleep(self.config.beat_s)
        finally:
            for task in rearming:
                task.cancel()
            if con is not None:
                con.terminate()

    async def _rearm(self, stopped_at: datetime) -> None:
        """Make the turns in play at a stop due now (`Tables.rearm`), trying again
        while the database is still coming back (the pool's connections from before
        the stop fail once each); a turn never re-armed gets its time back when it
        falls due all the same."""
        assert self.tables is not None
        for attempt in range(REARM_ATTEMPTS):
            try:
                rearmed = await self.tables.rearm(stopped_at)
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                if attempt == REARM_ATTEMPTS - 1:
                    log.warning("clock_rearm_failed", error=str(error), attempts=REARM_ATTEMPTS)
                    return
                await asyncio.sleep(self.config.beat_s)
            else:
                log.info("clock_turns_rearmed", turns=rearmed)
                return

    async def _drain(self, most: int) -> int:
        """Fire up to ``most`` due turns, one per transaction; how many fired."""
        assert self.tables is not None
        fired = 0
        while fired < most and await self.tables.sweep_once() is not None:
            fired += 1
        return fired

    async def _count_tables(self) -> None:
        assert self._pool is not None
        while True:
            with contextlib.suppress(*DB_ERRORS, asyncpg.PostgresError):
                ACTIVE_TABLES.set(await self._pool.fetchval(ACTIVE_TABLES_SQL))
            await asyncio.sleep(TABLE_COUNT_INTERVAL_S)

    async def _purge(self) -> None:
        """Delete finished tables' request answers, and old finished tables and
        matchmaking rows (unless kept forever); replicas may overlap."""
        assert self._pool is not None
        keep_days = self.config.event_retention_days
        while True:
            try:
                answers = await retention.purge_answers(
                    self._pool, older_than_s=self.config.answer_retention_s
                )
                tables = tickets = matches = 0
                if keep_days > 0:
                    tables = await retention.purge_finished(
                        self._pool, older_than_s=keep_days * 86_400.0
                    )
                    tickets, matches = await retention.purge_matchmaking(
                        self._pool, older_than_s=keep_days * 86_400.0
                    )
                if answers or tables or tickets or matches:
                    log.info(
                        "retention_purged",
                        answers_of_tables=answers,
                        tables=tables,
                        tickets=tickets,
                        matches=matches,
                    )
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                log.warning("retention_failed", error=str(error))
            await asyncio.sleep(self.config.purge_interval_s)

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
