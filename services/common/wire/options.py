"""Table options as the API carries them (`rummy.v1.TableOptions`) and as the
engine reads them: zero means "the default", and `to_200` is a target score.
For the game service, the matchmaker and the client alike."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import (
    CONTRACT_GROUP,
    CONTRACT_RUN,
    Contract,
    Ruleset,
    TableOptions,
    effective_options,
)

TARGET_200 = 200
"""`rami51` "to 200": the target score the `to_200` option sets."""


def from_message(message: table_pb2.TableOptions) -> TableOptions:
    """The options as asked; `effective` fills the rule set's defaults and checks them."""
    defaults = TableOptions()
    for c in message.contracts:
        if (c.min_group_size, c.min_run_size) not in ((0, 0), (CONTRACT_GROUP, CONTRACT_RUN)):
            raise ValueError("contract groups have 3 cards and runs 4: leave the sizes at 0")
    return TableOptions(
        turn_timer_ms=message.turn_timer_ms or defaults.turn_timer_ms,
        turn_cap=message.turn_cap or defaults.turn_cap,
        rounds=message.rounds or defaults.rounds,
        elimination_cap=message.elimination_cap,
        opening_threshold=message.opening_threshold,
        target_score=TARGET_200 if message.to_200 else 0,
        buy_backs=message.buy_backs,
        claim_window_ms=message.claim_window_ms or defaults.claim_window_ms,
        contracts=tuple(Contract(c.groups, c.runs, c.no_final_discard) for c in message.contracts),
    )


def effective(ruleset: Ruleset, message: table_pb2.TableOptions) -> TableOptions:
    """Raises ValueError with a sentence for the player when the options do not fit."""
    return effective_options(ruleset, from_message(message))


def to_message(options: TableOptions, ruleset: Ruleset) -> table_pb2.TableOptions:
    return table_pb2.TableOptions(
        turn_timer_ms=options.turn_timer_ms,
        turn_cap=options.turn_cap,
        rounds=options.rounds,
        elimination_cap=options.elimination_cap,
        opening_threshold=options.opening_threshold,
        to_200=options.target_score == TARGET_200,
        claim_window_ms=options.claim_window_ms if ruleset.claims else 0,
        buy_backs=options.buy_backs,
        contracts=[contract_message(c) for c in options.contracts],
    )


def contract_message(contract: Contract) -> table_pb2.Contract:
    return table_pb2.Contract(
        groups=contract.groups,
        runs=contract.runs,
        min_group_size=CONTRACT_GROUP,
        min_run_size=CONTRACT_RUN,
        no_final_discard=contract.no_final_discard,
    )
