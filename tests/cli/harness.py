"""Real servers for the client tests, and a scripted player at a pseudo-terminal.

The servers run in the test's event loop; the client runs in a subprocess, so
every blocking pexpect call goes through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import io
import os
import re
import signal
import struct
import sys
import termios
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pexpect
from pexpect import fdpexpect

from clients.cli.cards import Style
from clients.cli.connection import Connection
from clients.cli.identity import Identity
from services.common.limits import Limits
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    table_pb2,
)
from services.game.server import GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import SECRET, UNLIMITED, card, deck_order, service_auth, start_server

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0
"""Bounds every wait on the terminal, so a stuck client fails instead of hanging."""

MY_DRAW = r"Your turn[^\]\r\n]*: draw \(d\)"
FINAL = r"Final totals: [^\r\n]*"
HAND = r"Your hand \((\d+)\): ([^\r\n]*)"
SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
PENALTY = {"A": 11, "T": 10, "J": 10, "Q": 10, "K": 10}


TABLE_ID = r"Table ([0-9a-f-]{36}) found"
"""What a client says once its table is made (group 1: the table id)."""


@dataclass
class Servers:
    """A game server and a matchmaker on one fresh database."""

    dsn: str
    game: GameServer
    matchmaker: MatchmakerServer
    bot_delay_ms: int
    game_limits: Limits = UNLIMITED
    game_settings: dict[str, Any] = field(default_factory=dict)
    """The game server's other settings (its clock's beat, say), kept across restarts."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.matchmaker.port}"

    @property
    def game_address(self) -> str:
        return f"127.0.0.1:{self.game.port}"

    async def restart_everything(self, secret: str) -> None:
        """`make run` restarted: both servers on their ports, signing with ``secret``
        (every token given before is refused, TOKEN_INVALID)."""
        game_port, port = self.game.port, self.matchmaker.port
        await self.matchmaker.stop(0)
        await self.game.stop(0)
        self.game = await start_server(
            self.dsn,
            secret=secret,
            bot_delay_ms=self.bot_delay_ms,
            address=f"127.0.0.1:{game_port}",
            limits=self.game_limits,
            **self.game_settings,
        )
        self.matchmaker = MatchmakerServer(
            MatchmakerConfig(
                dsn=self.dsn,
                secret=secret,
                game_target=f"127.0.0.1:{game_port}",
                address=f"127.0.0.1:{port}",
                match_interval=0.02,
            )
        )
        await self.matchmaker.start()

    async def restart_game(self, down_for: float = 0.0) -> None:
        """Stop the game server and start a new replica on the same port and database
        (``down_for`` seconds later)."""
        port = self.game.port
        await self.game.stop(0)
        await asyncio.sleep(down_for)
        self.game = await start_server(
            self.dsn,
            bot_delay_ms=self.bot_delay_ms,
            address=f"127.0.0.1:{port}",
            limits=self.game_limits,
            **self.game_settings,
        )


@asynccontextmanager
async def servers(
    dsn: str,
    *,
    bot_delay_ms: int = 0,
    limits: Limits | None = None,
    public_game_target: str = "",
    game_settings: dict[str, Any] | None = None,
) -> AsyncIterator[Servers]:
    """Both servers; ``limits`` for both (else the game server's are off, as in
    tests/game, and the matchmaker's are its defaults); ``public_game_target``:
    the game address the matchmaker names to players (else the real one);
    ``game_settings``: the game server's other settings."""
    settings = dict(game_settings or {})
    game = await start_server(
        dsn, bot_delay_ms=bot_delay_ms, limits=limits or UNLIMITED, **settings
    )
    running = None
    try:
        matchmaker = MatchmakerServer(
            MatchmakerConfig(
                dsn=dsn,
                secret=SECRET,
                game_target=f"127.0.0.1:{game.port}",
                public_game_target=public_game_target,
                match_interval=0.02,
                limits=limits or Limits(),
            )
        )
        await matchmaker.start()
        running = Servers(dsn, game, matchmaker, bot_delay_ms, limits or UNLIMITED, settings)
        try:
            yield running
        finally:
            # The matchmaker of the moment (`restart_everything` may have replaced it).
            await running.matchmaker.stop(0)
    finally:
        # The game server of the moment (`restart_game` may have replaced it).
        await (running.game if running is not None else game).stop(0)


async def sign_in(running: Servers, device: str, name: str) -> auth_pb2.LoginResponse:
    """The player behind ``device``, signed in at the matchmaker."""
    async with grpc.aio.insecure_channel(running.address) as channel:
        reply: auth_pb2.LoginResponse = await auth_pb2_grpc.AuthServiceStub(channel).Login(
            auth_pb2.LoginRequest(device_id=device, display_name=name)
        )
    return reply


