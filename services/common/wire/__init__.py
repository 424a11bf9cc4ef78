"""What the services and their clients share beyond the generated code: one
refusal type and the catalogue of the services' reasons, table options and bot
levels as the API carries them.

The one part of `services.common` a client may import. It imports only grpc,
the generated code (`services.common.pb`) and the rules engine's public package
(`services.game.rules`): never the database, the servers or a client (the
import contracts in pyproject.toml hold it to that).
"""
