"""Finding a seat: rejoin the table this device was playing at, or wait for one
(a quick-match queue, or a private table hosted or joined with an invite code).

A client that was stopped mid-game comes back to the same table: the config
folder remembers the last ticket and table, `GetTicket` says what became of a
ticket whose stream was cut, and a player the matchmaker still sees seated
(ALREADY_SEATED) is sent back to that table. Where the game service is comes
from the match; failing that, from the config folder, then the default address
beside the matchmaker; the player is told which, and `--game` overrides all.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2

from .connection import (
    RETRYABLE,
    STREAM_RETRYABLE,
    Backoff,
    Connection,
    Refused,
    rate_limited_for,
    refusal,
)
from .identity import Identity, LastMatch
from .options import describe

BOTS_AFTER_MS = 300
"""With --bots, how long to wait for people before bots take the empty seats."""
DEFAULT_GAME_PORT = 50051
"""Where a game service listens by default (RUMMY_GAME_LISTEN), beside its matchmaker."""
MATCHING_WAIT_S = 1.0
"""How long to let a ticket being seated finish before queueing again."""
LOOK_GIVE_UP_S = 10.0
"""How long a game address that is only a guess (a remembered or default one) is
tried before the next one: a stale address must not hold the player for a minute."""

GAME_SERVICE_NOT_FOUND = "GAME_SERVICE_NOT_FOUND"
PRIVATE_TABLE_OPEN = "PRIVATE_TABLE_OPEN"
"""The client's own reason: no game service it could reach serves the player's table."""

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class QueueChoice:
    players: int = 2
    ruleset: str = "cafe"
    bots: bool = False
    options: table_pb2.TableOptions = field(default_factory=table_pb2.TableOptions)

    def words(self) -> str:
        """`2-player cafe table`, with any options chosen."""
        chosen = describe(self.options)
        return f"{self.players}-player {self.ruleset} table" + (f" ({chosen})" if chosen else "")


def still_playing(view: table_pb2.TableView) -> bool:
    """Seated at this table, still playing, and the game not over."""
    if not view.HasField("my_seat") or view.phase == table_pb2.PHASE_GAME_OVER:
        return False
    return view.seats[view.my_seat].status == table_pb2.SEAT_STATUS_PLAYING


def default_game_target(server: str) -> str:
    """The game service's default address beside the matchmaker at ``server``."""
    host = server.rpartition(":")[0] or server
    return f"{host}:{DEFAULT_GAME_PORT}"


@contextlib.contextmanager
def _briefly(conn: Connection) -> Iterator[None]:
    """Calls give up after `LOOK_GIVE_UP_S`, without "connection lost" notes."""
    saved = conn.give_up_after, conn.notify
    conn.give_up_after, conn.notify = LOOK_GIVE_UP_S, lambda _text: None
    try:
        yield
    finally:
        conn.give_up_after, conn.notify = saved


async def _look(conn: Connection, table_id: str, target: str) -> table_pb2.TableView | str:
    """The table as the game service at ``target`` shows it, or why not (a phrase)."""
    conn.use_game(target)
    where = conn.game_target
    with _briefly(conn):
        try:
            return await conn.view(table_id)
        except Refused as refused:
            if refused.code == grpc.StatusCode.UNIMPLEMENTED:
                return f"{where} is not a game service"
            if refused.code in RETRYABLE:
                return f"no game service answers at {where}"
            if refused.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return f"the game service at {where} has no such table"
            raise


def _guesses(conn: Connection, identity: Identity, known: str) -> list[str]:
    """Where to look for a table: the address known for it, else the one remembered
    for this matchmaker, then the default beside it (`--game` replaces them all)."""
    if conn.game_override:
        return [conn.game_override]
    found = [known] if known else [identity.game_target(conn.server)]
    found.append(default_game_target(conn.server))
    return list(dict.fromkeys(t for t in found if t))


async def resume(
    conn: Connection, identity: Identity, say: Say
) -> tuple[LastMatch, table_pb2.TableView] | None:
    """The unfinished table this device was seated at through this server, if any.
    A table that cannot be reached is forgotten, and the player told."""
    last = identity.last_match(conn.server)
    if last is None:
        return None
    if not last.table_id and last.ticket_id:
        try:
            reply = await conn.call_matchmaker(
                "GetTicket", mm.GetTicketRequest(ticket_id=last.ticket_id)
            )
        except Refused:
            reply = None
        if reply is None or reply.ticket.state != mm.TICKET_STATE_MATCHED:
            identity.forget_match()
            return None
        last = _remember(identity, conn, reply.ticket.match, last.ticket_id)
    found = await _find(conn, identity, last.table_id, last.game_target, say)
    if isinstance(found, list):
        identity.forget_match()
        say(f"Could not rejoin your last table {last.table_id}: {'; '.join(found)}. Forgot it.")
        return None
    target, view = found
    if not still_playing(view):
        identity.forget_match()
        return None
    last = _remember(identity, conn, _match(view, target), last.ticket_id)
    say(f"Rejoining your table {last.table_id} (seat {view.my_seat + 1}).")
    return last, view


