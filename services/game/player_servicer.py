"""`rummy.v1.PlayerService`: protobuf in, the reads of `player_queries` and
`replay`, protobuf out. Served by the game service, which keeps the tables, their
event logs and the records a game's end writes (`results`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from services.common.auth_servicer import MAX_NAME, display_name_of
from services.common.identity import require_player
from services.common.pb.rummy.v1 import player_pb2, player_pb2_grpc, table_pb2
from services.common.wire import options
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import convert, page_tokens, player_queries, replay
from .event_kinds import table_event
from .event_wire import deck_revealed
from .failures import guard
from .page_tokens import PageSizes
from .request_parsing import MAX_PLAYER_ID, Malformed, table_id_of
from .rules.events import EndReason
from .rules.ruleset import Ruleset, preset

GAMES_PAGE = PageSizes(default=20, most=100)
TOP_PAGE = PageSizes(default=20, most=100)
EVENTS_PAGE = PageSizes(default=500, most=2000)
MOST_RANK = 2**31
"""Ranks are uint32 on the wire: a token carrying more is none of ours."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def _player_id_of(text: str) -> str:
    if not text or len(text) > MAX_PLAYER_ID or not text.isprintable():
        raise Malformed(
            ServiceReason.PLAYER_ID_INVALID,
            f"A player id is 1 to {MAX_PLAYER_ID} printable characters.",
        )
    return text


def _player_not_found() -> Refusal:
    return Refusal(
        grpc.StatusCode.NOT_FOUND, ServiceReason.PLAYER_NOT_FOUND, "There is no such player."
    )


