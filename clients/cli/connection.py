"""Talking to the servers the way a mobile app should.

One `Connection` holds a channel to the matchmaker (which also signs players
in) and one to the game service a match points at. It signs in with the
device id, renews the token before it expires, retries what is safe to retry
(reads, and actions carrying the same `request_id`) with backoff when a server
is briefly away, and follows a table's `Watch` stream across disconnects by
resuming from the last `seq` it received.

Two layers retry. Every channel loads the service config the API publishes for
every app (`proto/service_config.json`, shipped in `services.common.pb`): gRPC
itself spreads calls over the addresses a name resolves to (round_robin) and
makes a safe call that met UNAVAILABLE again a few times within a second, so a
blip is never seen here. Past that, `Connection` tries on for as long as an
outage lasts (`GIVE_UP_AFTER_S`), telling the player, and handles what no
service config can say: a sign-in to renew, a rate limit's wait, a server in the
other protocol.

Nothing drops the player for a token: wherever one is refused (TOKEN_EXPIRED,
TOKEN_INVALID: it ran out, or the servers restarted with another signing
secret) — a unary call, the stream, the stream's snapshot on a reconnect, the
token's renewal — the client signs in again with its device id and goes on.
Calls refused together share one new sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from google.protobuf.message import Message

from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    matchmaker_pb2_grpc,
    player_pb2_grpc,
    table_pb2,
)
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .channels import Backoff, open_channel
from .refusals import (
    RETRYABLE,
    STREAM_RETRYABLE,
    closed_at_once,
    plaintext_failure,
    rate_limited_for,
    tls_failure,
)
from .resume import Resume

CALL_TIMEOUT_S = 10.0
"""Bounds one unary call; a retry gets a fresh deadline."""
GIVE_UP_AFTER_S = 60.0
"""How long retries go on before an outage is reported as an error."""
CLOSED_AT_ONCE_TRIES = 3
"""Attempts a never-reached server closes at once before the client says it wants TLS
(a plaintext server restarting refuses connections instead; about a second)."""
Notify = Callable[[str], None]


class Connection:
    """A signed-in player's channels to the matchmaker and the game service."""

    def __init__(
        self,
        server: str,
        device_id: str,
        name: str,
        *,
        notify: Notify | None = None,
        give_up_after: float = GIVE_UP_AFTER_S,
        channels: dict[str, grpc.aio.Channel] | None = None,
        game: str = "",
        tls: bool = False,
        on_rate_limited: Callable[[], None] | None = None,
    ) -> None:
        """`game`: the game service to use whatever a match says (e.g. behind a tunnel).
        `tls`: talk TLS to every server (see `open_channel`).
        `channels`: share one channel per target among many players (the bots).
        `on_rate_limited`: told of each call a server turned away for its rate."""
        self.server = server
        self.device_id = device_id
        self.name = name
        self.notify = notify or (lambda _text: None)
        self.on_rate_limited = on_rate_limited or (lambda: None)
        self.give_up_after = give_up_after
        self.player_id = ""
        self.token = ""
        self.expires_at = 0.0
        self.game_override = game
        self.tls = tls
        self.game_target = game or server
        self._owns_channels = channels is None
        self._channels: dict[str, grpc.aio.Channel] = {} if channels is None else channels
        self._refresher: asyncio.Task[None] | None = None
        self._signing_in: asyncio.Task[None] | None = None
        self._reached: set[str] = set()
        """Targets that answered a call (a TLS failure there is an outage, not a mistake)."""

    # --- channels and sign-in ---------------------------------------------------

    def channel(self, target: str) -> grpc.aio.Channel:
        if target not in self._channels:
            self._channels[target] = open_channel(target, tls=self.tls)
        return self._channels[target]

    def use_game(self, target: str) -> None:
        """Play on `target`; empty means the server we signed in at serves games too."""
        self.game_target = self.game_override or target or self.server

    @property
    def auth(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token}"),)

    @property
    def matchmaker(self) -> matchmaker_pb2_grpc.MatchmakerServiceAsyncStub:
        return matchmaker_pb2_grpc.MatchmakerServiceStub(self.channel(self.server))

    @property
    def game(self) -> game_pb2_grpc.GameServiceAsyncStub:
        return game_pb2_grpc.GameServiceStub(self.channel(self.game_target))

    @property
    def players(self) -> player_pb2_grpc.PlayerServiceStub:
        """Profiles, finished games, replays, leaderboards: served by the game service."""
        return player_pb2_grpc.PlayerServiceStub(self.channel(self.game_target))

    async def login(self) -> None:
        stub = auth_pb2_grpc.AuthServiceStub(self.channel(self.server))
        request = auth_pb2.LoginRequest(device_id=self.device_id, display_name=self.name)
        reply = await self._retry(lambda: stub.Login(request, timeout=CALL_TIMEOUT_S), self.server)
        self._signed_in(reply)
        if self._refresher is None:
            self._refresher = asyncio.create_task(self._keep_token_fresh())

    def _signed_in(self, reply: Any) -> None:
        self.player_id = reply.player_id
        self.token = reply.token
        self.expires_at = reply.expires_at.seconds or time.time() + 3600

    async def sign_in_again(self, stale: str) -> None:
        """Sign in afresh, ``stale`` having been refused: once for every call refused
        with it at the same time, and not at all if a newer token came meanwhile."""
        if self.token != stale:
            return
        if self._signing_in is None or self._signing_in.done():
            self._signing_in = asyncio.create_task(self.login())
        # Shielded: a caller given up on does not cancel the others' sign-in.
        await asyncio.shield(self._signing_in)

    async def _keep_token_fresh(self) -> None:
        """Refresh at four fifths of the token's life. A refresh refused (the token
        expired meanwhile, or the server no longer knows its secret) signs in again;
        one that did not get through is tried again sooner (at least 1 s apart)."""
        stub = auth_pb2_grpc.AuthServiceStub(self.channel(self.server))
        while True:
            left = self.expires_at - time.time()
            await asyncio.sleep(max(1.0, left * 0.8))
            used = self.token
            try:
                reply = await stub.Refresh(
                    auth_pb2.RefreshRequest(token=used),
                    metadata=self.auth,
                    timeout=CALL_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    with contextlib.suppress(Refusal, grpc.aio.AioRpcError):
                        await self.sign_in_again(used)
                continue
            if self.token == used:  # not replaced by a sign-in meanwhile
                self._signed_in(reply)

    async def close(self) -> None:
        for task in (self._refresher, self._signing_in):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Refusal, grpc.aio.AioRpcError):
                    await task
        if self._owns_channels:
            for channel in self._channels.values():
                await channel.close()
            self._channels.clear()

    # --- calls ------------------------------------------------------------------

    async def waited_out(self, refused: Refusal, since: float) -> bool:
        """For a RATE_LIMITED or SERVER_FULL refusal: sleep as long as the server
        asked, and True, while calls have been turned away for less than
        `give_up_after` (since ``since``). False at once for any other refusal,
        or past that bound."""
        pause = rate_limited_for(refused)
        if pause is None or time.monotonic() + pause - since > self.give_up_after:
            return False
        self.on_rate_limited()
        if (
            refused.reason == ServiceReason.SERVER_FULL
        ):  # a wait of seconds: say why nothing happens
            self.notify("The game is very busy right now: trying again in a few seconds…")
        await asyncio.sleep(pause)  # not an outage: no warning
        return True

    async def _retry(self, attempt: Callable[[], Any], target: str) -> Any:
        """Run a call to ``target`` that is safe to repeat until it answers or the
        outage lasts too long."""
        backoff = Backoff()
        started = time.monotonic()
        warned = renewed = False
        closed = 0
        while True:
            used = self.token
            try:
                reply = await attempt()
            except grpc.aio.AioRpcError as error:
                refused = Refusal.of_call(error)
                # A server that answered before is away; one never reached may not
                # speak TLS, or speak only TLS (closing plaintext connections at once).
                if self.tls and target not in self._reached:
                    failed = tls_failure(refused, target)
                    if failed is not None:
                        raise failed from None
                elif target not in self._reached and closed_at_once(refused):
                    closed += 1
                    if closed >= CLOSED_AT_ONCE_TRIES:
                        raise plaintext_failure(target) from None
                    await backoff.wait()  # not told as an outage: it may be none
                    continue
                if refused.code == grpc.StatusCode.UNAUTHENTICATED and self.token:
                    # TOKEN_EXPIRED or TOKEN_INVALID: sign in again and retry. A token
                    # refused even fresh (servers restarting one after the other with
                    # a new secret) is renewed again after a pause, for a while.
                    if renewed:
                        if time.monotonic() - started > self.give_up_after:
                            raise refused from None
                        await backoff.wait()
                    renewed = True
                    await self.sign_in_again(used)
                    continue
                if await self.waited_out(refused, started):
                    continue
                if refused.code not in RETRYABLE:
                    raise refused from None
                if time.monotonic() - started > self.give_up_after:
                    raise refused from None
                if not warned and not closed:  # (closed: a TLS server, more likely)
                    self.notify(f"Cannot reach {target}: trying again…")
                    warned = True
                await backoff.wait()
                continue
            if warned:
                self.notify("Connection back.")
            self._reached.add(target)
            return reply

    async def call(self, method: str, request: Message) -> Any:
        """A game-service call; retried on outages (reads, or actions with a request id)."""
        stub = getattr(self.game, method)
        return await self._retry(
            lambda: stub(request, metadata=self.auth, timeout=CALL_TIMEOUT_S), self.game_target
        )

    async def call_matchmaker(self, method: str, request: Message) -> Any:
        stub = getattr(self.matchmaker, method)
        return await self._retry(
            lambda: stub(request, metadata=self.auth, timeout=CALL_TIMEOUT_S), self.server
        )

    async def call_players(self, method: str, request: Message) -> Any:
        """A PlayerService call (all reads but a rename, which is safe to repeat)."""
        stub = getattr(self.players, method)
        return await self._retry(
            lambda: stub(request, metadata=self.auth, timeout=CALL_TIMEOUT_S), self.game_target
        )

    async def act(self, method: str, request: Any) -> Any:
        """One player action, made idempotent by a fresh request id kept across retries."""
        if not request.request_id:
            request.request_id = str(uuid.uuid4())
        return await self.call(method, request)

    async def view(self, table_id: str) -> table_pb2.TableView:
        reply = await self.call("GetTable", game_pb2.GetTableRequest(table_id=table_id))
        view: table_pb2.TableView = reply.view
        return view

    # --- the event stream ----------------------------------------------------------

    async def watch(
        self, table_id: str, after_seq: int
    ) -> AsyncIterator[table_pb2.TableEvent | table_pb2.TableView]:
        """Every event after `after_seq`, across reconnects, until the game ends.

        Yields a fresh `TableView` instead when the stream had to start again from
        a snapshot, and while reconnecting (so the screen is up to date at once).
        A stream that keeps failing without delivering anything, or whose token is
        refused even right after a fresh sign-in, is given up (see `Resume`)."""
        position = after_seq
        backoff = Backoff()
        resume = Resume(self.notify, self.give_up_after, self.game_target, self.server)
        while True:
            opened_with = self.token
            call = self.game.Watch(
                game_pb2.WatchRequest(table_id=table_id, after_seq=position), metadata=self.auth
            )
            resume.opened(position)
            try:
                async for reply in call:
                    backoff.reset()
                    resume.healthy()
                    resume.limited_at = None
                    position = reply.event.seq
                    yield reply.event
                return
            except grpc.aio.AioRpcError as error:
                refused = Refusal.of_call(error)
            finally:
                call.cancel()
                resume.closed()
            if (
                refused.code == grpc.StatusCode.OUT_OF_RANGE
                and refused.reason == ServiceReason.SEQ_AHEAD
            ):
                view = await self.view(table_id)
                position = view.last_seq
                yield view
                continue
            if await resume.handled(
                refused, self, refreshed=self.token != opened_with, pause=backoff.wait
            ):
                continue  # signed in again, or waited out: open it again, from `position`
            resume.failed(refused, "Connection to the table lost: reconnecting…")
            await backoff.wait()
            asked_with = self.token
            try:
                looked = await self.game.GetTable(
                    game_pb2.GetTableRequest(table_id=table_id),
                    metadata=self.auth,
                    timeout=CALL_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                again = Refusal.of_call(error)
                if again.code == grpc.StatusCode.UNAUTHENTICATED:
                    # The servers came back with another secret: a new sign-in, then
                    # the stream (as the stream's own refusal would).
                    await resume.sign_in_again(
                        again,
                        refreshed=self.token != asked_with,
                        login=functools.partial(self.sign_in_again, asked_with),
                        pause=backoff.wait,
                    )
                    continue
                if again.code in STREAM_RETRYABLE or rate_limited_for(again) is not None:
                    continue  # the stream's own loop waits (or gives up) as it should
                raise again from None
            if resume.fresh(looked.view):
                yield looked.view
