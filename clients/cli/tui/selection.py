"""The cards the player is picking in their hand: a cursor, the cards picked (in
the order picked, which is the order a run is laid), and the melds staged for a
first laying that needs several. Plain state, kept apart from the screen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .model import HandCard

DIGIT_WAIT_S = 0.6
"""How long a typed position waits for a second digit (the 1 of 12)."""


@dataclass(slots=True)
class Selection:
    cursor: int = 0
    """Index into the hand as shown."""
    picked: list[int] = field(default_factory=list)
    """Card ids, in the order picked."""
    staged: list[list[int]] = field(default_factory=list)
    """Melds set aside for one laying (an opening that needs several)."""
    digits: str = ""
    """A position being typed."""

    def fit(self, hand: Sequence[HandCard]) -> None:
        """Forget cards that left the hand; keep the cursor on a card."""
        held = {c.id for c in hand}
        self.picked = [c for c in self.picked if c in held]
        self.staged = [m for m in self.staged if all(c in held for c in m)]
        self.cursor = min(max(0, self.cursor), max(0, len(hand) - 1))

    def move(self, hand: Sequence[HandCard], step: int) -> None:
        if hand:
            self.cursor = (self.cursor + step) % len(hand)

    def toggle(self, card: HandCard) -> None:
        if card.id in self.picked:
            self.picked.remove(card.id)
        elif not any(card.id in m for m in self.staged):
            self.picked.append(card.id)

    def staged_ids(self) -> set[int]:
        return {c for m in self.staged for c in m}

    def clear(self) -> None:
        self.picked.clear()
        self.staged.clear()
        self.digits = ""

    def cursor_card(self, hand: Sequence[HandCard]) -> HandCard | None:
        return hand[self.cursor] if 0 <= self.cursor < len(hand) else None

    def type_digit(self, digit: str, hand: Sequence[HandCard]) -> tuple[HandCard | None, bool]:
        """A digit of a position typed: the card it names once that is sure, and
        whether a second digit may still come (then wait `DIGIT_WAIT_S` and call
        `typed_out`)."""
        self.digits += digit
        number = int(self.digits)
        longer = number * 10 <= len(hand) and number > 0
        if longer and len(self.digits) < 2:
            return None, True
        return self.typed_out(hand), False

    def typed_out(self, hand: Sequence[HandCard]) -> HandCard | None:
        """The position typed so far, as a card (None when no card has it)."""
        text, self.digits = self.digits, ""
        if not text:
            return None
        number = int(text)
        if not 1 <= number <= len(hand):
            return None
        self.cursor = number - 1
        return hand[number - 1]
