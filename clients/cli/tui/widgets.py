"""The table's parts on screen: each lays out values from `model`, nothing more.

Widgets never call the network: the table screen gives them what to show and
hears, through messages, what the player clicked.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from .model import HandCard, MeldRow, SeatRow

CARD_WIDTH = 4
"""Columns a card takes in the hand: `10♥` and a space."""
GROUP_GAP = 1
"""Extra columns between two suits."""
NAME_WIDTH = 13


def styled(text: str) -> Text:
    """Text the `Style` coloured with ANSI codes, as Rich text (plain text is kept)."""
    return Text.from_ansi(text, no_wrap=False)


class Seats(Static):
    """Who sits where: name, cards held, score, what else is true, whose turn."""

    def show(self, rows: Sequence[SeatRow], piles: str) -> None:
        text = Text()
        for row in rows:
            marker = "▶ " if row.turn else "  "
            name = row.name if len(row.name) <= NAME_WIDTH else row.name[: NAME_WIDTH - 1] + "…"
            line = Text(marker, style="bold" if row.turn else "")
            line.append(f"{name:<{NAME_WIDTH}}", style="bold" if row.turn else "")
            line.append(f"{row.cards:>3}c{row.score:>5}")
            if row.notes:
                line.append(f" {row.notes}", style="dim")
            text.append_text(line)
            text.append("\n")
        text.append_text(styled(piles))
        self.update(text)


class MeldLine(Widget):
    """One table meld; a click on it picks it (a lay-off's or a swap's meld).

    A meld too long for one row goes on under its first card (a hanging indent),
    never splitting a card, so every row of the pane starts with a meld's number
    or that indent."""

    class Picked(Message):
        def __init__(self, meld_id: int) -> None:
            super().__init__()
            self.meld_id = meld_id

    def __init__(self, row: MeldRow) -> None:
        super().__init__(classes="meld")
        self.meld_id = row.id
        self.row = row

    def _text(self, width: int) -> Text:
        text = Text(f"[{self.row.id}] ", style="bold")
        text.append(f"{self.row.owner}: ", style="dim")
        # Under the first card, unless the owner's name would leave too little room.
        indent = text.cell_len if text.cell_len <= width // 2 else len(f"[{self.row.id}] ")
        x = text.cell_len
        for number, card in enumerate(styled(self.row.cards).split(" ")):
            if not card.plain:
                continue
            gap = 1 if number else 0
            if number and x + gap + card.cell_len > width:
                text.append("\n" + " " * indent)
                x, gap = indent, 0
            text.append(" " * gap)
            text.append_text(card)
            x += gap + card.cell_len
        text.no_wrap = True
        text.overflow = "ellipsis"
        return text

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(self._text(max(1, width)).plain.splitlines()) or 1

    def render(self) -> Text:
        return self._text(max(1, self.content_region.width))

    def on_click(self) -> None:
        self.post_message(self.Picked(self.meld_id))


class Melds(VerticalScroll):
    """The table's melds, numbered; a long list scrolls in here."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._shown: list[MeldRow] = []

    def show(self, rows: Sequence[MeldRow]) -> None:
        if list(rows) == self._shown and self.children:
            return
        self._shown = list(rows)
        self.remove_children()
        if rows:
            self.mount_all([MeldLine(row) for row in rows])
        else:
            self.mount(Static("No melds on the table yet.", classes="empty"))
        self.call_after_refresh(self.scroll_end, animate=False)


class Hand(Widget):
    """The player's cards, grouped by suit, with the position number under each.
    The cursor is underlined; picked cards are shown reversed."""

    can_focus = True

    class Toggled(Message):
        def __init__(self, position: int) -> None:
            super().__init__()
            self.position = position

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cards: list[HandCard] = []
        self.labels: dict[int, str] = {}
        """Card id → how the card looks (styled)."""
        self.picked: set[int] = set()
        self.staged: set[int] = set()
        self.cursor = 0
        self.width_hint = 78

    def show(
        self,
        cards: Sequence[HandCard],
        labels: dict[int, str],
        *,
        picked: set[int],
        staged: set[int],
        cursor: int,
    ) -> None:
        self.cards, self.labels = list(cards), labels
        self.picked, self.staged, self.cursor = set(picked), set(staged), cursor
        self.refresh(layout=True)

    def _rows(self, width: int) -> list[list[tuple[int, HandCard]]]:
        """Cards placed on rows that fit ``width``: (column, card)."""
        rows: list[list[tuple[int, HandCard]]] = [[]]
        x, group = 0, None
        for card in self.cards:
            gap = GROUP_GAP if group is not None and card.group != group else 0
            if x + gap + CARD_WIDTH > width and rows[-1]:
                rows.append([])
                x, gap = 0, 0
            x += gap
            rows[-1].append((x, card))
            x += CARD_WIDTH
            group = card.group
        return rows

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return max(2, 2 * len(self._rows(width)))

    def render(self) -> Text:
        width = max(CARD_WIDTH, self.content_region.width or self.width_hint)
        if not self.cards:
            return Text("(no cards)", style="dim")
        text = Text()
        for number, row in enumerate(self._rows(width)):
            if number:
                text.append("\n")
            faces, numbers = Text(), Text()
            for x, card in row:
                pad = x - len(faces.plain)
                faces.append(" " * pad)
                numbers.append(" " * (x - len(numbers.plain)))
                label = styled(self.labels.get(card.id, card.code))
                if card.id in self.picked:
                    label.stylize("reverse")
                elif card.id in self.staged:
                    label.stylize("dim")
                if card.position - 1 == self.cursor and self.has_focus:
                    label.stylize("underline bold")
                faces.append_text(label)
                at = f"{card.position:>{len(label.plain)}}"
                numbers.append(at, style="bold" if card.position - 1 == self.cursor else "dim")
            text.append_text(faces)
            text.append("\n")
            text.append_text(numbers)
        return text

    def on_click(self, event: object) -> None:
        x = getattr(event, "x", -1)
        y = getattr(event, "y", -1)
        rows = self._rows(max(CARD_WIDTH, self.content_region.width))
        row = y // 2
        if not 0 <= row < len(rows):
            return
        for left, card in rows[row]:
            if left <= x < left + CARD_WIDTH:
                self.post_message(self.Toggled(card.position))
                return


class StatusBar(Static):
    """Two lines: whose turn with the live countdown, then the keys for the moves
    legal now, or the last refusal's sentence and reason."""

    def show(self, turn: str, keys: str, message: str = "") -> None:
        text = styled(turn)
        text.append("\n")
        text.append_text(styled(message) if message else styled(keys))
        text.no_wrap = True
        text.overflow = "ellipsis"
        self.update(text)
