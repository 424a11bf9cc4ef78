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
from services.game.rules import actions as act
from services.game.rules.errors import RuleError
from services.game.rules.finder import find_melds
from services.game.rules.melds import Meld, Side, fits, swap_joker
from services.game.rules.ruleset import preset

from . import commands as C
from .cards import CardError, Style, normalize, pick
from .viewstate import meld_from_view

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


@dataclass(slots=True)
class SwapPlan:
    """A joker swap: the request without its placement, and where the joker could go."""

    request: game_pb2.SwapJokerRequest
    joker: int
    lay_offs: list[tuple[int, game_pb2.Side.ValueType]] = field(default_factory=list)
    """(meld id, side) where the retrieved joker fits."""
    new_meld: list[int] = field(default_factory=list)
    """A new meld of hand cards and the joker, in order, if the hand has one."""

    def lay_off(
        self, meld_id: int, side: game_pb2.Side.ValueType = game_pb2.SIDE_UNSPECIFIED
    ) -> Request:
        self.request.lay_off.CopyFrom(
            game_pb2.LayOffPlacement(meld_id=meld_id, card_ids=[self.joker], side=side)
        )
        return Request("SwapJoker", self.request)

    def meld_with(self, cards: list[int]) -> Request:
        """A new meld of these cards; the joker goes last unless it is among them."""
        ids = cards if self.joker in cards else [*cards, self.joker]
        self.request.new_meld.CopyFrom(game_pb2.MeldSpec(card_ids=ids))
        return Request("SwapJoker", self.request)

    def placement(self, answer: str, hand: Sequence[cards_pb2.Card]) -> Request:
        """The player's answer: a meld number to lay the joker off on, or the cards of a
        new meld with it (a `JK` among them marks the joker's place; else it goes last)."""
        number = answer.strip().strip("[]#")
        if number.isdigit():
            return self.lay_off(int(number))
        try:
            codes = [normalize(w) for w in answer.replace(",", " ").split()]
        except CardError as error:
            raise MoveError(str(error)) from None
        if "JK" not in codes:
            codes.append("JK")
        at = codes.index("JK")
        spare = [c for c in hand if c.id not in self.request.replacement_card_ids]
        try:
            ids = pick(spare, codes[:at] + codes[at + 1 :])
        except CardError as error:
            raise MoveError(str(error)) from None
        ids.insert(at, self.joker)
        return self.meld_with(ids)

    def example(self, hand: Sequence[cards_pb2.Card]) -> str:
        """The new meld the hand can make with the joker, as the player would type it."""
        codes = {c.id: c.code for c in hand}
        return " ".join(codes.get(i, "JK") for i in self.new_meld)

    def automatic(self) -> Request | None:
        """The first lay-off that takes the joker; None when the player must choose."""
        if self.lay_offs:
            return self.lay_off(*self.lay_offs[0])
        return None


def _meld_view(view: table_pb2.TableView, number: int) -> table_pb2.MeldView:
    for meld in view.melds:
        if meld.id == number:
            return meld
    raise MoveError(f"There is no meld [{number}] on the table.")


def _pick(
    view: table_pb2.TableView, codes: list[str] | tuple[str, ...], *, avoid: Iterable[int] = ()
) -> list[int]:
    try:
        return pick(view.hand, codes, avoid=avoid)
    except CardError as error:
        raise MoveError(str(error)) from None


def request_for(view: table_pb2.TableView, command: C.Command) -> Request:
    """The request for a typed move (not a swap: see `swap_plan`)."""
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
            # A claim races the window, not the table version: send none.
            return Request("Claim", game_pb2.ClaimRequest(table_id=table))
        case C.MeldCommand(melds=melds):
            ids = _pick(view, [code for meld in melds for code in meld])
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
                    meld_id=number, card_ids=_pick(view, cards), side=_SIDE[side], **common
                ),
            )
        case C.DiscardCommand(card=card):
            avoid = [view.taken_discard_id] if view.HasField("taken_discard_id") else []
            ids = _pick(view, [card], avoid=avoid)
            return Request("Discard", game_pb2.DiscardRequest(card_id=ids[0], **common))
    raise MoveError(f"{command} is not a move.")


def _stands_for(meld: table_pb2.MeldView, joker: int, code: str) -> bool:
    role = next((r for r in meld.jokers if r.joker_card_id == joker), None)
    if role is None or role.rank != code[0]:
        return False
    if role.suit:
        return "?SHDC"[role.suit] == code[1]
    taken = {c.code[1] for c in meld.cards if c.code != "JK"}
    return code[1] not in taken


def swap_plan(view: table_pb2.TableView, command: C.SwapCommand) -> SwapPlan:
    """The swap request and the places the retrieved joker could go."""
    meld_view = _meld_view(view, command.meld)
    jokers = [c.id for c in meld_view.cards if c.code == "JK"]
    if not jokers:
        raise MoveError(f"Meld [{command.meld}] has no joker.")
    # With no joker standing for that card, send anyway: the server says what it stands for.
    joker = next((j for j in jokers if _stands_for(meld_view, j, command.card)), jokers[0])
    replacement = _pick(view, [command.card])[0]
    request = game_pb2.SwapJokerRequest(
        table_id=view.table_id,
        expected_version=view.version,
        meld_id=command.meld,
        joker_card_id=joker,
        replacement_card_ids=[replacement],
    )
    plan = SwapPlan(request, joker)
    rules = preset(view.ruleset)
    melds: list[Meld] = [meld_from_view(m, rules) for m in view.melds]
    try:
        melds = [
            swap_joker(m, joker, replacement, rules) if m.id == command.meld else m for m in melds
        ]
    except RuleError:
        return plan  # the server will say why this swap is refused
    for meld in melds:
        side = fits(meld, joker, rules)
        if side is not None:
            plan.lay_offs.append((meld.id, _ENGINE_SIDE[side]))
    rest = [c.id for c in view.hand if c.id != replacement]
    found = find_melds([*rest, joker], rules, keep_one=rules.must_discard_to_go_out)
    with_joker = next((m for m in found.melds if joker in m.cards), None)
    if with_joker is not None:
        plan.new_meld = list(with_joker.cards)
    return plan


def action_request(table_id: str, version: int, action: act.Action) -> Request:
    """The request carrying one engine action (the bots' moves)."""
    common: dict[str, Any] = {"table_id": table_id, "expected_version": version}
    match action:
        case act.DrawStock():
            return Request("DrawStock", game_pb2.DrawStockRequest(**common))
        case act.TakeDiscard():
            return Request("TakeDiscard", game_pb2.TakeDiscardRequest(**common))
        case act.Meld():
            specs = [game_pb2.MeldSpec(card_ids=m.cards) for m in action.melds]
            return Request("Meld", game_pb2.MeldRequest(melds=specs, **common))
        case act.LayOff():
            return Request(
                "LayOff",
                game_pb2.LayOffRequest(
                    meld_id=action.meld_id,
                    card_ids=action.cards,
                    side=_ENGINE_SIDE[action.side],
                    **common,
                ),
            )
        case act.SwapJoker():
            request = game_pb2.SwapJokerRequest(
                meld_id=action.meld_id,
                joker_card_id=action.joker,
                replacement_card_ids=[action.replacement],
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
        case act.Discard():
            return Request("Discard", game_pb2.DiscardRequest(card_id=action.card, **common))
        case act.Reposer():
            return Request("Reposer", game_pb2.ReposerRequest(**common))
        case act.Claim():
            return Request("Claim", game_pb2.ClaimRequest(table_id=table_id))
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
        note += " — not enough to open yet"
    return f"Hint: {shown}{note}\n  type: m {typed}"
