"""Bearer tokens: HS256 JSON Web Tokens signed with one secret shared by every replica.

A player gets a token from ``AuthService/Login`` and sends it as
``authorization: Bearer <token>`` on every other call. The matchmaker uses a
*service credential*: a token of the same format whose ``role`` is ``svc``,
which the internal calls (``rummy.internal.v1``) demand and which a
player can never obtain from Login. The people who run the service use an
*operator token* (role ``operator``, minted by ``rummy-admin-token``): only
the admin services (``rummy.admin.v1``) take it, and they take nothing else.

The secret comes from the environment variable ``RUMMY_TOKEN_SECRET`` (at
least 32 bytes, the HS256 key size; for example ``openssl rand -hex 32``).
Every game and matchmaker replica must share it, so that a token issued by
one is accepted by all. Rotating it signs every player out.

Time is passed in (``now``, Unix seconds) rather than read here, so tests can
issue tokens in the past or the future without sleeping or patching clocks.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import jwt

from services.common.wire.reasons import ServiceReason

SECRET_ENV = "RUMMY_TOKEN_SECRET"
MIN_SECRET_BYTES = 32
"""HS256 keys shorter than the hash output (256 bits) weaken the signature."""

ALGORITHM = "HS256"
ISSUER = "rummy"
PLAYER_TTL_S = 24 * 3600
"""A day: long enough for an evening of play, short enough that a leaked token
soon dies. Apps call Refresh before it runs out."""
SERVICE_TTL_S = 3600
"""Services mint their own credential from the shared secret and renew it, so
it can be short-lived."""
OPERATOR_TTL_S = 8 * 3600
"""A working day: an operator mints a token when they need one."""
CLOCK_SKEW_S = 30
"""Tolerated difference between replicas' clocks for a token's issue time."""


class Role(StrEnum):
    PLAYER = "player"
    SERVICE = "svc"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says about its bearer."""

    subject: str
    """The player id; the service's name for a service credential, the
    operator's for an operator token."""
    role: Role
    issued_at: int
    expires_at: int
    token_id: str

    @property
    def is_service(self) -> bool:
        return self.role is Role.SERVICE

    @property
    def is_player(self) -> bool:
        return self.role is Role.PLAYER

    @property
    def is_operator(self) -> bool:
        return self.role is Role.OPERATOR


class TokenError(Exception):
    """A token was refused. ``reason`` is the stable code sent to clients."""

    reason: ClassVar[ServiceReason] = ServiceReason.TOKEN_INVALID


class TokenMissing(TokenError):
    reason = ServiceReason.TOKEN_MISSING


class TokenExpired(TokenError):
    reason = ServiceReason.TOKEN_EXPIRED


class TokenInvalid(TokenError):
    """Forged, malformed, signed with another secret or algorithm, or with
    claims this service does not issue."""

    reason = ServiceReason.TOKEN_INVALID


class SecretError(ValueError):
    """The signing secret is missing or too short."""


def load_secret(environ: Mapping[str, str] = os.environ) -> str:
    """The signing secret from ``RUMMY_TOKEN_SECRET``; refuses a missing or short one."""
    secret = environ.get(SECRET_ENV, "")
    if not secret:
        raise SecretError(f"{SECRET_ENV} is not set: every replica needs the same signing secret")
    _check_secret(secret)
    return secret


def _check_secret(secret: str) -> bytes:
    key = secret.encode()
    if len(key) < MIN_SECRET_BYTES:
        raise SecretError(f"the token secret must be at least {MIN_SECRET_BYTES} bytes")
    return key


def _issue(subject: str, role: Role, *, secret: str, ttl_s: int, now: float) -> str:
    if not subject:
        raise ValueError("a token needs a subject")
    if ttl_s <= 0:
        raise ValueError("a token needs a positive lifetime")
    issued_at = int(now)
    payload = {
        "iss": ISSUER,
        "sub": subject,
        "role": role.value,
        "iat": issued_at,
        "exp": issued_at + ttl_s,
        # A unique id makes every token distinct (a refresh within the same
        # second still yields a new token) and gives revocation a handle.
        "jti": secrets.token_hex(8),
    }
    return jwt.encode(payload, _check_secret(secret), algorithm=ALGORITHM)


