"""docs/api, the API reference, is exactly what `make proto` produces now, and
lists every RPC, message, enum and error reason.

The pages come from the proto comments; the error reasons from the services'
code (scripts/api_docs/reasons.py). Change either, run `make proto`, commit.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import grpc
import pytest
from google.protobuf.descriptor_pb2 import FileDescriptorProto

from scripts import gen_api_docs
from scripts.api_docs import reasons
from scripts.api_docs.descriptors import compile_public, markdown
from scripts.api_docs.pages import Reference

REPO = Path(__file__).resolve().parent.parent
# UPPER_SNAKE strings of the services' code that are no reason: environment
# variables (RUMMY_* and these) and PostgreSQL's own names.
NOT_REASONS = {"DATABASE_URL", "LC_ALL", "PG_VERSION"}
# Environment variables, not reasons: ours, and OpenTelemetry's standard ones.
ENV_PREFIXES = ("RUMMY_", "OTEL_")


@pytest.fixture(scope="module")
def found() -> dict[str, reasons.ReasonInfo]:
    return reasons.code_reasons()


@pytest.fixture(scope="module")
def files() -> list[FileDescriptorProto]:
    return list(compile_public().file)


def _tree(root: Path) -> dict[Path, str]:
    return {
        p.relative_to(root): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_reference_is_fresh(tmp_path: Path) -> None:
    fresh = tmp_path / "api"
    gen_api_docs.generate(fresh)
    expected, committed = _tree(fresh), _tree(gen_api_docs.DEFAULT_OUT)

    missing = sorted(str(path) for path in expected.keys() - committed.keys())
    extra = sorted(str(path) for path in committed.keys() - expected.keys())
    both = expected.keys() & committed.keys()
    stale = sorted(str(path) for path in both if expected[path] != committed[path])
    assert not (missing or extra or stale), (
        f"docs/api is out of date (run `make proto`): "
        f"missing {missing}, unexpected {extra}, differing {stale}"
    )


def test_every_rpc_message_and_enum_has_its_heading(files: list[FileDescriptorProto]) -> None:
    pages = Reference(files).pages()
    assert set(pages) == {
        "auth-service.md",
        "game-service.md",
        "matchmaker-service.md",
        "player-service.md",
        "cards.md",
        "table.md",
    }
    headings = {
        line for text in pages.values() for line in text.splitlines() if line.startswith("### ")
    }
    for file in files:
        wanted = [f"### rpc `{m.name}`" for s in file.service for m in s.method]
        wanted += [f"### message `{m.name}`" for m in file.message_type]
        wanted += [f"### enum `{e.name}`" for e in file.enum_type]
        assert set(wanted) <= headings, sorted(set(wanted) - headings)


def test_errors_page_lists_every_reason_of_the_code(found: dict[str, reasons.ReasonInfo]) -> None:
    page = (gen_api_docs.DEFAULT_OUT / "errors.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", page, re.MULTILINE))
    assert listed >= set(found)
    assert {"TOKEN_EXPIRED", "NOT_YOUR_TURN", "RATE_LIMITED", "MALFORMED_REQUEST"} <= listed


def test_no_reason_of_the_code_escapes_the_scan(found: dict[str, reasons.ReasonInfo]) -> None:
    # A refusal written in a shape the scan does not know would leave its reason
    # out of the reference: every UPPER_SNAKE string must be a reason found.
    unknown = {
        word: where
        for word, where in reasons.upper_snake_literals().items()
        if word not in found and word not in NOT_REASONS and not word.startswith(ENV_PREFIXES)
    }
    assert not unknown, f"teach scripts/api_docs/reasons.py these refusals: {unknown}"


def test_every_reason_the_protos_name_is_sent(
    files: list[FileDescriptorProto], found: dict[str, reasons.ReasonInfo]
) -> None:
    # A comment naming a reason no service sends is out of date (or the scan
    # misses a refusal). Words like reasons that are none: enum values, status
    # codes, and the comment saying reasons are UPPER_SNAKE.
    reference = Reference(files)
    reference.pages()
    words = {
        w
        for m in reference.mentions
        for w in re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", m.text)
    }
    enum_values = {v.name for f in files for e in f.enum_type for v in e.value}
    codes = {code.name for code in grpc.StatusCode}
    named = words - enum_values - codes - {"UPPER_SNAKE"}
    named |= gen_api_docs.proto_reasons(reference.mentions)  # "reason INTERNAL" too
    assert {"TOKEN_EXPIRED", "REQUEST_ID_REUSED", "SEQ_AHEAD", "INTERNAL"} <= named
    unsent = named - found.keys()
    assert not unsent, f"the protos name reasons no service sends: {sorted(unsent)}"


def test_scan_reads_each_shape_of_refusal(tmp_path: Path) -> None:
    module = tmp_path / "refusals.py"
    module.write_text(
        textwrap.dedent(
            """
            import grpc
            SLOW = "SLOW_DOWN"
            SAYINGS = {"GONE_AWAY": "Sign in again.", "SHUT_OUT": "Nope."}

            class Unreadable(Exception):
                def __init__(self, reason, message):
                    super().__init__(grpc.StatusCode.INVALID_ARGUMENT, reason, message)

            async def refuse(context, n, reason):
                await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, SLOW, f"Wait {n} s.",
                            metadata={"retry_after_ms": str(n)})
                await abort(context, grpc.StatusCode.UNAUTHENTICATED, reason, SAYINGS[reason])
                raise Unreadable("NOT_READABLE", "That is not a card.")
            """
        ),
        encoding="utf-8",
    )
    found = reasons.code_reasons([module])
    assert found["SLOW_DOWN"].codes == {"RESOURCE_EXHAUSTED"}
    assert found["SLOW_DOWN"].metadata == {"retry_after_ms"}
    assert found["SLOW_DOWN"].sentences == ["Wait … s."]
    assert found["GONE_AWAY"].codes == found["SHUT_OUT"].codes == {"UNAUTHENTICATED"}
    assert found["NOT_READABLE"].codes == {"INVALID_ARGUMENT"}
    assert found["NOT_READABLE"].sentences == ["That is not a card."]
    # The rules engine's reasons come with the code the game service maps them to.
    assert found["NOT_YOUR_TURN"].codes == {"FAILED_PRECONDITION"}
    assert found["CLAIM_WINDOW_CLOSED"].codes == {"ABORTED"}


def test_comment_keeps_aligned_lists_as_text() -> None:
    comment = "Status codes:\n  A_CODE  first\n          continued\nAfter, <token>."
    assert markdown(comment) == (
        "Status codes:\n\n```text\nA_CODE  first\n        continued\n```\n\nAfter, &lt;token>."
    )
