"""One Markdown page per service (with the messages and enums of its file), one
per file of shared types, and the places where each comment names a reason."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf import descriptor_pb2

from .descriptors import (
    ENUM_TYPE,
    ENUM_VALUE,
    FIELD,
    MESSAGE_TYPE,
    METHOD,
    NESTED_ENUM,
    NESTED_TYPE,
    SERVICE,
    Comments,
    cell,
    first_sentence,
    markdown,
)

FieldType = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    FieldType.TYPE_DOUBLE: "double",
    FieldType.TYPE_FLOAT: "float",
    FieldType.TYPE_INT64: "int64",
    FieldType.TYPE_UINT64: "uint64",
    FieldType.TYPE_INT32: "int32",
    FieldType.TYPE_FIXED64: "fixed64",
    FieldType.TYPE_FIXED32: "fixed32",
    FieldType.TYPE_BOOL: "bool",
    FieldType.TYPE_STRING: "string",
    FieldType.TYPE_BYTES: "bytes",
    FieldType.TYPE_UINT32: "uint32",
    FieldType.TYPE_SFIXED32: "sfixed32",
    FieldType.TYPE_SFIXED64: "sfixed64",
    FieldType.TYPE_SINT32: "sint32",
    FieldType.TYPE_SINT64: "sint64",
}
WELL_KNOWN = "https://protobuf.dev/reference/protobuf/google.protobuf/#"
HEADER = (
    "<!-- Generated from {source} by `make proto` (scripts/gen_api_docs.py). DO NOT EDIT. -->\n"
)


def page_name(file: descriptor_pb2.FileDescriptorProto) -> str:
    """``auth-service.md`` for a file holding one service, else ``table.md``."""
    if len(file.service) == 1:
        return re.sub(r"(?<!^)(?=[A-Z])", "-", file.service[0].name).lower() + ".md"
    return file.name.rsplit("/", 1)[-1].removesuffix(".proto") + ".md"


def anchor(kind: str, name: str) -> str:
    """The id GitHub gives the heading ``### kind `name```."""
    return f"{kind}-" + re.sub(r"[^a-z0-9_-]", "", name.lower())


@dataclass(frozen=True)
class Mention:
    """A comment of the reference: where it is, under which name."""

    label: str
    page: str
    anchor: str
    text: str


@dataclass(frozen=True)
class _Type:
    page: str
    anchor: str
    name: str


def _types(files: list[descriptor_pb2.FileDescriptorProto]) -> dict[str, _Type]:
    """Every message and enum, by full name (``.rummy.v1.TableView``)."""
    found: dict[str, _Type] = {}

    def walk(
        prefix: str,
        page: str,
        messages: list[descriptor_pb2.DescriptorProto],
        enums: list[descriptor_pb2.EnumDescriptorProto],
        outer: str,
    ) -> None:
        for enum in enums:
            name = outer + enum.name
            found[f"{prefix}.{enum.name}"] = _Type(page, anchor("enum", name), name)
        for message in messages:
            name = outer + message.name
            found[f"{prefix}.{message.name}"] = _Type(page, anchor("message", name), name)
            walk(
                f"{prefix}.{message.name}",
                page,
                list(message.nested_type),
                list(message.enum_type),
                name + ".",
            )

    for file in files:
        walk(f".{file.package}", page_name(file), list(file.message_type), list(file.enum_type), "")
    return found