async def open_table(
    conn: Connection, identity: Identity, match: LastMatch, say: Say
) -> table_pb2.TableView:
    """The view of the table just found, from the game service that serves it.

    A match names its game service. A player sent back to their table
    (ALREADY_SEATED: no seat known yet) tries the address the matchmaker named,
    if any, then the guesses in turn: that address may answer only inside the
    cluster."""
    if match.game_target and match.seat >= 0:
        conn.use_game(match.game_target)
        try:
            return await conn.view(match.table_id)
        except Refused as refused:
            if refused.code == grpc.StatusCode.UNIMPLEMENTED:
                why = f"{conn.game_target} is not a game service"
            elif refused.code in RETRYABLE:
                why = f"no game service answers at {conn.game_target}"
            else:
                raise
            found: tuple[str, table_pb2.TableView] | list[str] = [why]
    else:
        found = await _find(conn, identity, match.table_id, match.game_target, say)
    if isinstance(found, list):
        raise Refused(
            grpc.StatusCode.FAILED_PRECONDITION,
            GAME_SERVICE_NOT_FOUND,
            f"You are seated at table {match.table_id}, but {'; '.join(found)}. "
            "Pass the game service's address with --game HOST:PORT.",
        )
    target, view = found
    _remember(identity, conn, _match(view, target), match.ticket_id)
    return view


async def _not_a_private_table(conn: Connection, ticket_id: str) -> None:
    """Refuse to replace a live ticket of this player's that waits at a private table."""
    reply = await conn.call_matchmaker("GetTicket", mm.GetTicketRequest(ticket_id=ticket_id))
    code = reply.ticket.invite_code
    if code and reply.ticket.state == mm.TICKET_STATE_QUEUED:
        raise Refused(
            grpc.StatusCode.FAILED_PRECONDITION,
            PRIVATE_TABLE_OPEN,
            f"You are already waiting at private table {code} on another client. Friends join"
            " it from their own device (or another --config-dir); stop that client first"
            " to queue here.",
        )


async def _find(
    conn: Connection, identity: Identity, table_id: str, known: str, say: Say
) -> tuple[str, table_pb2.TableView] | list[str]:
    """The game address serving the table and its view, or why each place tried failed.
    Every guess is told to the player, but not a known address tried first."""
    reasons: list[str] = []
    for target in _guesses(conn, identity, known):
        if reasons or not known:
            say(f"Looking for your table at the game service {target}…")
        found = await _look(conn, table_id, target)
        if isinstance(found, str):
            reasons.append(found)
            continue
        return target, found
    return reasons


def _match(view: table_pb2.TableView, target: str) -> mm.Match:
    return mm.Match(table_id=view.table_id, seat=view.my_seat, game_target=target)


def _remember(identity: Identity, conn: Connection, match: mm.Match, ticket: str) -> LastMatch:
    target = match.game_target or conn.server
    found = LastMatch(conn.server, match.table_id, match.seat, target, ticket)
    identity.remember_match(found)
    return found


# --- waiting for a table ------------------------------------------------------------


@dataclass(slots=True)
class _Wait:
    """One kind of waiting stream: how it is opened, and what the player is told."""

    stream: Callable[[], AsyncIterator[Any]]
    """Opens the stream (again after a drop)."""
    queued: Callable[[mm.Ticket], str]
    """The sentence when the ticket is first queued."""
    progress: Callable[[mm.QueueProgress], int]
    """The number worth telling the player again when it changes."""
    progress_text: Callable[[int], str]
    again: bool = True
    """A dropped stream is opened again; otherwise (a hosted table, which closes
    with its stream) the wait ends with an error once the ticket was made."""


