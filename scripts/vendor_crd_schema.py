"""Cut the part of a custom resource definition's schema that deploy/k8s uses.

    python -m scripts.vendor_crd_schema CRD.yaml --source URL --release vX.Y.Z \\
        FIELD [FIELD...] > tests/deploy/crd-schemas/vendored/KIND.json

Some operators publish no schema package on npm (Envoy Gateway's policies). Their
CRDs run to hundreds of kilobytes, mostly fields this project never sets, so
tests/deploy keeps only the subtrees of `spec` named by FIELD, verbatim but for
their descriptions, with where they came from. tests/deploy/crd-schemas/validate.mjs
checks manifests against them as the API server's strict field validation would:
an unknown field is an error, so a field outside FIELD is too (vendor it first).
The CEL rules (`x-kubernetes-validations`) are dropped: nothing here runs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

DROPPED = frozenset({"description", "x-kubernetes-validations"})


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in DROPPED}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def cut(crd: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """The served version's schema with `spec` cut down to `fields`; no `status`."""
    [version] = [v for v in crd["spec"]["versions"] if v.get("served", True) and v["storage"]]
    schema = version["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    missing = sorted(set(fields) - set(spec["properties"]))
    if missing:
        raise SystemExit(f"not in {crd['spec']['names']['kind']}'s spec: {', '.join(missing)}")
    cut_spec = {k: v for k, v in spec.items() if k not in ("properties", "required")}
    cut_spec["properties"] = {f: spec["properties"][f] for f in fields}
    required = [f for f in spec.get("required", []) if f in fields]
    if required:
        cut_spec["required"] = required
    top = {k: v for k, v in schema["properties"].items() if k in ("apiVersion", "kind")}
    return {
        "group": crd["spec"]["group"],
        "version": version["name"],
        "kind": crd["spec"]["names"]["kind"],
        "schema": _strip(
            {
                "type": "object",
                "required": ["spec"],
                "properties": {**top, "metadata": {"type": "object"}, "spec": cut_spec},
            }
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crd", type=Path, help="the CustomResourceDefinition (YAML)")
    parser.add_argument("fields", nargs="+", help="the fields of `spec` to keep")
    parser.add_argument("--source", required=True, help="where the CRD was published")
    parser.add_argument("--release", required=True, help="the operator's release")
    args = parser.parse_args(argv)
    crd = yaml.safe_load(args.crd.read_text())
    vendored = {
        "source": args.source,
        "release": args.release,
        "kept": args.fields,
        "note": "Cut by scripts/vendor_crd_schema.py: only the fields of `spec` in `kept`, "
        "without descriptions and CEL rules. Regenerate from the source, never edit by hand.",
        **cut(crd, args.fields),
    }
    json.dump(vendored, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
