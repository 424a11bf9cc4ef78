"""Questions asked over the table: each a small modal screen that answers with
`dismiss`, so the flow that asked can `await` it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from .widgets import styled


class Confirm(ModalScreen[bool]):
    """A yes/no question: y or Enter says yes only when ``default`` is yes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="dialog")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(self.question)
            yield Static(Text("y yes   n no", style="bold"), classes="keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Choose(ModalScreen[str | None]):
    """Pick one of a few answers with the arrows and Enter, a click, or the key
    shown before it; Escape cancels (None)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, question: str, options: Sequence[tuple[str, str]]) -> None:
        """``options``: (answer, what the player reads), in order."""
        super().__init__(classes="dialog")
        self.question = question
        self.options = list(options)

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(self.question)
            yield OptionList(
                *(Option(styled(label), id=answer) for answer, label in self.options),
                id="choices",
            )
            yield Static(Text("↑↓ and Enter, or click · Esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def on_key(self, event: object) -> None:
        """A meld number typed, or the first letter of an answer, picks it."""
        character = getattr(event, "character", None) or ""
        for answer, _label in self.options:
            if character and answer == character:
                self.dismiss(answer)
                return

    def action_cancel(self) -> None:
        self.dismiss(None)


class Ask(ModalScreen[str | None]):
    """A line of text: a name, or a move typed as in the line client."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, question: str, *, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(self.question)
            yield Input(value=self.value, placeholder=self.placeholder)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class Notice(ModalScreen[str]):
    """Something to read (a round's result, the help); ``keys``: the answers it takes
    besides Enter and Escape (which answer '')."""

    def __init__(self, title: str, body: str, *, keys: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.body = body
        self.keys = list(keys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="box wide"):
            yield Static(Text(self.title_text, style="bold"))
            yield Static(styled(self.body), classes="body")
            shown = [f"{key} {what}" for key, what in self.keys] or ["Enter back to the table"]
            yield Static(Text("   ".join(shown), style="bold"), classes="keys")

    def on_key(self, event: object) -> None:
        key = getattr(event, "key", "")
        if key in ("enter", "escape") and not self.keys:
            self.dismiss("")
            return
        for answer, _what in self.keys:
            if key == answer:
                self.dismiss(answer)
                return
