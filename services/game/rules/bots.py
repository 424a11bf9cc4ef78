"""Players the engine can run by itself: a greedy bot built on the meld finder,
and a random player that picks among legal moves. Both return one action for
the seat whose turn it is, or None when no move is legal (the clock then
passes the turn). Randomness comes from the caller's `random.Random`."""

from __future__ import annotations

import random

from .actions import Action, Discard, DrawStock, LayOff, Meld, MeldSpec, Reposer, TakeDiscard
from .claims import may_claim
from .finder import find_melds, shuffled_candidates
from .legal import can_draw_stock, discardable, joker_swaps
from .melds import Shape, fits
from .plans import contract_progress, finds_melds, melds_to_lay, opening_ok
from .ruleset import TakenDiscard
from .scoring import card_penalty
from .state import GameState, Phase, SeatStatus
from .taking import can_take, taken_card_use
from .turns import taken_card_owed


def _spec(shape: Shape) -> MeldSpec:
    return MeldSpec(shape.cards)


class GreedyBot:
    """Takes the discard only when it completes a meld or fits one on the table,
    lays every meld it finds, lays off what fits, swaps jokers it can re-place,
    and discards its costliest card that no meld uses. In `contract`, it claims
    a passed-over discard ("Puis-je ?") that brings its contract closer."""

    def move(self, state: GameState, seat: int) -> Action | None:
        if state.phase == Phase.DRAW:
            return self._draw(state, seat)
        return self._play(state, seat)

    def claims(self, state: GameState, seat: int) -> bool:
        """Whether ``seat`` claims the discard open to claims now: only while its
        contract is unmet, and only if the card completes one more of its melds
        (the claim costs a penalty card from the stock too)."""
        contract = state.contract()
        card = state.claim_card
        if (
            contract is None
            or card < 0
            or seat == state.current
            or seat in state.claimants
            or state.status[seat] != SeatStatus.PLAYING
            or state.opened[seat]
            or not may_claim(state, seat)
        ):
            return False
        hand = state.hands[seat]
        return contract_progress([*hand, card], contract, state) > contract_progress(
            hand, contract, state
        )

    def _draw(self, state: GameState, seat: int) -> Action | None:
        rules = state.ruleset
        if state.discard and not state.reposed:
            top = state.discard[-1]
            cards = [*state.hands[seat], top]
            keep = rules.must_discard_to_go_out
            # One finder run for this hand, shared by the plan and the check below.
            found = find_melds(cards, rules, keep_one=keep) if finds_melds(state, seat) else None
            plan = melds_to_lay(state, seat, cards, found)
            must_use = rules.taken_discard is TakenDiscard.USE_THIS_TURN or (
                rules.taken_discard is TakenDiscard.USE_IN_OPENING and not state.opened[seat]
            )
            if any(top in m.cards for m in plan):
                return TakeDiscard()
            fits_table = state.opened[seat] and any(fits(m, top, rules) for m in state.melds)
            if fits_table and not rules.deck.is_joker(top):
                return TakeDiscard()
            if not must_use and not state.opened[seat] and not rules.contracts:
                after = found if found is not None else find_melds(cards, rules, keep_one=keep)
                if any(top in m.cards for m in after.melds):
                    return TakeDiscard()
        if can_draw_stock(state):
            return DrawStock()
        return TakeDiscard() if can_take(state, seat) else None

    def _play(self, state: GameState, seat: int) -> Action | None:
        rules = state.ruleset
        hand = state.hands[seat]
        keep = rules.must_discard_to_go_out
        found = find_melds(hand, rules, keep_one=keep)  # the plan's, and the loose cards'
        melds = melds_to_lay(state, seat, hand, found)
        if melds:
            used = {c for m in melds for c in m.cards}
            left = [c for c in hand if c not in used]
            if not keep or not left or discardable(state, left) or taken_card_owed(state):
                return Meld(tuple(_spec(m) for m in melds))
        loose = list(found.left)
        owed = taken_card_owed(state)
        if state.opened[seat]:
            # A card taken from the discard pile is used before anything else:
            # another move (a swap) could take away the way to use it.
            move = (
                self._lay_off(state, seat, [state.taken_discard]) or self._use(state, seat)
                if owed
                else self._lay_off(state, seat, loose) or self._swap(state, seat)
            )
            if move is not None:
                return move
        if owed:
            move = self._use(state, seat)
            if move is not None:
                return move
            if rules.reposer and not state.moved:
                return Reposer()
        return self._discard(state, loose, hand)

    def _use(self, state: GameState, seat: int) -> Action | None:
        """The next step of a use of the taken card its plans do not make (a joker
        kept, a lay-off with other cards, two melds that open together)."""
        use = taken_card_use(state, seat)
        return use[0] if use is not None else None

    def _lay_off(self, state: GameState, seat: int, loose: list[int]) -> Action | None:
        hand = state.hands[seat]
        if len(hand) <= 1 and state.ruleset.must_discard_to_go_out:
            return None
        for card in sorted(loose, key=lambda c: -card_penalty(c, state.ruleset)):
            rest = [c for c in hand if c != card]
            if state.ruleset.must_discard_to_go_out and not discardable(state, rest):
                continue
            for meld in state.melds:
                side = fits(meld, card, state.ruleset)
                if side is not None:
                    return LayOff(meld.id, (card,), side)
        return None

    def _swap(self, state: GameState, seat: int) -> Action | None:
        if len(state.hands[seat]) <= 1:
            return None
        return next(joker_swaps(state, seat), None)

    def _discard(self, state: GameState, loose: list[int], hand: list[int]) -> Action | None:
        rules = state.ruleset
        pool = discardable(state, hand)
        if not pool:
            return None
        spare = [c for c in pool if c in loose] or pool
        return Discard(max(spare, key=lambda c: (card_penalty(c, rules), -c)))


