"""From what a player typed (or a bot chose) to the request the server gets.

Card names become ids from the player's own hand; meld numbers are the table
meld ids shown on screen. Whether a move is allowed stays the server's call:
only what cannot even be sent (a card not in hand, no meld 7) stops here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from services.common.pb.rummy.v1 import cards_pb2, game_pb2, table_pb2
from services.game.rules import (
    PRESETS,
    RANKS,
    SUITS,
    Action,
    Claim,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    Reposer,
    RuleError,
    Ruleset,
    Side,
    SwapJoker,
    TableMeld,
    TakeDiscard,
    complete_group,
    find_melds,
    fits,
    joker_targets,
    replace_joker,
    swap_refusal,
)

from . import commands as C
from .cards import CardError, Style, normalize, pick
from .viewstate import meld_from_view, rules_of, state_from_view

_SIDE = {"": game_pb2.SIDE_UNSPECIFIED, "low": game_pb2.SIDE_LOW, "high": game_pb2.SIDE_HIGH}
_ENGINE_SIDE = {
    Side.AUTO: game_pb2.SIDE_UNSPECIFIED,
    Side.LOW: game_pb2.SIDE_LOW,
    Side.HIGH: game_pb2.SIDE_HIGH,
}


class MoveError(ValueError):
    """A move that cannot be sent as typed; the message says why."""


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    message: Message


KEEP_ANSWERS = ("k", "keep", "hand")
"""Answers that keep a retrieved joker in hand (`classic` allows it)."""
_SIDE_WORDS = {"low": game_pb2.SIDE_LOW, "<": game_pb2.SIDE_LOW}
_SIDE_WORDS |= {"high": game_pb2.SIDE_HIGH, ">": game_pb2.SIDE_HIGH}


@dataclass(slots=True)
class SwapPlan:
    """A joker swap: the request without its placement, and where the joker could go.

    The player always chooses: lay the joker off, meld it with cards from hand, or
    (when the rule set allows) keep it."""

    request: game_pb2.SwapJokerRequest
    joker: int
    lay_offs: list[tuple[int, game_pb2.Side.ValueType]] = field(default_factory=list)
    """(meld id, side) where the retrieved joker fits."""
    new_meld: list[int] = field(default_factory=list)
    """A new meld of hand cards and the joker, in order, if the hand has one."""
    may_keep: bool = False
    """The rule set lets a retrieved joker stay in hand (`classic`)."""
    keep_only: bool = False
    """The seat has not opened (`classic` swaps before the opening): the joker can
    only stay in hand, a meld or a lay-off would lay cards before the opening."""
    style: Style = field(default_factory=lambda: Style(False))
    """How the cards are named in what the player is told (symbols or letters)."""

    def _request(self) -> game_pb2.SwapJokerRequest:
        """A fresh copy: each answer builds its own placement."""
        request = game_pb2.SwapJokerRequest()
        request.CopyFrom(self.request)
        return request

    def lay_off(self, meld_id: int, side: game_pb2.Side.ValueType | None = None) -> Request:
        """The joker laid off on ``meld_id``; with no side named, where it was seen to fit."""
        if side is None:
            side = next((s for m, s in self.lay_offs if m == meld_id), game_pb2.SIDE_UNSPECIFIED)
        request = self._request()
        request.lay_off.CopyFrom(
            game_pb2.LayOffPlacement(meld_id=meld_id, card_ids=[self.joker], side=side)
        )
        return Request("SwapJoker", request)

    def meld_with(self, cards: list[int]) -> Request:
        """A new meld of these cards; the joker goes last unless it is among them."""
        ids = cards if self.joker in cards else [*cards, self.joker]
        request = self._request()
        request.new_meld.CopyFrom(game_pb2.MeldSpec(card_ids=ids))
        return Request("SwapJoker", request)

    def keep(self) -> Request:
        """The joker stays in hand: no placement (refused by rule sets that forbid it)."""
        return Request("SwapJoker", self._request())

    def placement(self, answer: str, hand: Sequence[cards_pb2.Card]) -> Request:
        """The player's answer: `k` to keep the joker, a meld number to lay it off on
        (`3 low`/`3 high` for a run's end), or the cards of a new meld with it (a `JK`
        among them marks the joker's place; else it goes last)."""
        words = answer.replace(",", " ").split()
        if len(words) == 1 and words[0].lower() in KEEP_ANSWERS:
            return self.keep()
        number = words[0].strip("[]#") if words else ""
        if number.isdigit() and len(words) <= 2:
            if len(words) == 1:
                return self.lay_off(int(number))
            if words[1].lower() in _SIDE_WORDS:
                return self.lay_off(int(number), _SIDE_WORDS[words[1].lower()])
            raise MoveError(f"'{words[1]}' is not a side: write low or high, as in: 3 high")
        try:
            codes = [normalize(w) for w in words]
        except CardError as error:
            raise MoveError(str(error)) from None
        if "JK" not in codes:
            codes.append("JK")
        at = codes.index("JK")
        spare = [c for c in hand if c.id not in self.request.replacement_card_ids]
        try:
            ids = pick(spare, codes[:at] + codes[at + 1 :], style=self.style)
        except CardError as error:
            raise MoveError(str(error)) from None
        ids.insert(at, self.joker)
        return self.meld_with(ids)

    def example(self, hand: Sequence[cards_pb2.Card]) -> str:
        """The new meld the hand can make with the joker, as the player would type it."""
        codes = {c.id: c.code for c in hand}
        return " ".join(codes.get(i, "JK") for i in self.new_meld)

    def question(self, hand: Sequence[cards_pb2.Card]) -> str:
        """What the player is asked once the swap is understood: where the joker goes."""
        if self.keep_only:
            return "\n".join(
                [
                    "Before your opening the joker stays in your hand. Type",
                    "  k to take it",
                    "  nothing to cancel the swap",
                ]
            )
        fits = " ".join(f"[{m}]" for m, _ in self.lay_offs)
        lines = [
            "Where does the joker go? Type",
            f"  a meld number to lay it off{f' (it fits on {fits})' if fits else ''}",
            "  the cards of a new meld with it"
            + (f" (for example: {self.example(hand)})" if self.new_meld else ""),
        ]
        if self.may_keep:
            lines.append("  k to keep it in hand")
        lines.append("  nothing to cancel the swap")
        return "\n".join(lines)


def _meld_view(view: table_pb2.TableView, number: int) -> table_pb2.MeldView:
    for meld in view.melds:
        if meld.id == number:
            return meld
    raise MoveError(f"There is no meld [{number}] on the table.")


def _pick(
    view: table_pb2.TableView,
    codes: list[str] | tuple[str, ...],
    style: Style,
    *,
    avoid: Iterable[int] = (),
) -> list[int]:
    try:
        return pick(view.hand, codes, avoid=avoid, style=style)
    except CardError as error:
        raise MoveError(str(error)) from None


def request_for(
    view: table_pb2.TableView, command: C.Command, style: Style | None = None
) -> Request:
    """The request for a typed move (not a swap: see `swap_plan`). ``style``: how a
    card is named when the move cannot be sent (symbols or letters, no colour)."""
    style = (style or Style(False)).uncoloured()
    table = view.table_id
    common: dict[str, Any] = {"table_id": table, "expected_version": view.version}
    match command:
        case C.Draw():
            return Request("DrawStock", game_pb2.DrawStockRequest(**common))
        case C.Take():
            return Request("TakeDiscard", game_pb2.TakeDiscardRequest(**common))
        case C.PutBack():
            return Request("Reposer", game_pb2.ReposerRequest(**common))
        case C.ClaimCommand():
            rules = PRESETS.get(view.ruleset)
            if rules is not None and not rules.claims:
                raise MoveError(
                    f"Claiming a discard is not in the {view.ruleset} rules: only contract has it."
                )
            if not view.HasField("claim_window"):
                raise MoveError("No discard is on offer to claim.")
            # A claim races the window, not the table version: it names the card
            # on offer instead (a claim that arrives after it changed is refused).
            return Request(
                "Claim",
                game_pb2.ClaimRequest(table_id=table, card_id=view.claim_window.card.id),
            )
        case C.MeldCommand(melds=melds):
            ids = _pick(view, [code for meld in melds for code in meld], style)
            specs, start = [], 0
            for meld in melds:
                specs.append(game_pb2.MeldSpec(card_ids=ids[start : start + len(meld)]))
                start += len(meld)
            return Request("Meld", game_pb2.MeldRequest(melds=specs, **common))
        case C.LayOffCommand(meld=number, cards=cards, side=side):
            _meld_view(view, number)
            return Request(
                "LayOff",
                game_pb2.LayOffRequest(
                    meld_id=number, card_ids=_pick(view, cards, style), side=_SIDE[side], **common
                ),
            )
        case C.DiscardCommand(card=card):
            avoid = [view.taken_discard_id] if view.HasField("taken_discard_id") else []
            ids = _pick(view, [card], style, avoid=avoid)
            return Request("Discard", game_pb2.DiscardRequest(card_id=ids[0], **common))
    raise MoveError(f"{command} is not a move.")


def _targets(meld: TableMeld, joker: int, rules: Ruleset) -> list[str]:
    """The codes of the cards a joker of a table meld stands for (the engine's reading)."""
    return [RANKS[rank - 1] + SUITS[suit] for rank, suit in joker_targets(meld, joker, rules)]


def _not_standing_for(number: int, wanted: Sequence[Sequence[str]], card: str, plain: Style) -> str:
    """Why a swap cannot be sent: no joker of meld ``number`` stands for ``card``
    (``wanted``: the cards each joker of that meld stands for)."""
    codes = dict.fromkeys(code for codes in wanted for code in codes)
    names = " or ".join(plain.card(c) for c in codes) or "no card"
    jokers = "The joker of" if len(wanted) == 1 else "The jokers of"
    verb = "stands" if len(wanted) == 1 else "stand"
    return f"{jokers} [{number}] {verb} for {names}, not {plain.card(card)}."


def swap_refused(view: table_pb2.TableView) -> RuleError | None:
    """Why the server would refuse any joker swap from this seat now, in the engine's
    own words and order: not this seat's turn, nothing drawn yet, not opened. None
    when a swap may be tried: checked before the player is asked where the joker goes."""
    seat = view.my_seat if view.HasField("my_seat") else -1
    return swap_refusal(state_from_view(view), seat)


def swap_plan(
    view: table_pb2.TableView, command: C.SwapCommand, style: Style | None = None
) -> SwapPlan:
    """The swap request and the places the retrieved joker could go. ``style``: how
    a card is named when the swap cannot be sent (symbols or letters, no colour)."""
    style = (style or Style(False)).uncoloured()
    meld_view = _meld_view(view, command.meld)
    jokers = [c.id for c in meld_view.cards if c.code == "JK"]
    if not jokers:
        raise MoveError(f"Meld [{command.meld}] has no joker.")
    rules = rules_of(view)
    # Refused before the player is asked where the joker goes: no joker stands for that card.
    table_meld = meld_from_view(meld_view, rules)
    wanted = {j: _targets(table_meld, j, rules) for j in jokers}
    # Any card typed will do: a brelan's joker leaves with both missing cards, in any order.
    joker = next((j for j in jokers if any(c in wanted[j] for c in command.cards)), None)
    if joker is None:
        wanted_cards = list(wanted.values())
        raise MoveError(_not_standing_for(command.meld, wanted_cards, command.cards[0], style))
    replacements = _pick(view, list(command.cards), style)
    request = game_pb2.SwapJokerRequest(
        table_id=view.table_id,
        expected_version=view.version,
        meld_id=command.meld,
        joker_card_id=joker,
        replacement_card_ids=replacements,
    )
    plan = SwapPlan(request, joker, may_keep=not rules.retrieved_joker_must_be_melded, style=style)
    seat = view.my_seat if view.HasField("my_seat") else -1
    if plan.may_keep and 0 <= seat < len(view.seats) and not view.seats[seat].has_opened:
        plan.keep_only = True  # `classic` before the opening: nothing else is laid
        return plan
    melds: list[TableMeld] = [meld_from_view(m, rules) for m in view.melds]
    try:
        melds = [
            _swapped(m, joker, replacements, rules) if m.id == command.meld else m for m in melds
        ]
    except RuleError:
        return plan  # the server will say why this swap is refused
    for meld in melds:
        side = fits(meld, joker, rules)
        if side is not None:
            plan.lay_offs.append((meld.id, _ENGINE_SIDE[side]))
    rest = [c.id for c in view.hand if c.id not in replacements]
    found = find_melds([*rest, joker], rules, keep_one=rules.must_discard_to_go_out)
    with_joker = next((m for m in found.melds if joker in m.cards), None)
    if with_joker is not None:
        plan.new_meld = list(with_joker.cards)
    return plan


def _swapped(meld: TableMeld, joker: int, replacements: list[int], rules: Ruleset) -> TableMeld:
    """The meld once the joker is out: one card in its place, or (`classic`) a brelan
    completed into a carré by two."""
    if len(replacements) == 2:
        return complete_group(meld, joker, (replacements[0], replacements[1]), rules)
    return replace_joker(meld, joker, replacements[0], rules)


def action_request(table_id: str, version: int, action: Action) -> Request:
    """The request carrying one engine action (the bots' moves)."""
    common: dict[str, Any] = {"table_id": table_id, "expected_version": version}
    match action:
        case DrawStock():
            return Request("DrawStock", game_pb2.DrawStockRequest(**common))
        case TakeDiscard():
            return Request("TakeDiscard", game_pb2.TakeDiscardRequest(**common))
        case Meld():
            specs = [game_pb2.MeldSpec(card_ids=m.cards) for m in action.melds]
            return Request("Meld", game_pb2.MeldRequest(melds=specs, **common))
        case LayOff():
            return Request(
                "LayOff",
                game_pb2.LayOffRequest(
                    meld_id=action.meld_id,
                    card_ids=action.cards,
                    side=_ENGINE_SIDE[action.side],
                    **common,
                ),
            )
        case SwapJoker():
            request = game_pb2.SwapJokerRequest(
                meld_id=action.meld_id,
                joker_card_id=action.joker,
                replacement_card_ids=[action.replacement]
                + ([action.second] if action.second >= 0 else []),
                **common,
            )
            if action.lay_off is not None:
                request.lay_off.CopyFrom(
                    game_pb2.LayOffPlacement(
                        meld_id=action.lay_off.meld_id,
                        card_ids=action.lay_off.cards,
                        side=_ENGINE_SIDE[action.lay_off.side],
                    )
                )
            elif action.new_meld is not None:
                request.new_meld.CopyFrom(game_pb2.MeldSpec(card_ids=action.new_meld.cards))
            return Request("SwapJoker", request)
        case Discard():
            return Request("Discard", game_pb2.DiscardRequest(card_id=action.card, **common))
        case Reposer():
            return Request("Reposer", game_pb2.ReposerRequest(**common))
        case Claim():
            return Request("Claim", game_pb2.ClaimRequest(table_id=table_id, card_id=action.card))
    raise MoveError(f"{action} is not sent by a player.")


def hint_text(view: table_pb2.TableView, hint: game_pb2.GetHintResponse, style: Style) -> str:
    """A hint as a command ready to type, e.g. `m 7S 8S 9S / QH QD QC`."""
    if not hint.melds:
        return "Hint: no meld in your hand yet."
    codes = {c.id: c.code for c in view.hand}
    typed = " / ".join(" ".join(codes.get(i, "?") for i in m.card_ids) for m in hint.melds)
    shown = "  ".join(style.cards(codes.get(i, "?") for i in m.card_ids) for m in hint.melds)
    note = f" ({hint.opening_points} points)" if view.rules.opening_threshold else ""
    if not hint.opens:
        # The engine's own reason (the threshold, the deal's contract, the taken
        # discard); a server that gives none only says they would not open.
        note += f" — not yet: {hint.refusal_message or 'not enough to open'}"
    return f"Hint: {shown}{note}\n  type: m {typed}"
