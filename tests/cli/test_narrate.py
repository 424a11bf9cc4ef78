"""The commentary of another player's joker swap says where the joker went."""

from __future__ import annotations

from clients.cli.cards import Style
from clients.cli.narrate import TELLINGS, answered, narrate
from clients.cli.narrator import Narrator
from clients.cli.render import END_REASON, game_text
from services.common.pb.rummy.v1 import table_pb2

from .views import Cards, meld, sample_view

PLAIN = Style(False)


def swapped_by_bob(
    deal: Cards, placed_in: table_pb2.MeldView | None, seq: int = 41
) -> table_pb2.TableEvent:
    """Bob takes the joker of [2] Q♥ Q♦ JK with Q♠."""
    event = table_pb2.TableEvent(seq=seq, version=13, seat=1)
    swap = event.joker_swapped
    swap.joker.CopyFrom(deal("JK"))
    swap.replacements.append(deal("QS"))
    swap.meld.CopyFrom(meld(2, 1, table_pb2.MELD_KIND_GROUP, deal.many("QH QD QS")))
    if placed_in is not None:
        swap.placed_in.CopyFrom(placed_in)
    return event


def test_a_joker_laid_off_is_told_with_the_swap() -> None:
    view, deal = sample_view(), Cards()
    run = meld(3, 1, table_pb2.MELD_KIND_RUN, deal.many("4H 5H 6H JK"), [("7", 2)])
    swap = swapped_by_bob(deal, run)
    laid = table_pb2.TableEvent(seq=42, version=13, seat=1)
    laid.laid_off.cards.append(run.cards[-1])
    laid.laid_off.meld.CopyFrom(run)
    narrator = Narrator(PLAIN)
    assert narrator.tell(swap, view) is None, "told with the lay-off that follows"
    assert narrator.tell(laid, view) == (
        "Bob took the joker from [2], putting in Q♠, and laid it off on [3]: 4♥ 5♥ 6♥ JK(7♥)."
    )
    # Told by itself, the swap still says where the joker is.
    assert narrate(swap, view, PLAIN) == (
        "Bob took the joker from [2], putting in Q♠, and put it in [3]: 4♥ 5♥ 6♥ JK(7♥)."
    )


def test_a_joker_melded_anew_is_told_with_the_swap() -> None:
    view, deal = sample_view(), Cards()
    new = meld(4, 1, table_pb2.MELD_KIND_RUN, deal.many("2C 3C JK"), [("4", 4)])
    swap = swapped_by_bob(deal, new)
    melded = table_pb2.TableEvent(seq=42, version=13, seat=1)
    melded.melded.melds.append(new)
    drew = table_pb2.TableEvent(seq=43, version=14, seat=0)
    drew.drew.stock_size = 59
    narrator = Narrator(PLAIN)
    assert narrator.tell(swap, view) is None
    assert narrator.tell(melded, view) == (
        "Bob took the joker from [2], putting in Q♠, and laid it down in a new meld:"
        " [4] 2♣ 3♣ JK(4♣)."
    )
    assert narrator.tell(drew, view) == "You drew from the stock."


def test_a_swap_not_followed_by_its_placement_is_still_told() -> None:
    view, deal = sample_view(), Cards()
    new = meld(4, 1, table_pb2.MELD_KIND_RUN, deal.many("2C 3C JK"), [("4", 4)])
    left = table_pb2.TableEvent(seq=50, version=20, seat=1)
    left.player_left.SetInParent()
    narrator = Narrator(PLAIN)
    assert narrator.tell(swapped_by_bob(deal, new), view) is None
    assert narrator.tell(left, view) == (
        "Bob took the joker from [2], putting in Q♠, and put it in [4]: 2♣ 3♣ JK(4♣).\n"
        "Bob left the table."
    )


def test_a_joker_kept_in_hand_is_told_where_the_rules_allow_it() -> None:
    deal = Cards("classic")
    classic = sample_view(ruleset="classic")
    assert Narrator(PLAIN).tell(swapped_by_bob(deal, None), classic) == (
        "Bob took the joker from [2], putting in Q♠, and kept it in hand."
    )


def test_the_final_result_from_a_view_crowns_the_highest_total_in_rami51() -> None:
    """rami51's winner collects: the view's leader is the highest total (as the engine)."""
    view = sample_view(ruleset="rami51", phase=table_pb2.PHASE_GAME_OVER)
    view.seats[0].score_total, view.seats[1].score_total = 230, 40
    assert game_text(view).startswith("Game over: you win")
    cafe = sample_view(phase=table_pb2.PHASE_GAME_OVER)
    cafe.seats[0].score_total, cafe.seats[1].score_total = 230, 40
    assert game_text(cafe).startswith("Game over: Bob wins")


def test_the_final_result_is_the_servers_when_the_view_carries_it() -> None:
    """The reason and the winner come from the table's result, not from guessing."""
    view = table_pb2.TableView(ruleset="cafe", my_seat=0, phase=table_pb2.PHASE_GAME_OVER)
    for seat, (name, total) in enumerate((("Ann", 40), ("Bob", 90))):
        view.seats.add(seat=seat, display_name=name, score_total=total)
    view.result.CopyFrom(
        table_pb2.GameEnded(
            winner_seat=1,
            reason=table_pb2.END_REASON_OTHERS_LEFT,
            totals=[table_pb2.SeatScore(seat=0, total=40), table_pb2.SeatScore(seat=1, total=90)],
        )
    )
    said = game_text(view)
    assert said.startswith("Game over: Bob wins")
    assert END_REASON[table_pb2.END_REASON_OTHERS_LEFT].format(winner="Bob") in said


def test_every_kind_of_event_has_its_telling() -> None:
    """An event kind added to the protocol without its sentence fails here."""
    payload = table_pb2.TableEvent.DESCRIPTOR.oneofs_by_name["payload"]
    assert set(TELLINGS) == {f.name for f in payload.fields}


def test_the_players_own_moves_are_not_told_again_but_a_discard_the_clock_made_is() -> None:
    own_moves = {"drew", "took_discard", "reposed", "melded", "laid_off", "joker_swapped"}
    for kind in TELLINGS:
        event = table_pb2.TableEvent(seq=5, version=3, seat=0)
        getattr(event, kind).SetInParent()
        assert answered(event) == (kind in {*own_moves, "claim_made", "discarded"}), kind
    automatic = table_pb2.TableEvent(seat=0, discarded=table_pb2.Discarded(automatic=True))
    assert not answered(automatic)
    assert not answered(table_pb2.TableEvent(seat=0)), "no payload: nothing was told"
