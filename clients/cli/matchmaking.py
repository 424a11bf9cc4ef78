"""Finding a seat: the table this device keeps a seat at, or the one a match
names (waiting for a match is `waiting`'s job).

A client that was stopped mid-game comes back to the same table: the config
folder remembers the last ticket and table, `GetTicket` says what became of a
ticket whose stream was cut, and a player the matchmaker still sees seated
(ALREADY_SEATED) is sent back to that table. A game that ended meanwhile is
told, with its result, before anything else. Where the game service is comes
from the match; failing that, from the config folder, then the default address
beside the matchmaker; the player is told which, and `--game` overrides all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .connection import Connection
from .identity import Identity, LastMatch, default_config_dir
from .invocation import command_line
from .options import describe
from .refusals import RETRYABLE, ClientReason
from .render import game_text

DEFAULT_GAME_PORT = 50051
"""Where a game service listens by default (RUMMY_GAME_LISTEN), beside its matchmaker."""
LOOK_GIVE_UP_S = 10.0
"""How long a game address that is only a guess (a remembered or default one) is
tried before the next one: a stale address must not hold the player for a minute."""


Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class QueueChoice:
    players: int = 2
    ruleset: str = "cafe"
    bots: bool = False
    options: table_pb2.TableOptions = field(default_factory=table_pb2.TableOptions)
    bot_level: str = "normal"
    """How well bots play, if bots take seats: easy, normal or strong."""

    def bot_level_message(self) -> table_pb2.BotLevel.ValueType:
        return table_pb2.BotLevel.Value(f"BOT_LEVEL_{self.bot_level.upper()}")

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
        except Refusal as refused:
            if refused.code == grpc.StatusCode.UNIMPLEMENTED:
                return f"{where} is not a game service"
            if refused.code in RETRYABLE:
                return f"no game service answers at {where}"
            if refused.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return f"the game service at {where} has no such table"
            if refused.reason == ClientReason.TLS_HANDSHAKE_FAILED:
                return f"the game service at {where} did not answer TLS"
            if refused.reason == ClientReason.PLAINTEXT_REFUSED:
                return f"the game service at {where} answers only TLS"
            raise


def _guesses(conn: Connection, identity: Identity, known: str) -> list[str]:
    """Where to look for a table: the address known for it, else the one remembered
    for this matchmaker, then the default beside it (`--game` replaces them all)."""
    if conn.game_override:
        return [conn.game_override]
    found = [known] if known else [identity.game_target(conn.server)]
    found.append(default_game_target(conn.server))
    return list(dict.fromkeys(t for t in found if t))


async def kept_table(
    conn: Connection, identity: Identity, say: Say
) -> tuple[LastMatch, table_pb2.TableView] | None:
    """The unfinished table this device keeps a seat at through this server, if any.
    A table that cannot be reached is forgotten, and the player told; so is one the
    player is done with, with its final result when its game is over."""
    last = identity.last_match(conn.server)
    if last is None:
        return None
    if not last.table_id and last.ticket_id:
        try:
            reply = await conn.call_matchmaker(
                "GetTicket", mm.GetTicketRequest(ticket_id=last.ticket_id)
            )
        except Refusal:
            reply = None
        if reply is None or reply.ticket.state != mm.TICKET_STATE_MATCHED:
            identity.forget_match()
            return None
        last = remember(identity, conn, reply.ticket.match, last.ticket_id)
    found = await _find(conn, identity, last.table_id, last.game_target, say)
    if isinstance(found, list):
        identity.forget_match()
        say(f"Could not rejoin your last table {last.table_id}: {'; '.join(found)}. Forgot it.")
        return None
    target, view = found
    if not still_playing(view):
        identity.forget_match()
        gone = done_with(view)
        if gone:
            say(gone)
        return None
    return remember(identity, conn, _match(view, target), last.ticket_id), view


def done_with(view: table_pb2.TableView) -> str:
    """What became of a table the player no longer plays at: the game's result
    when it is over, else how they came to be out of it (empty: never seated)."""
    if view.phase == table_pb2.PHASE_GAME_OVER:
        return f"While you were away, your game at table {view.table_id} ended.\n{game_text(view)}"
    if not view.HasField("my_seat"):
        return ""
    seat = view.seats[view.my_seat]
    if seat.status == table_pb2.SEAT_STATUS_ELIMINATED:
        how = f"you were eliminated with {seat.score_total} points"
    else:
        how = "you left it"
    return f"Your last table {view.table_id} plays on without you: {how}."


async def resume(
    conn: Connection, identity: Identity, say: Say
) -> tuple[LastMatch, table_pb2.TableView] | None:
    """The kept table (see `kept_table`), the player told they are going back to it."""
    found = await kept_table(conn, identity, say)
    if found is not None:
        last, view = found
        say(f"Rejoining your table {last.table_id} (seat {view.my_seat + 1}).")
    return found


def seat_kept(conn: Connection, identity: Identity, table_id: str, instead: str) -> Refusal:
    """The refusal of `host` or `join` (``instead``: what was asked, "host a new
    table") while the player keeps a seat at a table still in play: the matchmaker
    seats nobody twice, and going back there unasked is not what they wanted."""
    config_dir = identity.folder if identity.folder != default_config_dir() else None
    back = command_line(
        "play",
        server=conn.server,
        tls=conn.tls,
        game=conn.game_override,
        config_dir=config_dir,
    )
    return Refusal(
        grpc.StatusCode.FAILED_PRECONDITION,
        ServiceReason.ALREADY_SEATED,
        f"You already have a seat at table {table_id}, and its game is still in play:"
        f" finish it, or leave it, before you {instead}.\n"
        f"  Go back to it with `{back}`, and type q there to leave it for good.",
    )


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
        except Refusal as refused:
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
        raise Refusal(
            grpc.StatusCode.FAILED_PRECONDITION,
            ClientReason.GAME_SERVICE_NOT_FOUND,
            f"You are seated at table {match.table_id}, but {'; '.join(found)}. "
            "Pass the game service's address with --game HOST:PORT.",
        )
    target, view = found
    remember(identity, conn, _match(view, target), match.ticket_id)
    return view


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


def remember(identity: Identity, conn: Connection, match: mm.Match, ticket: str) -> LastMatch:
    """Keep the match in the config folder (the seat, and where its game is served)."""
    target = match.game_target or conn.server
    found = LastMatch(conn.server, match.table_id, match.seat, target, ticket)
    identity.remember_match(found)
    return found
