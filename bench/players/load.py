"""Finished games and their players, made up and loaded with COPY, each size on
top of the one before: what a game's end writes (`game_results`, `player_games`,
`player_standings`) and the tables and seats a replay reads. A sample of the
games holds a whole real game's event log (played by bots in the engine), the
same log for each: the replays are read from those."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg

from services.common.rating import SETTLED_DEVIATION
from services.game import eventlog
from services.game.rules import serial
from services.game.rules.bots import GreedyBot
from services.game.rules.events import Event
from services.game.rules.ruleset import CAFE
from services.game.rules.simulate import play_game
from services.game.rules.state import GameState
from services.game.standings import buckets

RULESETS = (("cafe", 0.55), ("rami51", 0.2), ("classic", 0.15), ("contract", 0.1))
GAMES_PER_PLAYER = 5
"""New players join as games are added: about one for every five games, so a
player has played some 12 games on average at every size (2 to 4 seats a game)."""
TRAINING_SHARE = 0.2
"""Games with a bot: unrated."""
REPLAYS_PER_STEP = 100
"""Games of each loaded step that hold the real game's whole event log."""
SPAN = timedelta(days=25)
"""The finish times cover this much, up to now: inside the 30 days logs are kept."""
BATCH = 20_000
"""Games made and copied at a time."""


@dataclass(frozen=True)
class RealGame:
    """One game played by bots in the engine: its final state and its log."""

    state: bytes
    rows: list[tuple[int, int, str, bytes]]
    """(seq, version, kind, payload) of each event."""

    @classmethod
    def play(cls, seed: int = 7) -> RealGame:
        logged: list[tuple[int, Event]] = []
        version = 1

        def observe(
            _before: GameState, _s: int, _a: object, _after: GameState, events: list[Event]
        ) -> None:
            nonlocal version
            logged.extend((version, e) for e in events)
            version += 1

        final = play_game(CAFE, [GreedyBot(), GreedyBot()], random.Random(seed), observe=observe)
        rows = [
            (seq, v, eventlog.kind_of(e), eventlog.encode(e))
            for seq, (v, e) in enumerate(logged, start=1)
        ]
        return cls(serial.dumps(final), rows)


@dataclass
class Standing:
    """A player's counts in one rule set, as `player_standings` keeps them."""

    last_game_at: datetime
    games: int = 0
    wins: int = 0
    streak: int = 0
    rated_games: int = 0

    def add(self, at: datetime, *, won: bool, rated: bool) -> None:
        self.games += 1
        self.wins += won
        self.streak = max(self.streak, 0) + 1 if won else min(self.streak, 0) - 1
        self.rated_games += rated
        self.last_game_at = at


@dataclass
class Loaded:
    """What has been loaded so far, to carry on from: the players and their
    standings (copied whole at each step), and the games to replay."""

    games: int = 0
    players: int = 0
    ratings: dict[int, float] = field(default_factory=dict)
    standings: dict[tuple[int, str], Standing] = field(default_factory=dict)
    replays: list[tuple[str, str]] = field(default_factory=list)
    """(table id, player id of seat 0) of the games that hold a log."""


def player_id(n: int) -> str:
    return f"p-{n:08x}"


