"""Every engine event has a form in the log and on the wire."""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime

from services.common.pb.rummy.v1 import table_pb2
from services.game import convert, event_kinds, eventlog
from services.game.event_wire import Viewing
from services.game.records import Committed
from services.game.rules import Action, GameState, TableOptions
from services.game.rules import events as ev
from services.game.rules.bots import GreedyBot
from services.game.rules.cards import NO_SUIT
from services.game.rules.melds import MeldKind, TableMeld
from services.game.rules.ruleset import CAFE, CLASSIC, CONTRACT, RAMI51, Contract, Ruleset
from services.game.rules.simulate import play_game

from ..rules.test_event_details import three_deals_to_200

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_every_engine_event_kind_can_be_logged() -> None:
    # By name: a slotted dataclass leaves its pre-slots class among the subclasses.
    engine = {cls.__name__ for cls in ev.Event.__subclasses__()}
    registered = {kind.cls.__name__ for kind in event_kinds.KINDS}
    assert engine == registered, "an event the log cannot replay"


def test_an_event_logged_by_a_newer_build_is_read_without_its_new_fields() -> None:
    """Mid-upgrade, an older replica reads events a newer one logged: the fields it
    does not know are left out, and the event is the one it knows."""
    bought = ev.BoughtBack(seat=2, total=54, used=1)
    newer = json.loads(eventlog.encode(bought))
    newer["reason"] = "a field added later"
    stored = eventlog.decode(eventlog.kind_of(bought), json.dumps(newer).encode())
    assert stored == bought


def test_a_buy_back_survives_the_log_and_reaches_every_seat() -> None:
    bought = ev.BoughtBack(seat=2, total=54, used=1)
    stored = eventlog.decode(eventlog.kind_of(bought), eventlog.encode(bought))
    assert stored == bought
    for viewer in (0, 2, None):
        sent = table_event(7, 5, AT, stored, viewer, CLASSIC)
        assert sent.kind == table_pb2.EVENT_KIND_BOUGHT_BACK
        assert sent.seat == 2
        assert sent.WhichOneof("payload") == "bought_back"
        assert (sent.bought_back.total, sent.bought_back.used) == (54, 1)


def test_a_claim_shows_a_penalty_card_to_everyone_only_when_one_was_taken() -> None:
    card, penalty = CONTRACT.deck.ids_of("7S")[0], CONTRACT.deck.ids_of("9H")[0]
    # The stock was empty and could not be rebuilt: the claimant took no penalty card.
    without = ev.Claimed(seat=1, card=card, penalty=-1)
    for viewer in (0, 1, 2, None):
        sent = table_event(9, 4, AT, logged(without), viewer, CONTRACT).claimed
        assert (sent.card.id, sent.penalty_count, list(sent.penalty_cards)) == (card, 0, [])
    with_penalty = ev.Claimed(seat=1, card=card, penalty=penalty)
    for viewer in (0, 1, 2, None):
        sent = table_event(9, 4, AT, logged(with_penalty), viewer, CONTRACT).claimed
        assert sent.penalty_count == 1
        # Which card it was is the claimant's alone.
        assert [c.id for c in sent.penalty_cards] == ([penalty] if viewer == 1 else [])


def test_a_joker_swap_names_every_card_put_in_its_place() -> None:
    deck = CLASSIC.deck
    eight_s, eight_h, eight_d, eight_c = (deck.ids_of(c)[0] for c in ("8S", "8H", "8D", "8C"))
    carre = TableMeld(1, 0, MeldKind.GROUP, (eight_s, eight_h, eight_d, eight_c), 8, NO_SUIT)
    joker = deck.ids_of("JK")[0]
    swapped = ev.JokerSwapped(seat=1, joker=joker, replacement=eight_d, meld=carre, second=eight_c)
    for viewer in (0, 1, None):
        sent = table_event(12, 6, AT, logged(swapped), viewer, CLASSIC).joker_swapped
        assert [c.id for c in sent.replacements] == [eight_d, eight_c]
        assert sent.joker.id == joker
    # One card, as every swap logged before the second card was recorded.
    payload = json.loads(eventlog.encode(swapped))
    del payload["second"]
    older = eventlog.decode("JokerSwapped", json.dumps(payload).encode())
    assert older == ev.JokerSwapped(seat=1, joker=joker, replacement=eight_d, meld=carre)
    sent = table_event(12, 6, AT, older, None, CLASSIC).joker_swapped
    assert [c.id for c in sent.replacements] == [eight_d]


