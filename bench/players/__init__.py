"""PlayerService benchmark: `python -m bench.players`.

Prints numbers, asserts nothing. Loads 10,000, then 100,000, then 1,000,000
finished games with their players into a throwaway database with COPY (each
size on top of the one before: `load`), and at each size times every read of
PlayerService through one game server in its own process, one call at a time:
a profile, the first and a later page of a player's games, a leaderboard's
first page with the caller's rank and a later page, a replay's first page.
Beside each, the same statements run bare from asyncpg in the same run (the
database's own cost, the ceiling), their plans, and a primary-key read, so
that what the service adds, and how each cost moves with ten and a hundred
times the data, can be read off.

The data: about one player per five games (2 to 4 seats a game, a fifth of
the games with a bot and unrated), four rule sets, finish times spread over
the last 25 days. One hundred games of each size hold a whole real game's
event log (the same one, played by bots in the engine): the replays are read
from those, so the event log itself does not grow with the games loaded.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end.
"""
