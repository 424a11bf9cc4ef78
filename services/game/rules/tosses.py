"""Coin tosses read from a table's state, for players the engine runs by itself.

A bot that plays like a person makes a mistake now and then, and a paced bot
thinks for a while before each move: both need chance, but a game must replay
exactly from its actions. So a toss is a hash of what the table already holds
(the round's reshuffle seed, the round, the turn, the seat) and of what is
being decided: the same state always gives the same toss, and no clock or OS
random source is read.
"""

from __future__ import annotations

import hashlib

from .state import GameState

_SCALE = float(2**64)


def toss(state: GameState, seat: int, *what: int | str) -> float:
    """A number in [0, 1) for ``seat``'s decision ``what`` at this point of the game.

    The seed is secret while the round is in play (it drives the reshuffles), so
    nobody at the table can foresee a toss either."""
    text = repr((state.seed, state.round_no, state.turn, seat, what)).encode()
    digest = hashlib.blake2b(text, digest_size=8, person=b"rummy-toss").digest()
    return int.from_bytes(digest, "big") / _SCALE
