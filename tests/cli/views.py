"""Hand-built `TableView`s for the client's unit tests (cafe card ids)."""

from __future__ import annotations

from collections.abc import Sequence

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game.rules import preset

CAFE = preset("cafe")
SERVER_NOW_MS = 1_700_000_000_000


class Cards:
    """Hands out distinct physical cards by code, as a real deck would."""

    def __init__(self, ruleset: str = "cafe") -> None:
        self.deck = preset(ruleset).deck
        self.used: set[int] = set()

    def __call__(self, code: str) -> cards_pb2.Card:
        card_id = next(i for i in self.deck.ids_of(code) if i not in self.used)
        self.used.add(card_id)
        return cards_pb2.Card(id=card_id, code=code)

    def many(self, codes: str) -> list[cards_pb2.Card]:
        return [self(c) for c in codes.split()]


def meld(
    meld_id: int,
    owner: int,
    kind: int,
    cards: Sequence[cards_pb2.Card],
    jokers: Sequence[tuple[str, int]] = (),
) -> table_pb2.MeldView:
    """`jokers`: (rank, suit) each joker of `cards` stands for, in order."""
    joker_ids = [c.id for c in cards if c.code == "JK"]
    return table_pb2.MeldView(
        id=meld_id,
        owner_seat=owner,
        kind=kind,  # type: ignore[arg-type]
        cards=cards,
        jokers=[
            table_pb2.JokerRole(joker_card_id=j, rank=r, suit=s)  # type: ignore[arg-type]
            for j, (r, s) in zip(joker_ids, jokers, strict=True)
        ],
    )


def sample_view(
    *,
    phase: int = table_pb2.PHASE_PLAY,
    current: int = 0,
    hand: str = "7S TS 2H 9S JK",
    ruleset: str = "cafe",
) -> table_pb2.TableView:
    """Alice (seat 0, the viewer) and Bob (a bot) with three melds on the table."""
    deal = Cards(ruleset)
    view = table_pb2.TableView(
        table_id="00000000-0000-0000-0000-000000000001",
        version=12,
        ruleset=ruleset,
        my_seat=0,
        seats=[
            table_pb2.SeatView(seat=0, display_name="Alice", card_count=5, score_total=3),
            table_pb2.SeatView(
                seat=1, display_name="Bob", is_bot=True, card_count=7, has_opened=True
            ),
        ],
        hand=deal.many(hand),
        melds=[
            meld(1, 1, table_pb2.MELD_KIND_RUN, deal.many("7S 8S JK TS"), [("9", 1)]),
            meld(2, 1, table_pb2.MELD_KIND_GROUP, deal.many("QH QD JK"), [("Q", 0)]),
            meld(3, 1, table_pb2.MELD_KIND_RUN, deal.many("4H 5H 6H")),
        ],
        discard_size=9,
        stock_size=60,
        current_seat=current,
        phase=phase,  # type: ignore[arg-type]
        round=1,
        turn=7,
        turn_cap=120,
        last_seq=40,
    )
    view.discard_top.CopyFrom(deal("5D"))
    view.discard_pile.append(view.discard_top)
    view.server_time.FromMilliseconds(SERVER_NOW_MS)
    view.turn_deadline.FromMilliseconds(SERVER_NOW_MS + 30_000)
    return view
