"""Private tables at the terminal: one player hosts and is told an invite code, a
friend joins with it, and both are seated at the same table."""

from __future__ import annotations

from pathlib import Path

from .harness import FINAL, TABLE_ID, Terminal, a_friend_takes_the_seat, servers


async def test_a_friend_joins_a_hosted_table_with_its_invite_code(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        host = Terminal(
            *("host", "--server", running.address, "--rules", "rami51", "--opening", "30"),
            *("--name", "Hana", "--config-dir", str(tmp_path / "host")),
        )
        guest: Terminal | None = None
        try:
            await host.expect(
                r"Private 2-player rami51 table \(opening 30\) open\. Invite code: (\w+)"
            )
            code = host.group(1)
            # Friends are told the matchmaker too: this one is not the default.
            await host.expect(rf"Friends join with: rummy join {code} --server {running.address}\r")
            guest = Terminal(
                *("join", code.lower(), "--server", running.address),
                *("--name", "Gus", "--config-dir", str(tmp_path / "guest")),
            )
            await guest.expect(rf"Seated at the private 2-player rami51 table {code}")
            await guest.expect(TABLE_ID)
            table_id = guest.group(1)
            await host.expect(TABLE_ID)
            assert host.group(1) == table_id
            # The host resigns: the friend's game ends, and both clients stop.
            await host.leave()
            await guest.expect(FINAL)
            assert await guest.finish() == 0
        finally:
            host.kill()
            if guest is not None:
                guest.kill()


async def test_an_unknown_invite_code_says_so(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        guest = Terminal(
            *("join", "NOPE42", "--server", running.address, "--config-dir", str(tmp_path))
        )
        try:
            await guest.expect(r"Error: [^\r\n]*\[INVITE_NOT_FOUND\]")
            assert await guest.finish() == 1
        finally:
            guest.kill()


async def test_joining_ones_own_table_from_the_same_device_leaves_it_open(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        host = Terminal(*("host", "--server", running.address, "--config-dir", str(tmp_path)))
        same_device: Terminal | None = None
        try:
            await host.expect(r"Invite code: (\w+)")
            code = host.group(1)
            same_device = Terminal(
                *("join", code, "--server", running.address, "--config-dir", str(tmp_path))
            )
            await same_device.expect(rf"already waiting at private table {code}")
            await same_device.expect(r"\[PRIVATE_TABLE_OPEN\]")
            assert await same_device.finish() == 1
            # The table is still open: a friend on another device gets the seat.
            await a_friend_takes_the_seat(running, code, host, tmp_path / "friend")
        finally:
            host.kill()
            if same_device is not None:
                same_device.kill()