class Loader:
    """Adds games up to a total, ``seed`` making the same data every run."""

    def __init__(self, *, total_planned: int, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.loaded = Loaded()
        self.real = RealGame.play()
        self.start = datetime.now(UTC) - SPAN
        self.step = SPAN / max(1, total_planned)
        self.names = [name for name, _ in RULESETS]
        self.weights = [weight for _, weight in RULESETS]

    async def load(self, con: asyncpg.Connection, upto: int) -> None:
        first = self.loaded.games
        replay_every = max(1, (upto - first) // REPLAYS_PER_STEP)
        for begin in range(first, upto, BATCH):
            end = min(upto, begin + BATCH)
            batch = Batch()
            for i in range(begin, end):
                self._game(i, batch, replay=(i - first) % replay_every == 0)
            await batch.copy(con)
        self.loaded.games = upto
        await self._players_and_standings(con)
        await con.execute("VACUUM ANALYZE")

    def _game(self, i: int, batch: Batch, *, replay: bool) -> None:
        rng, loaded = self.rng, self.loaded
        while loaded.players < (i + 1) // GAMES_PER_PLAYER + 4:
            loaded.ratings[loaded.players] = 1500.0
            loaded.players += 1
        ruleset = "cafe" if replay else rng.choices(self.names, self.weights)[0]
        seats = 2 if replay else rng.randint(2, 4)
        people = rng.sample(range(loaded.players), seats)
        bot = not replay and rng.random() < TRAINING_SHARE
        if bot:
            people[-1] = -1
        table_id = uuid.UUID(int=rng.getrandbits(128))
        at = self.start + self.step * i
        places = list(range(seats))
        rng.shuffle(places)
        totals = [0 if p == 0 else rng.randint(5, 120) for p in places]
        rated = not bot
        ids = [player_id(p) if p >= 0 else "bot-1" for p in people]
        batch.tables.append(
            (
                table_id,
                ruleset,
                self.real.state if replay else b"{}",
                len(self.real.rows) if replay else 0,
                at,
            )
        )
        for s, p in enumerate(people):
            batch.seats.append((table_id, s, ids[s], f"Player {p}" if p >= 0 else "Bot", p < 0))
        winner = places.index(0)
        batch.results.append(
            (
                table_id,
                ruleset,
                at,
                "went_out",
                winner,
                rated,
                ids,
                [f"Player {p}" for p in people],
                [p < 0 for p in people],
                totals,
                places,
                [False] * seats,
            )
        )
        for s, p in enumerate(people):
            if p < 0:
                continue
            won = places[s] == 0
            before = loaded.ratings[p]
            # As Elo moves them: by a fraction of a point to a few dozen points.
            step = rng.uniform(0.5, 16.0)
            after = before + (step * (seats - 1) if won else -step) if rated else before
            loaded.ratings[p] = after
            batch.played.append(
                (
                    ids[s],
                    at,
                    table_id,
                    s,
                    places[s],
                    won,
                    before if rated else None,
                    after if rated else None,
                )
            )
            standing = loaded.standings.setdefault((p, ruleset), Standing(at))
            standing.add(at, won=won, rated=rated)
        if replay:
            batch.events.extend((table_id, *row) for row in self.real.rows)
            self.loaded.replays.append((str(table_id), ids[0]))

    async def _players_and_standings(self, con: asyncpg.Connection) -> None:
        loaded = self.loaded
        await con.execute("TRUNCATE players, player_standings, rating_buckets")
        await con.copy_records_to_table(
            "players",
            records=(
                (player_id(p), f"Player {p}", r, self.start) for p, r in loaded.ratings.items()
            ),
            columns=["id", "display_name", "rating", "created_at"],
        )
        await con.copy_records_to_table(
            "player_standings",
            records=(
                (
                    player_id(p),
                    ruleset,
                    x.games,
                    x.wins,
                    x.streak,
                    x.rated_games,
                    loaded.ratings[p],
                    SETTLED_DEVIATION,
                    x.last_game_at,
                )
                for (p, ruleset), x in loaded.standings.items()
            ),
            columns=[
                "player_id",
                "ruleset",
                "games",
                "wins",
                "streak",
                "rated_games",
                "rating",
                "deviation",
                "last_game_at",
            ],
        )
        counts = Counter(
            (ruleset, level, bucket)
            for (p, ruleset), x in loaded.standings.items()
            if x.rated_games
            for level, bucket in buckets(loaded.ratings[p])
        )
        await con.copy_records_to_table(
            "rating_buckets",
            records=((r, level, b, n) for (r, level, b), n in counts.items()),
            columns=["ruleset", "level", "bucket", "players"],
        )


@dataclass
class Batch:
    """The rows of some games, copied table by table."""

    tables: list[tuple[uuid.UUID, str, bytes, int, datetime]] = field(default_factory=list)
    seats: list[tuple[object, ...]] = field(default_factory=list)
    results: list[tuple[object, ...]] = field(default_factory=list)
    played: list[tuple[object, ...]] = field(default_factory=list)
    events: list[tuple[object, ...]] = field(default_factory=list)

    async def copy(self, con: asyncpg.Connection) -> None:
        await con.copy_records_to_table(
            "tables",
            records=self._tables(),
            columns=[
                "id",
                "ruleset",
                "state",
                "version",
                "last_seq",
                "status",
                "created_at",
                "updated_at",
                "finished_at",
                "answers_kept",
            ],
        )
        await con.copy_records_to_table(
            "table_seats",
            records=self.seats,
            columns=["table_id", "seat", "player_id", "display_name", "is_bot"],
        )
        await con.copy_records_to_table(
            "game_results",
            records=self.results,
            columns=[
                "table_id",
                "ruleset",
                "finished_at",
                "end_reason",
                "winner_seat",
                "rated",
                "player_ids",
                "names",
                "bots",
                "totals",
                "places",
                "gone",
            ],
        )
        await con.copy_records_to_table(
            "player_games",
            records=self.played,
            columns=[
                "player_id",
                "finished_at",
                "table_id",
                "seat",
                "place",
                "won",
                "rating_before",
                "rating_after",
            ],
        )
        if self.events:
            await con.copy_records_to_table(
                "table_events",
                records=self.events,
                columns=["table_id", "seq", "version", "kind", "payload"],
            )

    def _tables(self) -> Iterator[tuple[object, ...]]:
        for table_id, ruleset, state, last_seq, at in self.tables:
            # Answers long purged (as an hour after any game's end), so the
            # server's purge of them finds nothing to do while it is measured.
            yield (
                table_id,
                ruleset,
                state,
                last_seq + 1,
                last_seq,
                "finished",
                at - timedelta(minutes=10),
                at,
                at,
                False,
            )
