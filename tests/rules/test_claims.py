"""`contract`'s "Puis-je ?" (May I?): RULES.md §5 row and its decision. After the
active player draws from the stock, the other seats may claim the visible top
discard during a short window (table option, default 3 s); the window closes at
its deadline (the table clock's Timeout) or when the active player discards;
the claimant nearest to the active player in play order wins, whatever the
order the claims arrived in, and takes the card plus a penalty card from the
stock; the next discard may be claimed again."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Leave,
    Phase,
    Reason,
    TableOptions,
    Timeout,
    legal_actions,
    preset,
)
from services.game.rules.actions import Claim
from services.game.rules.bots import GreedyBot
from services.game.rules.events import (
    HIDDEN,
    Claimed,
    ClaimMade,
    ClaimWindowClosed,
    ClaimWindowOpened,
    Discarded,
    Drew,
)

from .helpers import Table, assert_conserved

CONTRACT = preset("contract")

HANDS = [
    "AS 3H 5S 8H 9D JH 2H 4S 6C TC",
    "AH 3S 5H 8D 9C JD 2D 4H 6S TD",
    "AD 3D 5D 8C 9S JC 2C 4D 6H TS",
    "AC 3C 5C 8S 9H JS 2S 4C 6D TH",
]
"""Four hands with no contract in them: the seats only draw, claim and discard."""


def table(seats: int = 4, **options: int) -> Table:
    return Table(
        HANDS[:seats], "QD", "KS KH KD KC QS QH", ruleset=CONTRACT, options=TableOptions(**options)
    )


def offered(t: Table) -> Claim:
    """A claim for the top discard, as a claimant sees it."""
    return Claim(t.state.discard[-1])


def claimed(t: Table) -> Claimed:
    return next(e for e in t.events if isinstance(e, Claimed))


def test_claims_a_stock_draw_opens_a_window_on_the_top_discard_for_3_seconds() -> None:
    t = table()
    qd = t.state.discard[-1]
    t.now = 1_000
    events = t.draw(0)
    assert isinstance(events[0], Drew)
    assert events[1] == ClaimWindowOpened(qd, 4_000)
    assert TableOptions().claim_window_ms == 3_000
    assert t.state.due_ms() == 4_000, "the table clock wakes up for the window"
    other = table(claim_window_ms=5_000)
    assert other.draw(0)[1] == ClaimWindowOpened(qd, 5_000)


def test_claims_no_window_after_taking_the_discard_or_before_the_draw() -> None:
    t = table()
    qd = offered(t)
    assert t.refuse(1, qd).reason == Reason.CLAIM_WINDOW_CLOSED  # nothing drawn yet
    t.take(0)
    assert not any(isinstance(e, ClaimWindowOpened) for e in t.events)
    assert t.refuse(1, qd).reason == Reason.CLAIM_WINDOW_CLOSED


def test_claims_refused_to_the_active_seat_twice_or_once_the_window_closed() -> None:
    t = table()
    t.draw(0)
    assert t.refuse(0, offered(t)).reason == Reason.CLAIM_NOT_ALLOWED
    assert t.act(1, offered(t)) == [ClaimMade(1)]
    assert t.refuse(1, offered(t)).reason == Reason.CLAIM_NOT_ALLOWED
    assert t.refuse(7, offered(t)).reason == Reason.NOT_SEATED
    t.now = 3_000  # the window's end, before the table clock closed it: a lost race
    assert t.refuse(2, offered(t)).reason == Reason.CLAIM_WINDOW_CLOSED


def test_claims_name_the_card_on_offer_and_a_changed_card_is_refused() -> None:
    t = table()
    qd = offered(t)
    t.draw(0)
    assert t.refuse(1, Claim(t.card(1, "AH"))).reason == Reason.CLAIM_CARD_CHANGED
    assert t.refuse(1, Claim(9_999)).reason == Reason.CARD_UNKNOWN
    assert t.act(1, qd) == [ClaimMade(1)]
    t.now = 1_000
    t.discard(0, "KS")
    # The next window offers the KS: a claim still aimed at the QD is not moved to it.
    t.draw(1)
    assert t.state.claim_card == t.state.discard[-1] != qd.card
    refusal = t.refuse(2, qd)
    assert refusal.reason == Reason.CLAIM_CARD_CHANGED
    assert "KS" in refusal.message, "the sentence names the card on offer now"
    assert t.act(2, offered(t)) == [ClaimMade(2)]


def test_claims_are_a_contract_rule_only() -> None:
    for name in ("cafe", "rami51", "classic"):
        ruleset = preset(name)
        size = ruleset.hand_size
        hands = [" ".join(h.split() + ["KC", "QS", "QH", "7C"][: size - 10]) for h in HANDS[:2]]
        t = Table(hands, "QD", ruleset=ruleset)
        events = t.draw(0)
        assert not any(isinstance(e, ClaimWindowOpened) for e in events)
        assert t.refuse(1, offered(t)).reason == Reason.RULE_NOT_IN_PLAY


@pytest.mark.parametrize(
    ("active", "arrivals", "winner"),
    [
        (0, [3, 2], 2),
        (0, [2, 3], 2),
        (0, [3, 2, 1], 1),
        (0, [3], 3),
        (2, [1, 0], 0),  # after seat 2 come 3, 0, 1
        (2, [0, 3], 3),
        (3, [2, 1], 1),
    ],
)
def test_claims_the_nearest_to_the_active_player_in_play_order_wins_whatever_the_order(
    active: int, arrivals: list[int], winner: int
) -> None:
    t = table()
    t.pass_turns(active)
    assert t.state.current == active
    t.draw(active)
    card = t.state.discard[-1]
    before = [len(h) for h in t.state.hands]
    for i, seat in enumerate(arrivals):
        t.now += 100 * (i + 1)
        t.act(seat, offered(t))
    t.now = t.state.claim_deadline_ms
    events = t.act(SYSTEM, Timeout())
    assert [type(e).__name__ for e in events] == ["Claimed"]
    won = claimed(t)
    assert won.seat == winner and won.card == card
    after = [len(h) for h in t.state.hands]
    assert after[winner] == before[winner] + 2, "the card and a penalty card"
    assert [a - b for a, b in zip(after, before, strict=True)].count(0) == 3
    # The turn goes on: the active player still has to discard.
    assert t.state.current == active and t.state.phase == Phase.PLAY
    assert_conserved(t.state)


def test_claims_the_winner_takes_the_card_and_a_penalty_card_from_the_stock() -> None:
    t = table()
    qd = t.state.discard[-1]
    t.draw(0)  # KS
    kh = t.state.stock[-1]
    stock = len(t.state.stock)
    t.act(2, offered(t))
    t.now = 3_000
    t.act(SYSTEM, Timeout())
    assert claimed(t) == Claimed(2, qd, kh)
    assert qd in t.state.hands[2] and kh in t.state.hands[2]
    assert t.state.discard == [] and len(t.state.stock) == stock - 1


def test_claims_the_penalty_card_is_hidden_from_every_other_viewer() -> None:
    t = table()
    t.draw(0)
    t.act(1, offered(t))
    t.now = 3_000
    t.act(SYSTEM, Timeout())
    event = claimed(t)
    assert event.visible_to(1) == event
    for viewer in (0, 2, 3, None):
        seen = event.visible_to(viewer)
        assert isinstance(seen, Claimed)
        assert seen.penalty == HIDDEN and seen.card == event.card and seen.seat == 1


def test_claims_a_discard_by_the_active_player_closes_the_window_first() -> None:
    t = table()
    qd = t.state.discard[-1]
    t.draw(0)
    t.now = 500
    t.act(3, offered(t))
    t.now = 1_000
    events = t.discard(0, "KS")
    assert [type(e).__name__ for e in events[:3]] == ["Claimed", "Discarded", "TurnBegan"]
    assert claimed(t).seat == 3 and claimed(t).card == qd
    assert t.top() == "KS" and len(t.state.discard) == 1
    assert t.state.claim_card == -1 and t.state.current == 1


def test_claims_the_next_discard_may_be_claimed_again() -> None:
    t = table()
    t.draw(0)
    t.act(2, offered(t))
    t.now = 1_000
    t.discard(0, "KS")
    assert claimed(t).seat == 2
    ks = t.state.discard[-1]
    t.draw(1)
    window = t.events[1]
    assert window == ClaimWindowOpened(ks, t.now + 3_000)
    t.act(2, offered(t))  # the same seat may claim again
    t.act(3, offered(t))
    t.now += 3_000
    t.act(SYSTEM, Timeout())
    assert claimed(t).seat == 2 and claimed(t).card == ks


def test_claims_seed_one_claim_per_stock_draw_the_card_under_a_claimed_one_is_not_offered() -> None:
    """Seed 004: « Le mécanisme se répète tant que la carte de défausse suivante
    intéresse quelqu'un. » The next discard card is the next turn's (RULES.md
    decision): once a claim takes the card, the one it uncovers is not offered
    until a new discard and a new stock draw."""
    t = table()
    qd = t.state.discard[-1]
    t.draw(0)
    t.now = 1_000
    t.discard(0, "KS")  # the QD's window closes unclaimed; the KS goes on top
    t.draw(1)
    t.act(2, offered(t))
    t.now += 3_000
    events = t.act(SYSTEM, Timeout())
    assert claimed(t).seat == 2 and t.state.discard[-1] == qd
    assert not any(isinstance(e, ClaimWindowOpened) for e in events)
    assert t.state.claim_card == -1
    assert all(legal_actions(t.state, s) == [] for s in (0, 2, 3))
    assert t.refuse(3, Claim(qd)).reason == Reason.CLAIM_WINDOW_CLOSED
    t.discard(1, "KH")
    t.draw(2)
    assert t.state.claim_card == t.state.discard[-1]
    assert t.deck.code(t.state.claim_card) == "KH"


def test_claims_the_seat_that_discarded_the_card_may_not_claim_it_back() -> None:
    """Seed 004: « Le "Puis-je ?" permet à un joueur de prendre une carte de la
    défausse hors de son tour. » The card on offer is the one a seat just threw
    away: that seat may not claim it back (RULES.md decision), not even paying
    the penalty card; the card turned up at the deal was nobody's."""
    t = table()
    t.draw(0)
    assert Claim(t.state.discard[-1]) in legal_actions(t.state, 1)
    t.now = 1_000
    t.discard(0, "KS")
    t.draw(1)
    ks = offered(t)
    assert ks not in legal_actions(t.state, 0) and ks in legal_actions(t.state, 2)
    assert not GreedyBot().claims(t.state, 0)
    refusal = t.refuse(0, ks)
    assert refusal.reason == Reason.CLAIM_NOT_ALLOWED and "discarded" in refusal.message
    t.act(3, ks)
    t.now += 3_000
    t.act(SYSTEM, Timeout())
    assert claimed(t).seat == 3


