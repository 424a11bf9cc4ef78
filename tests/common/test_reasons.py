"""Reason codes have one home each: the engine's `Reason`, the services'
`ServiceReason` and the client's `ClientReason`. The code names them from there,
never as string literals, so a code cannot drift between a server and a client."""

from __future__ import annotations

import ast
from pathlib import Path

from clients.cli.refusals import ClientReason
from services.common.wire.reasons import ServiceReason
from services.game.rules import Reason

ROOT = Path(__file__).resolve().parent.parent.parent
CATALOGUES = {
    Path("services/game/rules/errors.py"),
    Path("services/common/wire/reasons.py"),
    Path("clients/cli/refusals.py"),
}


def _sources() -> list[Path]:
    return [
        path.relative_to(ROOT)
        for package in ("services", "clients")
        for path in (ROOT / package).rglob("*.py")
        if "pb" not in path.relative_to(ROOT).parts
    ]


def test_a_code_means_one_thing() -> None:
    engine, service, client = ({m.value for m in e} for e in (Reason, ServiceReason, ClientReason))
    assert not engine & service, engine & service
    assert not client & (engine | service), client & (engine | service)


def test_reason_codes_are_named_from_their_catalogue_not_written_out() -> None:
    codes = {m.value for e in (Reason, ServiceReason, ClientReason) for m in e}
    sources = _sources()
    assert set(sources) >= CATALOGUES
    written = [
        f"{path}:{node.lineno}: {node.value}"
        for path in sources
        if path not in CATALOGUES
        for node in ast.walk(ast.parse((ROOT / path).read_text()))
        if isinstance(node, ast.Constant) and node.value in codes
    ]
    assert not written, "\n".join(written)
