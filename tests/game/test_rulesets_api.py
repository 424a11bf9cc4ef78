"""Every rule set played to its end over the API, by clients that see only their seat."""

from __future__ import annotations

import grpc

from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.ruleset import CONTRACT

from .harness import LONG_TURNS_MS, address, login, play_to_end, service_auth, start_replicas


async def _table(
    channel: grpc.aio.Channel,
    players: list,
    ruleset: str,
    deck_order: list[int] | None = None,
    **options: object,
) -> str:
    stub = tables_pb2_grpc.TableServiceStub(channel)
    reply = await stub.CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset=ruleset,
            options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS, **options),
            players=[
                tables_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name) for p in players
            ],
            deck_order=deck_order or [],
        ),
        metadata=service_auth(),
    )
    for seat, p in enumerate(players):
        p.seat = seat
    return str(reply.table_id)


async def test_rami51_to_200_deals_again_until_a_winner_reaches_200(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"R{i}") for i in range(2)]
    table_id = await _table(channel, players, "rami51", to_200=True, opening_threshold=30)
    await play_to_end(players, table_id, max_turns=3_000)
    view = await players[0].view(table_id)
    assert view.options.to_200 and view.options.opening_threshold == 30
    running = [0, 0]
    for n, r in enumerate(view.round_results, start=1):
        # Each deal starts because nobody had reached 200 yet (a heavy first deal,
        # doubled, may reach it at once).
        assert max(running) < 200, f"deal {n} was dealt after 200 was reached"
        # Only each deal's winner scores.
        assert [s.points for s in r.scores if s.seat != r.winner_seat] == [0]
        for s in r.scores:
            running[s.seat] += s.points
    assert max(running) >= 200, "the game ended before anyone reached 200"
    assert running == [s.score_total for s in view.seats]
    assert view.phase == table_pb2.PHASE_GAME_OVER


async def test_classic_is_played_until_one_player_is_left(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"C{i}") for i in range(2)]
    table_id = await _table(channel, players, "classic")
    await play_to_end(players, table_id, max_turns=5_000)
    view = await players[0].view(table_id)
    assert view.options.elimination_cap == 100
    statuses = [s.status for s in view.seats]
    assert statuses.count(table_pb2.SEAT_STATUS_ELIMINATED) == 1
    for r in view.round_results:
        winner = next(s for s in r.scores if s.seat == r.winner_seat)
        assert winner.points in (-10, -20)


async def test_contract_plays_all_seven_deals(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"K{i}") for i in range(2)]
    table_id = await _table(channel, players, "contract", turn_cap=30)
    await play_to_end(players, table_id, max_turns=3_000)
    view = await players[0].view(table_id)
    assert [r.round for r in view.round_results] == list(range(1, 8))
    assert view.phase == table_pb2.PHASE_GAME_OVER


