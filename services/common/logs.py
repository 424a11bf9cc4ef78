"""structlog set-up: JSON lines in production, readable colours in a terminal.

Every line carries the context bound for the call being handled (request id,
player id, table id; trace and span ids when traces are on); hidden cards and
secrets are never logged. Lines from the standard library's logging (asyncpg,
gRPC, migrations) go through the same renderer at the same level: a production
replica writes nothing but JSON lines, tracebacks included.
"""

from __future__ import annotations

import logging
import sys

import structlog

from services.common.identity import log_context
from services.common.tracing import add_trace_ids


def configure(*, fmt: str = "auto", level: str = "info") -> None:
    console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if console else structlog.processors.JSONRenderer()
    )
    threshold = logging.getLevelNamesMapping()[level.upper()]
    context: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        log_context,
        add_trace_ids,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*context, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*context, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(threshold)
