"""One engine event of every kind, and of every form it takes on the wire.

`SAMPLES` is what the registry's tests run through the log and the wire: an
event kind added without a sample here fails them. Card ids are `cafe`'s; every
rule set's deck gives the same ids to its natural cards and its first joker."""

from __future__ import annotations

from dataclasses import dataclass

from services.game.rules import events as ev
from services.game.rules.cards import NO_SUIT
from services.game.rules.melds import MeldKind, TableMeld
from services.game.rules.ruleset import CAFE, CLASSIC, CONTRACT, Ruleset


def _id(code: str, copy: int = 0) -> int:
    return CAFE.deck.ids_of(code)[copy]


JOKER = _id("JK")
RUN = TableMeld(1, 0, MeldKind.RUN, (_id("8S"), _id("9S"), _id("TS")), 8, 0)
GROUP = TableMeld(2, 1, MeldKind.GROUP, (_id("QH"), _id("QC"), JOKER), 12, NO_SUIT, ((JOKER, 3),))
"""A group whose joker the player said stands for the queen of spades (suit 3 here:
its suit is given, not worked out)."""
LAID_ON = TableMeld(3, 1, MeldKind.RUN, (_id("4D"), _id("5D"), _id("6D"), JOKER), 4, 2)


@dataclass(frozen=True, slots=True)
class Sample:
    event: ev.Event
    sent_as: str
    """The `TableEvent.payload` field it fills."""
    rules: Ruleset = CAFE


SAMPLES: tuple[Sample, ...] = (
    Sample(
        ev.RoundDealt(
            round_no=1,
            dealer=1,
            hands=((_id("2S"), _id("3S")), (_id("4S"), _id("5S"))),
            discard_top=_id("KD"),
            stock_size=40,
            commitment="ab" * 32,
        ),
        "dealt",
    ),
    Sample(ev.TurnBegan(seat=0, turn=3, deadline_ms=45_000), "turn_started"),
    Sample(ev.Drew(seat=0, card=_id("7H"), from_discard=False, stock_size=39), "drew"),
    Sample(ev.Drew(seat=1, card=_id("KD"), from_discard=True, stock_size=39), "took_discard"),
    Sample(ev.Reshuffled(stock_size=30, discard_top=_id("2C"), count=1), "reshuffled"),
    Sample(ev.Melded(seat=1, melds=(RUN, GROUP), opened=True, opening_points=57), "melded"),
    Sample(ev.LaidOff(seat=1, cards=(JOKER,), meld=LAID_ON), "laid_off"),
    Sample(
        ev.JokerSwapped(seat=1, joker=JOKER, replacement=_id("QS"), meld=GROUP, placed_in=LAID_ON),
        "joker_swapped",
    ),
    Sample(
        ev.JokerSwapped(
            seat=0,
            joker=JOKER,
            replacement=_id("QS"),
            meld=TableMeld(2, 1, MeldKind.GROUP, (_id("QH"), _id("QC"), _id("QS"), _id("QD")), 12),
            second=_id("QD"),
        ),
        "joker_swapped",
        CLASSIC,
    ),
    Sample(ev.Discarded(seat=0, card=_id("9C"), automatic=True), "discarded"),
    Sample(
        ev.TurnResumed(
            seat=1, turn=4, deadline_ms=90_000, claim_deadline_ms=70_000, stopped_ms=12_345
        ),
        "turn_resumed",
    ),
    Sample(ev.TurnPassed(seat=0, reason="timeout"), "turn_passed"),
    Sample(ev.PlayerConnection(seat=1, connected=False), "player_connection"),
    Sample(ev.PlayerLeft(seat=1), "player_left"),
    Sample(ev.PlayerEliminated(seat=0, total=104), "player_eliminated"),
    Sample(ev.BoughtBack(seat=2, total=54, used=1), "bought_back", CLASSIC),
    Sample(
        ev.RoundEnded(
            round_no=2,
            winner=0,
            reason=ev.EndReason.WENT_OUT,
            penalties=(0, 27),
            totals=(10, 27),
            doubled=True,
            hands=((), (_id("KS"), _id("QH"), _id("7D"))),
        ),
        "round_ended",
    ),
    Sample(ev.GameEnded(winner=1, reason=ev.EndReason.TURN_CAP, totals=(40, 12)), "game_ended"),
    Sample(ev.Reposed(seat=0, card=_id("KD")), "reposed"),
    Sample(ev.ClaimWindowOpened(card=_id("5H"), closes_ms=50_000), "claim_window_opened", CONTRACT),
    Sample(ev.ClaimWindowClosed(card=_id("5H")), "claim_window_closed", CONTRACT),
    Sample(ev.ClaimMade(seat=2), "claim_made", CONTRACT),
    Sample(ev.Claimed(seat=2, card=_id("5H"), penalty=_id("9D")), "claimed", CONTRACT),
    Sample(ev.CardAnnounced(seat=0), "card_announced"),
    Sample(ev.DeckRevealed(round_no=1, order=(3, 1, 2), seed=99, salt="00ff"), "deck_revealed"),
)