class RandomPlayer:
    """Picks a legal move at random: a draw from either pile, then now and then a
    random meld or lay-off, then a random legal discard."""

    def __init__(self, rng: random.Random, play_rate: float = 0.3) -> None:
        self.rng = rng
        self.play_rate = play_rate

    def move(self, state: GameState, seat: int) -> Action | None:
        rng = self.rng
        if state.phase == Phase.DRAW:
            options: list[Action] = []
            if can_draw_stock(state):
                options.append(DrawStock())
            if can_take(state, seat):
                options.append(TakeDiscard())
            return rng.choice(options) if options else None
        if state.ruleset.contracts and not state.opened[seat]:
            # Before its contract a seat lays nothing else.
            plan = melds_to_lay(state, seat, state.hands[seat])
            if plan and rng.random() < 0.5:
                return Meld(tuple(_spec(m) for m in plan))
            pool = discardable(state, state.hands[seat])
            return Discard(rng.choice(pool)) if pool else None
        hand = state.hands[seat]
        if len(hand) > 1 and rng.random() < self.play_rate:
            move = self._meld_or_lay_off(state, seat)
            if move is not None:
                return move
        pool = discardable(state, hand)
        if pool:
            return Discard(rng.choice(pool))
        return self._settle_taken(state, seat)

    def _settle_taken(self, state: GameState, seat: int) -> Action | None:
        """Nothing may be discarded until the taken card is used: use it, or put it back."""
        if not taken_card_owed(state):
            return None
        plan = melds_to_lay(state, seat, state.hands[seat])
        if any(state.taken_discard in m.cards for m in plan):
            return Meld(tuple(_spec(m) for m in plan))
        if state.ruleset.reposer and not state.moved:
            return Reposer()
        return None

    def _meld_or_lay_off(self, state: GameState, seat: int) -> Action | None:
        rules = state.ruleset
        hand = state.hands[seat]
        if state.opened[seat] and state.melds and self.rng.random() < 0.5:
            card = self.rng.choice(hand)
            meld = self.rng.choice(state.melds)
            side = fits(meld, card, rules)
            rest = [c for c in hand if c != card]
            if side is not None and discardable(state, rest):
                return LayOff(meld.id, (card,), side)
            return None
        for shape in shuffled_candidates(hand, rules, self.rng, 3):
            rest = [c for c in hand if c not in shape.cards]
            if discardable(state, rest) and opening_ok(state, seat, [shape], len(rest)):
                return Meld((_spec(shape),))
        return None
