"""Game service benchmark: `python -m bench.game`.

Prints numbers, asserts nothing. Every figure of the service comes with a
ceiling measured in the same run on the same machine, so a reader compares
ratios rather than raw numbers from different hardware:

- Ceilings: the service's per-action transaction (lock the table row, write
  state and version, append the events, NOTIFY) driven straight from asyncpg
  by N connections, with the NOTIFY inside the transaction, after the commit
  (as the service does), coalesced after the commit, and not at all; and a
  raw grpc.aio unary echo (generic handler, bytes in and out).
- The service under load: greedy bots on many concurrent tables, playing
  through the public API of one game server in its own process: actions/s,
  latency percentiles and the ratio to the asyncpg ceiling; then the same at
  about half of that peak, rate-limited.
- Commit-to-watcher latency: a `Watch` stream per table, timed from the
  action's response to the event's arrival.
- Timeout lateness: tables with short turn timers and nobody playing; each
  fired timeout's event time minus the turn's deadline.
- Memory: server RSS per idle `Watch` stream at 1,000 and 10,000 streams,
  beside a bare grpc.aio server-streaming handler, each in its own process.

Each phase also prints the CPU used by each process (per operation) and by
the rest of the machine: on a small machine the service, its clients and
PostgreSQL share the same cores, so CPU per operation says what limits a
number, and "other processes" says how much a busy machine skewed it.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Every server
listens on 127.0.0.1 only and every process it starts is stopped at the end.
"""