def test_claims_a_window_nobody_claimed_closes_at_its_deadline_and_says_so() -> None:
    t = table()
    qd = t.state.discard[-1]
    t.draw(0)
    t.now = 2_999
    assert t.refuse(SYSTEM, Timeout()).reason == Reason.TIMEOUT_NOT_DUE
    t.now = 3_000
    # Watchers learn the window shut; and every move the table logs says something.
    assert t.act(SYSTEM, Timeout()) == [ClaimWindowClosed(qd)]
    assert t.state.claim_card == -1 and t.state.current == 0 and t.state.phase == Phase.PLAY
    assert t.state.due_ms() == t.state.deadline_ms
    assert t.refuse(1, offered(t)).reason == Reason.CLAIM_WINDOW_CLOSED
    t.discard(0, "KS")
    assert not any(isinstance(e, Claimed) for e in t.events)


def test_claims_are_resolved_once_the_discard_after_the_window_gives_nothing_more() -> None:
    t = table()
    t.draw(0)
    t.act(1, offered(t))
    t.now = 3_000
    t.act(SYSTEM, Timeout())
    hands = [len(h) for h in t.state.hands]
    events = t.discard(0, "KS")
    assert not any(isinstance(e, Claimed) for e in events)
    assert isinstance(events[0], Discarded)
    assert [len(h) for h in t.state.hands] == [hands[0] - 1, *hands[1:]]


