"""Scrape the metrics of a real server after a played game: the numbers moved."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Iterator

import asyncpg
import grpc
import pytest
from prometheus_client import start_http_server
from prometheus_client.parser import text_string_to_metric_families

from services.common.pb.rummy.v1 import game_pb2
from services.game.server import ACTIVE_TABLES_SQL

from .harness import WAIT_S, create_table, login, play_to_end, shuffled_deck


@pytest.fixture(scope="module")
def metrics_url() -> Iterator[str]:
    """The process's /metrics over HTTP, as Prometheus scrapes it."""
    server, thread = start_http_server(0, addr="127.0.0.1")
    try:
        yield f"http://127.0.0.1:{server.server_port}/metrics"
    finally:
        server.shutdown()
        thread.join(5)


def _scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


class Scrape:
    def __init__(self, url: str) -> None:
        self.samples = _scrape(url)

    def __call__(self, name: str, **labels: str) -> float:
        return self.samples.get((name, frozenset(labels.items())), 0.0)


async def test_a_played_game_moves_the_metrics(channel: grpc.aio.Channel, metrics_url: str) -> None:
    _value = Scrape(metrics_url)
    before = {
        "draws": _value("rummy_actions_total", action="DrawStock", outcome="applied")
        + _value("rummy_actions_total", action="TakeDiscard", outcome="applied"),
        "discards": _value("rummy_actions_total", action="Discard", outcome="applied"),
        "games": _value("rummy_games_finished_total", ruleset="cafe", reason="rounds_played"),
        "rpcs": _value(
            "rummy_rpc_requests_total", service="GameService", method="Discard", code="OK"
        ),
        "refused": _value(
            "rummy_rpc_requests_total",
            service="GameService",
            method="Discard",
            code="FAILED_PRECONDITION",
        ),
        "tx": _value("rummy_db_transaction_seconds_count", op="action"),
    }
    players = [await login(channel, f"M{i}") for i in range(2)]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(40))
    view = await players[0].view(table_id)
    first = players[view.current_seat]
    refused = first.game.Discard(
        game_pb2.DiscardRequest(table_id=table_id, card_id=view.hand[0].id), metadata=first.auth
    )
    try:
        await refused
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    await play_to_end(players, table_id)
    _value = Scrape(metrics_url)
    draws = _value("rummy_actions_total", action="DrawStock", outcome="applied") + _value(
        "rummy_actions_total", action="TakeDiscard", outcome="applied"
    )
    discards = _value("rummy_actions_total", action="Discard", outcome="applied")
    assert draws > before["draws"]
    assert discards > before["discards"]
    assert _value("rummy_games_finished_total", ruleset="cafe", reason="rounds_played") == (
        before["games"] + 1
    )
    assert (
        _value("rummy_rpc_requests_total", service="GameService", method="Discard", code="OK")
        - before["rpcs"]
        == discards - before["discards"]
    )
    assert (
        _value(
            "rummy_rpc_requests_total",
            service="GameService",
            method="Discard",
            code="FAILED_PRECONDITION",
        )
        == before["refused"] + 1
    )
    assert _value("rummy_actions_total", action="Discard", outcome="MUST_DRAW_FIRST") >= 1
    assert _value("rummy_db_transaction_seconds_count", op="action") > before["tx"]
    assert _value("rummy_db_pool_connections", service="GameService", state="max") >= 1


async def test_a_watch_the_client_closes_counts_as_cancelled(
    channel: grpc.aio.Channel, metrics_url: str
) -> None:
    """An app that stops watching (Ctrl-C, a screen closed) is not a server error."""
    labels = {"service": "GameService", "method": "Watch"}
    before = Scrape(metrics_url)
    players = [await login(channel, f"W{i}") for i in range(2)]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(41))
    watcher = players[0].watch(table_id)
    assert await watcher.next() is not None
    watcher.call.cancel()
    async with asyncio.timeout(WAIT_S):
        while True:
            after = Scrape(metrics_url)
            cancelled = after("rummy_rpc_requests_total", code="CANCELLED", **labels)
            if cancelled > before("rummy_rpc_requests_total", code="CANCELLED", **labels):
                break
            await asyncio.sleep(0.05)
    unknown = after("rummy_rpc_requests_total", code="UNKNOWN", **labels)
    assert unknown == before("rummy_rpc_requests_total", code="UNKNOWN", **labels)


async def test_the_active_tables_count_counts_the_active_tables(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(4)]
    await create_table(channel, players[:2])
    ended = await create_table(channel, players[2:])
    await players[2].call("Leave", game_pb2.LeaveRequest(table_id=ended))  # the game ends
    con = await asyncpg.connect(fresh_dsn)
    try:
        by_status = await con.fetchval("SELECT count(*) FROM tables WHERE status = 'active'")
        assert await con.fetchval(ACTIVE_TABLES_SQL) == by_status == 1
    finally:
        await con.close()
