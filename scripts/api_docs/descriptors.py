"""The public protos as descriptors, with their comments.

protoc (from the pinned grpcio-tools, as for ``make proto``) compiles
``proto/rummy/v1`` to a ``FileDescriptorSet`` with source info, which keeps
every comment by the path of the element it belongs to.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2

REPO = Path(__file__).resolve().parent.parent.parent
PROTO_ROOT = REPO / "proto"
PUBLIC_DIR = Path("rummy") / "v1"

# Field numbers of the descriptor messages, as source-info paths name them.
MESSAGE_TYPE, ENUM_TYPE, SERVICE = 4, 5, 6
FIELD, NESTED_TYPE, NESTED_ENUM, ONEOF = 2, 3, 4, 8
ENUM_VALUE = METHOD = 2


class CompileError(RuntimeError):
    """protoc refused the protos."""


def public_files() -> list[str]:
    return sorted(
        p.relative_to(PROTO_ROOT).as_posix() for p in (PROTO_ROOT / PUBLIC_DIR).glob("*.proto")
    )


def compile_public() -> descriptor_pb2.FileDescriptorSet:
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "public.binpb"
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={PROTO_ROOT}",
            f"--proto_path={well_known}",
            "--include_source_info",
            f"--descriptor_set_out={out}",
            *public_files(),
        ]
        done = subprocess.run(command, cwd=PROTO_ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CompileError(f"protoc failed ({done.returncode}):\n{done.stderr}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


@dataclass(frozen=True)
class Comment:
    """An element's comments, one line of text per source line."""

    detached: tuple[str, ...]
    leading: str
    trailing: str

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in (self.leading, self.trailing) if part)


def _clean(raw: str) -> str:
    # protoc keeps the space after `//`; a deeper indent is the author's.
    lines = [line[1:] if line.startswith(" ") else line for line in raw.splitlines()]
    return "\n".join(lines).strip("\n")


class Comments:
    """Comments of one file, looked up by source-info path."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        self._at = {tuple(loc.path): loc for loc in file.source_code_info.location}

    def of(self, *path: int) -> Comment:
        loc = self._at.get(path)
        if loc is None:
            return Comment((), "", "")
        detached = tuple(_clean(text) for text in loc.leading_detached_comments)
        return Comment(detached, _clean(loc.leading_comments), _clean(loc.trailing_comments))

    def line(self, *path: int) -> int:
        """The source line an element starts on (to keep the file's order)."""
        loc = self._at.get(path)
        return loc.span[0] if loc is not None else 0


def markdown(text: str) -> str:
    """A comment as Markdown blocks: paragraphs, and indented lines (lists the
    authors aligned by hand) kept as they are in a text block."""
    blocks: list[str] = []
    prose: list[str] = []
    code: list[str] = []

    def flush() -> None:
        if prose:
            blocks.append("\n".join(escape(line) for line in prose))
            prose.clear()
        if code:
            width = min(len(line) - len(line.lstrip()) for line in code if line.strip())
            body = "\n".join(line[width:].rstrip() for line in code)
            blocks.append(f"```text\n{body}\n```")
            code.clear()

    for line in text.splitlines():
        if not line.strip():
            flush()
        elif line.startswith((" ", "\t")):
            if prose:
                flush()
            code.append(line)
        else:
            if code:
                flush()
            prose.append(line.strip())
    flush()
    return "\n\n".join(blocks)


def cell(text: str) -> str:
    """A comment inside one table cell: one line, breaks kept as ``<br>``."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        out = ""
        for line in lines:
            if not out:
                out = escape(line.strip())
            elif line.startswith((" ", "\t")):
                out += "<br>" + escape(line.strip())
            else:
                out += " " + escape(line.strip())
        if out:
            paragraphs.append(out)
    return "<br><br>".join(paragraphs).replace("|", "\\|")


def escape(line: str) -> str:
    """``<`` outside code spans would open an HTML tag."""
    parts = line.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;")
    return "`".join(parts)


def first_sentence(text: str) -> str:
    flat = " ".join(text.split("\n\n", 1)[0].split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]
