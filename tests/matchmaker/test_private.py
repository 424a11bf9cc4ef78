"""Private tables: an invite code friends join; the table starts when full."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.matchmaker import endings, queueing
from services.matchmaker.queueing import INVITE_ALPHABET
from tests.game.harness import Player, play_to_end

from .harness import (
    Store,
    backend,
    cancel,
    enqueue,
    host,
    join,
    on,
    players,
    refusal,
    store,
    stub,
)


async def test_friends_join_with_the_code_and_the_table_starts_when_full(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        owner, ann, ben = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3)
        code = hosting.ticket.invite_code
        assert len(code) == 6 and set(code) <= set(INVITE_ALPHABET)
        assert hosting.ticket.state == mm.TICKET_STATE_QUEUED
        # Codes are typed on phones: any case, stray spaces.
        first = await join(ann, f"  {code.lower()} ")
        assert first.ticket.invite_code == code and first.ticket.table_size == 3
        progress = await hosting.until("progress")
        while progress.seats_taken < 2:
            progress = await hosting.until("progress")
        assert progress.seats_taken == 2
        second = await join(ben, code)
        await asyncio.gather(hosting.end(), first.end(), second.end())
        matches = [w.match for w in (hosting, first, second)]
        assert all(m is not None for m in matches)
        assert len({m.table_id for m in matches if m is not None}) == 1
        assert [m.seat for m in matches if m is not None] == [0, 1, 2]
        table_id = hosting.match.table_id if hosting.match else ""
        seated = [r["player_id"] for r in await db.seats(table_id)]
        assert seated == [owner.player_id, ann.player_id, ben.player_id]


async def test_an_unknown_code_is_not_found(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (ann,) = await players(b.channel(), 1)
        for code in ("ZZZZZZ", "", "not a code", "AB\x00CD"):
            call = stub(ann).JoinPrivateTable(
                mm.JoinPrivateTableRequest(invite_code=code), metadata=ann.auth
            )
            code_, info = await refusal(call.read())
            assert (code_, info.reason) == (grpc.StatusCode.NOT_FOUND, "INVITE_NOT_FOUND")
        assert await db.count("SELECT count(*) FROM tickets") == 0


async def test_a_full_table_refuses_more_guests(fresh_dsn: str) -> None:
    # No matching loop: the table stays full, not yet started, while a third knocks.
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, late = await players(b.channel(), 3)
        hosting = await host(owner, table_size=2)
        code = hosting.ticket.invite_code
        guest = await join(ann, code)
        call = stub(late).JoinPrivateTable(
            mm.JoinPrivateTableRequest(invite_code=code), metadata=late.auth
        )
        status, info = await refusal(call.read())
        assert (status, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL")
        assert await b.matcher().match_once() == 2
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.match is not None and guest.match is not None
        assert hosting.match.table_id == guest.match.table_id
        # Just started: still full, for a friend arriving late.
        call = stub(late).JoinPrivateTable(
            mm.JoinPrivateTableRequest(invite_code=code), metadata=late.auth
        )
        status, info = await refusal(call.read())
        assert (status, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL")
        # Long after, the code leads nowhere.
        await db.con.execute(
            "UPDATE tickets SET ended_at = ended_at - make_interval(secs => $2)"
            " WHERE invite_code = $1",
            code,
            queueing.STARTED_RECENTLY_S + 1,
        )
        call = stub(late).JoinPrivateTable(
            mm.JoinPrivateTableRequest(invite_code=code), metadata=late.auth
        )
        status, info = await refusal(call.read())
        assert (status, info.reason) == (grpc.StatusCode.NOT_FOUND, "INVITE_NOT_FOUND")
        assert (
            await db.count("SELECT count(*) FROM tickets WHERE player_id = $1", late.player_id) == 0
        )


async def test_a_private_table_does_not_start_until_full(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, stranger = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3)
        guest = await join(ann, hosting.ticket.invite_code)
        # A public ticket of the same size and rules is no friend of theirs.
        public = await enqueue(stranger, table_size=3)
        assert await b.matcher().match_once() == 0
        for waiter in (hosting, guest, public):
            assert await db.state(waiter.ticket_id) == "queued"


async def test_the_host_closing_the_stream_cancels_everyone(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        owner, ann, ben, late = await players(b.channel(), 4)
        hosting = await host(owner, table_size=4)
        code = hosting.ticket.invite_code
        guests = [await join(ann, code), await join(ben, code)]
        hosting.drop()
        await asyncio.gather(*(g.end() for g in guests))
        for g in guests:
            assert g.final.state == mm.TICKET_STATE_CANCELLED
            assert "host" in g.final.end_message
            assert g.match is None

        async def all_cancelled(s: Store) -> bool:
            return await s.count("SELECT count(*) FROM tickets WHERE state <> 'cancelled'") == 0

        await db.eventually(all_cancelled, "every ticket of the private table is cancelled")
        call = stub(late).JoinPrivateTable(
            mm.JoinPrivateTableRequest(invite_code=code), metadata=late.auth
        )
        status, info = await refusal(call.read())
        assert (status, info.reason) == (grpc.StatusCode.NOT_FOUND, "INVITE_NOT_FOUND")


async def test_cancel_by_the_host_closes_the_table_and_by_a_guest_frees_a_seat(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, ben, cid = await players(b.channel(), 4)
        hosting = await host(owner, table_size=3)
        code = hosting.ticket.invite_code
        ann_seat = await join(ann, code)
        ben_seat = await join(ben, code)
        # Ben changes his mind: his seat is free again, the table still waits.
        assert (await cancel(ben, ben_seat.ticket_id)).state == mm.TICKET_STATE_CANCELLED
        await ben_seat.end()
        assert await db.state(hosting.ticket_id) == "queued"
        cid_seat = await join(cid, code)
        # The host closes the table: the guests are told.
        closed = await cancel(owner, hosting.ticket_id)
        assert closed.state == mm.TICKET_STATE_CANCELLED
        await asyncio.gather(hosting.end(), ann_seat.end(), cid_seat.end())
        for w in (ann_seat, cid_seat):
            assert w.final.state == mm.TICKET_STATE_CANCELLED and "host" in w.final.end_message
        assert await b.matcher().match_once() == 0


async def test_a_private_table_fills_with_bots_after_the_hosts_wait(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=3, fill_with_bots_after_ms=60_000)
        guest = await join(ann, hosting.ticket.invite_code)
        assert await b.matcher().match_once() == 0, "the host's wait is not over"
        await db.backdate(hosting.ticket_id, 60)
        assert await b.matcher().match_once() == 2
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.match is not None and guest.match is not None
        assert hosting.match.table_id == guest.match.table_id
        assert hosting.match.table_size == 3
        rows = await db.seats(hosting.match.table_id)
        assert [(r["player_id"], r["is_bot"]) for r in rows][:2] == [
            (owner.player_id, False),
            (ann.player_id, False),
        ]
        assert len(rows) == 3 and rows[2]["is_bot"]


async def test_guests_are_told_when_the_hosts_ticket_expires(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, late = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3)
        code = hosting.ticket.invite_code
        guest = await join(ann, code)
        # Only the host's ticket is past its lifetime (it is the oldest).
        await db.con.execute(
            "UPDATE tickets SET expires_at = now() WHERE id = $1", uuid.UUID(hosting.ticket_id)
        )
        await endings.expire(db.con)
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.final.state == mm.TICKET_STATE_EXPIRED
        assert guest.final.state == mm.TICKET_STATE_CANCELLED
        assert guest.final.end_message == endings.HOST_EXPIRED
        call = stub(late).JoinPrivateTable(
            mm.JoinPrivateTableRequest(invite_code=code), metadata=late.auth
        )
        status, info = await refusal(call.read())
        assert (status, info.reason) == (grpc.StatusCode.NOT_FOUND, "INVITE_NOT_FOUND")


async def test_a_host_queueing_again_closes_the_private_table(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=3)
        guest = await join(ann, hosting.ticket.invite_code)
        public = await enqueue(owner, table_size=2, replace_existing=True)
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.final.state == mm.TICKET_STATE_CANCELLED
        assert guest.final.state == mm.TICKET_STATE_CANCELLED
        assert guest.final.end_message == endings.HOST_LEFT
        assert await db.state(public.ticket_id) == "queued"


async def test_friends_joining_at_once_take_no_more_seats_than_the_table_has(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, *friends = await players(b.channel(), 7)
        hosting = await host(owner, table_size=3)
        code = hosting.ticket.invite_code

        async def knock(friend: Player) -> str:
            call = stub(friend).JoinPrivateTable(
                mm.JoinPrivateTableRequest(invite_code=code), metadata=friend.auth
            )
            try:
                await call.read()
            except grpc.aio.AioRpcError as error:
                info = error_info(error)
                return f"{error.code().name} {info.reason if info else ''}"
            return "seated"

        answers = await asyncio.gather(*(knock(f) for f in friends))
        assert sorted(answers) == ["FAILED_PRECONDITION TABLE_FULL"] * 4 + ["seated"] * 2
        assert (
            await db.count(
                "SELECT count(*) FROM tickets WHERE invite_code = $1 AND state = 'queued'", code
            )
            == 3
        )
        assert await b.matcher().match_once() == 3


async def test_private_tables_waiting_for_friends_do_not_hold_up_the_public_queue(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        hosts = await players(b.channel(), 3, "H")
        ann, ben = await players(b.channel(), 2, "Q")
        for h in hosts:
            await host(h, table_size=4)
        pair = [await enqueue(ann, table_size=2), await enqueue(ben, table_size=2)]
        matcher = b.matcher()
        matcher._batch = 3  # a claim sees only the three private tables at first
        seated = 0
        for _ in range(3):
            seated += await matcher.match_once()
        assert seated == 2
        await asyncio.gather(*(w.end() for w in pair))
        assert all(w.match is not None for w in pair)
        assert await db.count("SELECT count(*) FROM tickets WHERE state = 'queued'") == 3


async def test_a_new_table_never_gets_a_code_already_waiting(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    draws = iter(["SAME22", "SAME22", "OTHER3"])
    monkeypatch.setattr(queueing, "new_invite_code", lambda: next(draws))
    async with backend(fresh_dsn, matching=False) as b:
        first, second = await players(b.channel(), 2)
        assert (await host(first, table_size=2)).ticket.invite_code == "SAME22"
        assert (await host(second, table_size=2)).ticket.invite_code == "OTHER3"


async def test_a_private_table_that_fills_starts_however_many_wait_for_friends(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        lonely = await players(b.channel(), 5, "L")
        owner, friend = await players(b.channel(), 2, "F")
        for h in lonely[:3]:
            await host(h, table_size=4)
        hosting = await host(owner, table_size=2)
        for h in lonely[3:]:
            await host(h, table_size=4)
        guest = await join(friend, hosting.ticket.invite_code)
        matcher = b.matcher()
        # A claim as small as the tables waiting for friends: they are left out.
        matcher._batch = 3
        assert await matcher.match_once() == 2
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.match is not None and guest.match is not None
        assert await db.count("SELECT count(*) FROM tickets WHERE state = 'queued'") == 5


async def test_a_guest_taking_a_seat_as_the_host_closes_the_table_is_told_too(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=3)
        stored = asyncio.Event()
        go_on = asyncio.Event()
        real = queueing.queue_at_once

        async def held(*args: Any, **kwargs: Any) -> Any:
            row = await real(*args, **kwargs)
            stored.set()
            await go_on.wait()  # the seat is taken, not yet committed
            return row

        monkeypatch.setattr(queueing, "queue_at_once", held)
        joining = asyncio.create_task(join(ann, hosting.ticket.invite_code))
        await asyncio.wait_for(stored.wait(), 10)
        closing = asyncio.create_task(cancel(owner, hosting.ticket_id))

        async def waits_on_the_guest(s: Store) -> bool:
            return bool(
                await s.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database()"
                )
            )

        await db.eventually(waits_on_the_guest, "the host's cancel waits for the guest's seat")
        go_on.set()
        guest = await joining
        await closing
        await guest.end()
        assert guest.final.state == mm.TICKET_STATE_CANCELLED
        assert guest.final.end_message == endings.HOST_LEFT


async def test_tickets_in_neighbouring_claims_still_meet(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b:
        lone = await players(b.channel(), 3, "W")
        ann, ben = await players(b.channel(), 2, "N")
        for p in lone:
            await enqueue(p, table_size=4)  # three of four: no table yet
        pair = [await enqueue(ann, table_size=2), await enqueue(ben, table_size=2)]
        matcher = b.matcher()
        # Claims of four: Ann is the last of the first, Ben is past it.
        matcher._batch = 4
        assert await matcher.match_once() == 0
        assert await matcher.match_once() == 2
        await asyncio.gather(*(w.end() for w in pair))
        assert pair[0].match is not None and pair[1].match is not None


async def test_six_friends_play_a_contract_private_table_to_the_end(fresh_dsn: str) -> None:
    """Seed 004: « La version à contrats se prête donc mieux aux tablées de quatre à
    six », with « un jeu et un joker de plus au-delà de quatre joueurs »: a private
    table of six is dealt the 158 cards and played through its seven deals, through
    the real matchmaker and game servers."""
    async with backend(fresh_dsn) as b:
        people = await players(b.channel(), 6)
        options = table_pb2.TableOptions(turn_cap=60)
        hosting = await host(people[0], table_size=6, ruleset="contract", options=options)
        code = hosting.ticket.invite_code
        guests = [await join(p, code) for p in people[1:]]
        await asyncio.gather(hosting.end(), *(g.end() for g in guests))
        match = hosting.match
        assert match is not None and match.table_size == 6
        game_channel = grpc.aio.insecure_channel(match.game_target)
        try:
            seated = [Player(game_channel, p.token, p.player_id, p.name) for p in people]
            view = await seated[0].view(match.table_id)
            assert view.ruleset == "contract" and len(view.seats) == 6
            dealt = sum(s.card_count for s in view.seats) + len(view.discard_pile)
            assert dealt + view.stock_size == 158 and dealt == 6 * 10 + 1
            await play_to_end(seated, match.table_id, max_turns=7 * 60 + 7)
            view = await seated[0].view(match.table_id)
            assert view.phase == table_pb2.PHASE_GAME_OVER
            assert [r.round for r in view.round_results] == list(range(1, 8))
            totals = [s.score_total for s in view.seats]
            assert view.result.winner_seat == totals.index(min(totals))
        finally:
            await game_channel.close()


async def test_a_host_alone_at_a_contract_table_of_six_plays_five_bots_to_the_end(
    fresh_dsn: str,
) -> None:
    """A private table of six fills with bots after the host's wait: the host is
    seated with five bot seats, and the game is played to its end. Short turns and a
    short turn cap keep it quick: the host never moves, so the clock plays its
    turns."""
    async with backend(fresh_dsn) as b:
        (owner,) = await players(b.channel(), 1)
        options = table_pb2.TableOptions(turn_timer_ms=100, turn_cap=12, claim_window_ms=500)
        hosting = await host(
            owner,
            table_size=6,
            ruleset="contract",
            options=options,
            fill_with_bots_after_ms=100,
        )
        await hosting.end()
        match = hosting.match
        assert match is not None and match.table_size == 6
        game_channel = grpc.aio.insecure_channel(match.game_target)
        try:
            seated = on(owner, game_channel)
            view = await seated.view(match.table_id)
            assert view.ruleset == "contract" and len(view.seats) == 6
            first, *others = view.seats
            assert (first.player_id, first.is_bot) == (owner.player_id, False)
            assert all(s.is_bot for s in others) and len({s.player_id for s in others}) == 5
            async with asyncio.timeout(40):
                while view.phase != table_pb2.PHASE_GAME_OVER:
                    await asyncio.sleep(0.2)
                    view = await seated.view(match.table_id)
            assert [r.round for r in view.round_results] == list(range(1, 8))
        finally:
            await game_channel.close()


@pytest.mark.parametrize(
    ("ruleset", "size", "private", "says"),
    [
        ("cafe", 6, True, "only classic and contract private tables seat up to 6"),
        ("rami51", 5, True, "only classic and contract private tables seat up to 6"),
        ("contract", 5, False, "tables of 5 or 6 are private"),
        ("classic", 7, True, "seats 2 to 6"),
        # Too small: the rule set's own range, not a sentence on larger tables.
        ("classic", 1, True, "A private table seats 2 to 6 players in classic."),
        ("contract", 0, True, "A private table seats 2 to 6 players in contract."),
        ("cafe", 1, True, "A private table seats 2 to 4 players in cafe."),
    ],
)
async def test_tables_of_five_or_six_are_private_classic_or_contract_ones(
    fresh_dsn: str, ruleset: str, size: int, private: bool, says: str
) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        call = (
            stub(alice).CreatePrivateTable(
                mm.CreatePrivateTableRequest(table_size=size, ruleset=ruleset),
                metadata=alice.auth,
            )
            if private
            else stub(alice).Enqueue(
                mm.EnqueueRequest(table_size=size, ruleset=ruleset), metadata=alice.auth
            )
        )
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await asyncio.wait_for(call.read(), 10)
        info = error_info(failure.value)
        assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert info is not None and info.reason == "TABLE_SIZE_INVALID"
        assert says in (failure.value.details() or ""), failure.value.details()
        assert await db.count("SELECT count(*) FROM tickets") == 0
