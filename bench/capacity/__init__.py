"""Capacity benchmark: `python -m bench.capacity` (`--quick`: a few seconds).

Prints numbers, asserts nothing. How many players one game-server process
carries at a human pace. One game server and one matchmaker run in their own
processes on a fresh database; several load processes (`worker`) play as the
players do: each player on its own connection to the game server (as phones
are), signed in, queued and seated four to a table by the matchmaker, with a
Watch stream on its table, acting on its turn after a think time drawn from a
lognormal distribution (printed), then queueing again after each game. The
players are the shipped client's bots (`clients.cli.bots`), so the server sees
what the app sends: a GetTable when a turn begins, then the moves.

The number of players rises in steps (each: grow, settle, measure a window)
until the players' p99 action latency passes 50 ms or the game server's
event-loop lag p99 (its /metrics, `services/common/looplag.py`) passes 20 ms,
or the load processes themselves lag, or a bound on players or time is met:
the run stops by itself. Each step prints the CPU of every process (the game
server per player-minute and per action, PostgreSQL, the matchmaker, the load
processes apart), the game server's memory per connected player, its threads'
CPU, and, with py-spy (the dev extra), where its Python time goes. Then a bare
grpc.aio server holds as many connections with one open stream each, opened by
the same load processes, for the memory comparison; then, for the CPU, it does
at the step's pace what the players cause and nothing else (each action a unary
call and a message on each of the four streams of its "table", `bare_pace`):
what gRPC alone costs per action and per player-minute. A bare unary echo, 64
calls in flight, gives the CPU of one call at full speed in the same run.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Every server
listens on 127.0.0.1 only and every process it starts is stopped at the end.
"""