def _timestamp(at: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return stamp


def _seat(s: int, seat: player_queries.Seat) -> player_pb2.GameSeat:
    return player_pb2.GameSeat(
        seat=s,
        player_id=seat.player_id,
        display_name=seat.display_name,
        is_bot=seat.is_bot,
        place=seat.place + 1,
        total=seat.total,
        gone=seat.gone,
    )


def _end_reason(value: str) -> table_pb2.EndReason.ValueType:
    try:
        return convert.end_reason(EndReason(value))
    except ValueError:
        return convert.end_reason(None)  # a reason this build does not know, or none kept


class PlayerServicer(player_pb2_grpc.PlayerServiceServicer):
    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        retention_days: int,
        rulesets: Callable[[str], Ruleset] = preset,
    ) -> None:
        self._pool = pool
        self._retention_days = retention_days
        self._rulesets = rulesets

    # --- the profile ----------------------------------------------------------

    async def GetProfile(
        self, request: player_pb2.GetProfileRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> player_pb2.GetProfileResponse:
        caller = await require_player(context)
        return await guard(context, self._profile(request.player_id or caller))

    async def _profile(self, player_id: str) -> player_pb2.GetProfileResponse:
        found = await player_queries.profile(self._pool, _player_id_of(player_id))
        if found is None:
            raise _player_not_found()
        return player_pb2.GetProfileResponse(profile=self._profile_message(found))

    def _profile_message(self, found: player_queries.Profile) -> player_pb2.Profile:
        return player_pb2.Profile(
            player_id=found.player_id,
            display_name=found.display_name,
            member_since=_timestamp(found.member_since),
            standings=[
                player_pb2.RuleSetStanding(
                    ruleset=s.ruleset,
                    rating=s.rating,
                    deviation=s.deviation,
                    rated_games=s.rated_games,
                    games_played=s.games,
                    wins=s.wins,
                    streak=s.streak,
                    last_played_at=_timestamp(s.last_game_at),
                )
                for s in found.standings
            ],
        )

    async def UpdateProfile(
        self, request: player_pb2.UpdateProfileRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> player_pb2.UpdateProfileResponse:
        caller = await require_player(context)
        return await guard(context, self._rename(caller, request.display_name))

    async def _rename(self, caller: str, text: str) -> player_pb2.UpdateProfileResponse:
        name = display_name_of(text)
        if name is None:
            raise Malformed(
                ServiceReason.NAME_INVALID, f"Choose a name of 1 to {MAX_NAME} characters."
            )
        if not await player_queries.rename(self._pool, caller, name):
            raise _player_not_found()
        found = await player_queries.profile(self._pool, caller)
        if found is None:
            raise _player_not_found()
        return player_pb2.UpdateProfileResponse(profile=self._profile_message(found))

    # --- finished games -------------------------------------------------------

    async def ListGames(
        self, request: player_pb2.ListGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> player_pb2.ListGamesResponse:
        caller = await require_player(context)
        return await guard(context, self._games(request, caller))

    async def _games(
        self, request: player_pb2.ListGamesRequest, caller: str
    ) -> player_pb2.ListGamesResponse:
        most = GAMES_PAGE.of(request.page_size)
        after = player_queries.NEWEST
        if request.page_token:
            owner, micros, table = page_tokens.decode(request.page_token, "games", (str, int, str))
            if owner != caller:
                raise page_tokens.invalid()
            try:
                after = (EPOCH + micros * MICROSECOND, uuid.UUID(table))
            except (ValueError, OverflowError):
                raise page_tokens.invalid() from None
        rows = await player_queries.games(self._pool, caller, after, most + 1)
        page = rows[:most]
        next_token = ""
        if len(rows) > most:
            at, table_id = page[-1].key
            next_token = page_tokens.encode(
                "games", caller, (at - EPOCH) // MICROSECOND, str(table_id)
            )
        return player_pb2.ListGamesResponse(
            games=[self._played(g) for g in page], next_page_token=next_token
        )

    def _played(self, game: player_queries.PlayedGame) -> player_pb2.PlayedGame:
        changed = game.rating_before is not None and game.rating_after is not None
        message = player_pb2.PlayedGame(
            table_id=str(game.table_id),
            ruleset=game.ruleset,
            finished_at=_timestamp(game.finished_at),
            seats=[_seat(s, seat) for s, seat in enumerate(game.seats)],
            my_seat=game.my_seat,
            place=game.seats[game.my_seat].place + 1,
            won=game.won,
            end_reason=_end_reason(game.end_reason),
            rated=game.rated,
        )
        if changed:
            assert game.rating_before is not None and game.rating_after is not None
            message.rating_change = game.rating_after - game.rating_before
            message.rating_after = game.rating_after
        if self._retention_days > 0:
            until = game.finished_at + timedelta(days=self._retention_days)
            message.replay_until.CopyFrom(_timestamp(until))
        return message

    # --- a replay -------------------------------------------------------------

    async def GetReplay(
        self, request: player_pb2.GetReplayRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> player_pb2.GetReplayResponse:
        caller = await require_player(context)
        return await guard(context, self._replay(request, caller))

    async def _replay(
        self, request: player_pb2.GetReplayRequest, caller: str
    ) -> player_pb2.GetReplayResponse:
        table_id = table_id_of(request.table_id)
        most = EVENTS_PAGE.of(request.page_size)
        after = 0
        if request.page_token:
            table, after = page_tokens.decode(request.page_token, "replay", (str, int))
            if table != str(table_id) or after < 1:
                raise page_tokens.invalid()
        found = await replay.replay(
            self._pool,
            table_id,
            caller,
            after_seq=after,
            most=most,
            retention_days=self._retention_days,
        )
        state = found.state
        message = player_pb2.GetReplayResponse(
            table_id=str(table_id),
            ruleset=state.ruleset.name,
            options=options.to_message(state.options, state.ruleset),
            seats=[_seat(s, seat) for s, seat in enumerate(found.seats)],
            hands_shown=found.viewing.every_hand,
            finished_at=_timestamp(found.finished_at),
            events=[table_event(e, found.viewing) for e in found.events],
            deals=[
                player_pb2.DealCheck(
                    round=d.round_no,
                    deck_commitment=d.commitment,
                    revealed=deck_revealed(d.revealed, d.revealed, found.viewing)
                    if d.revealed is not None
                    else None,
                )
                for d in found.deals
            ],
        )
        if found.my_seat is not None:
            message.my_seat = found.my_seat
        if found.more:
            message.next_page_token = page_tokens.encode(
                "replay", str(table_id), found.events[-1].seq
            )
        return message

    # --- leaderboards ---------------------------------------------------------

    async def GetLeaderboard(
        self, request: player_pb2.GetLeaderboardRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> player_pb2.GetLeaderboardResponse:
        caller = await require_player(context)
        return await guard(context, self._top(request, caller))

    async def _top(
        self, request: player_pb2.GetLeaderboardRequest, caller: str
    ) -> player_pb2.GetLeaderboardResponse:
        name = request.ruleset or "cafe"
        try:
            ruleset = self._rulesets(name).name
        except KeyError:
            raise Malformed(
                ServiceReason.RULESET_UNKNOWN, f"There is no rule set named {name[:40]!r}."
            ) from None
        most = TOP_PAGE.of(request.page_size)
        after: tuple[float, int, str] = (float("inf"), 0, "")
        rank_before = 0
        if request.page_token:
            board, rating, games, player, rank_before = page_tokens.decode(
                request.page_token, "top", (str, float, int, str, int)
            )
            if board != ruleset or not 1 <= rank_before < MOST_RANK:
                raise page_tokens.invalid()
            after = (rating, games, player)
        rows = await player_queries.top(
            self._pool, ruleset, after, most + 1, rank_before=rank_before
        )
        page = rows[:most]
        message = player_pb2.GetLeaderboardResponse(
            ruleset=ruleset, entries=[_entry(e) for e in page]
        )
        if len(rows) > most:
            last = page[-1]
            message.next_page_token = page_tokens.encode(
                "top", ruleset, last.rating, last.rated_games, last.player_id, last.rank
            )
        if not request.page_token:
            mine = await player_queries.rank(self._pool, caller, ruleset)
            if mine is not None:
                message.me.CopyFrom(_entry(mine))
        return message


def _entry(entry: player_queries.Entry) -> player_pb2.LeaderboardEntry:
    return player_pb2.LeaderboardEntry(
        rank=entry.rank,
        player_id=entry.player_id,
        display_name=entry.display_name,
        rating=entry.rating,
        deviation=entry.deviation,
        rated_games=entry.rated_games,
        wins=entry.wins,
    )
