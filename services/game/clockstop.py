"""When the turns' clock stops: while nobody can reach the service (the database,
or every replica, out), no move can be made, but the deadlines turns run on are
times of day and pass all the same.

Each replica marks about every `BEAT_S` that it reached the database (the one
row of `table_clock`), over a connection of its own so that no wait for a pooled
one delays the mark. The first mark after a gap of more than `CLOCK_STOP_S`
records the gap as the clock's last stop and makes every turn then in play due
at once; the sweeper gives each the time it had left (the engine's `Resume`)
before it may time out, and claims no due turn at all while nobody has marked
for that long: a stop not yet recorded may be under way. The stop before the
last is kept too, and applied first, so a database that goes out again before
every turn was resumed loses none."""

from __future__ import annotations

BEAT_S = 1.0
"""How often each replica marks that it reached the database."""
CLOCK_STOP_S = 5.0
"""A gap this long in every replica's marks is a stop: several beats missed at
once, not one slow beat."""
BEAT_TIMEOUT_S = 2.0
"""The longest a mark may take: longer, the database is in no state to serve moves."""
