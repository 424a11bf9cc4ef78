"""Bad input on a live table: each refusal has its status and ErrorInfo reason,
and leaves the table exactly as it was (same version, same views, same log)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message

from services.common.pb.rummy.v1 import cards_pb2, game_pb2, table_pb2
from services.common.serving import MAX_RECEIVE_BYTES
from services.game.rules.actions import DrawStock

from .harness import JOKERS, Player, card, create_table, deck_order, login, refused, snapshot
from .stored import table_db

INVALID = grpc.StatusCode.INVALID_ARGUMENT
RULES = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED

MINE = [
    *JOKERS[:2],
    *(card(c) for c in ("2S", "3S", "4S", "5H", "6H", "7H", "8D", "9D", "TD", "JC", "QC")),
]
THEIRS = card("KS")
DRAWN = card("AC")
IN_STOCK = card("AH")
UNKNOWN = 999


@dataclass(frozen=True)
class Case:
    name: str
    who: str
    """"me" (seat 0, whose turn it is), "them" (seat 1) or "outsider" (not seated)."""
    method: str
    request: Callable[[str], Message]
    code: grpc.StatusCode
    reason: str | None


def meld(*cards: int) -> game_pb2.MeldSpec:
    return game_pb2.MeldSpec(card_ids=cards)


def melds(*specs: game_pb2.MeldSpec) -> Callable[[str], Message]:
    return lambda t: game_pb2.MeldRequest(table_id=t, melds=specs)


def discard(card_id: int) -> Callable[[str], Message]:
    return lambda t: game_pb2.DiscardRequest(table_id=t, card_id=card_id)


def draw(t: str) -> Message:
    return game_pb2.DrawStockRequest(table_id=t)


def take(t: str) -> Message:
    return game_pb2.TakeDiscardRequest(table_id=t)


ANY_PHASE = [
    Case("stock draw out of turn", "them", "DrawStock", draw, RULES, "NOT_YOUR_TURN"),
    Case("discard take out of turn", "them", "TakeDiscard", take, RULES, "NOT_YOUR_TURN"),
    Case("discard out of turn", "them", "Discard", discard(THEIRS), RULES, "NOT_YOUR_TURN"),
    Case("not seated: draw", "outsider", "DrawStock", draw, DENIED, "NOT_SEATED"),
    Case("not seated: discard", "outsider", "Discard", discard(THEIRS), DENIED, "NOT_SEATED"),
    Case(
        "not seated: hint",
        "outsider",
        "GetHint",
        lambda t: game_pb2.GetHintRequest(table_id=t),
        DENIED,
        "NOT_SEATED",
    ),
    Case(
        "not seated: leave",
        "outsider",
        "Leave",
        lambda t: game_pb2.LeaveRequest(table_id=t),
        DENIED,
        "NOT_SEATED",
    ),
    Case(
        "bad table id",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id="table-1"),
        INVALID,
        "TABLE_ID_INVALID",
    ),
    Case(
        "bad table id on a read",
        "me",
        "GetTable",
        lambda t: game_pb2.GetTableRequest(table_id="'; DROP TABLE tables; --"),
        INVALID,
        "TABLE_ID_INVALID",
    ),
    Case(
        "no such table",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=str(uuid.uuid4())),
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    ),
    Case(
        "request id too long",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=t, request_id="r" * 65),
        INVALID,
        "REQUEST_ID_INVALID",
    ),
    Case(
        "request id with a NUL (no database text can hold it)",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=t, request_id="r\x00"),
        INVALID,
        "REQUEST_ID_INVALID",
    ),
    Case(
        "stale version",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=t, expected_version=0),
        grpc.StatusCode.ABORTED,
        "VERSION_STALE",
    ),
    Case(
        "too many cards in a meld",
        "me",
        "Meld",
        melds(meld(*range(33))),
        INVALID,
        "TOO_MANY_CARDS",
    ),
    Case(
        "too many cards in a lay-off",
        "me",
        "LayOff",
        lambda t: game_pb2.LayOffRequest(table_id=t, meld_id=1, card_ids=range(40)),
        INVALID,
        "TOO_MANY_CARDS",
    ),
    Case(
        "swap with no replacement",
        "me",
        "SwapJoker",
        lambda t: game_pb2.SwapJokerRequest(table_id=t, meld_id=1, joker_card_id=JOKERS[0]),
        INVALID,
        "SWAP_INVALID",
    ),
    Case(
        # One card, or the two missing cards of a classic brelan: never three.
        "swap with three replacements",
        "me",
        "SwapJoker",
        lambda t: game_pb2.SwapJokerRequest(
            table_id=t, meld_id=1, joker_card_id=JOKERS[0], replacement_card_ids=[1, 2, 3]
        ),
        INVALID,
        "SWAP_INVALID",
    ),
    Case(
        "joker suit out of range",
        "me",
        "Meld",
        melds(
            game_pb2.MeldSpec(
                card_ids=[JOKERS[0], card("2S"), card("2H")],
                joker_suits=[
                    game_pb2.JokerSuit(card_id=JOKERS[0], suit=cards_pb2.Suit.ValueType(7))
                ],
            )
        ),
        INVALID,
        "SUIT_INVALID",
    ),
    Case(
        "joker suit not named",
        "me",
        "Meld",
        melds(
            game_pb2.MeldSpec(
                card_ids=[JOKERS[0], card("2S"), card("2H")],
                joker_suits=[
                    game_pb2.JokerSuit(card_id=JOKERS[0], suit=cards_pb2.SUIT_UNSPECIFIED)
                ],
            )
        ),
        INVALID,
        "SUIT_INVALID",
    ),
    Case(
        "oversized request",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=t, request_id="r" * 70_000),
        INVALID,
        "REQUEST_TOO_LARGE",
    ),
    Case(
        "oversized meld",
        "me",
        "Meld",
        melds(meld(*range(100_000, 125_000))),
        INVALID,
        "REQUEST_TOO_LARGE",
    ),
    Case(
        # Past the hard cap gRPC refuses it unread, before any code of ours runs.
        "request past the hard cap",
        "me",
        "DrawStock",
        lambda t: game_pb2.DrawStockRequest(table_id=t, request_id="r" * (MAX_RECEIVE_BYTES + 1)),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        None,
    ),
    Case(
        "meld kind out of range",
        "me",
        "Meld",
        melds(
            game_pb2.MeldSpec(
                card_ids=[card("2S"), card("3S"), card("4S")], kind=table_pb2.MeldKind.ValueType(7)
            )
        ),
        INVALID,
        "MELD_KIND_INVALID",
    ),
    Case(
        "lay-off side out of range",
        "me",
        "LayOff",
        lambda t: game_pb2.LayOffRequest(
            table_id=t, meld_id=1, card_ids=[card("2S")], side=game_pb2.Side.ValueType(9)
        ),
        INVALID,
        "SIDE_INVALID",
    ),
    Case(
        "claim: not in cafe",
        "me",
        "Claim",
        lambda t: game_pb2.ClaimRequest(table_id=t, card_id=THEIRS),
        RULES,
        "RULE_NOT_IN_PLAY",
    ),
]

BEFORE_THE_DRAW = [
    Case("discard before the draw", "me", "Discard", discard(card("2S")), RULES, "MUST_DRAW_FIRST"),
    Case(
        "meld before the draw",
        "me",
        "Meld",
        melds(meld(card("2S"), card("3S"), card("4S"))),
        RULES,
        "MUST_DRAW_FIRST",
    ),
]

AFTER_THE_DRAW = [
    Case("draw twice", "me", "DrawStock", draw, RULES, "ALREADY_DREW"),
    Case("take the discard after a draw", "me", "TakeDiscard", take, RULES, "ALREADY_DREW"),
    Case("discard an unknown card", "me", "Discard", discard(UNKNOWN), INVALID, "CARD_UNKNOWN"),
    Case("discard their card", "me", "Discard", discard(THEIRS), RULES, "CARD_NOT_IN_HAND"),
    Case("discard a stock card", "me", "Discard", discard(IN_STOCK), RULES, "CARD_NOT_IN_HAND"),
    Case("discard a joker", "me", "Discard", discard(JOKERS[0]), RULES, "JOKER_DISCARD_FORBIDDEN"),
    Case(
        "same card twice in a meld",
        "me",
        "Meld",
        melds(meld(card("2S"), card("2S"), card("3S"))),
        INVALID,
        "CARD_DUPLICATED",
    ),
    Case(
        "same card in two melds",
        "me",
        "Meld",
        melds(meld(card("2S"), card("3S"), card("4S")), meld(card("4S"), JOKERS[0], card("6H"))),
        INVALID,
        "CARD_DUPLICATED",
    ),
    Case(
        "unknown card in a meld",
        "me",
        "Meld",
        melds(meld(card("2S"), card("3S"), UNKNOWN)),
        INVALID,
        "CARD_UNKNOWN",
    ),
    Case(
        "their card in a meld",
        "me",
        "Meld",
        melds(meld(card("JC"), card("QC"), card("KC"))),
        RULES,
        "CARD_NOT_IN_HAND",
    ),
    Case(
        "not a meld",
        "me",
        "Meld",
        melds(meld(card("2S"), card("6H"), card("TD"))),
        RULES,
        "MELD_INVALID",
    ),
    Case("no meld named", "me", "Meld", melds(), RULES, "NOTHING_TO_MELD"),
    Case(
        "a run named a group",
        "me",
        "Meld",
        melds(
            game_pb2.MeldSpec(
                card_ids=[card("2S"), card("3S"), card("4S")], kind=table_pb2.MELD_KIND_GROUP
            )
        ),
        RULES,
        "MELD_KIND_MISMATCH",
    ),
    Case(
        "lay off before opening",
        "me",
        "LayOff",
        lambda t: game_pb2.LayOffRequest(table_id=t, meld_id=1, card_ids=[card("2S")]),
        RULES,
        "NOT_OPENED",
    ),
    Case("meld out of turn", "them", "Meld", melds(meld(THEIRS)), RULES, "NOT_YOUR_TURN"),
    Case(
        "put back: not in cafe",
        "me",
        "Reposer",
        lambda t: game_pb2.ReposerRequest(table_id=t),
        RULES,
        "RULE_NOT_IN_PLAY",
    ),
]


async def check_refusals(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any, cases: list[Case], *, drawn: bool
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    outsider = await login(channel, "Outsider")
    order = deck_order(
        2, {0: MINE, 1: [THEIRS, card("KC")]}, discard=card("AD"), stock=[DRAWN, IN_STOCK]
    )
    table_id = await create_table(channel, players, deck_order=order)
    if drawn:
        assert (await players[0].send(table_id, DrawStock())).card.id == DRAWN
    who: dict[str, Player] = {"me": players[0], "them": players[1], "outsider": outsider}
    async with table_db(fresh_dsn) as db:
        before = await snapshot(players, table_id), await db.log(table_id)
        for case in cases:
            with subtests.test(msg=case.name):
                call = who[case.who].call(case.method, case.request(table_id))
                assert await refused(call) == (case.code, case.reason)
                assert (await snapshot(players, table_id), await db.log(table_id)) == before


async def test_refusals_before_the_draw(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any
) -> None:
    await check_refusals(channel, fresh_dsn, subtests, ANY_PHASE + BEFORE_THE_DRAW, drawn=False)


async def test_refusals_after_the_draw(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any
) -> None:
    await check_refusals(channel, fresh_dsn, subtests, ANY_PHASE + AFTER_THE_DRAW, drawn=True)


async def test_bad_watch_requests(channel: grpc.aio.Channel, subtests: Any) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players)
    cases = [
        ("bad table id", "not-a-uuid", 0, INVALID, "TABLE_ID_INVALID"),
        ("past the last event", table_id, 10_000, grpc.StatusCode.OUT_OF_RANGE, "SEQ_AHEAD"),
        ("no such table", str(uuid.uuid4()), 0, grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
    ]
    for name, table, after, code, reason in cases:
        with subtests.test(msg=name):
            watcher = players[0].watch(table, after=after)
            assert await refused(watcher.next()) == (code, reason)