def test_claims_a_discard_closes_a_window_nobody_claimed_before_it_is_discarded() -> None:
    t = table()
    qd = t.state.discard[-1]
    t.draw(0)
    t.now = 1_000
    ks = t.card(0, "KS")
    events = t.discard(0, "KS")
    assert events[:2] == [ClaimWindowClosed(qd), Discarded(0, ks)]


def test_claims_a_claimant_who_leaves_is_passed_over() -> None:
    t = table()
    t.draw(0)
    t.act(1, offered(t))
    t.act(3, offered(t))
    t.act(1, Leave())
    t.now = 3_000
    t.act(SYSTEM, Timeout())
    assert claimed(t).seat == 3


def test_claims_legal_actions_offer_a_claim_to_the_other_seats_while_the_window_is_open() -> None:
    t = table(seats=3)
    assert legal_actions(t.state, 1) == []
    t.draw(0)
    assert legal_actions(t.state, 1) == [offered(t)] == legal_actions(t.state, 2)
    assert offered(t) not in legal_actions(t.state, 0)
    t.act(1, offered(t))
    assert legal_actions(t.state, 1) == []
    t.now = 3_000
    t.act(SYSTEM, Timeout())
    assert legal_actions(t.state, 2) == []


# --- the greedy bot's claims ---------------------------------------------------

