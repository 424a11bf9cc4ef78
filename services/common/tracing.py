"""Traces (OpenTelemetry): off unless the standard OTEL_* variables ask for them.

Asked for by OTEL_TRACES_EXPORTER (``otlp``, ``console``, or any installed
exporter's name; ``none``: off), or by an OTLP endpoint
(OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) with the
exporter left to its default, ``otlp``. OTEL_SDK_DISABLED=true keeps them off
whatever else is set. The other variables are the SDK's, read by it as usual:
OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG),
OTEL_BSP_*, OTEL_EXPORTER_OTLP_* (endpoint, headers, protocol...).

The libraries come with the `otel` extra (``pip install 'rummy[otel]'``) and are
imported only when traces are asked for (`services.common.otel`); asked for
without them, a replica does not start (`ConfigError`). Off, every function
here costs a global read.

A match's trace: the Enqueue call's span (the queueing stream's, on whichever
replica) is stored with its ticket (`traceparent`, W3C form), since the table
is made later by the matching loop of any replica. That loop's table creation
(`continuing`) carries on the trace of its first table's oldest ticket and
links every other ticket's: one span cannot have several parents, and one
CreateTables call makes up to 16 tables. Its call to the game service, that
service's span and its queries follow in the same trace.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import grpc
import structlog

from services.common.config import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from services.common.otel import Tracing

log = structlog.get_logger(__name__)

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")

_on: Tracing | None = None


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether these variables ask for traces (see the module docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


def setup_tracing(service: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Turn traces on for this process if the environment asks for them (once:
    later calls change nothing); whether they are on. ``service``: the name
    spans carry unless OTEL_SERVICE_NAME gives one."""
    if _on is not None:
        return True
    if not wanted(environ):
        return False
    try:
        from services.common import otel
    except ImportError as error:
        raise ConfigError(
            f"OTEL_* variables ask for traces, but {error.name or 'OpenTelemetry'} is not"
            " installed: install the otel extra (pip install 'rummy[otel]')"
        ) from None
    provider = otel.new_provider(service, otel.exporters_from_env(environ))
    otel.set_global(provider)
    start(provider)
    log.info("tracing_on", service=service)
    return True


def start(provider: TracerProvider) -> None:
    """Trace with ``provider`` from now on: servers and channels made from now."""
    from services.common.otel import Tracing

    global _on
    stop()
    _on = Tracing(provider)


def stop() -> None:
    """Trace no more; servers and channels already made keep their interceptors."""
    global _on
    if _on is not None:
        _on.close()
        _on = None


def server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """To follow a replica's own interceptor (see `services.common.otel`)."""
    return [] if _on is None else _on.server_interceptors()


def client_interceptors() -> list[grpc.aio.ClientInterceptor]:
    return [] if _on is None else _on.client_interceptors()


def traceparent() -> str | None:
    """The current span's trace context in W3C ``traceparent`` form, to store."""
    return None if _on is None else _on.traceparent()


def continuing(
    name: str, traceparents: Sequence[str], **attributes: Any
) -> contextlib.AbstractContextManager[None]:
    """A span, current inside the block, that carries on the first of these
    stored trace contexts and links the others (none: a trace of its own);
    ``attributes`` are set on it under ``rummy.``."""
    if _on is None:
        return contextlib.nullcontext()
    return _on.continuing(name, traceparents, attributes)


def add_trace_ids(
    _logger: object, _name: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """structlog processor: the trace and span a line was logged in, if traced."""
    if _on is not None:
        ids = _on.ids()
        if ids is not None:
            event.setdefault("trace_id", ids[0])
            event.setdefault("span_id", ids[1])
    return event
