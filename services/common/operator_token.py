"""`rummy-admin-token NAME`: an operator token for the admin tools (`rummy admin`).

    rummy-admin-token alice              # valid 8 hours
    rummy-admin-token alice --hours 1

The token is signed with the secret that signs the players' tokens:
$RUMMY_TOKEN_SECRET, else the one `make run` keeps beside its data folder
($RUMMY_DATA_DIR, by default data/pg). It is printed alone on stdout, for
``export RUMMY_ADMIN_TOKEN=$(rummy-admin-token alice)``. NAME is who the
servers' logs say made each admin call; only the admin services take the
token, and they take no other.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence

from services.common.auth import SECRET_ENV, SecretError, issue_operator_token, load_secret
from services.common.config import ConfigError
from services.common.secret_file import kept_secret, secret_path

MAX_HOURS = 24.0
"""The longest a token lives: mint another the next day."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
DATA_DIR_ENV = "RUMMY_DATA_DIR"
DEFAULT_DATA_DIR = "data/pg"


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours") from None
    if not 0 < value <= MAX_HOURS:
        raise argparse.ArgumentTypeError(f"a token lives more than 0 and at most {MAX_HOURS:g} h")
    return value


def _name(text: str) -> str:
    if not NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            "a name is 1 to 64 letters, digits and . _ @ - (it names you in the logs)"
        )
    return text


def signing_secret(environ: Mapping[str, str] = os.environ) -> str:
    """$RUMMY_TOKEN_SECRET, else the secret `make run` keeps (never made up here: a
    token signed with a secret no server has would be refused by all)."""
    if environ.get(SECRET_ENV, ""):
        return load_secret(environ)
    path = secret_path(environ.get(DATA_DIR_ENV, "") or DEFAULT_DATA_DIR)
    if not path.exists():
        raise SecretError(
            f"{SECRET_ENV} is not set and {path} does not exist: set it to the servers' secret"
        )
    return kept_secret(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rummy-admin-token",
        description="Mint an operator token for `rummy admin` (the admin services).",
    )
    parser.add_argument("name", type=_name, help="who you are: the servers log it with each call")
    parser.add_argument(
        "--hours",
        type=_hours,
        default=8.0,
        help=f"how long it is valid (default 8, at most {MAX_HOURS:g})",
    )
    args = parser.parse_args(argv)
    try:
        secret = signing_secret()
    except (SecretError, ConfigError) as error:
        print(f"rummy-admin-token: {error}", file=sys.stderr)
        return 2
    ttl_s = round(args.hours * 3600)
    print(issue_operator_token(args.name, secret=secret, ttl_s=ttl_s, now=time.time()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