async def connected(server: str, identity: Identity, name: str, **options: Any) -> Connection:
    """A CLI connection to ``server``, signed in as ``identity``'s device (closed
    again if the sign-in fails)."""
    conn = Connection(server, identity.device_id(), name, **options)
    try:
        await conn.login()
    except BaseException:
        await conn.close()
        raise
    return conn


async def seat_with_a_bot(
    running: Servers,
    config_dir: Path,
    ruleset: str = "cafe",
    order: Sequence[int] = (),
    *,
    device: str = "device-cli-test-0001",
    opponent: auth_pb2.LoginResponse | None = None,
    options: table_pb2.TableOptions | None = None,
    opponent_first: bool = False,
) -> str:
    """A table where the device kept in ``config_dir`` sits first (second with
    ``opponent_first``), against a bot (or the ``opponent`` signed in), made as
    the matchmaker makes one (dealt from ``order`` when given, with ``options``
    when given); its id. The client knows nothing of it until the matchmaker says
    ALREADY_SEATED."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "device_id").write_text(device)
    reply = await sign_in(running, device, "Sam")
    other = tables_pb2.SeatedPlayer(player_id="bot-cli", display_name="Bot", is_bot=True)
    if opponent is not None:
        other = tables_pb2.SeatedPlayer(player_id=opponent.player_id, display_name="Pia")
    players = [tables_pb2.SeatedPlayer(player_id=reply.player_id, display_name="Sam"), other]
    request = tables_pb2.CreateTableRequest(
        ruleset=ruleset,
        options=options,
        players=players[::-1] if opponent_first else players,
        deck_order=order,
    )
    async with grpc.aio.insecure_channel(running.game_address) as channel:
        made = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
            request, metadata=service_auth()
        )
    return str(made.table_id)


def play_args(running: Servers, name: str, config_dir: Path) -> tuple[str, ...]:
    """`rummy play` against these servers, bots at the table at once."""
    return (
        *("play", "--server", running.address, "--bots"),
        *("--name", name, "--config-dir", str(config_dir)),
    )


SEATED = r"already seated at table [0-9a-f-]{36}: going back to it"
"""What `rummy play` says as it goes back to a kept seat (`rejoining`)."""


def rejoining(running: Servers, config_dir: Path) -> Terminal:
    """`rummy play` for a player these servers have seated already (it goes back)."""
    return Terminal(
        *("play", "--server", running.address, "--game", running.game_address),
        *("--config-dir", str(config_dir)),
    )


async def a_friend_takes_the_seat(
    running: Servers, invite: str, host: Terminal, config_dir: Path
) -> None:
    """A friend on another device joins the host's private table: both are seated."""
    friend = Terminal(
        *("join", invite, "--server", running.address), *("--config-dir", str(config_dir))
    )
    try:
        await friend.expect(TABLE_ID)
        await host.expect(TABLE_ID)
    finally:
        friend.kill()


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUMMY_")}
    # The line mode: these tests read what the client prints line by line.
    env.update(NO_COLOR="1", TERM="xterm", PYTHONPATH=str(ROOT), RUMMY_PLAIN="1")
    return env


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "clients.cli.main", *args]