async def _wait(conn: Connection, identity: Identity, wait: _Wait, say: Say) -> LastMatch:
    """Follow a waiting stream to its match; survives a dropped stream if `wait.again`."""
    backoff = Backoff()
    ticket_id = ""
    told = -1
    replaced = False
    limited_at: float | None = None
    while True:
        try:
            async for update in wait.stream():
                backoff.reset()
                limited_at = None
                which = update.WhichOneof("update")
                if which == "ticket" and update.ticket.state == mm.TICKET_STATE_QUEUED:
                    if not ticket_id:
                        ticket_id = update.ticket.ticket_id
                        identity.remember_match(LastMatch(conn.server, "", -1, "", ticket_id))
                        say(wait.queued(update.ticket))
                elif which == "ticket" and update.ticket.state != mm.TICKET_STATE_MATCHED:
                    raise Refused(
                        grpc.StatusCode.ABORTED,
                        "TICKET_ENDED",
                        update.ticket.end_message or "The matchmaker gave up on this ticket.",
                    )
                elif which == "progress" and wait.progress(update.progress) != told:
                    told = wait.progress(update.progress)
                    say(wait.progress_text(told))
                elif which == "match":
                    return _remember(identity, conn, update.match, ticket_id)
        except grpc.aio.AioRpcError as error:
            refused = refusal(error)
            if refused.reason == "ALREADY_SEATED" and refused.metadata.get("table_id"):
                table = refused.metadata["table_id"]
                say(f"You are already seated at table {table}: going back to it.")
                known = refused.metadata.get("game_target", "")
                return LastMatch(conn.server, table, -1, known, "")
            if refused.reason == "TICKET_EXISTS" and not replaced:
                # A ticket left by a client stopped a moment ago: this wait replaces it.
                # Not a private table's: friends may be joining it, from this device's
                # other client (a host here and a join there would close it).
                live = refused.metadata.get("ticket_id", "")
                await _not_a_private_table(conn, live)
                try:
                    await conn.call_matchmaker("Cancel", mm.CancelRequest(ticket_id=live))
                except Refused as late:
                    if late.reason != "TICKET_MATCHING":
                        raise
                    # That ticket is being seated: queueing again soon finds its table.
                    say("Your last ticket is being seated: joining that table…")
                    await asyncio.sleep(MATCHING_WAIT_S)
                    continue
                replaced = True
                continue
            if refused.code == grpc.StatusCode.UNAUTHENTICATED:
                await conn.login()
                continue
            if rate_limited_for(refused) is not None:
                limited_at = limited_at or time.monotonic()
                if await conn.waited_out(refused, limited_at):
                    continue  # turned away before any ticket was made
            if refused.code not in STREAM_RETRYABLE:
                raise refused from None
        # The stream dropped: the ticket may have been matched in the meantime.
        if ticket_id:
            try:
                reply = await conn.call_matchmaker(
                    "GetTicket", mm.GetTicketRequest(ticket_id=ticket_id)
                )
                if reply.ticket.state == mm.TICKET_STATE_MATCHED:
                    return _remember(identity, conn, reply.ticket.match, ticket_id)
            except Refused:
                pass
        if ticket_id and not wait.again:
            identity.forget_match()
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "TABLE_CLOSED",
                "Lost the matchmaker, and with it the private table: host a new one.",
            )
        say("Lost the matchmaker: waiting again…")
        await backoff.wait()


async def queue(
    conn: Connection,
    identity: Identity,
    choice: QueueChoice,
    say: Say,
) -> LastMatch:
    """Queue for a quick match and wait for it; survives a dropped stream."""
    request = mm.EnqueueRequest(
        table_size=choice.players,
        ruleset=choice.ruleset,
        options=choice.options,
        replace_existing=True,
        fill_with_bots_after_ms=BOTS_AFTER_MS if choice.bots else 0,
    )
    with_bots = " (bots fill the empty seats)" if choice.bots else ""
    wait = _Wait(
        stream=lambda: conn.matchmaker.Enqueue(request, metadata=conn.auth),
        queued=lambda _ticket: f"Looking for a {choice.words()}{with_bots}…",
        progress=lambda progress: progress.players_waiting,
        progress_text=lambda waiting: f"  {waiting} waiting in this queue…",
    )
    return await _wait(conn, identity, wait, say)


async def host(
    conn: Connection, identity: Identity, choice: QueueChoice, bots_after_ms: int, say: Say
) -> LastMatch:
    """Open a private table, tell the invite code, and wait until every seat is taken."""
    request = mm.CreatePrivateTableRequest(
        table_size=choice.players,
        ruleset=choice.ruleset,
        options=choice.options,
        fill_with_bots_after_ms=bots_after_ms,
    )

    def queued(ticket: mm.Ticket) -> str:
        return (
            f"Private {choice.words()} open. Invite code: {ticket.invite_code}\n"
            f"  Friends join with: rummy join {ticket.invite_code}\n"
            "  Keep this running: stopping it closes the table."
        )

    wait = _Wait(
        stream=lambda: conn.matchmaker.CreatePrivateTable(request, metadata=conn.auth),
        queued=queued,
        progress=lambda progress: progress.seats_taken,
        progress_text=lambda taken: f"  {taken} of {choice.players} seats taken…",
        again=False,
    )
    return await _wait(conn, identity, wait, say)


async def join(conn: Connection, identity: Identity, code: str, say: Say) -> LastMatch:
    """Take a seat at a friend's private table and wait for it to fill."""
    request = mm.JoinPrivateTableRequest(invite_code=code)

    def queued(ticket: mm.Ticket) -> str:
        size = ticket.table_size
        return f"Seated at the private {size}-player {ticket.ruleset} table {code.upper()}…"

    wait = _Wait(
        stream=lambda: conn.matchmaker.JoinPrivateTable(request, metadata=conn.auth),
        queued=queued,
        progress=lambda progress: progress.seats_taken,
        progress_text=lambda taken: f"  {taken} seats taken…",
    )
    return await _wait(conn, identity, wait, say)
