"""Soak benchmark: `python -m bench.soak [--minutes M]`.

Prints numbers, asserts nothing. Two game replicas and one matchmaker run as
their own processes (the real `rummy-game` / `rummy-matchmaker` entry points,
configured through RUMMY_* variables) on one fresh database; `rummy bots`
load generators keep many tables in play for the whole run, through the
matchmaker. Players and the matchmaker reach the game service through a
two-address target (replica A first, replica B as fail-over). Half-way
through, replica A gets SIGTERM and is started again on the same port.

Every interval the run prints games finished, the load generators' errors,
and for each server process its RSS, open file descriptors and sockets, plus
the database's connection count (pg_stat_activity). At the end: the RSS slope
of each process (memory must stay flat), split into anonymous pages (heap)
and file-backed pages (libraries), and PostgreSQL storage per finished
game (tables, table_events, action_requests, ...) so operators can size disks
and choose RUMMY_EVENT_RETENTION_DAYS.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Everything
listens on 127.0.0.1 only and every process started is stopped at the end.
"""
