"""`--tls`: the client talks TLS to servers behind a TLS gateway.

The gateway here is a small TLS-terminating proxy in front of each real server,
with a certificate made for the test; the client trusts it through gRPC's
GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, as it would trust a public gateway through
the system's root certificates."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from clients.cli.reach import unreachable_text

from .harness import TABLE_ID, Terminal, run_cli, servers


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost, and its key."""
    openssl = shutil.which("openssl")
    assert openssl, "openssl is needed to make the test's certificate"
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@dataclass
class Gateway:
    port: int
    handshakes: int = 0


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@asynccontextmanager
async def tls_gateway(backend: str, cert: Path, key: Path) -> AsyncIterator[Gateway]:
    """TLS (HTTP/2 by ALPN, as gRPC requires) in front, plaintext to ``backend``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    host, _, port = backend.rpartition(":")
    gateway = Gateway(0)
    pipes: set[asyncio.Task[None]] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        gateway.handshakes += 1
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        both = [
            asyncio.create_task(_pipe(reader, up_writer)),
            asyncio.create_task(_pipe(up_reader, writer)),
        ]
        pipes.update(both)
        await asyncio.gather(*both)

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    gateway.port = server.sockets[0].getsockname()[1]
    try:
        yield gateway
    finally:
        server.close()
        for task in pipes:
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)


async def test_bots_play_through_tls_gateways(fresh_dsn: str, tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    async with (
        servers(fresh_dsn) as running,
        tls_gateway(running.address, cert, key) as matchmaker,
        tls_gateway(running.game_address, cert, key) as game,
    ):
        code, out = await run_cli(
            *("bots", "2", "--games", "1", "--tls"),
            *("--server", f"localhost:{matchmaker.port}", "--game", f"localhost:{game.port}"),
            env={"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(cert)},
        )
    assert code == 0, out
    assert re.search(r"games finished\s+1\b", out) and re.search(r"errors\s+0\b", out), out
    # Both servers were reached through their gateway: `--game` replaced the match's address.
    assert matchmaker.handshakes > 0 and game.handshakes > 0


@pytest.mark.parametrize("command", ["play", "host", "join", "watch", "bots"])
def test_every_command_that_connects_takes_tls_and_game(command: str) -> None:
    from clients.cli.main import build_parser

    extra = {"join": ["CODE"], "watch": ["TABLE"], "bots": ["2"]}.get(command, [])
    args = build_parser().parse_args([command, *extra, "--tls", "--game", "g:1"])
    assert args.tls is True and args.game == "g:1"


async def test_the_hosts_invite_is_a_command_that_reaches_the_same_servers(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the hint was `rummy join CODE` whatever --server, --game and --tls the
    host needed: a friend who typed it reached no table."""
    cert, key = certificate(tmp_path)
    trust = {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(cert)}
    async with (
        servers(fresh_dsn) as running,
        tls_gateway(running.address, cert, key) as matchmaker,
        tls_gateway(running.game_address, cert, key) as game,
    ):
        reach = (
            *("--server", f"localhost:{matchmaker.port}"),
            *("--game", f"localhost:{game.port}", "--tls"),
        )
        host = Terminal("host", *reach, "--config-dir", str(tmp_path / "host"), env=trust)
        friend: Terminal | None = None
        try:
            await host.expect(r"Invite code: (\w+)")
            code = host.group(1)
            await host.expect(r"Friends join with: (rummy [^\r\n]*)\r")
            told = host.group(1)
            assert told == f"rummy join {code} {' '.join(reach)}"
            # The friend types exactly that (on their own device).
            words = shlex.split(told)[1:]
            friend = Terminal(*words, "--config-dir", str(tmp_path / "friend"), env=trust)
            await friend.expect(TABLE_ID)
            table_id = friend.group(1)
            await host.expect(TABLE_ID)
            assert host.group(1) == table_id
        finally:
            host.kill()
            if friend is not None:
                friend.kill()


@pytest.mark.parametrize("command", ["play", "host", "watch"])
async def test_tls_to_a_plaintext_server_is_told_in_one_sentence(
    fresh_dsn: str, tmp_path: Path, command: str
) -> None:
    """Before, gRPC's own log lines filled the screen for a minute of retries, and
    the error that ended it was gRPC's too."""
    extra = ["00000000-0000-0000-0000-000000000001"] if command == "watch" else []
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *(command, *extra, "--server", running.address, "--tls"),
            *("--config-dir", str(tmp_path)),
        )
    assert code == 1, out
    assert out.splitlines() == [
        f"Error: The server at {running.address} did not answer TLS: if it is a plaintext"
        " server (one on this machine, say), run without --tls. [TLS_HANDSHAKE_FAILED]"
    ], out


async def test_a_plaintext_game_service_behind_tls_flags_is_named(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """The matchmaker answers TLS (through its gateway), the game service named by
    --game does not: the sentence names the game service."""
    cert, key = certificate(tmp_path)
    async with (
        servers(fresh_dsn) as running,
        tls_gateway(running.address, cert, key) as matchmaker,
    ):
        code, out = await run_cli(
            *("watch", "00000000-0000-0000-0000-000000000001", "--tls"),
            *("--server", f"localhost:{matchmaker.port}", "--game", running.game_address),
            *("--config-dir", str(tmp_path)),
            env={"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(cert)},
        )
    assert code == 1, out
    assert out.splitlines() == [
        f"Cannot watch this table: The server at {running.game_address} did not answer TLS:"
        " if it is a plaintext server (one on this machine, say), run without --tls."
        " [TLS_HANDSHAKE_FAILED]"
    ], out


async def test_a_certificate_not_trusted_here_is_told_in_one_sentence(
    fresh_dsn: str, tmp_path: Path
) -> None:
    cert, key = certificate(tmp_path)  # and not made trusted for the client
    async with servers(fresh_dsn) as running, tls_gateway(running.address, cert, key) as gateway:
        code, out = await run_cli(
            *("play", "--server", f"localhost:{gateway.port}", "--tls"),
            *("--config-dir", str(tmp_path)),
        )
    assert code == 1, out
    assert out.splitlines() == [
        f"Error: The TLS certificate of localhost:{gateway.port} is not trusted here (it is"
        " checked against the system's root certificates). [TLS_HANDSHAKE_FAILED]"
    ], out


async def test_plaintext_to_a_tls_server_is_told_in_one_sentence(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the client retried for a minute ("Connection lost"), as for a server
    that is down: a TLS gateway closes a plaintext connection at once, every time."""
    cert, key = certificate(tmp_path)
    async with servers(fresh_dsn) as running, tls_gateway(running.address, cert, key) as gateway:
        code, out = await run_cli(
            *("play", "--server", f"localhost:{gateway.port}"),
            *("--config-dir", str(tmp_path)),
        )
    assert code == 1, out
    *before, last = out.splitlines()
    assert last == (
        f"Error: The server at localhost:{gateway.port} closes plaintext connections at"
        " once: if it is behind TLS (a public address, say), run with --tls. [PLAINTEXT_REFUSED]"
    ), out
    # A machine too busy to answer in time gets the waiting notices first, nothing else.
    waiting = re.compile(r"Trying again in \d+ s \(Ctrl-C gives up\)…")
    notice = unreachable_text(f"localhost:{gateway.port}")
    assert all(line == notice or waiting.fullmatch(line) for line in before), out
