"""Matchmaker benchmark: `python -m bench.matchmaker`.

Prints numbers, asserts nothing. One game server and two matchmaker replicas
run in their own processes on one fresh database; the clients are real
`Enqueue` streams from this process, for 2-, 3- and 4-player queues at once.

- Ceilings measured in the same run: the matching loop's database work alone
  (claim queued tickets with FOR UPDATE SKIP LOCKED, record the matches,
  update the tickets; two asyncpg workers, like two replicas, no gRPC), and
  CreateTables straight against the game service, in the batches the matching
  loop sends (tables/s, and the seats/s they stand for).
- Drain: 10,000 players queue while matching is paused, then both replicas
  match: tickets matched per second, and each ticket's time from the start
  of matching to its match message (p50/p99).
- Burst: 10,000 more players send Enqueue at the same moment with matching
  running: enqueue-to-match p50/p99 (the wait to be taken up included) and
  tickets matched per second.
- Steady arrivals at the target rate (1,000 tickets/s by default): the queue
  always holds partners, so every ticket can be matched at once; enqueue-to-
  match p50/p99 is the figure to hold against "< 2 s". Then the same at half
  the best rate measured while players were arriving (burst, steady), which
  the machine can sustain: a rate above capacity only measures how fast a
  backlog grows. (The drain matches with no Enqueue calls competing for the
  same cores, so its rate is no guide to what arrivals the machine keeps up with.)

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Every server
listens on 127.0.0.1 only and every process it starts is stopped at the end.
"""
