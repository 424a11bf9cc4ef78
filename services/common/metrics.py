"""Prometheus metrics of both services, on one registry per process.

Names follow Prometheus conventions (base units, `_total` counters, `_seconds`
histograms). Labels are small closed sets: never a player or table id.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, start_http_server

FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

RPC_REQUESTS = Counter(
    "rummy_rpc_requests", "RPCs handled, by final status code", ["service", "method", "code"]
)
RPC_DURATION = Histogram(
    "rummy_rpc_duration_seconds",
    "Time to answer a unary RPC",
    ["service", "method"],
    buckets=FAST,
)
ACTIONS = Counter(
    "rummy_actions",
    "Table actions by type and outcome (applied or the refusal reason)",
    ["action", "outcome"],
)
KNOWN_STATE_MOVES = Counter(
    "rummy_known_state_moves",
    "Moves by what this replica knew of the table: committed in one round trip from"
    " the state it knew; read from the database after all (the table had moved on,"
    " or the move was refused, retried or ended the game); unknown (read first)",
    ["outcome"],
)
TIMEOUTS_FIRED = Counter("rummy_timeouts_fired", "Turn timeouts applied by the sweeper")
TURNS_RESUMED = Counter(
    "rummy_turns_resumed",
    "Turns given back their time after nobody could reach the service (a database outage)",
)
TIMEOUT_LATENESS = Histogram(
    "rummy_timeout_lateness_seconds",
    "How long after its deadline a timeout fired",
    buckets=FAST,
)
TURN_CAP_ENDINGS = Counter("rummy_turn_cap_endings", "Rounds ended by the turn cap", ["ruleset"])
WATCH_STREAMS = Gauge("rummy_watch_streams", "Open Watch streams in this process")
ACTIVE_TABLES = Gauge("rummy_active_tables", "Unfinished tables in the database")
GAMES_FINISHED = Counter(
    "rummy_games_finished", "Games that reached their end", ["ruleset", "reason"]
)
DB_POOL = Gauge(
    "rummy_db_pool_connections",
    "Database pool connections by service and state",
    ["service", "state"],
)
"""By service: `make run` serves both from one process, each with its own pool."""
DB_TRANSACTION = Histogram(
    "rummy_db_transaction_seconds",
    "Database transaction time by operation",
    ["op"],
    buckets=FAST,
)
QUEUE_DEPTH = Gauge("rummy_queue_depth", "Tickets waiting, by queue", ["queue"])
MATCH_WAIT = Histogram(
    "rummy_match_wait_seconds",
    "Time from enqueue to the ticket's end",
    ["queue", "outcome"],
    buckets=SLOW,
)
MATCHES = Counter("rummy_matches", "Tables formed by the matchmaker", ["queue"])
TICKETS_ENDED = Counter(
    "rummy_tickets_ended", "Tickets that ended, by outcome", ["queue", "outcome"]
)
MATCHING_LOOP = Histogram(
    "rummy_matching_loop_seconds", "Duration of one pass of the matching loop", buckets=FAST
)
LOOP_LAG = Histogram(
    "rummy_event_loop_lag_seconds",
    "How late this process's event loop ran a timer that was due: every call in"
    " flight waits this long too (services/common/looplag.py)",
    buckets=FAST,
)


def queue_label(table_size: int, ruleset: str, *, private: bool = False) -> str:
    """`4p-cafe`: the queue a ticket waits in, a small closed set. Private tables
    (`4p-cafe-private`) apart: minutes spent waiting for friends say nothing of
    the public queues."""
    return f"{table_size}p-{ruleset}" + ("-private" if private else "")


def serve(port: int) -> None:
    """Expose /metrics over HTTP on ``port`` (0: not at all)."""
    if port:
        start_http_server(port)
