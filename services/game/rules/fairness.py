"""Verifiable shuffles: a table commits to its deck before the first card is dealt.

The commitment is SHA-256 over the deck order, the reshuffle seed and a secret
salt. Every seat sees it with the deal; when the round ends (or the game ends
during it) the order, seed and salt are revealed, so anyone can check that the
deck was fixed in advance (the salt keeps the order from being guessed from the
commitment).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

DOMAIN = b"rummy-deck-v1"


def commitment(order: Sequence[int], seed: int, salt: bytes) -> str:
    text = ",".join(str(c) for c in order) + f"|{seed}|"
    return hashlib.sha256(DOMAIN + b"|" + text.encode() + salt).hexdigest()


def verify_deck(order: Sequence[int], seed: int, salt_hex: str, expected: str) -> bool:
    """True when the revealed deck matches the commitment shown at the deal."""
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    return hmac.compare_digest(commitment(order, seed, salt), expected)
