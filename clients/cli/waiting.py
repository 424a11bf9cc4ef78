"""Waiting for a table: a quick-match queue, or a private table hosted or joined
with an invite code. Each wait follows its stream to the match, across a
dropped stream where that makes sense.

The matchmaker cancels a ticket whose stream closed, so a wait that reconnects
first asks what became of its ticket (matched meanwhile: that is the table),
then queues again, replacing the ticket if it is still live. A stream that
keeps failing, or whose token is refused even right after a fresh sign-in, is
given up after the connection's usual wait, saying why; the player is told
once that the matchmaker is lost, and once that it is back (see `Resume`).

A player the matchmaker still sees seated (ALREADY_SEATED) is sent back to that
table when they queue (`rummy play`); `host` and `join` stop instead, saying so,
since that is not what was asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .cards import plural
from .channels import Backoff
from .connection import CALL_TIMEOUT_S, Connection
from .identity import Identity, LastMatch
from .invocation import command_line
from .matchmaking import QueueChoice, Say, remember, seat_kept
from .refusals import ClientReason
from .resume import Followed, Resume

BOTS_AFTER_MS = 300
"""With --bots, how long to wait for people before bots take the empty seats."""
MATCHING_WAIT_S = 1.0
"""How long to let a ticket being seated finish before queueing again."""
HOSTING = "host a new table"
"""What `rummy host` asks for, as a seat kept elsewhere refuses it (`seat_kept`)."""
LOST = "Lost the matchmaker: reconnecting…"
WAIT = Followed(
    "matchmaker",
    "the stream of this wait",
    "stopped waiting for a table",
    "Reconnected to the matchmaker: waiting again.",
    "The matchmaker refused the sign-in: trying again…",
)


def joining(code: str) -> str:
    """What `rummy join CODE` asks for (see `HOSTING`)."""
    return f"join table {code.strip().upper()}"


async def _not_a_private_table(conn: Connection, ticket_id: str) -> None:
    """Refuse to replace a live ticket of this player's that waits at a private table."""
    reply = await conn.call_matchmaker("GetTicket", mm.GetTicketRequest(ticket_id=ticket_id))
    code = reply.ticket.invite_code
    if code and reply.ticket.state == mm.TICKET_STATE_QUEUED:
        raise Refusal(
            grpc.StatusCode.FAILED_PRECONDITION,
            ClientReason.PRIVATE_TABLE_OPEN,
            f"You are already waiting at private table {code} on another client. Friends join"
            " it from their own device (or another --config-dir); stop that client first"
            " to queue here.",
        )


@dataclass(slots=True)
class _Wait:
    """One kind of waiting stream: how it is opened, and what the player is told."""

    stream: Callable[[], Any]
    """Opens the stream (again after a drop): a `grpc.aio` call."""
    queued: Callable[[mm.Ticket], str]
    """The sentence when the ticket is first queued."""
    progress: Callable[[mm.QueueProgress], int]
    """The number worth telling the player again when it changes."""
    progress_text: Callable[[int], str]
    again: bool = True
    """A dropped stream is opened again; otherwise (a hosted table, which closes
    with its stream) the wait ends with an error once the ticket was made."""
    instead: str = ""
    """What `host` or `join` asks for, refused while the player keeps a seat at a
    table still in play; empty (a quick match): the player goes back to that seat."""


