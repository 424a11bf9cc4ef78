"""structlog set-up: JSON lines in production, readable colours in a terminal.

Every line carries the context bound for the call being handled (request id,
player id, table id); hidden cards and secrets are never logged.
"""

from __future__ import annotations

import logging
import sys

import structlog

from services.common.interceptors import log_context


def configure(*, fmt: str = "auto", level: str = "info") -> None:
    console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if console else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            log_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
