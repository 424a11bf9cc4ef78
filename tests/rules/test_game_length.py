"""RULES.md §2 row `game length`: a number of rounds (default 1, lowest total
wins) or an elimination cap (a player reaching it is out; the last one left wins)."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Abandon,
    Leave,
    Phase,
    Reason,
    SeatStatus,
    TableOptions,
    new_game,
    preset,
)
from services.game.rules.events import (
    DeckRevealed,
    EndReason,
    GameEnded,
    PlayerEliminated,
    RoundEnded,
)
from services.game.rules.fairness import commitment

from .helpers import Table

RAMI = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C"
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"  # 94 points
CHEAP = "2S 3H 4D 5C 2H 3D 4C 5S 2D 3C 4S 5H 6S"  # 48 points
HEAVY = "KS KH KD KC QS QH QD QC JS JH JD JC AD"  # 131 points


def go_out_at_once(table: Table, seat: int) -> None:
    """``seat`` holds RAMI: it draws the KD, lays everything and throws the KD."""
    table.draw(seat)
    table.meld(seat, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    table.discard(seat, "KD")


def test_game_length_default_is_one_round() -> None:
    table = Table([RAMI, LONER], "KH", "KD")
    assert table.state.options.rounds == 1
    go_out_at_once(table, 0)
    assert table.kinds() == ["Discarded", "RoundEnded", "DeckRevealed", "GameEnded"]
    ended = table.events[-1]
    assert isinstance(ended, GameEnded) and ended.reason == EndReason.ROUNDS_PLAYED
    assert ended.winner == 0 and table.state.phase == Phase.GAME_OVER


def test_game_length_rounds_after_the_last_round_the_lowest_total_wins() -> None:
    table = Table([RAMI, LONER], "KH", "KD", options=TableOptions(rounds=2))
    go_out_at_once(table, 0)  # seat 1 pays 94
    assert table.kinds() == ["Discarded", "RoundEnded", "DeckRevealed"]
    assert table.state.phase == Phase.DEAL and table.state.totals == [0, 94]
    table.deal([CHEAP, RAMI], "KH", "KD")  # dealer is now seat 0: seat 1 starts
    assert table.state.current == 1
    go_out_at_once(table, 1)  # seat 0 pays 48
    ended = table.events[-1]
    assert isinstance(ended, GameEnded) and ended.reason == EndReason.ROUNDS_PLAYED
    assert ended.totals == (48, 94)
    assert ended.winner == 0, "the lower total wins, not the last round's winner"


def test_game_length_rounds_equal_totals_go_to_the_lowest_seat() -> None:
    table = Table([RAMI, LONER], "KH", "KD", options=TableOptions(rounds=2))
    go_out_at_once(table, 0)  # seat 1 pays 94
    table.deal([LONER, RAMI], "KH", "KD")
    go_out_at_once(table, 1)  # seat 0 pays 94, and seat 1 won the last round
    ended = table.events[-1]
    assert isinstance(ended, GameEnded) and ended.totals == (94, 94)
    assert ended.winner == 0


def test_game_length_elimination_cap_reaching_it_puts_a_player_out() -> None:
    options = TableOptions(elimination_cap=100)
    table = Table([RAMI, LONER, HEAVY], "KH", "KD", options=options)
    go_out_at_once(table, 0)
    assert table.kinds() == ["Discarded", "RoundEnded", "DeckRevealed", "PlayerEliminated"]
    out = table.events[-1]
    assert isinstance(out, PlayerEliminated) and out.seat == 2 and out.total == 131
    assert table.state.status == [SeatStatus.PLAYING, SeatStatus.PLAYING, SeatStatus.ELIMINATED]
    assert table.state.phase == Phase.DEAL, "with a cap the game goes on past `rounds`"


def test_game_length_elimination_cap_the_last_player_left_wins() -> None:
    options = TableOptions(elimination_cap=100)
    table = Table([RAMI, LONER, HEAVY], "KH", "KD", options=options)
    go_out_at_once(table, 0)  # seat 1: 94, seat 2: 131 and out
    # Round 2: the dealer moves to seat 0; seat 2 is dealt nothing; seat 1 starts.
    table.deal([HEAVY, RAMI, None], "KH", "KD")
    assert table.state.hands[2] == [] and table.state.current == 1
    go_out_at_once(table, 1)  # seat 0 pays 131 and is out
    kinds = table.kinds()
    assert kinds == ["Discarded", "RoundEnded", "DeckRevealed", "PlayerEliminated", "GameEnded"]
    ended = table.events[-1]
    assert isinstance(ended, GameEnded) and ended.reason == EndReason.LAST_STANDING
    assert ended.winner == 1 and ended.totals == (131, 94, 131)
    round_end = table.events[1]
    assert isinstance(round_end, RoundEnded) and round_end.penalties == (131, 0, 0)


def test_an_abandoned_game_ends_won_by_the_best_placed_of_those_still_playing() -> None:
    """The table applies Abandon once only bots play on (the engine does not know
    who is a bot: the service does); it is the table's move, never a seat's."""
    table = Table([RAMI, LONER, HEAVY], "KH", "KD")
    table.state.totals = [0, 40, 25]
    table.act(0, Leave())
    assert table.refuse(1, Abandon()).reason == Reason.NOT_YOUR_TURN
    table.act(SYSTEM, Abandon())
    ended = table.events[-1]
    assert table.kinds() == ["DeckRevealed", "GameEnded"] and isinstance(ended, GameEnded)
    assert (ended.winner, ended.reason) == (2, EndReason.OTHERS_LEFT)
    assert table.state.phase == Phase.GAME_OVER
    assert table.refuse(SYSTEM, Abandon()).reason == Reason.GAME_OVER


def test_a_seat_that_leaves_plays_no_more_and_the_last_one_left_wins() -> None:
    table = Table([RAMI, LONER, HEAVY], "KH", "KD")
    table.draw(0)
    table.act(0, Leave())  # during its own turn: the turn passes
    assert table.kinds() == ["PlayerLeft", "TurnPassed", "TurnBegan"]
    assert table.state.current == 1 and table.state.status[0] == SeatStatus.LEFT
    assert table.refuse(0, Leave()).reason == Reason.SEAT_LEFT
    table.act(2, Leave())  # out of turn: seat 1 keeps playing
    ended = table.events[-1]
    assert isinstance(ended, GameEnded) and ended.reason == EndReason.OTHERS_LEFT
    assert ended.winner == 1


def test_a_game_that_ends_during_a_round_opens_that_rounds_deck() -> None:
    """The deck commitment is opened when a round ends, and also when the game
    ends during one (everybody else left): no dealt deck stays unchecked."""
    table = Table([RAMI, LONER], "KH", "KD")
    state = table.state
    dealt = commitment(state.deal_order, state.seed, bytes.fromhex(state.deal_salt))
    table.draw(0)
    table.act(1, Leave())
    assert table.kinds() == ["PlayerLeft", "DeckRevealed", "GameEnded"]
    revealed = table.events[1]
    assert isinstance(revealed, DeckRevealed) and revealed.round_no == state.round_no
    assert commitment(revealed.order, revealed.seed, bytes.fromhex(revealed.salt)) == dealt


@pytest.mark.parametrize(
    ("name", "options", "bound"),
    [
        ("cafe", TableOptions(elimination_cap=4_294_967_295), "500"),
        ("cafe", TableOptions(elimination_cap=501), "500"),
        ("classic", TableOptions(elimination_cap=501), "500"),
        ("cafe", TableOptions(rounds=21), "20"),
        ("rami51", TableOptions(rounds=4_294_967_295), "20"),
        ("rami51", TableOptions(target_score=1_001), "1000"),
    ],
)
def test_game_length_seed_a_game_ends_by_a_convention_a_real_table_would_fix(
    name: str, options: TableOptions, bound: str
) -> None:
    """Seed 000: « La partie s'arrête selon une convention fixée d'avance : un nombre
    de manches, ou un plafond de points, par exemple 500, à partir duquel un joueur
    est éliminé. » Options may not make a game that never ends: past the bounds a
    real table would use (`MAX_ROUNDS`, `MAX_ELIMINATION_CAP`, `MAX_TARGET_SCORE`)
    the table is refused, and the sentence names the bound."""
    with pytest.raises(ValueError, match=rf"\b{bound}\b"):
        new_game(preset(name), 2, options)


def test_game_length_the_bounds_themselves_are_allowed() -> None:
    cafe, classic, rami51 = preset("cafe"), preset("classic"), preset("rami51")
    assert new_game(cafe, 2, TableOptions(elimination_cap=500)).options.elimination_cap == 500
    assert new_game(classic, 2).options.elimination_cap == 100
    assert new_game(cafe, 2, TableOptions(rounds=20)).options.rounds == 20
    assert new_game(rami51, 2, TableOptions(target_score=1000)).options.target_score == 1000
