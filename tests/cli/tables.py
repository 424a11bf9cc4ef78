"""Tables frozen at one moment, for the screens' snapshots: each a `TableView` as
the server would send it to one seat, with a clock that does not move."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp
from textual.app import App

from clients.cli import tui
from clients.cli.cards import Style
from clients.cli.connection import Connection
from clients.cli.moves import Request
from clients.cli.render import Clock
from clients.cli.tui.session import RoundOver, TableSession
from clients.cli.tui.table_screen import TableScreen
from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.common.wire.refusals import Refusal
from services.game.rules.ruleset import preset

NOW_MS = 1_780_000_000_000
"""The frozen server time."""


def at(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


class Deck:
    """Hands out distinct card ids of a rule set's deck by their codes."""

    def __init__(self, ruleset: str, seats: int = 2) -> None:
        self.rules = preset(ruleset).for_seats(seats)
        self.used: set[int] = set()

    def cards(self, codes: str) -> list[cards_pb2.Card]:
        out = []
        for code in codes.split():
            card = next(i for i in self.rules.deck.ids_of(code) if i not in self.used)
            self.used.add(card)
            out.append(cards_pb2.Card(id=card, code=code))
        return out


def seat(
    number: int,
    name: str,
    cards: int,
    total: int,
    *,
    bot: bool = False,
    opened: bool = False,
    connected: bool = True,
) -> table_pb2.SeatView:
    return table_pb2.SeatView(
        seat=number,
        player_id=f"p{number}",
        display_name=name,
        is_bot=bot,
        card_count=cards,
        score_total=total,
        has_opened=opened,
        status=table_pb2.SEAT_STATUS_PLAYING,
        connected=connected or bot,
    )


def cafe_midgame() -> table_pb2.TableView:
    """Four players, round 2; the viewer (seat 0) has drawn and plays, 32 s left."""
    deck = Deck("cafe")
    hand = deck.cards("3S 4S 9S 2H 7H 7H KH 5C 5C QD KD JK")
    run = deck.cards("7S 8S JK TS")
    group = deck.cards("QH QC QS")
    long_run = deck.cards("2D 3D 4D 5D 6D 7D 8D 9D")
    return table_pb2.TableView(
        table_id="4b6f1c2e-frozen",
        version=57,
        ruleset="cafe",
        my_seat=0,
        seats=[
            seat(0, "Ana", len(hand), 12, opened=True),
            seat(1, "Bob", 9, 30, opened=True),
            seat(2, "Chloé", 13, 4, bot=True),
            seat(3, "Dan", 5, 51, opened=True, connected=False),
        ],
        hand=hand,
        melds=[
            table_pb2.MeldView(
                id=1,
                owner_seat=1,
                kind=table_pb2.MELD_KIND_RUN,
                cards=run,
                jokers=[
                    table_pb2.JokerRole(
                        joker_card_id=run[2].id, rank="9", suit=cards_pb2.SUIT_SPADES
                    )
                ],
            ),
            table_pb2.MeldView(id=2, owner_seat=0, kind=table_pb2.MELD_KIND_GROUP, cards=group),
            table_pb2.MeldView(id=3, owner_seat=3, kind=table_pb2.MELD_KIND_RUN, cards=long_run),
        ],
        discard_top=deck.cards("6C")[0],
        discard_size=7,
        stock_size=38,
        current_seat=0,
        phase=table_pb2.PHASE_PLAY,
        round=2,
        turn=23,
        turn_cap=120,
        turn_deadline=at(NOW_MS + 32_000),
        server_time=at(NOW_MS),
        last_seq=140,
    )


