"""Traces are off unless the OTEL_* variables ask for them; on, log lines name
the trace and span they were written in."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator

import pytest
import structlog
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import format_span_id, format_trace_id

import services.common
from services.common import otel, tracing
from services.common.config import ConfigError
from services.common.logs import configure


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_SERVICE_NAME": "rummy-game"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}, False),
        ({"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, False),
        ({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "console"}, True),
    ],
)
def test_only_the_otel_variables_turn_traces_on(environ: dict[str, str], on: bool) -> None:
    assert tracing.wanted(environ) is on


def test_without_them_nothing_is_traced_nor_stored() -> None:
    assert tracing.setup_tracing("rummy-game", {}) is False
    assert tracing.server_interceptors() == [] and tracing.client_interceptors() == []
    assert tracing.traceparent() is None


def test_asked_for_without_the_libraries_the_replica_does_not_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if the otel extra were not installed: the import fails.
    monkeypatch.delattr(services.common, "otel", raising=False)
    monkeypatch.setitem(sys.modules, "services.common.otel", None)
    with pytest.raises(ConfigError, match=r"pip install 'rummy\[otel\]'"):
        tracing.setup_tracing("rummy-game", {"OTEL_TRACES_EXPORTER": "console"})


def test_the_exporters_are_the_ones_named() -> None:
    (exporter,) = otel.exporters_from_env({"OTEL_TRACES_EXPORTER": "console"})
    assert isinstance(exporter, ConsoleSpanExporter)
    both = otel.exporters_from_env(
        {"OTEL_TRACES_EXPORTER": "otlp, console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}
    )
    try:
        grpc_otlp, console = both
        assert type(grpc_otlp).__module__.startswith("opentelemetry.exporter.otlp.proto.grpc")
        assert isinstance(console, ConsoleSpanExporter)
    finally:
        for made in both:
            made.shutdown()


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "no trace exporter 'zipkin' is installed"),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, "'carrier-pigeon' is not one of"),
    ],
)
def test_an_exporter_that_cannot_be_had_is_a_configuration_error(
    environ: dict[str, str], says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        otel.exporters_from_env(environ)


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """The test configures logging as a replica does; put back as it was after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        structlog.reset_defaults()
        root.handlers[:] = handlers
        root.setLevel(level)


def test_log_lines_name_the_trace_and_span_they_were_written_in(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(fmt="json", level="info")
    provider = otel.new_provider("rummy-test", [InMemorySpanExporter()])
    tracer = provider.get_tracer(__name__)
    log = structlog.get_logger("ours")
    with tracer.start_as_current_span("before traces are on"):
        log.info("off")
    tracing.start(provider)
    try:
        with tracer.start_as_current_span("a call") as span:
            log.info("in_a_call")
            logging.getLogger("asyncpg.pool").warning("from the standard library")
        log.info("between_calls")
    finally:
        tracing.stop()
        provider.shutdown()
    lines = {d["event"]: d for d in map(json.loads, capsys.readouterr().err.splitlines())}
    ids = {
        "trace_id": format_trace_id(span.get_span_context().trace_id),
        "span_id": format_span_id(span.get_span_context().span_id),
    }
    for event in ("in_a_call", "from the standard library"):
        assert {key: lines[event].get(key) for key in ids} == ids
    for event in ("off", "between_calls"):
        assert "trace_id" not in lines[event] and "span_id" not in lines[event]
