"""When the turns' clock stops: while nobody can reach the service (the database,
or every replica, out), no move can be made, but the deadlines turns run on are
times of day and pass all the same.

Each replica marks about every `BEAT_S` that it reached the database (the one
row of `table_clock`). The first mark after a gap of more than `CLOCK_STOP_S`
records the gap as the clock's last stop and makes every turn then in play due
at once; the sweeper gives each the time it had left (the engine's `Resume`)
before it may time out, and claims no due turn at all while nobody has marked
for that long: a stop not yet recorded may be under way. A stop that begins
within `STOP_MERGE_S` of the last one's end is recorded as one with it, so a
database that goes out again before every turn was resumed loses none."""

from __future__ import annotations

BEAT_S = 1.0
"""How often each replica marks that it reached the database."""
CLOCK_STOP_S = 5.0
"""A gap this long in every replica's marks is a stop: several beats missed at
once, not one slow beat."""
STOP_MERGE_S = 60.0
"""A stop beginning this soon after the last one ended extends it."""
