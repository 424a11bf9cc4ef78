"""Queues are keyed by rule set and effective options; their metrics move."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.matchmaker import endings, standing

from .harness import backend, cancel, enqueue, host, players, queue_until_match, store


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_rami51_tables_match_only_with_the_same_threshold(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        people = await players(b.channel(), 4, "T")
        thirty = mm.EnqueueRequest(
            table_size=2, ruleset="rami51", options=table_pb2.TableOptions(opening_threshold=30)
        )
        default = mm.EnqueueRequest(table_size=2, ruleset="rami51")
        explicit = mm.EnqueueRequest(
            table_size=2, ruleset="rami51", options=table_pb2.TableOptions(opening_threshold=40)
        )
        matched_before = _value("rummy_matches_total", queue="2p-rami51")
        waited_before = _value(
            "rummy_match_wait_seconds_count", queue="2p-rami51", outcome="matched"
        )
        results = await asyncio.gather(
            queue_until_match(people[0], thirty),
            queue_until_match(people[1], default),
            queue_until_match(people[2], thirty),
            queue_until_match(people[3], explicit),
        )
        tables = [m.table_id for _, m in results]
        # 40 is rami51's own default: asking for it or for nothing is one queue.
        assert tables[0] == tables[2] and tables[1] == tables[3] and tables[0] != tables[1]
        assert _value("rummy_matches_total", queue="2p-rami51") == matched_before + 2
        assert (
            _value("rummy_match_wait_seconds_count", queue="2p-rami51", outcome="matched")
            == waited_before + 4
        )
        assert _value("rummy_matching_loop_seconds_count") > 0


async def test_queue_metrics_follow_tickets_and_keep_private_tables_apart(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob, carol = await players(b.channel(), 3, "M")

        def ended(queue: str, outcome: str) -> float:
            return _value("rummy_tickets_ended_total", queue=queue, outcome=outcome)

        before = {
            (q, o): ended(q, o)
            for q in ("2p-cafe", "3p-cafe-private")
            for o in ("cancelled", "expired")
        }
        first = await enqueue(alice, table_size=2)
        await enqueue(alice, table_size=2, replace_existing=True)
        leaving = await enqueue(bob, table_size=2)
        await cancel(bob, leaving.ticket_id)
        hosting = await host(carol, table_size=3)
        await standing.record_depth(db.con)
        assert _value("rummy_queue_depth", queue="2p-cafe") == 1
        assert _value("rummy_queue_depth", queue="3p-cafe-private") == 1
        assert _value("rummy_queue_depth", queue="3p-cafe") == 0
        # A replaced ticket is a cancelled one too.
        await first.end()
        assert ended("2p-cafe", "cancelled") == before["2p-cafe", "cancelled"] + 2
        await db.con.execute("UPDATE tickets SET expires_at = now() WHERE invite_code IS NOT NULL")
        await endings.expire(db.con)
        await hosting.end()
        assert ended("3p-cafe-private", "expired") == before["3p-cafe-private", "expired"] + 1
        assert ended("2p-cafe", "expired") == before["2p-cafe", "expired"]
