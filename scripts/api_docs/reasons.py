"""The error reasons the services can send, found in their code.

A refusal's ``ErrorInfo.reason`` is written in the services' code, not in the
protos, and in several shapes; each is read here without running the code:

- ``abort(context, grpc.StatusCode.X, "REASON", "message", metadata={...})``
  and every other call that passes a status code followed by a reason and a
  sentence (``rich_status``, ``Refusal``, ``Refused``...). The reason may be a
  module-level constant; a sentence looked up as ``MESSAGES[reason]`` in a
  module-level dict makes every key of that dict a reason.
- A refusal class that fixes its status code in ``__init__``
  (``super().__init__(grpc.StatusCode.X, reason, message)``), called as
  ``Malformed("REASON", "message")``.
- The services' catalogue, ``ServiceReason.X`` (services/common/wire/reasons.py),
  wherever a literal reason could stand.
- The rules engine's ``Reason`` enum, with the status code the game service
  maps each member to (read from the service itself), and its sentences from
  the calls that name a ``Reason.X``.

``tests/test_api_reference.py`` checks that no UPPER_SNAKE string of the
services' code is left out, so a new shape of refusal cannot go unlisted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SERVICES = REPO / "services"
GENERATED = SERVICES / "common" / "pb"
REASON_WORD = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
ELLIPSIS = "…"
CATALOGUE = "ServiceReason"
ENGINE_CATALOGUE = "Reason"
"""The enums of the services' and the engine's reasons: a member's value is its name."""


@dataclass
class ReasonInfo:
    """What the code tells of one reason."""

    codes: set[str] = field(default_factory=set)
    # (file, line, sentence): the sentences a player is shown, where they are written.
    messages: list[tuple[str, int, str]] = field(default_factory=list)
    metadata: set[str] = field(default_factory=set)

    @property
    def sentences(self) -> list[str]:
        """Each sentence once, in the order of the code (by file, then line)."""
        return list(dict.fromkeys(text for _, _, text in sorted(self.messages)))


def service_modules(root: Path = SERVICES) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if GENERATED not in p.parents)


def _status_code(node: ast.expr) -> str | None:
    """``X`` of ``grpc.StatusCode.X`` (or ``StatusCode.X``)."""
    if isinstance(node, ast.Attribute):
        owner = node.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "StatusCode") or (
            isinstance(owner, ast.Name) and owner.id == "StatusCode"
        ):
            return node.attr
    return None


def sentence(node: ast.expr | None) -> str | None:
    """The text of a literal sentence; the values of an f-string read as an ellipsis."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [
            sentence(value) if isinstance(value, ast.Constant) else ELLIPSIS
            for value in node.values
        ]
        return "".join(part or "" for part in parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = sentence(node.left), sentence(node.right)
        return None if left is None or right is None else left + right
    return None


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


@dataclass
class _Module:
    path: str
    tree: ast.Module


@dataclass
class _Scan:
    constants: dict[str, str | None] = field(default_factory=dict)
    tables: dict[str, dict[str, str]] = field(default_factory=dict)
    fixed_codes: dict[str, str] = field(default_factory=dict)
    # Helpers such as `_refuse(message, reason=Reason.MELD_INVALID)`: their default reason.
    default_reasons: dict[str, str] = field(default_factory=dict)
    found: dict[str, ReasonInfo] = field(default_factory=dict)

    def reason(self, name: str) -> ReasonInfo:
        return self.found.setdefault(name, ReasonInfo())

    def resolve(self, node: ast.expr) -> str | None:
        text = self.text(node)
        return text if text is not None and REASON_WORD.fullmatch(text) else None

    def text(self, node: ast.expr | None) -> str | None:
        """A literal, or a module-level constant named (``NAME``, ``module.NAME``)."""
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in (CATALOGUE, ENGINE_CATALOGUE):
                return node.attr
            return self.constants.get(node.attr)
        return sentence(node)


def _key(node: ast.expr | None) -> str | None:
    """A dict key naming a reason: ``"REASON"`` or ``ServiceReason.REASON``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == CATALOGUE else None
    return None


def _module_level(scan: _Scan, module: _Module) -> None:
    """Constants (``NAME = "VALUE"``), sentence tables and refusal classes."""
    for node in module.tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    known = scan.constants.get(target.id, value.value)
                    scan.constants[target.id] = value.value if known == value.value else None
                elif isinstance(value, ast.Dict):
                    table = {
                        name: text
                        for key, item in zip(value.keys, value.values, strict=True)
                        if (name := _key(key)) is not None and (text := sentence(item)) is not None
                    }
                    if table:
                        scan.tables[target.id] = table
        elif isinstance(node, ast.FunctionDef):
            defaults = [r for d in node.args.defaults if (r := _engine_reason(d))]
            if len(defaults) == 1:
                scan.default_reasons[node.name] = defaults[0]
        elif isinstance(node, ast.ClassDef):
            if _catalogue(node):
                for member in node.body:
                    if (
                        isinstance(member, ast.Assign)
                        and len(member.targets) == 1
                        and isinstance(member.targets[0], ast.Name)
                        and isinstance(member.value, ast.Constant)
                        and isinstance(member.value.value, str)
                    ):
                        scan.constants[member.targets[0].id] = member.value.value
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                if _callee(call) == "__init__" and call.args:
                    code = _status_code(call.args[0])
                    if code is not None:
                        scan.fixed_codes[node.name] = code


