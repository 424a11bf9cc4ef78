"""A production replica writes JSON lines only: its own structlog events and the
standard library's logging (asyncpg, gRPC, migrations) alike, tracebacks inside."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from services.common.logs import configure


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


def test_the_standard_librarys_lines_are_json_lines_too(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(fmt="json", level="info")  # here: the test's stderr is the captured one
    try:
        raise ConnectionResetError("connection reset by peer")
    except ConnectionResetError as error:
        logging.getLogger("asyncpg.pool").warning("Failed to restore the pool", exc_info=error)
    logging.getLogger("services.common.db.migrations").info("applied migration %s", "0007")
    logging.getLogger("noisy").debug("below the level")
    structlog.get_logger("ours").info("table_created", table_id="t1")
    lines = capsys.readouterr().err.splitlines()
    docs = [json.loads(line) for line in lines]  # every line is one JSON document
    assert [(d["event"], d["level"]) for d in docs] == [
        ("Failed to restore the pool", "warning"),
        ("applied migration 0007", "info"),
        ("table_created", "info"),
    ]
    assert docs[0]["logger"] == "asyncpg.pool" and "timestamp" in docs[0]
    assert "ConnectionResetError: connection reset by peer" in docs[0]["exception"]
