"""`rummy rules`: check a meld, score a hand, show a rule set."""

from __future__ import annotations

import pytest

from clients.cli.main import main
from clients.cli.rules_cmd import describe
from services.game.rules import TableOptions, preset
from services.game.rules.ruleset import with_changes


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_check_names_the_meld_and_what_the_joker_stands_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "rules", "check", "8S", "9S", "JK", "--rules", "cafe")
    assert code == 0
    assert out.splitlines() == ["A run of spades ♠: 8♠ 9♠ JK", "  the joker stands for 10♠"]
    code, out = run(capsys, "rules", "check", "jk", "8s", "9s")
    assert "the joker stands for 7♠" in out
    code, out = run(capsys, "rules", "check", "7S", "7H", "JK")
    assert out.splitlines() == [
        "A group of 7s: 7♠ 7♥ JK",
        "  the joker stands for 7♦ or 7♣",
    ]


def test_check_prints_the_refusal_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "rules", "check", "7S", "JK", "JK")
    assert code == 1
    assert out.strip() == (
        "Refused: A meld needs at least 2 natural cards besides its jokers. [MELD_JOKER_LIMIT]"
    )
    code, out = run(capsys, "rules", "check", "7S", "7S", "7D")
    assert code == 1 and "different suits" in out
    code, out = run(capsys, "rules", "check", "7Z", "8S", "9S")
    assert code == 2 and "'7Z' is not a card" in out


def test_score_adds_the_penalties(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "rules", "score", "KS", "QH", "JC", "AD", "--rules", "cafe") == (0, "41\n")
    assert run(capsys, "rules", "score", "JK", "2S", "10h") == (0, "37\n")


def test_show_explains_the_rule_set_from_its_data(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "rules", "show", "cafe")
    assert code == 0
    for line in (
        "Deck: 2 × 52 cards + 6 jokers = 110 cards; 13 cards each; 2 to 4 players.",
        "Opening: No threshold: any valid meld opens.",
        "  A joker may be discarded only as the last card, to go out.",
        "  J Q K     10",
        "  A         11",
        "  joker     25",
        "Turn cap: a round stops after 120 turns; the lightest hand wins it.",
    ):
        assert line in out.splitlines()
    assert "can do nothing at all after the draw does not wait" in out
    variant = with_changes(preset("cafe"), name="house", opening_threshold=51, jokers=4)
    text = describe(variant)
    assert "must total at least 51 points" in text and "4 jokers = 108 cards" in text


def test_an_unknown_rule_set_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="unknown rule set 'nope'"):
        main(["rules", "show", "nope"])


def test_every_rule_set_is_shown_with_its_own_rules(capsys: pytest.CaptureFixture[str]) -> None:
    from clients.cli.rules_cmd import show

    expected = {
        "cafe": (
            "A joker may be discarded only as the last card, to go out.",
            "Every game ends: a table chooses at most 20 rounds or an elimination cap of at"
            " most 500 points.",
        ),
        "rami51": (
            "30/40/51",
            "Reposer",
            "rami d'un coup",
            "A joker may be discarded only as the last card, to go out.",
            "at most 2 times a round; the deal is blocked the moment the stock runs out once"
            " more (its last card drawn), the lightest hand winning.",
            'Every game ends: a table plays at most 20 rounds, or "to 200".',
        ),
        "classic": (
            "51 points",
            "-10",
            "buy-backs",
            "Carte !",
            "both missing cards",
            "swap jokers, opened or not",
            "A player who has not opened may swap too: the joker then stays in the hand",
            "A joker may be discarded like any other card.",
            "2 to 6 players (quick-match queues seat 2 to 4; private tables up to 6)",
            "Every game ends: a table chooses an elimination cap of at most 500 points.",
        ),
        "contract": (
            "deal 7: 3 runs of 4, no final discard",
            "Puis-je ?",
            "A         15",
            "A joker may be discarded like any other card.",
            "One claim at most a stock draw (the card under a claimed one is not offered)",
            "never by the player who discarded the card",
            "private tables up to 6); at 5 or more, 3 × 52 cards + 2 jokers = 158 cards",
            "Every game ends: a table's own list of contracts has at most 12 deals.",
        ),
    }
    for name, phrases in expected.items():
        assert show(name) == 0
        text = capsys.readouterr().out
        for phrase in phrases:
            assert phrase in text, (name, phrase)
        # The API offers rami51 no target but 200 (`to_200`): no other is promised.
        assert "target score of at most" not in text, name


def test_the_timer_sentence_says_where_an_owed_discard_goes() -> None:
    owed = "a card taken from the discard pile that had to be used goes back"
    assert owed in describe(preset("classic")) and owed in describe(preset("rami51"))
    assert owed not in describe(preset("cafe"))


def test_counts_of_one_are_singular_and_others_plural() -> None:
    contract, classic = describe(preset("contract")), describe(preset("classic"))
    assert "2 × 52 cards + 1 joker = 105 cards" in contract
    assert "3 × 52 cards + 2 jokers = 158 cards" in contract
    assert "at most 1 joker per meld" in classic
    assert "(s)" not in contract + classic and "1 jokers" not in contract + classic
    variant = with_changes(preset("classic"), max_jokers_per_meld=2, min_naturals=1)
    text = describe(variant, TableOptions(turn_cap=1))
    assert "at most 2 jokers per meld" in text and "at least 1 natural card;" in text
    assert "a round stops after 1 turn;" in text
    rami51 = describe(with_changes(preset("rami51"), max_reshuffles=1, opening_exempt_left=2))
    assert "at most 1 time a round" in rami51 and "leaves 2 cards or none" in rami51
