"""`make run`'s token secret, kept in a file so that tokens outlive a restart.

Deployed servers take the secret from the environment (`RUMMY_TOKEN_SECRET`);
`rummy-dev` makes one up the first time it runs without one and keeps it beside
the embedded database's folder. The file is the secret itself: it is made
readable by its owner only (0600), and one that others may read is refused
rather than used, since anyone who read it can sign tokens for any player.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from pathlib import Path

from .config import ConfigError

FILE_NAME = "token-secret"
SECRET_BYTES = 48
"""Random bytes in a made-up secret (64 characters once encoded): HS256 wants 32+."""
MIN_BYTES = 32


def secret_path(data_dir: str) -> Path:
    """Where `rummy-dev` keeps its secret: beside the embedded database's folder
    (``data/pg`` keeps it in ``data/token-secret``)."""
    return Path(data_dir).parent / FILE_NAME


def kept_secret(path: Path) -> str:
    """The secret kept at ``path``, made up and written there (mode 0600) if none is.

    Raises `ConfigError` with a one-line message for a file that other users may
    read or write, that is not a plain file, or that holds too short a secret, and
    for a folder where it cannot be kept."""
    try:
        return _kept(path)
    except OSError as error:
        raise ConfigError(
            f"cannot keep the token secret in {path}: {error.strerror or error};"
            " set RUMMY_DATA_DIR to a folder of yours, or RUMMY_TOKEN_SECRET"
        ) from None


def _kept(path: Path) -> str:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    made = secrets.token_urlsafe(SECRET_BYTES)
    # Written whole under another name (mkstemp makes it 0600), then linked into
    # place: a second process starting at once reads a whole secret or makes none.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{FILE_NAME}.")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(made + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return _read(path)


def _read(path: Path) -> str:
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path} must be a plain file holding the token secret")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"{path} holds the token secret but other users may read or change it"
            f" (mode {mode:04o}): run `chmod 600 {path}`, or delete it to make a new one"
        )
    value = path.read_text().strip()
    if len(value.encode()) < MIN_BYTES:
        raise ConfigError(
            f"{path} holds a token secret shorter than {MIN_BYTES} bytes:"
            " delete it to make a new one"
        )
    return value