def test_a_joker_swap_says_where_the_joker_went_to_every_viewer() -> None:
    deck = CAFE.deck
    eight_s, nine_s, ten_s, q_h, q_c = (deck.ids_of(c)[0] for c in ("8S", "9S", "TS", "QH", "QC"))
    four_d, five_d, six_d = (deck.ids_of(c)[0] for c in ("4D", "5D", "6D"))
    joker = deck.ids_of("JK")[0]
    run = TableMeld(1, 0, MeldKind.RUN, (eight_s, nine_s, ten_s), 8, 0)
    new_meld = TableMeld(3, 1, MeldKind.GROUP, (q_h, q_c, joker), 12, NO_SUIT)
    laid_on = TableMeld(2, 1, MeldKind.RUN, (four_d, five_d, six_d, joker), 4, 2)
    for placed_in in (new_meld, laid_on):
        swapped = ev.JokerSwapped(
            seat=1, joker=joker, replacement=ten_s, meld=run, placed_in=placed_in
        )
        for viewer in (0, 1, 2, None):
            sent = table_event(12, 6, AT, logged(swapped), viewer, CAFE).joker_swapped
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
        sent = table_event(12, 6, AT, event, 0, CLASSIC).joker_swapped
        assert not sent.HasField("placed_in")


def older(event: ev.Event, *missing: str) -> ev.Event:
    """The event as logged before its ``missing`` fields were kept."""
    payload = json.loads(eventlog.encode(event))
    for name in missing:
        del payload[name]
    return eventlog.decode(eventlog.kind_of(event), json.dumps(payload).encode())


def test_a_reshuffle_tells_every_viewer_how_many_the_round_has_had() -> None:
    top = RAMI51.deck.ids_of("9C")[0]
    reshuffled = ev.Reshuffled(stock_size=40, discard_top=top, count=2)
    for viewer in (0, 1, None):
        sent = table_event(3, 2, AT, logged(reshuffled), viewer, RAMI51).reshuffled
        assert (sent.stock_size, sent.discard_top.id, sent.count) == (40, top, 2)
    assert older(reshuffled, "count") == ev.Reshuffled(stock_size=40, discard_top=top)


def test_a_laying_tells_every_viewer_whether_it_opened_and_what_it_counted() -> None:
    deck = RAMI51.deck
    ten, jack, queen, nine_h, nine_c, nine_d = (
        deck.ids_of(c)[0] for c in ("TS", "JS", "QS", "9H", "9C", "9D")
    )
    run = TableMeld(1, 1, MeldKind.RUN, (ten, jack, queen), 10, 0)
    group = TableMeld(2, 1, MeldKind.GROUP, (nine_h, nine_c, nine_d), 9, NO_SUIT)
    opening = ev.Melded(seat=1, melds=(run, group), opened=True, opening_points=57)
    for viewer in (0, 1, None):
        sent = table_event(8, 4, AT, logged(opening), viewer, RAMI51).melded
        assert (sent.opened, sent.opening_points, len(sent.melds)) == (True, 57, 2)
    later = table_event(9, 5, AT, logged(ev.Melded(1, (group,))), 0, RAMI51).melded
    assert (later.opened, later.opening_points) == (False, 0)
    assert older(opening, "opened", "opening_points") == ev.Melded(seat=1, melds=(run, group))


def test_a_round_ended_says_to_every_viewer_whether_its_scores_were_doubled() -> None:
    doubled = ev.RoundEnded(1, 0, ev.EndReason.WENT_OUT, (138, 0), (138, 0), doubled=True)
    for viewer in (0, 1, None):
        result = table_event(20, 9, AT, logged(doubled), viewer, RAMI51).round_ended.result
        assert result.doubled
        assert [(s.points, s.total) for s in result.scores] == [(138, 138), (0, 0)]
    plain = older(doubled, "doubled")
    assert plain == ev.RoundEnded(1, 0, ev.EndReason.WENT_OUT, (138, 0), (138, 0))
    assert not table_event(20, 9, AT, plain, 0, RAMI51).round_ended.result.doubled