async def _wait(conn: Connection, identity: Identity, wait: _Wait, say: Say) -> LastMatch:
    """Follow a waiting stream to its match; survives a dropped stream if `wait.again`
    (until `Resume` gives it up)."""
    backoff = Backoff()
    resume = Resume(say, conn.give_up_after, conn.server, conn.server, WAIT)
    ticket_id = ""  # the ticket the stream last followed (a reconnect makes another)
    told = -1
    replaced = False
    while True:
        opened_with = conn.token
        call = wait.stream()
        resume.opened()
        try:
            async for update in call:
                resume.limited_at = None
                which = update.WhichOneof("update")
                if which == "ticket" and update.ticket.state == mm.TICKET_STATE_QUEUED:
                    # The matchmaker answers, but only what comes next shows that
                    # the stream works: a stream failing after each ticket is an outage.
                    resume.answered = True
                    if update.ticket.ticket_id != ticket_id:
                        if not ticket_id:
                            say(wait.queued(update.ticket))
                        ticket_id = update.ticket.ticket_id
                        identity.remember_match(LastMatch(conn.server, "", -1, "", ticket_id))
                elif which == "ticket" and update.ticket.state != mm.TICKET_STATE_MATCHED:
                    raise Refusal(
                        grpc.StatusCode.ABORTED,
                        ClientReason.TICKET_ENDED,
                        update.ticket.end_message or "The matchmaker gave up on this ticket.",
                    )
                elif which == "progress":
                    backoff.reset()
                    resume.healthy()
                    if wait.progress(update.progress) != told:
                        told = wait.progress(update.progress)
                        say(wait.progress_text(told))
                elif which == "match":
                    return remember(identity, conn, update.match, ticket_id)
            refused = Refusal(grpc.StatusCode.UNKNOWN, "", "the stream ended without a table")
        except grpc.aio.AioRpcError as error:
            refused = Refusal.of_call(error)
        finally:
            call.cancel()
            resume.closed()
        if refused.reason == ServiceReason.ALREADY_SEATED and refused.metadata.get("table_id"):
            table = refused.metadata["table_id"]
            # Seated by this wait's own ticket, matched while its stream was down?
            match = await _matched(conn, ticket_id, resume)
            if match is not None and match.table_id == table:
                return remember(identity, conn, match, ticket_id)
            if wait.instead:
                raise seat_kept(conn, identity, table, wait.instead)
            say(f"You are already seated at table {table}: going back to it.")
            known = refused.metadata.get("game_target", "")
            return LastMatch(conn.server, table, -1, known, "")
        live = refused.metadata.get("ticket_id", "")
        own = bool(ticket_id) and live == ticket_id
        if refused.reason == ServiceReason.TICKET_EXISTS and (own or not replaced):
            # This wait's own ticket, its dropped stream not seen closed yet; or one
            # left by a client stopped a moment ago: this wait replaces it. Not
            # another's private table's: friends may be joining it, from this
            # device's other client (a host here and a join there would close it).
            if not own:
                await _not_a_private_table(conn, live)
            try:
                await conn.call_matchmaker("Cancel", mm.CancelRequest(ticket_id=live))
            except Refusal as late:
                if late.reason != ServiceReason.TICKET_MATCHING:
                    raise
                await _being_seated(say)
                continue
            replaced = replaced or not own
            continue
        if refused.reason == ServiceReason.TICKET_MATCHING:  # the ticket a new one would replace
            await _being_seated(say)
            continue
        if await resume.handled(
            refused, conn, refreshed=conn.token != opened_with, pause=backoff.wait
        ):
            continue  # signed in again, or turned away before any ticket was made
        # The stream dropped: the ticket may have been matched in the meantime.
        match = await _matched(conn, ticket_id, resume)
        if match is not None:
            return remember(identity, conn, match, ticket_id)
        if ticket_id and not wait.again:
            identity.forget_match()
            raise Refusal(
                grpc.StatusCode.UNAVAILABLE,
                ClientReason.TABLE_CLOSED,
                "Lost the matchmaker, and with it the private table: host a new one.",
            )
        resume.failed(refused, LOST)
        await backoff.wait()


async def _matched(conn: Connection, ticket_id: str, resume: Resume) -> mm.Match | None:
    """The match of ``ticket_id`` if it was matched (while its stream was down).
    Asked once, not retried: the wait's own loop tries again (or gives up)."""
    if not ticket_id:
        return None
    try:
        reply = await conn.matchmaker.GetTicket(
            mm.GetTicketRequest(ticket_id=ticket_id), metadata=conn.auth, timeout=CALL_TIMEOUT_S
        )
    except grpc.aio.AioRpcError:
        return None
    resume.answered = True
    if reply.ticket.state != mm.TICKET_STATE_MATCHED:
        return None
    match: mm.Match = reply.ticket.match
    return match


async def _being_seated(say: Say) -> None:
    """The last ticket is being seated and cannot be replaced: queueing again in a
    moment finds its table (ALREADY_SEATED), or queues anew if it was not made."""
    say("Your last ticket is being seated: joining that table…")
    await asyncio.sleep(MATCHING_WAIT_S)


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
        bot_level=choice.bot_level_message(),
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
        bot_level=choice.bot_level_message(),
    )

    def queued(ticket: mm.Ticket) -> str:
        # The friends' own command: the servers this host reached, as reached from here.
        friends = command_line(
            "join", ticket.invite_code, server=conn.server, tls=conn.tls, game=conn.game_override
        )
        return (
            f"Private {choice.words()} open. Invite code: {ticket.invite_code}\n"
            f"  Friends join with: {friends}\n"
            "  Keep this running: stopping it closes the table."
        )

    wait = _Wait(
        stream=lambda: conn.matchmaker.CreatePrivateTable(request, metadata=conn.auth),
        queued=queued,
        progress=lambda progress: progress.seats_taken,
        progress_text=lambda taken: f"  {taken} of {choice.players} seats taken…",
        again=False,
        instead=HOSTING,
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
        progress_text=lambda taken: f"  {plural(taken, 'seat')} taken…",
        instead=joining(code),
    )
    return await _wait(conn, identity, wait, say)
