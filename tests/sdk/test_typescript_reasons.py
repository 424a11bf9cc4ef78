"""The TypeScript SDK knows every reason the servers send (its `Reason` type,
clients/typescript/src/reasons.ts), catalogue by catalogue."""

from __future__ import annotations

import re

from services.common.wire.reasons import ServiceReason
from services.game.rules.errors import Reason

from .harness import PACKAGE

REASONS_TS = PACKAGE / "src" / "reasons.ts"


def _listed(name: str) -> list[str]:
    text = REASONS_TS.read_text(encoding="utf-8")
    found = re.search(rf"export const {name} = \[(.*?)\] as const;", text, re.DOTALL)
    assert found, f"{name} is missing from {REASONS_TS.name}"
    return re.findall(r'"([A-Z0-9_]+)"', found.group(1))


def test_the_sdk_lists_the_rules_reasons() -> None:
    assert _listed("GAME_REASONS") == [reason.value for reason in Reason]


def test_the_sdk_lists_the_services_reasons() -> None:
    assert _listed("SERVICE_REASONS") == [reason.value for reason in ServiceReason]
