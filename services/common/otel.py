"""What tracing does once on, with the OpenTelemetry libraries of the `otel` extra.

Imported only by `services.common.tracing`, and only when traces are asked for:
a replica installed without the extra never imports it.

- Served calls: `opentelemetry-instrumentation-grpc`'s asyncio server
  interceptor, placed after the replica's own (`Gate`): the library's wrapper
  only takes response streams written as async generators (which ours are),
  not the coroutines that write through the context (`Gate`'s own wrappers,
  grpc health's Watch). So the span starts once `Gate` let the call in: a call
  refused for its token, its size or a limit has none; its metrics and logs
  tell of it. Health and reflection calls are not traced (probes, every few
  seconds).
- Calls made (the matchmaker's to the game service): the library's client
  interceptors, which send the trace context along in the call's metadata.
- PostgreSQL: `opentelemetry-instrumentation-asyncpg`, inside a traced call.
  A query outside any (the matching loop, the turn sweeper, health checks: many
  a second) is not sent as a trace of one span: see `QueriesInCalls`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

import grpc
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
from opentelemetry.instrumentation.grpc import (
    aio_client_interceptors,
    aio_server_interceptor,
    filters,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.trace.span import format_span_id, format_trace_id
from opentelemetry.util.types import Attributes

from services.common.config import ConfigError

TRACEPARENT = "traceparent"
EXPORTERS = "opentelemetry_traces_exporter"
"""The entry-point group under which exporter packages name their exporters."""
OTLP_BY_PROTOCOL = {"grpc": "otlp_proto_grpc", "http/protobuf": "otlp_proto_http"}
"""What `otlp` means, by OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL (default grpc)."""
QUERY_SYSTEM = ("db.system", "db.system.name")
"""The attribute a database client span carries (older and current conventions)."""
_UNTRACED = filters.negate(
    filters.any_of(
        filters.service_prefix("grpc.health."), filters.service_prefix("grpc.reflection.")
    )
)


class QueriesInCalls(Sampler):
    """Samples as ``inner`` does (the sampler OTEL_TRACES_SAMPLER names), but for
    a query made outside any traced call, which is dropped: the background loops
    query many times a second, and a trace of one query tells nothing."""

    def __init__(self, inner: Sampler) -> None:
        self._inner = inner

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: trace.TraceState | None = None,
    ) -> SamplingResult:
        if (
            kind is SpanKind.CLIENT
            and attributes
            and any(key in attributes for key in QUERY_SYSTEM)
            and not trace.get_current_span(parent_context).get_span_context().is_valid
        ):
            return SamplingResult(Decision.DROP)
        return self._inner.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )

    def get_description(self) -> str:
        return f"QueriesInCalls{{{self._inner.get_description()}}}"


def _env_sampler() -> Sampler:
    # The one OTEL_TRACES_SAMPLER (and _ARG) names: what the SDK's provider
    # picks by itself when given none.
    return TracerProvider(shutdown_on_exit=False, resource=Resource.get_empty()).sampler


def exporters_from_env(environ: Mapping[str, str] = os.environ) -> list[SpanExporter]:
    """The exporters OTEL_TRACES_EXPORTER names (default otlp), each configured by
    its own OTEL_EXPORTER_* variables."""
    names = [n.strip() for n in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    exporters: list[SpanExporter] = []
    for name in filter(None, names):
        if name == "otlp":
            protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
            )
            if protocol not in OTLP_BY_PROTOCOL:
                raise ConfigError(
                    f"OTEL_EXPORTER_OTLP_PROTOCOL: {protocol!r} is not one of"
                    f" {', '.join(OTLP_BY_PROTOCOL)}"
                )
            name = OTLP_BY_PROTOCOL[protocol]
        found = entry_points(group=EXPORTERS, name=name)
        if not found:
            known = sorted({"otlp", *(e.name for e in entry_points(group=EXPORTERS))})
            raise ConfigError(
                f"OTEL_TRACES_EXPORTER: no trace exporter {name!r} is installed"
                f" (installed: {', '.join(known)})"
            )
        exporters.append(next(iter(found)).load()())
    return exporters


def new_provider(service: str, exporters: Sequence[SpanExporter]) -> TracerProvider:
    """A provider sending to ``exporters`` in batches, named by OTEL_SERVICE_NAME
    (or OTEL_RESOURCE_ATTRIBUTES), else ``service``."""
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service}))
    provider = TracerProvider(resource=resource, sampler=QueriesInCalls(_env_sampler()))
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def set_global(provider: TracerProvider) -> None:
    """The process's provider, for any other library that traces."""
    trace.set_tracer_provider(provider)


class Tracing:
    """Tracing on, with one provider: queries instrumented until `close`."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer(__name__)
        self._propagator = TraceContextTextMapPropagator()
        self._queries = AsyncPGInstrumentor()
        self._queries.instrument(tracer_provider=provider)

    def close(self) -> None:
        self._queries.uninstrument()

    def server_interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return [aio_server_interceptor(tracer_provider=self.provider, filter_=_UNTRACED)]

    def client_interceptors(self) -> list[grpc.aio.ClientInterceptor]:
        return list(aio_client_interceptors(tracer_provider=self.provider, filter_=_UNTRACED))

    def traceparent(self) -> str | None:
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier)
        return carrier.get(TRACEPARENT)

    @contextlib.contextmanager
    def continuing(
        self, name: str, traceparents: Sequence[str], attributes: Mapping[str, Any]
    ) -> Iterator[None]:
        parents = [self._propagator.extract({TRACEPARENT: t}) for t in traceparents]
        spans = [trace.get_current_span(p).get_span_context() for p in parents]
        valid = [i for i, s in enumerate(spans) if s.is_valid]
        with self._tracer.start_as_current_span(
            name,
            # A fresh context, not the caller's: a background loop's span is no parent.
            context=parents[valid[0]] if valid else Context(),
            links=[Link(spans[i]) for i in valid[1:]],
            attributes={f"rummy.{key}": value for key, value in attributes.items()},
        ):
            yield

    @staticmethod
    def ids() -> tuple[str, str] | None:
        span = trace.get_current_span().get_span_context()
        if not (span.is_valid and span.trace_flags.sampled):
            return None
        return format_trace_id(span.trace_id), format_span_id(span.span_id)
