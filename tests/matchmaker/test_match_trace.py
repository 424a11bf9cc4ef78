"""One trace follows a match: from the Enqueue call, through the matchmaker's
table creation (made later, by its matching loop) and its call to the game
service, into that service and its PostgreSQL queries."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from services.common import otel, tracing

from .harness import backend, enqueue, players

ENQUEUE = "/rummy.v1.MatchmakerService/Enqueue"
CREATE_TABLES = "/rummy.internal.v1.TableService/CreateTables"


class Spans:
    """The spans the servers finished, as the in-memory exporter got them."""

    def __init__(self, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
        self._provider = provider
        self._exporter = exporter

    def finished(self) -> list[ReadableSpan]:
        assert self._provider.force_flush(), "the spans were not all exported"
        return list(self._exporter.get_finished_spans())


@pytest.fixture
def spans() -> Iterator[Spans]:
    """Traces on, as OTEL_* variables would turn them on, sent to memory."""
    exporter = InMemorySpanExporter()
    provider = otel.new_provider("rummy-test", [exporter])
    tracing.start(provider)
    try:
        yield Spans(provider, exporter)
    finally:
        tracing.stop()
        provider.shutdown()


def named(spans: Sequence[ReadableSpan], name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name and s.kind is kind]


def is_query(span: ReadableSpan) -> bool:
    return span.kind is SpanKind.CLIENT and (span.attributes or {}).get("db.system") == "postgresql"


def ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[int]:
    """The span ids above ``span``, nearest first, as far as they were exported."""
    found = []
    parent = span.parent
    while parent is not None:
        found.append(parent.span_id)
        above = by_id.get(parent.span_id)
        parent = above.parent if above is not None else None
    return found


async def test_one_trace_goes_from_enqueue_to_the_game_services_queries(
    fresh_dsn: str, spans: Spans
) -> None:
    async with backend(fresh_dsn) as b:
        first, second = await players(b.channel(), 2)
        # One after the other: the first ticket is the older, seated first.
        waiters = [await enqueue(p, table_size=2, ruleset="cafe") for p in (first, second)]
        for waiter in waiters:
            assert await waiter.until("match") is not None
            await waiter.end()
        finished = spans.finished()

    enqueues = sorted(named(finished, ENQUEUE, SpanKind.SERVER), key=lambda s: s.start_time or 0)
    assert len(enqueues) == 2
    oldest, other = (s.context for s in enqueues)
    assert oldest.trace_id != other.trace_id, "each Enqueue call starts a trace of its own"

    # The table creation carries on the oldest ticket's trace and links the other's.
    (made,) = [s for s in finished if s.name == "create tables"]
    assert made.context.trace_id == oldest.trace_id
    assert made.parent is not None and made.parent.span_id == oldest.span_id
    assert [link.context.span_id for link in made.links] == [other.span_id]
    assert (made.attributes or {}).get("rummy.tables") == 1

    (call,) = named(finished, CREATE_TABLES, SpanKind.CLIENT)
    assert call.parent is not None and call.parent.span_id == made.context.span_id
    (served,) = named(finished, CREATE_TABLES, SpanKind.SERVER)
    assert served.parent is not None and served.parent.span_id == call.context.span_id
    assert served.context.trace_id == oldest.trace_id

    by_id = {s.context.span_id: s for s in finished}
    under_served = [
        s for s in finished if is_query(s) and served.context.span_id in ancestors(s, by_id)
    ]
    assert any("INSERT INTO tables" in str(s.attributes.get("db.statement")) for s in under_served)
    assert all(s.context.trace_id == oldest.trace_id for s in under_served)
    # The Enqueue call's own queries (the ticket stored) are in its trace too.
    assert any(is_query(s) and s.parent and s.parent.span_id == oldest.span_id for s in finished)

    # The matching loop and the sweeper query many times a second outside any
    # call: none of those queries is sent as a trace of its own.
    assert [s for s in finished if is_query(s) and s.parent is None] == []
