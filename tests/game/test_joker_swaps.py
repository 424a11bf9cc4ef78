"""Joker swaps over the API, as `classic` plays them: a joker leaves a brelan only
when both missing cards of the carré go in (two replacement cards in one
SwapJoker), and leaves anything else for exactly one card."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.ruleset import CLASSIC

from ..rules.helpers import deck_order as scripted_order
from ..rules.test_classic import SWAP_OWNER, SWAPPER
from .harness import LONG_TURNS_MS, Player, create_table, kind_is, login, refused


def ids(view: table_pb2.TableView, text: str) -> list[int]:
    """Distinct ids of the cards ``text`` names in the hand of ``view``, in that order."""
    taken: list[int] = []
    for code in text.split():
        taken.append(next(c.id for c in view.hand if c.code == code and c.id not in taken))
    return taken


def meld_of(view: table_pb2.TableView, text: str) -> table_pb2.MeldView:
    return next(m for m in view.melds if sorted(c.code for c in m.cards) == sorted(text.split()))


async def play(player: Player, method: str, **fields: object) -> table_pb2.TableView:
    request = getattr(game_pb2, f"{method}Request")(**fields)
    view: table_pb2.TableView = (await player.call(method, request)).view
    return view


async def lay(player: Player, table_id: str, *melds: str) -> table_pb2.TableView:
    view = await player.view(table_id)
    taken: list[int] = []
    specs = []
    for text in melds:
        cards = []
        for code in text.split():
            card = next(c.id for c in view.hand if c.code == code and c.id not in taken)
            taken.append(card)
            cards.append(card)
        specs.append(game_pb2.MeldSpec(card_ids=cards))
    return await play(player, "Meld", table_id=table_id, melds=specs)


async def test_classic_frees_a_joker_from_a_brelan_with_both_missing_cards(
    channel: grpc.aio.Channel,
) -> None:
    owner, swapper = players = [await login(channel, f"S{i}") for i in range(2)]
    order = scripted_order([SWAP_OWNER, SWAPPER], "KD", "3S 4S", ruleset=CLASSIC)
    table_id = await create_table(
        channel, players, deck_order=order, ruleset="classic", turn_timer_ms=LONG_TURNS_MS
    )
    watcher = owner.watch(table_id)
    await play(owner, "DrawStock", table_id=table_id)
    await lay(owner, table_id, "8S 8H JK", "5D JK 7D", "KS KH KD", "9S 9H 9D JK")
    await play(
        owner, "Discard", table_id=table_id, card_id=ids(await owner.view(table_id), "3S")[0]
    )
    await play(swapper, "DrawStock", table_id=table_id)
    view = await lay(swapper, table_id, "TC JC QC KC", "4H 5H 6H")

    brelan = meld_of(view, "8S 8H JK")
    carre = meld_of(view, "9S 9H 9D JK")
    brelan_joker = next(c.id for c in brelan.cards if c.code == "JK")
    carre_joker = next(c.id for c in carre.cards if c.code == "JK")
    eight_d, eight_c, nine_c = ids(view, "8D 8C 9C")

    def swap(meld: table_pb2.MeldView, joker: int, *cards: int) -> game_pb2.SwapJokerRequest:
        return game_pb2.SwapJokerRequest(
            table_id=table_id, meld_id=meld.id, joker_card_id=joker, replacement_card_ids=cards
        )

    rules = grpc.StatusCode.FAILED_PRECONDITION
    refusals = [
        (swap(brelan, brelan_joker, eight_d), (rules, "SWAP_INVALID")),
        (swap(brelan, brelan_joker, eight_d, nine_c), (rules, "SWAP_INVALID")),
        (swap(carre, carre_joker, nine_c, eight_d), (rules, "SWAP_INVALID")),
        (
            swap(brelan, brelan_joker, eight_d, eight_d),
            (grpc.StatusCode.INVALID_ARGUMENT, "CARD_DUPLICATED"),
        ),
    ]
    for request, expected in refusals:
        assert await refused(swapper.call("SwapJoker", request)) == expected, request
        assert (await swapper.view(table_id)).version == view.version

    # Both missing cards in one call; the joker stays in hand (classic allows it).
    after = (await swapper.call("SwapJoker", swap(brelan, brelan_joker, eight_d, eight_c))).view
    assert sorted(c.code for c in meld_of(after, "8S 8H 8D 8C").cards) == ["8C", "8D", "8H", "8S"]
    hand = [c.id for c in after.hand]
    assert brelan_joker in hand and eight_d not in hand and eight_c not in hand

    swapped = await watcher.until(kind_is(table_pb2.EVENT_KIND_JOKER_SWAPPED))
    watcher.cancel()
    assert swapped.seat == swapper.seat
    assert swapped.joker_swapped.joker.id == brelan_joker
    assert [c.id for c in swapped.joker_swapped.replacements] == [eight_d, eight_c]

    # The carré gives its joker for its one missing card.
    after = (await swapper.call("SwapJoker", swap(carre, carre_joker, nine_c))).view
    assert sorted(c.code for c in meld_of(after, "9S 9H 9D 9C").cards) == ["9C", "9D", "9H", "9S"]
