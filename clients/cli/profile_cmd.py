"""`rummy me`: the player's profile, as anyone may see it: name, member since, and
for each rule set played the rating (with how sure it is), games, wins and the
current streak. `rummy me --name NEW` changes the name others see first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.v1 import player_pb2

from .connection import Connection
from .identity import Identity

HEADER = (
    f"  {'Rules':<9}{'Rating':>7}{'±':>7}{'Rated':>7}{'Games':>7}{'Wins':>6}  {'Streak':<17}Last"
)


def local_time(stamp: Timestamp) -> datetime:
    """A server instant in this machine's time zone."""
    return stamp.ToDatetime(tzinfo=UTC).astimezone()


def day(stamp: Timestamp) -> str:
    return local_time(stamp).strftime("%Y-%m-%d")


def streak_text(streak: int) -> str:
    """`won 3` in a row, `3 without a win`, or `-`."""
    if streak > 0:
        return f"won {streak}"
    if streak < 0:
        return f"{-streak} without a win"
    return "-"


def deviation_text(deviation: float) -> str:
    """How sure a rating is; `-` when the server keeps no such measure."""
    return f"{deviation:.0f}" if deviation > 0 else "-"


def standing_line(standing: player_pb2.RuleSetStanding) -> str:
    return (
        f"  {standing.ruleset:<9}{standing.rating:>7.0f}"
        f"{deviation_text(standing.deviation):>7}{standing.rated_games:>7}"
        f"{standing.games_played:>7}{standing.wins:>6}  {streak_text(standing.streak):<17}"
        f"{day(standing.last_played_at)}"
    )


def profile_lines(profile: player_pb2.Profile) -> list[str]:
    """The profile in lines of at most 80 columns."""
    lines = [
        profile.display_name,
        f"  Player id     {profile.player_id}",
        f"  Member since  {day(profile.member_since)}",
        "",
    ]
    if not profile.standings:
        return [*lines, "No finished game yet: `rummy play` starts one."]
    lines.append(HEADER)
    lines += [standing_line(s) for s in profile.standings]
    lines.append("")
    lines.append(
        "Ratings start at 1500 and change with games between people only (no bots);"
        "\n± is how sure a rating is: it shrinks as games are played."
    )
    return lines


async def me(
    conn: Connection,
    identity: Identity,
    new_name: str | None,
    *,
    say: Callable[[str], None] = print,
) -> int:
    """Show the caller's profile; with ``new_name``, rename them first (and remember
    the name here, so the next sign-in keeps it)."""
    if new_name is None:
        reply = await conn.call_players("GetProfile", player_pb2.GetProfileRequest())
        profile = reply.profile
    else:
        request = player_pb2.UpdateProfileRequest(display_name=new_name)
        profile = (await conn.call_players("UpdateProfile", request)).profile
        identity.display_name(profile.display_name)
        conn.name = profile.display_name
        say(f"Others now see you as {profile.display_name}.\n")
    say("\n".join(profile_lines(profile)))
    return 0