WANTS_QD = ["AS 3H 5S 8H 9D JH 2H 4S 6C TC", "QS QH 3S 5H 8D 9C JD 2D 4H 6S"]
"""Seat 1 holds two queens: the QD turned up completes a group of its first
contract (two groups of 3)."""


def test_claims_the_greedy_bot_claims_a_discard_that_completes_a_contract_meld() -> None:
    t = Table([*WANTS_QD, HANDS[2]], "QD", "KS", ruleset=CONTRACT)
    bot = GreedyBot()
    assert not bot.claims(t.state, 1), "no window before the draw"
    t.draw(0)
    assert bot.claims(t.state, 1)
    assert not bot.claims(t.state, 2), "seat 2 holds no queen"
    assert not bot.claims(t.state, 0), "the active seat passed over the card itself"
    t.act(1, offered(t))
    assert not bot.claims(t.state, 1), "once is enough"


def test_claims_the_greedy_bot_passes_on_a_card_that_only_lengthens_a_group() -> None:
    # Seat 1 has its group of queens already; a fourth queen brings nothing.
    hands = [HANDS[0], "QS QH QC 3S 5H 8D 9C JD 2D 4H"]
    t = Table(hands, "QD", "KS", ruleset=CONTRACT)
    t.draw(0)
    assert not GreedyBot().claims(t.state, 1)


def test_claims_the_greedy_bot_claims_nothing_once_its_contract_is_laid() -> None:
    t = Table(WANTS_QD, "QD", "KS", ruleset=CONTRACT)
    t.draw(0)
    t.state.opened[1] = True
    assert not GreedyBot().claims(t.state, 1)


def test_claims_the_greedy_bot_never_claims_outside_contract() -> None:
    ruleset = preset("rami51")
    hands = [" ".join([*h.split(), "KC", "QC", "7C"]) for h in WANTS_QD]
    t = Table(hands, "QD", ruleset=ruleset)
    t.draw(0)
    assert not GreedyBot().claims(t.state, 1)