class Reference:
    """The pages of one set of files, and the comments they show."""

    def __init__(self, files: list[descriptor_pb2.FileDescriptorProto]) -> None:
        self.files = files
        self.types = _types(files)
        self.mentions: list[Mention] = []

    def pages(self) -> dict[str, str]:
        """Every page by name; ``mentions`` then holds the comments they show."""
        self.mentions = []
        return {page_name(file): self._page(file) for file in self.files}

    # --- links ----------------------------------------------------------------

    def link(self, type_name: str, page: str) -> str:
        known = self.types.get(type_name)
        if known is not None:
            target = "" if known.page == page else known.page
            return f"[`{known.name}`]({target}#{known.anchor})"
        if type_name.startswith(".google.protobuf."):
            short = type_name.removeprefix(".google.protobuf.")
            return f"[`google.protobuf.{short}`]({WELL_KNOWN}{short.lower()})"
        return f"`{type_name.lstrip('.')}`"

    def _field_type(
        self,
        field: descriptor_pb2.FieldDescriptorProto,
        page: str,
        message: descriptor_pb2.DescriptorProto,
    ) -> str:
        if field.type in SCALARS:
            shown = f"`{SCALARS[field.type]}`"
        else:
            entry = next(
                (
                    n
                    for n in message.nested_type
                    if n.options.map_entry and field.type_name.endswith(f".{n.name}")
                ),
                None,
            )
            if entry is not None and field.label == FieldType.LABEL_REPEATED:
                key, value = (self._field_type(f, page, entry) for f in entry.field)
                return f"map&lt;{key}, {value}&gt;"
            shown = self.link(field.type_name, page)
        if field.label == FieldType.LABEL_REPEATED:
            return "repeated " + shown
        return "optional " + shown if field.proto3_optional else shown

    # --- one page -------------------------------------------------------------

    def _note(self, label: str, page: str, where: str, text: str) -> None:
        if text:
            self.mentions.append(Mention(label, page, where, text))

    def _page(self, file: descriptor_pb2.FileDescriptorProto) -> str:
        page = page_name(file)
        comments = Comments(file)
        source = f"proto/{file.name}"
        title = file.service[0].name if len(file.service) == 1 else file.name.rsplit("/", 1)[-1]
        out = [HEADER.format(source=source), f"# {title}\n"]
        out.append(f"Package `{file.package}`, file [`{source}`](../../{source}).\n")
        elements = [(comments.line(SERVICE, i), SERVICE, i) for i in range(len(file.service))]
        elements += [
            (comments.line(MESSAGE_TYPE, i), MESSAGE_TYPE, i) for i in range(len(file.message_type))
        ]
        elements += [
            (comments.line(ENUM_TYPE, i), ENUM_TYPE, i) for i in range(len(file.enum_type))
        ]
        elements.sort()
        if elements:
            # The file's own comment: the one a blank line keeps off its first element.
            for text in comments.of(*elements[0][1:]).detached:
                self._note(file.name, page, "", text)
                out.append(markdown(text) + "\n")
        for i, service in enumerate(file.service):
            out.extend(self._service(file, comments, page, i, service))
        types = [(kind, i) for _, kind, i in elements if kind != SERVICE]
        if types:
            out.append("## Messages and enums\n")
        for kind, i in types:
            if kind == MESSAGE_TYPE:
                out.extend(self._message(comments, page, (kind, i), file.message_type[i], ""))
            else:
                out.extend(self._enum(comments, page, (kind, i), file.enum_type[i], ""))
        return "\n".join(out).rstrip("\n") + "\n"

    def _service(
        self,
        file: descriptor_pb2.FileDescriptorProto,
        comments: Comments,
        page: str,
        i: int,
        service: descriptor_pb2.ServiceDescriptorProto,
    ) -> Iterator[str]:
        text = comments.of(SERVICE, i).text
        self._note(service.name, page, "", text)
        if len(file.service) > 1:
            yield f"## {service.name}\n"
        if text:
            yield markdown(text) + "\n"
        yield "| RPC | Request | Response | |\n| --- | --- | --- | --- |"
        for j, method in enumerate(service.method):
            summary = cell(first_sentence(comments.of(SERVICE, i, METHOD, j).text))
            stream = " (stream)" if method.server_streaming else ""
            rpc = f"[`{method.name}`](#{anchor('rpc', method.name)})"
            request, response = (
                self.link(method.input_type, page),
                self.link(method.output_type, page),
            )
            yield f"| {rpc} | {request} | {response}{stream} | {summary} |"
        yield ""
        yield "## RPCs\n"
        for j, method in enumerate(service.method):
            text = comments.of(SERVICE, i, METHOD, j).text
            self._note(f"{service.name}.{method.name}", page, anchor("rpc", method.name), text)
            kind = "server stream of " if method.server_streaming else ""
            request, response = (
                self.link(method.input_type, page),
                self.link(method.output_type, page),
            )
            yield f"### rpc `{method.name}`\n"
            yield f"{request} → {kind}{response}\n"
            if text:
                yield markdown(text) + "\n"

    def _message(
        self,
        comments: Comments,
        page: str,
        path: tuple[int, ...],
        message: descriptor_pb2.DescriptorProto,
        outer: str,
    ) -> Iterator[str]:
        name = outer + message.name
        if message.options.map_entry:
            return
        where = anchor("message", name)
        text = comments.of(*path).text
        self._note(name, page, where, text)
        yield f"### message `{name}`\n"
        if text:
            yield markdown(text) + "\n"
        if message.field:
            yield "| Field | Number | Type | Description |\n| --- | --- | --- | --- |"
            for j, field in enumerate(message.field):
                about = comments.of(*path, FIELD, j).text
                self._note(f"{name}.{field.name}", page, where, about)
                notes = []
                if field.HasField("oneof_index") and not field.proto3_optional:
                    notes.append(f"*One of `{message.oneof_decl[field.oneof_index].name}`.*")
                if field.options.deprecated:
                    notes.append("**Deprecated.**")
                described = " ".join([*notes, cell(about)]).strip()
                shown = self._field_type(field, page, message)
                yield f"| `{field.name}` | {field.number} | {shown} | {described} |"
            yield ""
        else:
            yield "No fields.\n"
        for k, nested in enumerate(message.nested_type):
            yield from self._message(comments, page, (*path, NESTED_TYPE, k), nested, name + ".")
        for k, enum in enumerate(message.enum_type):
            yield from self._enum(comments, page, (*path, NESTED_ENUM, k), enum, name + ".")

    def _enum(
        self,
        comments: Comments,
        page: str,
        path: tuple[int, ...],
        enum: descriptor_pb2.EnumDescriptorProto,
        outer: str,
    ) -> Iterator[str]:
        name = outer + enum.name
        where = anchor("enum", name)
        text = comments.of(*path).text
        self._note(name, page, where, text)
        yield f"### enum `{name}`\n"
        if text:
            yield markdown(text) + "\n"
        yield "| Value | Number | Description |\n| --- | --- | --- |"
        for j, value in enumerate(enum.value):
            about = comments.of(*path, ENUM_VALUE, j).text
            self._note(f"{name}.{value.name}", page, where, about)
            yield f"| `{value.name}` | {value.number} | {cell(about)} |"
        yield ""
