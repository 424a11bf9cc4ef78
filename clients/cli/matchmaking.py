"""Finding a seat: rejoin the table this device was playing at, or queue for one.

A client that was stopped mid-game comes back to the same table: the config
folder remembers the last ticket and table, `GetTicket` says what became of a
ticket whose stream was cut, and a player the matchmaker still sees seated
(ALREADY_SEATED) is sent back to that table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2

from .connection import (
    STREAM_RETRYABLE,
    Backoff,
    Connection,
    Refused,
    rate_limited_for,
    refusal,
)
from .identity import Identity, LastMatch

BOTS_AFTER_MS = 300
"""With --bots, how long to wait for people before bots take the empty seats."""


@dataclass(frozen=True, slots=True)
class QueueChoice:
    players: int = 2
    ruleset: str = "cafe"
    bots: bool = False
    turn_timer_ms: int = 0


def still_playing(view: table_pb2.TableView) -> bool:
    """Seated at this table, still playing, and the game not over."""
    if not view.HasField("my_seat") or view.phase == table_pb2.PHASE_GAME_OVER:
        return False
    return view.seats[view.my_seat].status == table_pb2.SEAT_STATUS_PLAYING


async def _rejoin(conn: Connection, match: LastMatch) -> table_pb2.TableView | None:
    conn.use_game(match.game_target)
    try:
        view = await conn.view(match.table_id)
    except Refused as refused:
        if refused.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            return None
        raise
    return view if still_playing(view) else None


async def resume(
    conn: Connection, identity: Identity, say: Callable[[str], None]
) -> tuple[LastMatch, table_pb2.TableView] | None:
    """The unfinished table this device was seated at through this server, if any."""
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
    view = await _rejoin(conn, last)
    if view is None:
        identity.forget_match()
        return None
    say(f"Rejoining your table {last.table_id} (seat {view.my_seat + 1}).")
    return last, view


def _remember(identity: Identity, conn: Connection, match: mm.Match, ticket: str) -> LastMatch:
    target = match.game_target or conn.server
    found = LastMatch(conn.server, match.table_id, match.seat, target, ticket)
    identity.remember_match(found)
    return found


async def queue(
    conn: Connection,
    identity: Identity,
    choice: QueueChoice,
    say: Callable[[str], None],
) -> LastMatch:
    """Queue for a quick match and wait for it; survives a dropped stream."""
    request = mm.EnqueueRequest(
        table_size=choice.players,
        ruleset=choice.ruleset,
        options=table_pb2.TableOptions(turn_timer_ms=choice.turn_timer_ms),
        replace_existing=True,
        fill_with_bots_after_ms=BOTS_AFTER_MS if choice.bots else 0,
    )
    backoff = Backoff()
    ticket_id = ""
    waiting = 1
    limited_at: float | None = None
    while True:
        try:
            async for update in conn.matchmaker.Enqueue(request, metadata=conn.auth):
                backoff.reset()
                limited_at = None
                which = update.WhichOneof("update")
                if which == "ticket" and update.ticket.state == mm.TICKET_STATE_QUEUED:
                    if not ticket_id:
                        ticket_id = update.ticket.ticket_id
                        identity.remember_match(LastMatch(conn.server, "", -1, "", ticket_id))
                        with_bots = " (bots fill the empty seats)" if choice.bots else ""
                        say(
                            f"Looking for a {choice.players}-player {choice.ruleset} "
                            f"table{with_bots}…"
                        )
                elif which == "ticket" and update.ticket.state != mm.TICKET_STATE_MATCHED:
                    raise Refused(
                        grpc.StatusCode.ABORTED,
                        "TICKET_ENDED",
                        update.ticket.end_message or "The matchmaker gave up on this ticket.",
                    )
                elif which == "progress" and update.progress.players_waiting != waiting:
                    waiting = update.progress.players_waiting
                    say(f"  {waiting} waiting in this queue…")
                elif which == "match":
                    return _remember(identity, conn, update.match, ticket_id)
        except grpc.aio.AioRpcError as error:
            refused = refusal(error)
            if refused.reason == "ALREADY_SEATED" and refused.metadata.get("table_id"):
                table = refused.metadata["table_id"]
                target = identity.game_target(conn.server) or conn.server
                say("You are already seated at a table: going back to it.")
                return _remember(identity, conn, mm.Match(table_id=table, game_target=target), "")
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
        say("Lost the matchmaker: queueing again…")
        await backoff.wait()
