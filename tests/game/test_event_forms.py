"""Every engine event has a form in the log and on the wire."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from services.common.pb.rummy.v1 import table_pb2
from services.game import convert, eventlog
from services.game.rules import events as ev
from services.game.rules.cards import NO_SUIT
from services.game.rules.melds import Meld, MeldKind
from services.game.rules.ruleset import CAFE, CLASSIC, CONTRACT

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_every_engine_event_kind_can_be_logged() -> None:
    # By name: a slotted dataclass leaves its pre-slots class among the subclasses.
    engine = {cls.__name__ for cls in ev.Event.__subclasses__()}
    assert engine == set(eventlog._KINDS), "an event the log cannot replay"


def test_a_buy_back_survives_the_log_and_reaches_every_seat() -> None:
    bought = ev.BoughtBack(seat=2, total=54, used=1)
    stored = eventlog.decode(eventlog.kind_of(bought), eventlog.encode(bought))
    assert stored == bought
    for viewer in (0, 2, None):
        sent = convert.table_event(7, 5, AT, stored, viewer, CLASSIC)
        assert sent.kind == table_pb2.EVENT_KIND_BOUGHT_BACK
        assert sent.seat == 2
        assert sent.WhichOneof("payload") == "bought_back"
        assert (sent.bought_back.total, sent.bought_back.used) == (54, 1)


def test_a_claim_shows_a_penalty_card_to_everyone_only_when_one_was_taken() -> None:
    card, penalty = CONTRACT.deck.ids_of("7S")[0], CONTRACT.deck.ids_of("9H")[0]
    # The stock was empty and could not be rebuilt: the claimant took no penalty card.
    without = ev.Claimed(seat=1, card=card, penalty=-1)
    for viewer in (0, 1, 2, None):
        sent = convert.table_event(9, 4, AT, logged(without), viewer, CONTRACT).claimed
        assert (sent.card.id, sent.penalty_count, list(sent.penalty_cards)) == (card, 0, [])
    with_penalty = ev.Claimed(seat=1, card=card, penalty=penalty)
    for viewer in (0, 1, 2, None):
        sent = convert.table_event(9, 4, AT, logged(with_penalty), viewer, CONTRACT).claimed
        assert sent.penalty_count == 1
        # Which card it was is the claimant's alone.
        assert [c.id for c in sent.penalty_cards] == ([penalty] if viewer == 1 else [])


def test_a_joker_swap_names_every_card_put_in_its_place() -> None:
    deck = CLASSIC.deck
    eight_s, eight_h, eight_d, eight_c = (deck.ids_of(c)[0] for c in ("8S", "8H", "8D", "8C"))
    carre = Meld(1, 0, MeldKind.GROUP, (eight_s, eight_h, eight_d, eight_c), 8, NO_SUIT)
    joker = deck.ids_of("JK")[0]
    swapped = ev.JokerSwapped(seat=1, joker=joker, replacement=eight_d, meld=carre, second=eight_c)
    for viewer in (0, 1, None):
        sent = convert.table_event(12, 6, AT, logged(swapped), viewer, CLASSIC).joker_swapped
        assert [c.id for c in sent.replacements] == [eight_d, eight_c]
        assert sent.joker.id == joker
    # One card, as every swap logged before the second card was recorded.
    payload = json.loads(eventlog.encode(swapped))
    del payload["second"]
    older = eventlog.decode("JokerSwapped", json.dumps(payload).encode())
    assert older == ev.JokerSwapped(seat=1, joker=joker, replacement=eight_d, meld=carre)
    sent = convert.table_event(12, 6, AT, older, None, CLASSIC).joker_swapped
    assert [c.id for c in sent.replacements] == [eight_d]


def test_a_joker_swap_says_where_the_joker_went_to_every_viewer() -> None:
    deck = CAFE.deck
    eight_s, nine_s, ten_s, q_h, q_c = (deck.ids_of(c)[0] for c in ("8S", "9S", "TS", "QH", "QC"))
    four_d, five_d, six_d = (deck.ids_of(c)[0] for c in ("4D", "5D", "6D"))
    joker = deck.ids_of("JK")[0]
    run = Meld(1, 0, MeldKind.RUN, (eight_s, nine_s, ten_s), 8, 0)
    new_meld = Meld(3, 1, MeldKind.GROUP, (q_h, q_c, joker), 12, NO_SUIT)
    laid_on = Meld(2, 1, MeldKind.RUN, (four_d, five_d, six_d, joker), 4, 2)
    for placed_in in (new_meld, laid_on):
        swapped = ev.JokerSwapped(
            seat=1, joker=joker, replacement=ten_s, meld=run, placed_in=placed_in
        )
        for viewer in (0, 1, 2, None):
            sent = convert.table_event(12, 6, AT, logged(swapped), viewer, CAFE).joker_swapped
            assert sent.HasField("placed_in"), f"viewer {viewer}"
            assert sent.placed_in == convert.meld_view(placed_in, CAFE)
            assert joker in [c.id for c in sent.placed_in.cards]
            assert [j.joker_card_id for j in sent.placed_in.jokers] == [joker]
    # classic: the joker stayed in the hand; so did every swap logged before this field.
    kept = ev.JokerSwapped(seat=1, joker=joker, replacement=ten_s, meld=run)
    payload = json.loads(eventlog.encode(kept))
    assert payload["placed_in"] is None
    del payload["placed_in"]
    older = eventlog.decode("JokerSwapped", json.dumps(payload).encode())
    assert older == kept
    for event in (logged(kept), older):
        sent = convert.table_event(12, 6, AT, event, 0, CLASSIC).joker_swapped
        assert not sent.HasField("placed_in")


def logged(event: ev.Event) -> ev.Event:
    """The event as the log gives it back."""
    return eventlog.decode(eventlog.kind_of(event), eventlog.encode(event))
