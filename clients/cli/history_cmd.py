"""`rummy history`: the player's finished games, newest first, a page at a time:
when, rule set, result, rating change, who sat where with their totals, and the
table id that `rummy replay` takes. `--more` shows the page after the last one
shown (the server's page token is kept in the config folder, not printed)."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable

from services.common.pb.rummy.v1 import player_pb2, table_pb2

from .connection import Connection
from .identity import Identity
from .profile_cmd import day, local_time

WIDTH = 80
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}
ENDED = {
    table_pb2.END_REASON_WENT_OUT: "{winner} went out",
    table_pb2.END_REASON_TURN_CAP: "the turn cap was reached",
    table_pb2.END_REASON_BLOCKED: "the deal was blocked",
    table_pb2.END_REASON_ROUNDS_PLAYED: "every round was played",
    table_pb2.END_REASON_LAST_STANDING: "{winner} was the last standing",
    table_pb2.END_REASON_OTHERS_LEFT: "the others left",
    table_pb2.END_REASON_TARGET_REACHED: "the target was reached",
}


def ordinal(place: int) -> str:
    return ORDINALS.get(place, f"{place}th")


def result_text(game: player_pb2.PlayedGame) -> str:
    """`won`, `2nd of 3`; `, left` for a seat that left or was eliminated."""
    text = "won" if game.won else f"{ordinal(game.place)} of {len(game.seats)}"
    mine = game.seats[game.my_seat] if game.my_seat < len(game.seats) else None
    return text + (", left early" if mine is not None and mine.gone else "")


def rating_text(game: player_pb2.PlayedGame) -> str:
    """`+16.2 → 1516`; `unrated` (a table with bots); `rated` when the server kept
    no change for the game."""
    if not game.rated:
        return "unrated"
    if not game.HasField("rating_change"):
        return "rated"
    return f"{game.rating_change:+.1f} → {game.rating_after:.0f}"


def seat_text(game: player_pb2.PlayedGame, seat: player_pb2.GameSeat) -> str:
    name = seat.display_name or f"Seat {seat.seat + 1}"
    if seat.seat == game.my_seat:
        name += " (you)"
    elif seat.is_bot:
        name += " (bot)"
    return f"{name} {seat.total}" + (" (left)" if seat.gone else "")


def why_text(game: player_pb2.PlayedGame) -> str:
    winner = next((s for s in game.seats if s.place == 1), None)
    if winner is None:
        name = "nobody"
    elif winner.seat == game.my_seat:
        name = "you"
    else:
        name = winner.display_name or f"Seat {winner.seat + 1}"
    return ENDED.get(game.end_reason, "the game ended").format(winner=name)


def game_lines(game: player_pb2.PlayedGame, now: float) -> list[str]:
    """One game in lines of at most `WIDTH` columns."""
    when = local_time(game.finished_at).strftime("%Y-%m-%d %H:%M")
    head = f"{when}  {game.ruleset:<8}  {result_text(game)}"
    rating = rating_text(game)
    lines = [f"{head}{rating:>{max(len(rating) + 2, WIDTH - len(head))}}"]
    seats = " · ".join(seat_text(game, s) for s in game.seats)
    why = why_text(game)
    lines += textwrap.wrap(
        f"{seats} — {why}.",
        WIDTH,
        initial_indent="  ",
        subsequent_indent="    ",
        break_on_hyphens=False,
    )
    kept = ""
    if game.HasField("replay_until"):
        gone = game.replay_until.ToSeconds() < now
        kept = " · moves no longer kept" if gone else f" · replay until {day(game.replay_until)}"
    lines.append(f"  table {game.table_id}{kept}")
    return lines


def listing(server: str) -> str:
    """The key under which the next page of this listing is kept."""
    return f"history {server}"


async def history(
    conn: Connection,
    identity: Identity,
    *,
    limit: int,
    more: bool,
    say: Callable[[str], None] = print,
) -> int:
    """One page of the caller's games; with ``more``, the page after the last one
    shown (in the size that listing had)."""
    token = ""
    if more:
        kept = identity.next_page(listing(conn.server))
        if kept is None:
            say("No more games: the last listing showed the oldest. `rummy history` starts over.")
            return 0
        token, limit = kept
    request = player_pb2.ListGamesRequest(page_size=limit, page_token=token)
    reply: player_pb2.ListGamesResponse = await conn.call_players("ListGames", request)
    identity.keep_next_page(listing(conn.server), reply.next_page_token, limit)
    if not reply.games:
        say("No finished game yet: `rummy play` starts one.")
        return 0
    now = time.time()
    say("\n".join(line for game in reply.games for line in game_lines(game, now)))
    if reply.next_page_token:
        say("More: `rummy history --more`. A game move by move: `rummy replay TABLE`.")
    else:
        say("That is all. A game move by move: `rummy replay TABLE`.")
    return 0