async def test_rami51_reposer_puts_the_discard_back(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await _table(channel, players, "rami51")
    first = players[0]
    await first.game.TakeDiscard(
        game_pb2.TakeDiscardRequest(table_id=table_id), metadata=first.auth
    )
    with_card = await first.view(table_id)
    taken = with_card.taken_discard_id
    try:
        await first.game.Discard(
            game_pb2.DiscardRequest(
                table_id=table_id,
                card_id=with_card.hand[0].id
                if with_card.hand[0].id != taken
                else with_card.hand[1].id,
            ),
            metadata=first.auth,
        )
        raise AssertionError("discarding before using the taken card was accepted")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        info = error_info(error)
        assert info is not None and info.reason == "TAKEN_CARD_UNUSED"
    reply = await first.game.Reposer(
        game_pb2.ReposerRequest(table_id=table_id), metadata=first.auth
    )
    assert reply.view.phase == table_pb2.PHASE_DRAW
    assert reply.view.discard_top.id == taken
    assert all(c.id != taken for c in reply.view.hand)
    # Every seat's view says the discard is not on offer this turn.
    assert reply.view.discard_put_back
    assert all([(await p.view(table_id)).discard_put_back for p in players])
    try:
        await first.game.TakeDiscard(
            game_pb2.TakeDiscardRequest(table_id=table_id), metadata=first.auth
        )
        raise AssertionError("taking the put-back card again was accepted")
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        assert info is not None and info.reason == "REPOSER_NOT_ALLOWED"
    drawn = await first.game.DrawStock(
        game_pb2.DrawStockRequest(table_id=table_id), metadata=first.auth
    )
    assert drawn.view.phase == table_pb2.PHASE_PLAY and not drawn.view.discard_put_back


async def test_a_contested_claim_from_two_replicas_goes_by_play_order(fresh_dsn: str) -> None:
    servers = await start_replicas(fresh_dsn, 2)
    channels = [grpc.aio.insecure_channel(address(s)) for s in servers]
    try:
        players = [await login(channels[0], f"M{i}") for i in range(3)]
        table_id = await _table(channels[0], players, "contract", claim_window_ms=10_000)
        active, nearest, farther = players
        on_b = [type(p)(channels[1], p.token, p.player_id, p.name) for p in players]
        before = await active.view(table_id)
        top = before.discard_top.id
        await active.game.DrawStock(
            game_pb2.DrawStockRequest(table_id=table_id), metadata=active.auth
        )
        # The farther seat claims first, on the other replica; then both race.
        claim = game_pb2.ClaimRequest(table_id=table_id, card_id=top)
        await on_b[2].game.Claim(claim, metadata=farther.auth)
        await nearest.game.Claim(claim, metadata=nearest.auth)
        sizes = {p.seat: (await p.view(table_id)).seats[p.seat].card_count for p in players}
        mine = await active.view(table_id)
        loose = next(
            c.id
            for c in mine.hand
            if not CONTRACT.deck.is_joker(c.id) and c.id != mine.taken_discard_id
        )
        await active.game.Discard(
            game_pb2.DiscardRequest(table_id=table_id, card_id=loose), metadata=active.auth
        )
        after = {p.seat: (await p.view(table_id)).seats[p.seat].card_count for p in players}
        assert after[1] == sizes[1] + 2, "the seat nearest in play order takes card + penalty"
        assert after[2] == sizes[2]
        view = await nearest.view(table_id)
        assert top in [c.id for c in view.hand]
    finally:
        for ch in channels:
            await ch.close()
        for s in servers:
            await s.stop(0)


async def test_a_contract_table_may_agree_on_its_own_contracts(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"L{i}") for i in range(2)]
    own = [
        table_pb2.Contract(groups=1, runs=0),
        table_pb2.Contract(groups=0, runs=1),
    ]
    table_id = await _table(channel, players, "contract", turn_cap=30, contracts=own)
    view = await players[0].view(table_id)
    assert view.rules.contract_due.groups == 1 and view.rules.contract_due.runs == 0
    assert [(c.groups, c.runs) for c in view.options.contracts] == [(1, 0), (0, 1)]
    await play_to_end(players, table_id, max_turns=1_000)
    final = await players[0].view(table_id)
    assert [r.round for r in final.round_results] == [1, 2]
    # Each deal's event names that deal's contract from the table's own list.
    watcher = players[1].watch(table_id)
    while await watcher.next() is not None:
        pass
    dealt = [e.dealt for e in watcher.events if e.HasField("dealt")]
    assert [(d.round, d.contract_due.groups, d.contract_due.runs) for d in dealt] == [
        (1, 1, 0),
        (2, 0, 1),
    ]


async def test_contracts_are_refused_for_a_rule_set_without_them(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"N{i}") for i in range(2)]
    try:
        await _table(channel, players, "cafe", contracts=[table_pb2.Contract(groups=1)])
        raise AssertionError("a cafe table accepted a contract list")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        info = error_info(error)
        assert info is not None and info.reason == "OPTIONS_INVALID"


async def test_options_that_make_a_game_never_end_are_refused_naming_the_bound(
    channel: grpc.aio.Channel,
) -> None:
    """An elimination cap of 4,294,967,295 once made a cafe game that played 26
    rounds in 30 s with no end in sight."""
    players = [await login(channel, f"B{i}") for i in range(2)]
    for ruleset, options, bound in (
        ("cafe", {"elimination_cap": 4_294_967_295}, "500"),
        ("classic", {"elimination_cap": 501}, "500"),
        ("cafe", {"rounds": 21}, "20"),
    ):
        try:
            await _table(channel, players, ruleset, **options)
            raise AssertionError(f"a {ruleset} table accepted {options}")
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
            info = error_info(error)
            assert info is not None and info.reason == "OPTIONS_INVALID"
            assert bound in (error.details() or ""), error.details()
