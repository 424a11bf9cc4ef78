"""`rummy.v1.AuthService`: mobile-style sign-in with a device id."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import asyncpg
import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from services.common import errors
from services.common.auth import PLAYER_TTL_S, TokenError, issue_token, verify_token
from services.common.errors import DB_ERRORS
from services.common.identity import current_claims, require_player
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc
from services.common.wire.reasons import ServiceReason

MAX_NAME = 32


def _expiry(ttl_s: int, now: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromSeconds(int(now) + ttl_s)
    return stamp


def display_name_of(text: str) -> str | None:
    """A display name as sign-in takes it (runs of spaces made one, none at either
    end), if it is one: 1 to `MAX_NAME` printable characters; else None."""
    name = " ".join(text.split())
    return name if 1 <= len(name) <= MAX_NAME and name.isprintable() else None


DEVICE_ID = re.compile(r"[!-~]{8,128}")
"""What `LoginRequest.device_id` is: 8 to 128 visible ASCII characters (no space),
taken exactly as sent."""


class AuthServicer(auth_pb2_grpc.AuthServiceServicer):
    def __init__(self, pool: asyncpg.Pool, *, secret: str, ttl_s: int = PLAYER_TTL_S) -> None:
        self._pool = pool
        self._secret = secret
        self._ttl_s = ttl_s

    async def Login(
        self, request: auth_pb2.LoginRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> auth_pb2.LoginResponse:
        device = request.device_id  # as sent: a padded id is no other device's
        name = display_name_of(request.display_name)
        if not DEVICE_ID.fullmatch(device):
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.DEVICE_ID_INVALID,
                "This device could not be identified: its id must be 8 to 128 visible"
                " ASCII characters, with no spaces.",
            )
        if name is None:
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.NAME_INVALID,
                f"Choose a name of 1 to {MAX_NAME} characters.",
            )
        try:
            player_id = await self._pool.fetchval(
                "INSERT INTO players (id, device_id, display_name) VALUES ($1, $2, $3)"
                " ON CONFLICT (device_id) DO UPDATE SET display_name = EXCLUDED.display_name"
                " RETURNING id",
                f"p-{uuid.uuid4().hex[:16]}",
                device,
                name,
            )
        except DB_ERRORS:
            await errors.abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                ServiceReason.DATABASE_UNAVAILABLE,
                "Sign-in is briefly unavailable: try again in a moment.",
            )
        now = time.time()
        token = issue_token(player_id, secret=self._secret, ttl_s=self._ttl_s, now=now)
        return auth_pb2.LoginResponse(
            token=token, expires_at=_expiry(self._ttl_s, now), player_id=player_id
        )

    async def Refresh(
        self, request: auth_pb2.RefreshRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> auth_pb2.RefreshResponse:
        # Only a player's token renews into a player's token: never a service's or
        # an operator's, whose subject is no player.
        await require_player(context)
        caller = current_claims()
        now = time.time()
        try:
            claims = verify_token(request.token, secret=self._secret, now=now)
        except TokenError:
            claims = None
        if claims is None or claims.subject != caller.subject or not claims.is_player:
            await errors.abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                ServiceReason.TOKEN_INVALID,
                "Your sign-in is not valid. Please sign in again.",
            )
        token = issue_token(claims.subject, secret=self._secret, ttl_s=self._ttl_s, now=now)
        return auth_pb2.RefreshResponse(
            token=token, expires_at=_expiry(self._ttl_s, now), player_id=claims.subject
        )