def issue_token(player_id: str, *, secret: str, ttl_s: int = PLAYER_TTL_S, now: float) -> str:
    """A player's bearer token, valid from ``now`` for ``ttl_s`` seconds."""
    return _issue(player_id, Role.PLAYER, secret=secret, ttl_s=ttl_s, now=now)


def issue_service_token(
    service: str, *, secret: str, ttl_s: int = SERVICE_TTL_S, now: float
) -> str:
    """A service credential (role ``svc``) for internal calls, e.g. ``"matchmaker"``."""
    return _issue(service, Role.SERVICE, secret=secret, ttl_s=ttl_s, now=now)


def issue_operator_token(name: str, *, secret: str, ttl_s: int = OPERATOR_TTL_S, now: float) -> str:
    """An operator token (role ``operator``) for the admin services, naming who holds it."""
    return _issue(name, Role.OPERATOR, secret=secret, ttl_s=ttl_s, now=now)


def verify_token(token: str, *, secret: str, now: float) -> Claims:
    """Check the signature, then the claims against ``now``.

    Raises ``TokenMissing`` for an empty token, ``TokenExpired`` once
    ``expires_at <= now``, and ``TokenInvalid`` for anything else wrong.
    A forged token is always ``TokenInvalid``, even if it is also expired,
    because the signature is checked first.
    """
    if not token:
        raise TokenMissing("no bearer token")
    key = _check_secret(secret)
    try:
        payload: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            # Time claims are checked below against the injected `now`;
            # PyJWT would read the wall clock.
            options={
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
                "require": ["iss", "sub", "role", "iat", "exp", "jti"],
            },
        )
    except jwt.PyJWTError as error:
        raise TokenInvalid(str(error)) from error
    return _claims(payload, now)


def _claims(payload: dict[str, Any], now: float) -> Claims:
    issued_at, expires_at = payload["iat"], payload["exp"]
    subject, role, token_id = payload["sub"], payload["role"], payload["jti"]
    if not all(isinstance(value, int) for value in (issued_at, expires_at)):
        raise TokenInvalid("time claims must be integers")
    if not all(isinstance(value, str) and value for value in (subject, role, token_id)):
        raise TokenInvalid("sub, role and jti must be non-empty strings")
    try:
        parsed_role = Role(role)
    except ValueError:
        raise TokenInvalid(f"unknown role {role!r}") from None
    if issued_at > now + CLOCK_SKEW_S:
        raise TokenInvalid("token issued in the future")
    if expires_at <= now:
        raise TokenExpired("token expired")
    return Claims(subject, parsed_role, issued_at, expires_at, token_id)


class TokenVerifier:
    """`verify_token` with a memory: a token's signature is checked once.

    Apps send the same token on every call; HMAC-checking and decoding it each
    time is most of what an interceptor costs. The time claims are still
    checked on every call, so a remembered token expires on time. Bounded: the
    oldest entries go first."""

    def __init__(self, secret: str, *, max_entries: int = 10_000) -> None:
        self._secret = secret
        self._max_entries = max_entries
        self._known: dict[str, Claims] = {}

    def __len__(self) -> int:
        return len(self._known)

    def verify(self, token: str, now: float) -> Claims:
        claims = self._known.get(token)
        if claims is None:
            claims = verify_token(token, secret=self._secret, now=now)
            if len(self._known) >= self._max_entries:
                del self._known[next(iter(self._known))]
            self._known[token] = claims
            return claims
        if claims.issued_at > now + CLOCK_SKEW_S:
            raise TokenInvalid("token issued in the future")
        if claims.expires_at <= now:
            raise TokenExpired("token expired")
        return claims
