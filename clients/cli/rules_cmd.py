"""`rummy rules`: the rules engine's public face, for client developers.

    rummy rules check 8S 9S JK --rules cafe    the meld these cards make, or why not
    rummy rules score KS QH JC AD --rules cafe the penalty of a hand (41)
    rummy rules show cafe                      the rule set in words

`show` is written from the `Ruleset` value, so a new preset is explained
without new text here (only a new scoring or joker policy needs a sentence).
"""

from __future__ import annotations

from services.game.rules import (
    LARGE_TABLE,
    MAX_CONTRACT_DEALS,
    MAX_ELIMINATION_CAP,
    MAX_ROUNDS,
    QUICK_MATCH_SIZES,
    SUITS,
    CardParseError,
    JokerDiscard,
    MeldKind,
    Reshuffle,
    RuleError,
    Ruleset,
    Scoring,
    TableOptions,
    TakenDiscard,
    describe_joker,
    effective_options,
    hand_penalty,
    meld_points,
    parse_cards,
    preset,
    validate_meld,
)

from .cards import Style, plural

SUIT_NAMES = {"S": "spades ♠", "H": "hearts ♥", "D": "diamonds ♦", "C": "clubs ♣"}
RANK_NAMES = {"A": "aces", "T": "tens", "J": "jacks", "Q": "queens", "K": "kings"}
SCORING = {
    Scoring.EACH_PAYS: (
        "The winner scores 0; every other player adds the penalty of the cards left "
        "in their hand. The lowest total wins."
    ),
    Scoring.WINNER_COLLECTS: (
        "The winner scores the penalties left in every other hand, doubled for a rami "
        "d'un coup (out in a turn begun without having opened). A blocked deal is won by "
        "the lightest hand, which scores how much heavier each other hand is. The highest "
        "total wins."
    ),
    Scoring.CLASSIC: (
        "Losers add the penalty of their hand, doubled if they hold a joker; the winner "
        "scores -10. A rami sec (all cards laid in one go) doubles everything (-20). The "
        "lowest total wins."
    ),
}
TAKEN_DISCARD = {
    TakenDiscard.KEEP: "The card taken from the discard pile may stay in the hand.",
    TakenDiscard.USE_IN_OPENING: (
        "Before opening, the card taken from the discard pile must go into the opening "
        "made that turn; otherwise put it back (Reposer, `r`) before any other move and "
        "draw from the stock."
    ),
    TakenDiscard.USE_THIS_TURN: (
        "The card taken from the discard pile must go into a meld or a lay-off that turn "
        "(before opening: into an opening that reaches the threshold); a card that could "
        "not be used is refused: draw from the stock."
    ),
}
JOKER_DISCARD = {
    JokerDiscard.LAST_CARD_ONLY: "A joker may be discarded only as the last card, to go out.",
    JokerDiscard.ALLOWED: "A joker may be discarded like any other card.",
}


def _ruleset(name: str) -> Ruleset:
    try:
        return preset(name)
    except KeyError as error:
        raise SystemExit(str(error.args[0])) from None


def check(codes: list[str], name: str, style: Style) -> int:
    """Print the meld `codes` make and what each joker stands for; 1 if refused."""
    rules = _ruleset(name)
    try:
        shape = validate_meld(parse_cards(codes, rules), rules)
    except CardParseError as error:
        print(error)
        return 2
    except RuleError as error:
        print(f"Refused: {error.message} [{error.reason.value}]")
        return 1
    deck = rules.deck
    shown = style.cards(deck.code(c) for c in shape.cards)
    if shape.kind == MeldKind.RUN:
        what = f"A run of {SUIT_NAMES[SUITS[shape.suit]]}"
    else:
        rank = deck.code(_natural(shape.cards, rules))[0]
        what = f"A group of {RANK_NAMES.get(rank, rank + 's')}"
    print(f"{what}: {shown}")
    meld = shape.place(0, 0)
    for card in shape.cards:
        if deck.is_joker(card):
            stands = " or ".join(
                style.card(c) for c in describe_joker(meld, card, rules).split("/")
            )
            print(f"  the joker stands for {stands}")
    if rules.opening_threshold:
        print(f"  worth {meld_points(shape, rules)} points towards an opening")
    return 0


