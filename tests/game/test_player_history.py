"""A finished game shows in each of its players' histories and profiles, with
its result and rating change, written in the commit that ended it."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import player_pb2, table_pb2
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING, Rating, updated

from .harness import create_table, login, play_to_end, shuffled_deck
from .player_calls import BUCKETS, COUNTED, DECK_SEED, all_games, ask, fetch, training_game


async def test_a_game_played_to_the_end_shows_in_both_histories(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, n) for n in ("Ann", "Ben")]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(DECK_SEED))
    await play_to_end(players, table_id)
    view = await players[0].view(table_id)
    winner = view.result.winner_seat
    rows = await fetch(
        fresh_dsn,
        "SELECT player_id, rating, deviation FROM player_standings WHERE ruleset = 'cafe'",
    )
    ratings = {r["player_id"]: r["rating"] for r in rows}
    deviations = {r["player_id"]: r["deviation"] for r in rows}
    newcomer = Rating(DEFAULT_RATING, DEFAULT_DEVIATION)
    won, lost = updated([newcomer] * 2, [0, 1])
    assert sorted(ratings.values()) == [lost.mu, won.mu]
    for player in players:
        [game] = await all_games(player)
        seat = player.seat
        assert seat is not None
        assert game.table_id == table_id and game.ruleset == "cafe"
        assert game.my_seat == seat
        assert [(s.player_id, s.display_name, s.is_bot) for s in game.seats] == [
            (p.player_id, p.name, False) for p in players
        ]
        assert game.won == (seat == winner)
        assert game.place == (1 if seat == winner else 2)
        assert [s.total for s in game.seats] == [t.total for t in view.result.totals]
        assert game.end_reason == view.result.reason
        assert game.rated
        assert game.rating_after == ratings[player.player_id]
        assert game.rating_change == ratings[player.player_id] - DEFAULT_RATING
        assert (game.rating_change > 0) == (seat == winner)
        assert game.HasField("replay_until")
        assert game.replay_until.ToDatetime() > game.finished_at.ToDatetime()

        profile = (await ask(player, "GetProfile", player_pb2.GetProfileRequest())).profile
        assert profile.player_id == player.player_id and profile.display_name == player.name
        [cafe] = profile.standings
        assert cafe.ruleset == "cafe"
        assert (cafe.games_played, cafe.rated_games) == (1, 1)
        assert cafe.wins == (1 if seat == winner else 0)
        assert cafe.streak == (1 if seat == winner else -1)
        assert cafe.rating == ratings[player.player_id]
        assert cafe.deviation == deviations[player.player_id] < DEFAULT_DEVIATION
        assert cafe.last_played_at == game.finished_at
    buckets = [tuple(r) for r in await fetch(fresh_dsn, BUCKETS)]
    assert buckets == [tuple(r) for r in await fetch(fresh_dsn, COUNTED)]
    counted = [sum(n for _, at, _, n in buckets if at == level) for level in (0, 1)]
    assert counted == [2, 2], "both players now ranked in cafe"


async def test_a_training_game_is_listed_unrated(channel: grpc.aio.Channel, fresh_dsn: str) -> None:
    person = await login(channel, "Cy")
    table_id = await training_game(channel, person)
    [game] = await all_games(person)
    assert game.table_id == table_id
    assert not game.rated and not game.won
    assert not game.HasField("rating_change") and not game.HasField("rating_after")
    assert [s.is_bot for s in game.seats] == [False, True]
    me, bot = game.seats
    assert me.gone and not bot.gone
    assert (me.place, bot.place) == (2, 1)
    assert game.end_reason != table_pb2.END_REASON_UNSPECIFIED
    profile = (await ask(person, "GetProfile", player_pb2.GetProfileRequest())).profile
    [cafe] = profile.standings
    assert (cafe.games_played, cafe.rated_games, cafe.wins, cafe.streak) == (1, 0, 0, -1)
    assert cafe.rating == DEFAULT_RATING
    # The bot is no player: nothing is recorded for it.
    assert not await fetch(fresh_dsn, "SELECT 1 FROM player_games WHERE player_id = 'bot-1'")


async def test_streaks_and_counts_follow_the_games(channel: grpc.aio.Channel) -> None:
    person = await login(channel, "Dee")
    for _ in range(3):
        await training_game(channel, person)
    games = await all_games(person, page_size=2)
    assert len(games) == 3
    finished = [(g.finished_at.ToDatetime(), g.table_id) for g in games]
    assert finished == sorted(finished, reverse=True), "newest first"
    [cafe] = (await ask(person, "GetProfile", player_pb2.GetProfileRequest())).profile.standings
    assert (cafe.games_played, cafe.wins, cafe.streak) == (3, 0, -3)


async def test_another_players_profile_and_a_new_name(channel: grpc.aio.Channel) -> None:
    eve, gus = await login(channel, "Eve"), await login(channel, "Gus")
    # Gus asks for Eve's profile: public fields only, which is every field.
    other = await ask(gus, "GetProfile", player_pb2.GetProfileRequest(player_id=eve.player_id))
    assert other.profile.player_id == eve.player_id
    assert other.profile.display_name == "Eve"
    assert other.profile.HasField("member_since")
    renamed = await ask(
        eve, "UpdateProfile", player_pb2.UpdateProfileRequest(display_name="  Eve   the Great ")
    )
    assert renamed.profile.display_name == "Eve the Great"
    again = await ask(gus, "GetProfile", player_pb2.GetProfileRequest(player_id=eve.player_id))
    assert again.profile.display_name == "Eve the Great"


async def test_a_second_rated_game_moves_the_players_between_buckets(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Before: the second game's end failed (INTERNAL): a player leaving a rating
    bucket is a count of -1, refused by the bucket table's check before the
    insert could become an update."""
    players = [await login(channel, n) for n in ("Ida", "Jon")]
    for _ in range(2):
        table_id = await create_table(channel, players, deck_order=shuffled_deck(DECK_SEED))
        await play_to_end(players, table_id)
    for player in players:
        games = await all_games(player)
        assert len(games) == 2 and all(g.rated for g in games)
        newer, older = games
        assert newer.rating_after - newer.rating_change == older.rating_after, "it follows on"
    buckets = [tuple(r) for r in await fetch(fresh_dsn, BUCKETS)]
    assert buckets == [tuple(r) for r in await fetch(fresh_dsn, COUNTED)]
    counted = [sum(n for _, at, _, n in buckets if at == level) for level in (0, 1)]
    assert counted == [2, 2], "each player counted once"