def _catalogue(node: ast.ClassDef) -> bool:
    """A catalogue of reason codes (``class ServiceReason(StrEnum)``): its members
    are named ``ServiceReason.X`` where a refusal is made."""
    return any(isinstance(base, ast.Name) and base.id == "StrEnum" for base in node.bases)


def _metadata_keys(node: ast.expr | None) -> set[str]:
    if not isinstance(node, ast.Dict):
        return set()
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _record(scan: _Scan, where: tuple[str, int], code: str, call: ast.Call, first: int) -> None:
    """The reason, sentence and metadata passed from ``call.args[first]`` on."""
    args = call.args[first:]
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    reason_node = args[0] if args else keywords.get("reason")
    message_node = args[1] if len(args) > 1 else keywords.get("message")
    metadata_node = args[2] if len(args) > 2 else keywords.get("metadata")
    reason = scan.resolve(reason_node) if reason_node is not None else None
    if reason is not None:
        info = scan.reason(reason)
        info.codes.add(code)
        info.metadata |= _metadata_keys(metadata_node)
        text = scan.text(message_node)
        if text is not None:
            info.messages.append((*where, text))
    elif (
        isinstance(message_node, ast.Subscript)
        and isinstance(message_node.value, ast.Name)
        and message_node.value.id in scan.tables
    ):
        for key, text in scan.tables[message_node.value.id].items():
            info = scan.reason(key)
            info.codes.add(code)
            info.messages.append((*where, text))


def _engine_reason(node: ast.expr) -> str | None:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Reason"
        and REASON_WORD.fullmatch(node.attr)
    ):
        return node.attr
    return None


def _calls(scan: _Scan, module: _Module, engine: dict[str, str]) -> None:
    for call in (n for n in ast.walk(module.tree) if isinstance(n, ast.Call)):
        where = (module.path, call.lineno)
        args = list(call.args)
        codes = [(i, _status_code(arg)) for i, arg in enumerate(args)]
        placed = next(((i, code) for i, code in codes if code is not None), None)
        if placed is not None:
            _record(scan, where, placed[1], call, placed[0] + 1)
        elif _callee(call) in scan.fixed_codes:
            _record(scan, where, scan.fixed_codes[_callee(call)], call, 0)
        named = [
            r for a in [*args, *(kw.value for kw in call.keywords)] if (r := _engine_reason(a))
        ]
        if not named and _callee(call) in scan.default_reasons:
            named = [scan.default_reasons[_callee(call)]]
        if len(named) == 1 and named[0] in engine:
            others = [a for a in args if _engine_reason(a) is None]
            others += [kw.value for kw in call.keywords if _engine_reason(kw.value) is None]
            # A sentence for the player, not some other string of the call.
            text = next((t for a in others if (t := sentence(a)) and " " in t), None)
            if text is not None:
                scan.reason(named[0]).messages.append((*where, text))


def engine_codes() -> dict[str, str]:
    """Each rules-engine reason and the status code the game service answers it with."""
    from services.game.outcomes import refusal_of
    from services.game.rules.errors import Reason, RuleError

    return {member.value: refusal_of(RuleError(member, "")).code.name for member in Reason}


def _parsed(paths: list[Path]) -> Iterator[_Module]:
    for path in paths:
        relative = (path.relative_to(REPO) if path.is_relative_to(REPO) else path).as_posix()
        yield _Module(relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative))


def code_reasons(paths: list[Path] | None = None) -> dict[str, ReasonInfo]:
    """Every reason the services' code sends, by name."""
    modules = list(_parsed(service_modules() if paths is None else paths))
    engine = engine_codes()
    scan = _Scan()
    for module in modules:
        _module_level(scan, module)
    for name, code in engine.items():
        scan.reason(name).codes.add(code)
    for module in modules:
        _calls(scan, module, engine)
    return dict(sorted(scan.found.items()))


def upper_snake_literals(paths: list[Path] | None = None) -> dict[str, str]:
    """Every UPPER_SNAKE string literal of the services' code (docstrings and
    ``__all__`` aside), with one place it is written: what a reason looks like."""
    found: dict[str, str] = {}
    for module in _parsed(service_modules() if paths is None else paths):
        exported = {
            id(item)
            for node in module.tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            for item in ast.walk(node.value)
        }
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and "_" in node.value
                and REASON_WORD.fullmatch(node.value)
                and id(node) not in exported
            ):
                found.setdefault(node.value, f"{module.path}:{node.lineno}")
    return found
