"""Regenerate the API reference (Markdown) into ``docs/api``.

    python -m scripts.gen_api_docs            # what `make proto` runs
    python -m scripts.gen_api_docs --out DIR  # somewhere else (the freshness test)

From the comments of the public protos (``proto/rummy/v1``): one page per
service, holding its RPCs and the messages and enums of its file, one page per
file of shared types, and ``errors.md``, every reason a refusal can carry. The
reasons are read from the services' code (``scripts/api_docs/reasons.py``), with
the status code, the metadata keys and the sentences each comes with, and the
places of the protos whose comments name them.

The output depends only on the protos, the services' code and the pinned
grpcio-tools, so a test regenerates it and fails on any difference.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from scripts.api_docs.descriptors import (
    PUBLIC_DIR,
    CompileError,
    cell,
    compile_public,
    first_sentence,
)
from scripts.api_docs.pages import HEADER, Mention, Reference, page_name
from scripts.api_docs.reasons import REASON_WORD, ReasonInfo, code_reasons

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "docs" / "api"
# "reason X", "reasons X", "(reason X", as the proto comments name one.
_NAMED_REASON = re.compile(r"\breasons?\s+(" + REASON_WORD.pattern + r")\b")
_WORD = re.compile(r"\b[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def proto_reasons(mentions: list[Mention]) -> set[str]:
    """Reasons the comments name as such ("reason TOKEN_EXPIRED")."""
    return {match for m in mentions for match in _NAMED_REASON.findall(" ".join(m.text.split()))}


def _mentioned(mentions: list[Mention], reasons: set[str]) -> dict[str, list[Mention]]:
    found: dict[str, list[Mention]] = {reason: [] for reason in reasons}
    for mention in mentions:
        for word in dict.fromkeys(_WORD.findall(mention.text)):
            if word in found:
                found[word].append(mention)
    return found


def _where(mention: Mention) -> str:
    target = mention.page + (f"#{mention.anchor}" if mention.anchor else "")
    return f"[{mention.label}]({target})"


def retry_cell(reason: str, info: ReasonInfo) -> str:
    """The wait of the RetryInfo a reason comes with: the metadata's own, or a
    fixed one; empty if the same call would be refused again."""
    import grpc

    from services.common.errors import RETRY_AFTER, retry_delay_ms

    if RETRY_AFTER in info.metadata:
        return f"`{RETRY_AFTER}`"
    waits = {retry_delay_ms(grpc.StatusCode[code], reason, {}) for code in info.codes}
    return ", ".join(f"{wait} ms" for wait in sorted(w for w in waits if w is not None))


def errors_page(reasons: dict[str, ReasonInfo], mentions: list[Mention]) -> str:
    from services.common.errors import DOMAIN

    unsent = proto_reasons(mentions) - reasons.keys()
    places = _mentioned(mentions, reasons.keys() | unsent)
    out = [
        HEADER.format(source=f"proto/{PUBLIC_DIR.as_posix()} and services/"),
        "# Error reasons\n",
        "Every refusal is a gRPC status with one `google.rpc.ErrorInfo` detail whose"
        f" `domain` is `{DOMAIN}` and whose `reason` is one of the codes below. A reason"
        " never changes meaning: switch on it to choose what to show or do. The status"
        " message is a sentence for the player (those below, with `…` where a value is"
        " filled in): show it, never parse it. What each status code asks of an app is"
        " told at the top of [GameService](game-service.md).\n",
        "Metadata lists the keys of `ErrorInfo.metadata` the reason comes with. *Retry*"
        " is the wait of the `google.rpc.RetryInfo` detail a refusal carries when the same"
        " call may be made again (`retry_after_ms`: the same wait as that metadata key);"
        " without one, making the same call again only gets the same refusal. *Named in*"
        " links the comments of the protos that name it.\n",
        "| Reason | Status | Metadata | Retry | Sentences | Named in |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for reason in sorted(reasons.keys() | unsent):
        info = reasons.get(reason, ReasonInfo())
        codes = ", ".join(f"`{code}`" for code in sorted(info.codes)) or "(not sent)"
        metadata = ", ".join(f"`{key}`" for key in sorted(info.metadata))
        sentences = "<br>".join(cell(text) for text in info.sentences)
        named = ", ".join(_where(m) for m in places[reason])
        retry = retry_cell(reason, info)
        out.append(f"| `{reason}` | {codes} | {metadata} | {retry} | {sentences} | {named} |")
    return "\n".join(out) + "\n"


def index_page(reference: Reference) -> str:
    out = [
        HEADER.format(source=f"proto/{PUBLIC_DIR.as_posix()}"),
        "# API reference\n",
        "Generated from the comments of the public protos by `make proto`; a test"
        " fails when it is out of date. [`proto/README.md`](../../proto/README.md) is"
        " the guide: how to sign in, play, watch a table and handle errors.\n",
        "| Page | Package | What |",
        "| --- | --- | --- |",
    ]
    # Services first, then the files of shared types.
    for file in sorted(reference.files, key=lambda f: (not f.service, page_name(f))):
        about = next((m.text for m in reference.mentions if m.page == page_name(file)), "")
        out.append(
            f"| [{page_name(file).removesuffix('.md')}]({page_name(file)}) | `{file.package}` "
            f"| {cell(first_sentence(about))} |"
        )
    out.append(
        "| [errors](errors.md) | | Every error reason: its status code, metadata, retry and"
        " sentences. |"
    )
    return "\n".join(out) + "\n"


def render() -> dict[Path, str]:
    """Every page, by path relative to the reference's folder."""
    files = list(compile_public().file)
    reference = Reference(files)
    pages = {Path(name): text for name, text in reference.pages().items()}
    pages[Path("errors.md")] = errors_page(code_reasons(), reference.mentions)
    pages[Path("README.md")] = index_page(reference)
    return dict(sorted(pages.items()))


def generate(out_dir: Path) -> list[Path]:
    """Replace ``out_dir`` with fresh pages; returns the files written. The
    folder is owned by this script: a page of a deleted file does not stay."""
    pages = render()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    written = []
    for relative, text in pages.items():
        target = out_dir / relative
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="reference folder")
    args = parser.parse_args(argv)
    try:
        written = generate(args.out)
    except CompileError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"wrote {len(written)} pages to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