def long_melds() -> table_pb2.TableView:
    """`cafe`, round 1: a whole suit in one run, and a long run with a joker; the
    viewer's turn to draw."""
    deck = Deck("cafe", seats=3)
    hand = deck.cards("4S 5S 6S 9S 2D 5D 8D JD KD JK")
    suit = deck.cards("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    clubs = deck.cards("2C 3C JK 5C 6C 7C 8C 9C TC")
    queens = deck.cards("QS QD QC")
    return table_pb2.TableView(
        table_id="1a2b3c4d-frozen",
        version=40,
        ruleset="cafe",
        my_seat=0,
        seats=[
            seat(0, "Ana", len(hand), 0, opened=True),
            seat(1, "Bob", 1, 0, opened=True),
            seat(2, "Chloé", 2, 0, bot=True, opened=True),
        ],
        hand=hand,
        melds=[
            table_pb2.MeldView(id=1, owner_seat=1, kind=table_pb2.MELD_KIND_RUN, cards=suit),
            table_pb2.MeldView(
                id=2,
                owner_seat=2,
                kind=table_pb2.MELD_KIND_RUN,
                cards=clubs,
                jokers=[
                    table_pb2.JokerRole(
                        joker_card_id=clubs[2].id, rank="4", suit=cards_pb2.SUIT_CLUBS
                    )
                ],
            ),
            table_pb2.MeldView(id=3, owner_seat=0, kind=table_pb2.MELD_KIND_GROUP, cards=queens),
        ],
        discard_top=deck.cards("3D")[0],
        discard_size=12,
        stock_size=40,
        current_seat=0,
        phase=table_pb2.PHASE_DRAW,
        round=1,
        turn=19,
        turn_cap=120,
        turn_deadline=at(NOW_MS + 40_000),
        server_time=at(NOW_MS),
        last_seq=90,
    )


def contract_claim() -> table_pb2.TableView:
    """`contract`, deal 3: Bob draws; the 8♦ he passed over is on offer for 2 s."""
    deck = Deck("contract")
    hand = deck.cards("4S 5S 6S 8H 9H TH JH 2C 2D 8D 9C")
    offered = deck.cards("8D")[0]
    return table_pb2.TableView(
        table_id="9d2e7a10-frozen",
        version=31,
        ruleset="contract",
        my_seat=1,
        seats=[
            seat(0, "Bob", 11, 35),
            seat(1, "Ana", len(hand), 20),
            seat(2, "Bot 1", 11, 0, bot=True),
        ],
        hand=hand,
        discard_top=offered,
        discard_size=4,
        stock_size=90,
        current_seat=0,
        phase=table_pb2.PHASE_PLAY,
        round=3,
        turn=8,
        turn_cap=120,
        turn_deadline=at(NOW_MS + 41_000),
        server_time=at(NOW_MS),
        rules=table_pb2.RuleInfo(contract_due=table_pb2.Contract(groups=1, runs=1)),
        claim_window=table_pb2.ClaimWindow(card=offered, closes_at=at(NOW_MS + 2_000)),
        last_seq=77,
    )


def contract_six() -> table_pb2.TableView:
    """A private `contract` table of six (158 cards), deal 2; the viewer's turn."""
    deck = Deck("contract", seats=6)
    hand = deck.cards("4S 5S 6S 7S 8H 8D 8C 2C 2D JK TH")
    names = ["Ana", "Bob", "Chloé", "Dan", "Élise", "Farid"]
    seats = [
        seat(i, name, 11 if i else len(hand), total, opened=i in (1, 4), connected=i != 3)
        for i, (name, total) in enumerate(zip(names, [20, 0, 45, 110, 5, 60], strict=True))
    ]
    group = deck.cards("KS KH KD")
    run = deck.cards("9C TC JC QC")
    return table_pb2.TableView(
        table_id="6c0ffee0-frozen",
        version=88,
        ruleset="contract",
        my_seat=0,
        seats=seats,
        hand=hand,
        melds=[
            table_pb2.MeldView(id=1, owner_seat=1, kind=table_pb2.MELD_KIND_GROUP, cards=group),
            table_pb2.MeldView(id=2, owner_seat=4, kind=table_pb2.MELD_KIND_RUN, cards=run),
        ],
        discard_top=deck.cards("3H")[0],
        discard_size=9,
        stock_size=71,
        current_seat=0,
        phase=table_pb2.PHASE_DRAW,
        round=2,
        turn=31,
        turn_cap=120,
        turn_deadline=at(NOW_MS + 44_000),
        server_time=at(NOW_MS),
        rules=table_pb2.RuleInfo(contract_due=table_pb2.Contract(groups=1, runs=1)),
        last_seq=210,
    )


def round_result(view: table_pb2.TableView) -> RoundOver:
    """Round 2's end at the cafe table: Bob went out; every hand laid face up."""
    deck = Deck("cafe")

    def score(seat: int, points: int, total: int, held: str) -> table_pb2.SeatScore:
        cards = deck.cards(held)
        return table_pb2.SeatScore(
            seat=seat, points=points, total=total, cards_left=cards, cards_left_points=points
        )

    scores = [
        score(0, 23, 35, "3S 4S 9S 2H"),
        score(1, 0, 30, ""),
        score(2, 61, 65, "KS KH QD JC AS 6H 5D 2C 2D JK"),
        score(3, 9, 60, "9C"),
    ]
    result = table_pb2.RoundResult(
        round=2,
        winner_seat=1,
        end_reason=table_pb2.END_REASON_WENT_OUT,
        scores=scores,
        cards_left_shown=True,
    )
    return RoundOver(result, view, "Round 2: deck verified, it was fixed before the first card.")


class Frozen(TableSession):
    """A session that never calls the server: the view stays as given, and the
    moves the screen sends are kept in `sent` (each answered as accepted)."""

    sent: list[Request]

    def start(self) -> None:
        self.sent = []
        self.clock = Clock(now=lambda: NOW_MS / 1000)
        self.clock.sync(self.view)

    async def send(self, request: Request) -> Refusal | None:
        self.sent.append(request)
        return None


class FrozenTable(App[str]):
    """One table screen over a frozen view (and what to do once it shows), its
    cards shown in ``style`` (by default: no colour, suit symbols)."""

    CSS_PATH = Path(tui.__file__).parent / "rummy.tcss"

    def __init__(
        self,
        view: table_pb2.TableView,
        *,
        log: Sequence[str] = (),
        then: Callable[[TableScreen], None] | None = None,
        style: Style | None = None,
    ) -> None:
        super().__init__()
        self.style = style or Style(False)
        self.view = view
        self.log_lines = list(log)
        self.then = then

    def on_mount(self) -> None:
        style = self.style
        conn = Connection("127.0.0.1:1", "device-frozen-0001", "Ana")

        def session_of(changed: Callable[[], None], round_over: Callable[..., None]) -> Frozen:
            session = Frozen(conn, self.view, style, changed=changed, round_over=round_over)
            for line in self.log_lines:
                session.log.append(line)
            return session

        screen = TableScreen(session_of, style)
        self.push_screen(screen)
        if self.then is not None:
            self.call_after_refresh(self.then, screen)
