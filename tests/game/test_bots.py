"""Bot seats are played by the server itself, through the same sweeper as timeouts."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.actions import Discard, DrawStock
from services.game.rules.ruleset import CONTRACT

from ..rules.helpers import deck_order as scripted_order
from ..rules.test_claims import HANDS, WANTS_QD
from .harness import LONG_TURNS_MS, GreedyBot, Player, greedy_turn, kind_is, login, service_auth


async def test_a_human_plays_a_whole_game_against_a_bot(channel: grpc.aio.Channel) -> None:
    human = await login(channel, "Human")
    stub = tables_pb2_grpc.TableServiceStub(channel)
    created = await stub.CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            players=[
                tables_pb2.SeatedPlayer(player_id=human.player_id, display_name="Human"),
                tables_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot", is_bot=True),
            ],
        ),
        metadata=service_auth(),
    )
    table_id = created.table_id
    view = await human.view(table_id)
    assert view.seats[1].is_bot and not view.seats[0].is_bot
    bot = GreedyBot()
    bot_turns = 0
    watcher = human.watch(table_id)
    while (event := await watcher.next()) is not None:
        if event.kind == table_pb2.EVENT_KIND_GAME_ENDED:
            break
        if event.kind != table_pb2.EVENT_KIND_TURN_STARTED:
            continue
        if event.seat == 1:
            bot_turns += 1
            continue
        await greedy_turn(human, table_id, await human.view(table_id), bot)
    final = await human.view(table_id)
    assert final.phase == table_pb2.PHASE_GAME_OVER
    assert bot_turns > 0


async def test_a_bot_seat_claims_a_discard_it_wants_in_the_commit_that_opened_the_window(
    channel: grpc.aio.Channel,
) -> None:
    """`contract`'s "Puis-je ?": the human passes over the QD that completes a group
    of the bot at seat 1; the bot at seat 2 has no use for it."""
    human = await login(channel, "Human")
    hands = [*WANTS_QD, HANDS[2]]
    created = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="contract",
            options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS, claim_window_ms=60_000),
            players=[
                tables_pb2.SeatedPlayer(player_id=human.player_id, display_name="Human"),
                tables_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot 1", is_bot=True),
                tables_pb2.SeatedPlayer(player_id="bot-2", display_name="Bot 2", is_bot=True),
            ],
            deck_order=scripted_order(hands, "QD", "KS", ruleset=CONTRACT),
            # The strong bot claims every discard it wants; a weaker one may not.
            bot_level=table_pb2.BOT_LEVEL_STRONG,
        ),
        metadata=service_auth(),
    )
    table_id = created.table_id
    watcher = human.watch(table_id)
    queen = (await human.view(table_id)).discard_top.id
    drawn = await human.send(table_id, DrawStock())
    claim = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_CLAIM_MADE)
    assert claim.seat == 1
    assert claim.version == drawn.version, "claimed in the draw's own commit"
    window = drawn.view.claim_window
    assert window.card.id == queen and not window.claimed_by_me
    kings = [c.id for c in drawn.view.hand if c.code == "KS"]
    await human.send(table_id, Discard(kings[0]))
    won = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_CLAIMED)
    assert won.seat == 1 and won.claimed.card.id == queen
    opened = [e for e in watcher.events if e.kind == table_pb2.EVENT_KIND_CLAIM_WINDOW_OPENED]
    made = [e.seat for e in watcher.events if e.kind == table_pb2.EVENT_KIND_CLAIM_MADE]
    assert len(opened) == 1 and made == [1], "seat 2 did not want the queen"
    watcher.cancel()


async def _bot_table(channel: grpc.aio.Channel, people: list[Player], bots: int) -> str:
    seated = [tables_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name) for p in people]
    seated += [
        tables_pb2.SeatedPlayer(player_id=f"bot-{i}", display_name=f"Bot {i}", is_bot=True)
        for i in range(bots)
    ]
    created = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS),
            players=seated,
        ),
        metadata=service_auth(),
    )
    return str(created.table_id)


async def test_the_game_ends_when_its_last_person_leaves_and_only_bots_play_on(
    channel: grpc.aio.Channel,
) -> None:
    """Nobody is left to play for: the game ends in the leave's own commit, won by
    the best placed bot, instead of the bots playing it out for nobody."""
    people = [await login(channel, "Ann"), await login(channel, "Bob")]
    table_id = await _bot_table(channel, people, bots=2)
    ann, bob = people
    await bob.call("Leave", game_pb2.LeaveRequest(table_id=table_id))
    view = await ann.view(table_id)
    assert view.phase != table_pb2.PHASE_GAME_OVER, "a person still plays: the game goes on"

    left = await ann.call("Leave", game_pb2.LeaveRequest(table_id=table_id))
    assert left.view.phase == table_pb2.PHASE_GAME_OVER
    watcher = ann.watch(table_id, after=view.last_seq)
    ended = await watcher.until(kind_is(table_pb2.EVENT_KIND_GAME_ENDED))
    assert ended.version == left.version, "ended in the leave's own commit"
    assert ended.game_ended.reason == table_pb2.END_REASON_OTHERS_LEFT
    assert left.view.seats[ended.game_ended.winner_seat].is_bot
    watcher.cancel()