def _natural(cards: tuple[int, ...], rules: Ruleset) -> int:
    return next(c for c in cards if not rules.deck.is_joker(c))


def score(codes: list[str], name: str) -> int:
    """Print the penalty of a hand left at the end of a round."""
    rules = _ruleset(name)
    try:
        print(hand_penalty(parse_cards(codes, rules), rules))
    except CardParseError as error:
        print(error)
        return 2
    return 0


def show(name: str) -> int:
    print(describe(_ruleset(name)))
    return 0


def _players(rules: Ruleset) -> str:
    """How many players, at which tables, and the deck of the largest."""
    text = f"{rules.min_players} to {rules.max_players} players"
    if rules.max_players > max(QUICK_MATCH_SIZES):
        text += (
            f" (quick-match queues seat 2 to {max(QUICK_MATCH_SIZES)}; private tables up to"
            f" {rules.max_players})"
        )
    large = rules.for_seats(LARGE_TABLE)
    if large is not rules:
        text += (
            f"; at {LARGE_TABLE} or more, {large.decks} × 52 cards"
            f" + {plural(large.jokers, 'joker')} = {large.deck.size} cards"
        )
    return text


def _game_length_bounds(rules: Ruleset) -> str:
    """The upper bounds on the options that set a game's length (every game ends)."""
    if rules.contracts:
        most = MAX_CONTRACT_DEALS
        return f"Every game ends: a table's own list of contracts has at most {most} deals."
    limits = []
    if not rules.default_elimination_cap:
        limits.append(f"at most {MAX_ROUNDS} rounds")
    if rules.scoring is Scoring.WINNER_COLLECTS:
        # 200 is the only target a table can choose (the API's `to_200`).
        return f'Every game ends: a table plays at most {MAX_ROUNDS} rounds, or "to 200".'
    limits.append(f"an elimination cap of at most {MAX_ELIMINATION_CAP} points")
    return "Every game ends: a table chooses " + " or ".join(limits) + "."