async def run_cli(
    *args: str, timeout: float = 120.0, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run `rummy ARGS` to its end (not on a terminal); its exit status and output.
    ``env``: variables added to the client's environment."""
    process = await asyncio.create_subprocess_exec(
        *cli(*args),
        cwd=ROOT,
        env=cli_env() | (env or {}),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout)
    except BaseException:
        # A client that did not finish in time (or a test stopped meanwhile) is
        # not left running.
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, out.decode()


def ascii_code(label: str) -> str:
    """`10♠` -> `TS`, `JK` -> `JK`: what the terminal shows, as a card code."""
    if label == "JK":
        return label
    rank = "T" if label[:-1] == "10" else label[:-1]
    return rank + SYMBOLS[label[-1]]


def parse_hand(text: str) -> list[str]:
    return [ascii_code(label) for label in text.split()]


def discard_choice(hand: Sequence[str]) -> str:
    """The costliest card that is not a joker (a joker only when nothing else is left)."""
    naturals = [c for c in hand if c != "JK"]
    if not naturals:
        return hand[0]
    return max(naturals, key=lambda c: PENALTY.get(c[0], int(c[0]) if c[0].isdigit() else 0))


def spawn_on_pty(argv: Sequence[str], env: dict[str, str], rows: int, cols: int) -> tuple[int, int]:
    """Start `argv` on a new pseudo-terminal (its controlling terminal); (pid, master fd).

    posix_spawn, not fork: the test process runs gRPC servers, and a forked copy of
    it can die in gRPC's fork handlers before it gets to exec the client."""
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    try:
        pid = os.posix_spawn(
            argv[0],
            list(argv),
            env,
            # After setsid, opening the terminal makes it the controlling one (so ^C works).
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.ttyname(slave), os.O_RDWR, 0),
                (os.POSIX_SPAWN_DUP2, 0, 1),
                (os.POSIX_SPAWN_DUP2, 0, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(slave)
    return pid, master


class Terminal:
    """`rummy ARGS` on a pseudo-terminal, driven like a person would."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        """``env``: variables added to the client's environment."""
        self.log = io.StringIO()
        self.pid, master = spawn_on_pty(cli(*args), cli_env() | (env or {}), 60, 220)
        # Rarely (once in hundreds of runs) readline's redraw of a prompt the
        # countdown rewrote leaves a broken character on the screen: shown as U+FFFD
        # rather than ending the test, whose expectations are about the text.
        self.child = fdpexpect.fdspawn(
            master, encoding="utf-8", codec_errors="replace", timeout=WAIT_S
        )
        self.child.logfile_read = self.log
        self.status: int | None = None

    async def expect(self, patterns: object, timeout: float = WAIT_S) -> int:
        try:
            index: int = await asyncio.to_thread(self.child.expect, patterns, timeout)
        except (pexpect.TIMEOUT, pexpect.EOF) as error:
            raise AssertionError(
                f"{type(error).__name__} waiting for {patterns!r}:\n{self.transcript()}"
            ) from None
        return index

    def group(self, n: int) -> str:
        match = self.child.match
        assert isinstance(match, re.Match)
        return str(match.group(n))

    async def send(self, line: str) -> None:
        await asyncio.to_thread(self.child.sendline, line)

    async def send_raw(self, keys: str) -> None:
        """Keys without Enter: a tab to complete a card name, ^C to interrupt."""
        await asyncio.to_thread(self.child.send, keys)

    def transcript(self) -> str:
        return self.log.getvalue()[-6000:]

    async def finish(self, timeout: float = WAIT_S) -> int:
        """Wait for the client to exit; its exit status."""
        await self.expect(pexpect.EOF, timeout)
        _, status = await asyncio.to_thread(os.waitpid, self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def kill(self) -> None:
        """Make sure the client is gone (a failed test may leave it running)."""
        if self.status is None:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            self.status = -signal.SIGKILL
        with contextlib.suppress(OSError):
            self.child.close()

    async def leave(self) -> None:
        """Quit, leaving the table for good (the client asks first), and exit 0."""
        await self.send("q")
        await self.expect(r"\[y/N\]")
        await self.send("y")
        await self.expect("You left the table")
        assert await self.finish() == 0

    # --- a scripted player ----------------------------------------------------

    async def next_turn(self) -> bool:
        """Wait for this player's turn (True) or the end of the game (False)."""
        return await self.expect([MY_DRAW, FINAL], timeout=60) == 0

    async def play_turn(self) -> None:
        """Draw, lay down what the hint suggests, discard the costliest card."""
        await self.send("d")
        await self.expect(r"You drew [^\r\n]*")
        await self.expect(HAND)
        hand = parse_hand(self.group(2))
        await self.send("h")
        if await self.expect([r"type: (m [^\r\n]*)", r"no meld in your hand yet"]) == 0:
            await self.send(self.group(1))
            await self.expect(HAND)
            hand = parse_hand(self.group(2))
        await self.send(f"x {discard_choice(hand)}")
        # Refused only when every card left is a joker: the turn timer then moves on.
        await self.expect([r"You discarded", FINAL, r"Refused: "])

    async def play_to_end(self, max_turns: int = 200) -> None:
        for _ in range(max_turns):
            if not await self.next_turn():
                return
            await self.play_turn()
        raise AssertionError(f"the game did not end:\n{self.transcript()}")


async def back_at_a_dealt_table(
    running: Servers,
    config_dir: Path,
    hand: str,
    drawn: str,
    *,
    options: table_pb2.TableOptions | None = None,
) -> Terminal:
    """`rummy play` back at a `cafe` table where it was dealt ``hand`` against a bot
    that takes its time, its first turn begun and ``drawn`` drawn from the stock."""
    order = deck_order(2, {0: [card(c) for c in hand.split()]}, stock=[card(drawn)])
    await seat_with_a_bot(running, config_dir, "cafe", order, options=options)
    term = rejoining(running, config_dir)
    try:
        await term.expect(SEATED)
        assert await term.next_turn()
        await term.send("d")
        await term.expect(f"You drew {Style(False).card(drawn)}")
    except BaseException:
        term.kill()
        raise
    return term
