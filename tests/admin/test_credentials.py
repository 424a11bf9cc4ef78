"""Each kind of token opens its own calls: an operator token the admin services
only, and nothing else opens those. Every call of every service is tried."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import symbol_database
from structlog.testing import capture_logs

from services.common.auth import Role, issue_operator_token, verify_token
from services.common.errors import error_info
from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, matchmaker_pb2
from tests.game.harness import SECRET, create_table, login, service_auth
from tests.matchmaker.harness import backend

from .harness import operator_auth

ROOT = Path(__file__).resolve().parents[2]
DENIED = grpc.StatusCode.PERMISSION_DENIED


def _request(method: Any, table_id: str) -> Any:
    """A well-formed request, so that only the caller is wrong."""
    cls = symbol_database.Default().GetSymbol(method.input_type.full_name)
    fields = {f.name for f in cls.DESCRIPTOR.fields}
    values: dict[str, Any] = {}
    if "table_id" in fields:
        values["table_id"] = table_id
    if "table_size" in fields:
        values["table_size"] = 2
    if "reason" in fields and method.name == "EndTable":
        values["reason"] = "stuck"
    if "player_id" in fields:
        values["player_id"] = "p-someone"
    return cls(**values)


async def _call(
    channel: grpc.aio.Channel, service: Any, method: Any, request: Any, metadata: Any
) -> tuple[grpc.StatusCode, str | None]:
    out = symbol_database.Default().GetSymbol(method.output_type.full_name)
    path = f"/{service.full_name}/{method.name}"
    try:
        if method.server_streaming:
            stream = channel.unary_stream(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=out.FromString,
            )(request, metadata=metadata, timeout=10)
            await stream.read()
            stream.cancel()
        else:
            await channel.unary_unary(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=out.FromString,
            )(request, metadata=metadata, timeout=10)
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        return error.code(), info.reason if info is not None else None
    return grpc.StatusCode.OK, None


async def test_only_an_operator_token_opens_the_admin_services(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        game = grpc.aio.insecure_channel(b.game_target)
        try:
            ana, bo = [await login(game, name) for name in ("Ana", "Bo")]
            table_id = await create_table(game, [ana, bo])
            expired = issue_operator_token("alice", secret=SECRET, ttl_s=60, now=time.time() - 3600)
            refused = {
                "player": (ana.auth, (DENIED, "OPERATOR_CREDENTIAL_REQUIRED")),
                "service": (service_auth(), (DENIED, "OPERATOR_CREDENTIAL_REQUIRED")),
                "none": ((), (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")),
                "expired": (
                    (("authorization", f"Bearer {expired}"),),
                    (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED"),
                ),
            }
            served = {"TableAdminService": game, "QueueAdminService": b.channel()}
            tried = 0
            with capture_logs() as logs:
                for name, channel in served.items():
                    service = admin_pb2.DESCRIPTOR.services_by_name[name]
                    for method in service.methods:
                        request = _request(method, table_id)
                        for who, (metadata, expected) in refused.items():
                            got = await _call(channel, service, method, request, metadata)
                            assert got == expected, (method.name, who, got)
                            tried += 1
                        # The operator gets past the door (an answer, or a refusal of
                        # what was asked: this player has no ticket).
                        got = await _call(channel, service, method, request, operator_auth())
                        assert got[1] not in ("OPERATOR_CREDENTIAL_REQUIRED", "TOKEN_MISSING")
            assert tried == 5 * 4
            refusals = [line for line in logs if line["event"] == "admin_refused"]
            assert {(r["who"], r["role"]) for r in refusals} == {
                (ana.player_id, "player"),
                ("matchmaker", "svc"),
            }
            assert len(refusals) == 5 * 2, "each refused use leaves a line"
            admin_methods = {
                m.name for s in admin_pb2.DESCRIPTOR.services_by_name.values() for m in s.methods
            }
            assert {r["rpc"] for r in refusals} == admin_methods
            view = await ana.view(table_id)
            # The operator's EndTable, and nothing else, changed the table.
            assert (view.version, view.result.note) == (2, "stuck")
        finally:
            await game.close()


async def test_an_operator_token_opens_no_call_of_the_public_or_internal_api(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn) as b:
        game = grpc.aio.insecure_channel(b.game_target)
        try:
            ana, bo = [await login(game, name) for name in ("Ana", "Bo")]
            table_id = await create_table(game, [ana, bo])
            operator = operator_auth()
            tried = 0
            served = ((game_pb2, game), (tables_pb2, game), (matchmaker_pb2, b.channel()))
            for module, channel in served:
                for service in module.DESCRIPTOR.services_by_name.values():
                    for method in service.methods:
                        request = _request(method, table_id)
                        got = await _call(channel, service, method, request, operator)
                        wanted = (
                            "SERVICE_CREDENTIAL_REQUIRED"
                            if module is tables_pb2
                            else "PLAYER_CREDENTIAL_REQUIRED"
                        )
                        assert got == (DENIED, wanted), (method.name, got)
                        tried += 1
            assert tried >= 12 + 2 + 5

            # Nor does it renew into a player's token for a player of the operator's name.
            (_, token), *_ = operator
            token = token.removeprefix("Bearer ")
            refresh = auth_pb2_grpc.AuthServiceStub(game).Refresh(
                auth_pb2.RefreshRequest(token=token), metadata=operator
            )
            with pytest.raises(grpc.aio.AioRpcError) as failure:
                await refresh
            info = error_info(failure.value)
            assert failure.value.code() == DENIED
            assert info is not None and info.reason == "PLAYER_CREDENTIAL_REQUIRED"
        finally:
            await game.close()


def test_rummy_admin_token_mints_an_operator_token_from_the_servers_secret(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "services.common.operator_token", "alice", "--hours", "1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUMMY_")}
    done = subprocess.run(
        command,
        env=env | {"RUMMY_TOKEN_SECRET": SECRET},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    claims = verify_token(done.stdout.strip(), secret=SECRET, now=time.time())
    assert (claims.subject, claims.role) == ("alice", Role.OPERATOR)
    assert claims.expires_at - claims.issued_at == 3600

    # `make run`'s kept secret, when none is in the environment.
    data = tmp_path / "pg"
    kept = tmp_path / "token-secret"
    kept.write_text(SECRET + "\n")
    kept.chmod(0o600)
    done = subprocess.run(
        command,
        env=env | {"RUMMY_DATA_DIR": str(data)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert verify_token(done.stdout.strip(), secret=SECRET, now=time.time()).is_operator

    # No secret anywhere: a sentence, no token, and none made up.
    kept.unlink()
    done = subprocess.run(
        command, env=env | {"RUMMY_DATA_DIR": str(data)}, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and not done.stdout
    assert "RUMMY_TOKEN_SECRET is not set" in done.stderr
    assert not kept.exists()
