"""Run the terminal client as a base install (`pip install rummy`) would have it.

    python tests/deploy/client_alone.py BLOCKED -- [rummy arguments]
    python tests/deploy/client_alone.py BLOCKED -c CODE

BLOCKED is a comma-separated list of top-level modules that the base install
does not carry (test_extras.py works them out from the installed packages'
metadata): importing any of them fails as if it were not installed. Then every
module of `clients` is imported (the full-screen client too) and `rummy` runs
with the given arguments, or CODE runs (to show what a blocked import does).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType


class NotInstalled(importlib.abc.MetaPathFinder):
    """Refuses the given top-level modules, and everything below them."""

    def __init__(self, blocked: set[str]) -> None:
        self.blocked = blocked

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def main(argv: list[str]) -> None:
    blocked, mode, *rest = argv
    names = {n for n in blocked.split(",") if n}
    loaded = names & {n.partition(".")[0] for n in sys.modules}
    assert not loaded, f"loaded before the client starts: {sorted(loaded)}"
    sys.meta_path.insert(0, NotInstalled(names))
    if mode == "-c":
        [code] = rest
        exec(compile(code, "<client_alone>", "exec"), {"__name__": "__main__"})
        return
    assert mode == "--", mode
    import clients

    for module in pkgutil.walk_packages(clients.__path__, "clients."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    from clients.cli.main import main as rummy  # the `rummy` console script

    sys.argv = ["rummy", *rest]
    sys.exit(rummy())


if __name__ == "__main__":
    main(sys.argv[1:])