def test_a_round_ended_lays_every_seats_cards_left_face_up_for_every_viewer() -> None:
    deck = CAFE.deck
    king, queen, seven = (deck.ids_of(c)[0] for c in ("KS", "QH", "7D"))
    ended = ev.RoundEnded(
        1, 0, ev.EndReason.WENT_OUT, (0, 27), (0, 27), hands=((), (king, queen, seven))
    )
    assert logged(ended) == ended
    for viewer in (0, 1, None):
        result = table_event(30, 12, AT, logged(ended), viewer, CAFE).round_ended.result
        assert result.cards_left_shown
        left = [([c.code for c in s.cards_left], s.cards_left_points) for s in result.scores]
        assert left == [([], 0), (["KS", "QH", "7D"], 27)]
    # Logged before the hands were kept: said unknown, not empty.
    before = older(ended, "hands")
    assert before == ev.RoundEnded(1, 0, ev.EndReason.WENT_OUT, (0, 27), (0, 27))
    result = table_event(30, 12, AT, before, 1, CAFE).round_ended.result
    assert not result.cards_left_shown
    assert [list(s.cards_left) for s in result.scores] == [[], []]


def test_the_view_shows_each_finished_rounds_hands_left_as_its_event_did() -> None:
    ended: list[ev.RoundEnded] = []

    def keep(_: GameState, seat: int, a: Action, after: GameState, events: list[ev.Event]) -> None:
        ended.extend(e for e in events if isinstance(e, ev.RoundEnded))

    players = [GreedyBot(), GreedyBot()]
    state = play_game(
        CAFE, players, random.Random(20_261_202), options=TableOptions(rounds=3), observe=keep
    )
    told = [[list(h) for h in e.hands] for e in ended]
    assert len(told) == 3 and all(len(h) == 2 for h in told)
    for viewer in (0, 1, None):
        committed = Committed(
            table_id=uuid.uuid4(),
            version=1,
            last_seq=0,
            state=state,
            seat=viewer,
            now_ms=0,
            events=(),
        )
        rounds = convert.table_view(committed, {}, "table").round_results
        assert all(r.cards_left_shown for r in rounds)
        assert [[[c.id for c in s.cards_left] for s in r.scores] for r in rounds] == told


def seen_rounds(state: GameState, viewer: int | None) -> list[tuple[list[int], bool]]:
    """Each round of the table's view for ``viewer``: the seats' totals, and doubled."""
    committed = Committed(
        table_id=uuid.uuid4(), version=1, last_seq=0, state=state, seat=viewer, now_ms=0, events=()
    )
    view = convert.table_view(committed, {}, "table")
    return [([s.total for s in r.scores], r.doubled) for r in view.round_results]


def test_the_view_gives_each_round_the_totals_after_it_as_its_round_ended_event_did() -> None:
    ended: list[ev.RoundEnded] = []

    def keep(_: GameState, seat: int, a: Action, after: GameState, events: list[ev.Event]) -> None:
        ended.extend(e for e in events if isinstance(e, ev.RoundEnded))

    players = [GreedyBot(), GreedyBot()]
    options = TableOptions(rounds=3)
    state = play_game(CAFE, players, random.Random(20_240_603), options=options, observe=keep)
    told = [(list(e.totals), e.doubled) for e in ended]
    assert len(told) == 3 and told[0][0] != told[-1][0]
    for viewer in (0, 1, None):
        assert seen_rounds(state, viewer) == told


def test_the_view_tells_which_rounds_were_doubled() -> None:
    state = three_deals_to_200().state
    assert seen_rounds(state, 0) == [([188, 0], True), ([188, 188], True), ([376, 188], True)]


def table_event(
    seq: int,
    version: int,
    at: datetime,
    event: ev.Event,
    viewer: int | None,
    rules: Ruleset,
    contracts: tuple[Contract, ...] = (),
) -> table_pb2.TableEvent:
    """The event at ``seq`` as ``viewer`` is sent it."""
    logged = eventlog.LoggedEvent(seq, version, event, at)
    return event_kinds.table_event(logged, Viewing(viewer, rules, contracts))


def logged(event: ev.Event) -> ev.Event:
    """The event as the log gives it back."""
    return eventlog.decode(eventlog.kind_of(event), eventlog.encode(event))