def describe(rules: Ruleset, options: TableOptions | None = None) -> str:
    """The rule set in words, from its data."""
    o = effective_options(rules, options or TableOptions())
    p = rules.penalties
    size = rules.deck.size
    jokers = [f"every meld has at least {plural(rules.min_naturals, 'natural card')}"]
    if rules.naturals_at_least_jokers:
        jokers.append("never more jokers than natural cards")
    if rules.max_jokers_per_meld is not None:
        jokers.append(f"at most {plural(rules.max_jokers_per_meld, 'joker')} per meld")
    suits = "all suits different" if rules.group_distinct_suits else "suits may repeat"
    opening = (
        f"The first melds, laid in one action, must total at least {o.opening_threshold}"
        " points (2-10 face value, J Q K 10, an ace 11 or 1 at the bottom of a run, a joker"
        " as the card it replaces)."
        if o.opening_threshold
        else "No threshold: any valid meld opens."
    )
    if rules.opening_choices:
        opening += " Tables choose " + "/".join(str(c) for c in rules.opening_choices) + "."
    if rules.opening_exempt_left >= 0 and o.opening_threshold:
        opening += (
            f" No threshold when the opening leaves {plural(rules.opening_exempt_left, 'card')}"
            " or none."
        )
    if rules.contracts:
        opening = (
            "Each deal has a contract, laid all at once before anything else: "
            + "; ".join(f"deal {i + 1}: {c.describe()}" for i, c in enumerate(rules.contracts))
            + ". Groups have 3+ cards, runs 4+; two runs of a suit that join count as one."
        )
    reshuffle = (
        "whenever it runs out"
        if rules.max_reshuffles is None
        else f"at most {plural(rules.max_reshuffles, 'time')} a round; the deal is blocked the"
        " moment the stock runs out once more (its last card drawn), the lightest hand winning"
    )
    pile = (
        "all but its top card"
        if rules.reshuffle is Reshuffle.KEEP_TOP
        else "all of it, no card turned up"
    )
    going_out = (
        "by discarding the last card: a meld never takes the last card, a discard closes every turn"
        if rules.must_discard_to_go_out
        else "by emptying the hand, with or without a final discard"
    )
    rounds = (
        f"until a player reaches {o.elimination_cap} points (the last one left wins)"
        if o.elimination_cap
        else f"{plural(o.rounds, 'round')} by default (a table option)"
    )
    if rules.contracts:
        rounds = f"after the {len(rules.contracts)} deals, the lowest total wins"
    elif rules.scoring is Scoring.WINNER_COLLECTS:
        rounds += '; or "to 200": deals go on until a winner reaches 200'
    elif rules.scoring is Scoring.CLASSIC:
        rounds += "; a table may allow up to 3 buy-backs at the highest score still in"
    dealt = (
        "/".join(str(n) for n in rules.deal_sizes) + " cards by deal"
        if rules.deal_sizes
        else f"{rules.hand_size} cards each"
    )
    extra = []
    if rules.claims:
        extra.append(
            '  "Puis-je ?": when a player draws from the stock, the others may claim the top '
            f"discard within {o.claim_window_ms / 1000:g} s (`c`); the nearest in play order "
            "takes it plus a penalty card from the stock. One claim at most a stock draw (the "
            "card under a claimed one is not offered), and never by the player who discarded "
            "the card."
        )
    if rules.announce_last_card:
        extra.append('  "Carte !" is announced for a player down to one card.')
    capped = {
        Scoring.WINNER_COLLECTS: "it is scored as a blocked deal",
        Scoring.CLASSIC: "the lightest hand wins (-10), the others pay their hands",
    }.get(rules.scoring, "the lightest hand wins it")
    if not rules.cap_has_winner:
        capped = "nobody went out: every player pays their hand"
    swap = "Swapping a joker: put the card it stands for into the meld and take the joker; " + (
        "it must go into a meld in the same move."
        if rules.retrieved_joker_must_be_melded
        else "it may stay in the hand."
    )
    if not rules.swap_needs_opening:
        swap += (
            " A player who has not opened may swap too: the joker then stays in the hand,"
            " and a card taken from the discard pile still goes into the opening."
        )
    if rules.group_swap_completes:
        swap += (
            " A joker leaves a brelan only with both missing cards, which make it a carré"
            " (at the table: s 2 QS QC)."
        )
    return "\n".join(
        [
            f"Rule set: {rules.name}",
            f"Deck: {rules.decks} × 52 cards + {plural(rules.jokers, 'joker')} = {size} cards; "
            f"{dealt}; {_players(rules)}.",
            "Melds (at least 3 cards):",
            f"  group (brelan, carré): one rank, {suits}, at most {rules.max_group_size} cards",
            f"  run (suite): one suit in sequence, at most {rules.max_run_length} cards; the ace "
            "goes below the 2 or above the king, never both",
            "  jokers: " + "; ".join(jokers) + "; in a run the joker's place says what it is",
            f"Opening: {opening}",
            "Turn: draw from the stock or take the top discard; after opening, lay off on any "
            + (
                "meld and swap jokers; then discard."
                if rules.swap_needs_opening
                else "meld; swap jokers, opened or not; then discard."
            ),
            f"  {swap}",
            f"  {JOKER_DISCARD.get(rules.joker_discard, rules.joker_discard.value)}",
            "  The card taken from the discard pile cannot be thrown back the same turn.",
            f"  {TAKEN_DISCARD[rules.taken_discard]}",
            *extra,
            f"  The stock is rebuilt from the discard pile ({pile}) {reshuffle}.",
            f"Going out: {going_out}.",
            "Penalties (cards left in hand at the end of a round):",
            "  2 to 10   face value",
            f"  J Q K     {p.face}",
            f"  A         {p.ace}",
            f"  joker     {p.joker}",
            f"Scoring: {SCORING.get(rules.scoring, rules.scoring.value)}",
            f"End of the game: {rounds}.",
            f"  {_game_length_bounds(rules)}",
            f"Timer: {o.turn_timer_ms // 1000} s a turn; when it runs out before the draw the "
            "turn passes, after it a card is discarded automatically (never a joker)"
            + (
                ", or a card taken from the discard pile that had to be used goes back and "
                "the turn passes"
                if rules.taken_discard is not TakenDiscard.KEEP
                else ""
            )
            + ". A player who can do nothing at all after the draw does not wait: the turn "
            "passes. A turn in play while the game could not be reached gets back the time "
            "it had left.",
            f"Turn cap: a round stops after {plural(o.turn_cap, 'turn')}; {capped}.",
        ]
    )
