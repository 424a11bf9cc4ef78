"""People with a config folder of their own (as `rummy` keeps one), who sign in at
the matchmaker and finish games on the real game service: what `rummy me`,
`history`, `top` and `replay` then read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

from clients.cli.connection import Connection
from clients.cli.identity import Identity
from tests.game.harness import Player, create_table, play_to_end, shuffled_deck
from tests.game.player_calls import training_game

from .harness import Servers, connected, sign_in


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    config_dir: Path
    player_id: str
    token: str

    def args(self, running: Servers) -> tuple[str, ...]:
        """The options that make `rummy` this person, against these servers."""
        return (
            *("--server", running.address, "--game", running.game_address),
            *("--config-dir", str(self.config_dir)),
        )

    async def connection(self, running: Servers) -> Connection:
        """The client's own connection, signed in, asking this game service."""
        conn = await connected(running.address, Identity(self.config_dir), self.name)
        conn.use_game(running.game_address)
        return conn


async def people(running: Servers, folder: Path, names: Sequence[str]) -> list[Person]:
    """Each name a device of its own under ``folder``, signed in once (named)."""
    found = []
    for name in names:
        config_dir = folder / name
        config_dir.mkdir(parents=True, exist_ok=True)
        device = f"device-{name.lower()}-0001"
        (config_dir / "device_id").write_text(device)
        Identity(config_dir).display_name(name)
        reply = await sign_in(running, device, name)
        found.append(Person(name, config_dir, reply.player_id, reply.token))
    return found


async def finished_game(
    running: Servers, seated: Sequence[Person], *, seed: int = 5, rounds: int = 1
) -> str:
    """A rated cafe game of ``seated`` (in that seat order) dealt from a fixed deck
    and played greedily to its end; its table id."""
    async with grpc.aio.insecure_channel(running.game_address) as channel:
        players = [Player(channel, p.token, p.player_id, p.name) for p in seated]
        table_id = await create_table(
            channel, players, deck_order=shuffled_deck(seed), rounds=rounds
        )
        await play_to_end(players, table_id)
    return table_id


async def game_left_at_once(running: Servers, person: Person) -> str:
    """An unrated game: ``person`` against a bot, left at once; its table id."""
    async with grpc.aio.insecure_channel(running.game_address) as channel:
        player = Player(channel, person.token, person.player_id, person.name)
        return await training_game(channel, player)
