"""`rummy top --rules cafe`: a rule set's best rated players, best first, a page at
a time, and the caller's own rank. `--more` shows the page after the last one
shown (its page token is kept in the config folder, not printed)."""

from __future__ import annotations

from collections.abc import Callable

from services.common.pb.rummy.v1 import player_pb2

from .cards import plural
from .connection import Connection
from .identity import Identity
from .profile_cmd import deviation_text

NAME_WIDTH = 28
HEADER = f"{'Rank':>6}  {'Player':<{NAME_WIDTH}}{'Rating':>8}{'±':>6}{'Games':>7}{'Wins':>6}"


def short(name: str, width: int = NAME_WIDTH) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def entry_line(entry: player_pb2.LeaderboardEntry, me: str) -> str:
    name = entry.display_name + (" (you)" if entry.player_id == me else "")
    return (
        f"{entry.rank:>6}  {short(name):<{NAME_WIDTH}}{entry.rating:>8.0f}"
        f"{deviation_text(entry.deviation):>6}{entry.rated_games:>7}{entry.wins:>6}"
    )


def my_rank_text(reply: player_pb2.GetLeaderboardResponse) -> str:
    if not reply.HasField("me"):
        return (
            f"You are not ranked in {reply.ruleset} yet: only games between people"
            " (no bots) are rated."
        )
    mine = reply.me
    games = plural(mine.rated_games, "rated game")
    return f"Your rank: {mine.rank}, rating {mine.rating:.0f} after {games}."


def board_lines(reply: player_pb2.GetLeaderboardResponse, me: str, *, first: bool) -> list[str]:
    """A page of the leaderboard in lines of at most 80 columns; the first page
    ends with the caller's own rank."""
    lines = [f"Leaderboard · {reply.ruleset}"]
    if not reply.entries:
        lines.append("  Nobody is ranked here yet.")
    else:
        lines.append(HEADER)
        lines += [entry_line(e, me) for e in reply.entries]
    if first:
        lines.append(my_rank_text(reply))
    return lines


def listing(server: str, ruleset: str) -> str:
    return f"top {ruleset} {server}"


async def top(
    conn: Connection,
    identity: Identity,
    *,
    ruleset: str,
    limit: int,
    more: bool,
    say: Callable[[str], None] = print,
) -> int:
    """One page of ``ruleset``'s leaderboard; with ``more``, the page after the last
    one shown (in the size that listing had)."""
    token = ""
    key = listing(conn.server, ruleset)
    if more:
        kept = identity.next_page(key)
        if kept is None:
            say(f"No more players: the last listing of {ruleset} reached the end.")
            return 0
        token, limit = kept
    request = player_pb2.GetLeaderboardRequest(ruleset=ruleset, page_size=limit, page_token=token)
    reply: player_pb2.GetLeaderboardResponse = await conn.call_players("GetLeaderboard", request)
    identity.keep_next_page(key, reply.next_page_token, limit)
    say("\n".join(board_lines(reply, conn.player_id, first=not token)))
    if reply.next_page_token:
        say(f"More: `rummy top --rules {ruleset} --more`.")
    return 0
