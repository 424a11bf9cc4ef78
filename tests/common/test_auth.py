"""Bearer tokens: issue, verify, and every way a token is refused."""

from __future__ import annotations

import base64
import json

import jwt
import pytest

from services.common import auth
from services.common.auth import (
    Role,
    SecretError,
    TokenExpired,
    TokenInvalid,
    TokenMissing,
    TokenVerifier,
    issue_service_token,
    issue_token,
    load_secret,
    verify_token,
)

SECRET = "s" * 32
OTHER_SECRET = "o" * 32
NOW = 1_800_000_000.0


def test_player_token_round_trips() -> None:
    token = issue_token("player-1", secret=SECRET, ttl_s=60, now=NOW)
    claims = verify_token(token, secret=SECRET, now=NOW + 59)
    assert claims.subject == "player-1"
    assert claims.role is Role.PLAYER
    assert not claims.is_service
    assert (claims.issued_at, claims.expires_at) == (int(NOW), int(NOW) + 60)


def test_service_credential_is_distinct_from_player_tokens() -> None:
    token = issue_service_token("matchmaker", secret=SECRET, now=NOW)
    claims = verify_token(token, secret=SECRET, now=NOW)
    assert claims.role is Role.SERVICE
    assert claims.is_service
    assert claims.subject == "matchmaker"


def test_each_token_is_unique_even_within_one_second() -> None:
    first = issue_token("p", secret=SECRET, ttl_s=60, now=NOW)
    second = issue_token("p", secret=SECRET, ttl_s=60, now=NOW)
    assert first != second


def test_expired_at_the_expiry_instant() -> None:
    token = issue_token("p", secret=SECRET, ttl_s=60, now=NOW)
    with pytest.raises(TokenExpired) as caught:
        verify_token(token, secret=SECRET, now=NOW + 60)
    assert caught.value.reason == "TOKEN_EXPIRED"


def test_forged_with_another_secret_is_invalid_even_if_expired() -> None:
    token = issue_token("p", secret=OTHER_SECRET, ttl_s=60, now=NOW)
    for now in (NOW, NOW + 3600):
        with pytest.raises(TokenInvalid) as caught:
            verify_token(token, secret=SECRET, now=now)
        assert caught.value.reason == "TOKEN_INVALID"


def _tamper(token: str, **changes: object) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    raw = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{raw}.{signature}"


def test_edited_payload_breaks_the_signature() -> None:
    token = issue_token("p", secret=SECRET, ttl_s=60, now=NOW)
    with pytest.raises(TokenInvalid):
        verify_token(_tamper(token, role="svc"), secret=SECRET, now=NOW)
    with pytest.raises(TokenInvalid):
        verify_token(_tamper(token, exp=int(NOW) + 10**6), secret=SECRET, now=NOW + 61)


@pytest.mark.parametrize("token", ["abc", "a.b.c", "Bearer x", "..", "é"])
def test_malformed_is_invalid(token: str) -> None:
    with pytest.raises(TokenInvalid):
        verify_token(token, secret=SECRET, now=NOW)


def test_empty_is_missing() -> None:
    with pytest.raises(TokenMissing) as caught:
        verify_token("", secret=SECRET, now=NOW)
    assert caught.value.reason == "TOKEN_MISSING"


def _signed(payload: dict[str, object], *, algorithm: str = "HS256") -> str:
    return jwt.encode(payload, SECRET.encode(), algorithm=algorithm)


def _payload(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "iss": auth.ISSUER,
        "sub": "p",
        "role": "player",
        "iat": int(NOW),
        "exp": int(NOW) + 60,
        "jti": "x",
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


@pytest.mark.parametrize(
    "payload",
    [
        _payload(role="admin"),
        _payload(iss="someone-else"),
        _payload(sub=None),
        _payload(jti=None),
        _payload(role=None),
        _payload(exp=None),
        _payload(iat=int(NOW) + 3600),
        _payload(exp="tomorrow"),
    ],
    ids=["role", "issuer", "no-sub", "no-jti", "no-role", "no-exp", "future-iat", "text-exp"],
)
def test_claims_we_never_issue_are_invalid(payload: dict[str, object]) -> None:
    with pytest.raises(TokenInvalid):
        verify_token(_signed(payload), secret=SECRET, now=NOW)


# The same key signs with HS512 here, which PyJWT finds short for that hash.
@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_other_algorithms_are_refused() -> None:
    token = _signed(_payload(), algorithm="HS512")
    with pytest.raises(TokenInvalid):
        verify_token(token, secret=SECRET, now=NOW)
    unsigned = jwt.encode(_payload(), None, algorithm="none")
    with pytest.raises(TokenInvalid):
        verify_token(unsigned, secret=SECRET, now=NOW)


def test_small_clock_skew_is_tolerated() -> None:
    token = issue_token("p", secret=SECRET, ttl_s=60, now=NOW + auth.CLOCK_SKEW_S)
    assert verify_token(token, secret=SECRET, now=NOW).subject == "p"


def test_secret_comes_from_the_environment() -> None:
    assert load_secret({auth.SECRET_ENV: SECRET}) == SECRET
    with pytest.raises(SecretError):
        load_secret({})
    with pytest.raises(SecretError):
        load_secret({auth.SECRET_ENV: "short"})


def test_short_secrets_and_bad_arguments_are_refused() -> None:
    with pytest.raises(SecretError):
        issue_token("p", secret="short", ttl_s=60, now=NOW)
    with pytest.raises(ValueError):
        issue_token("", secret=SECRET, ttl_s=60, now=NOW)
    with pytest.raises(ValueError):
        issue_token("p", secret=SECRET, ttl_s=0, now=NOW)


def test_a_remembered_token_still_expires_on_time() -> None:
    verifier = TokenVerifier(SECRET)
    token = issue_token("p", secret=SECRET, ttl_s=60, now=NOW)
    assert verifier.verify(token, NOW).subject == "p"
    assert verifier.verify(token, NOW + 59).subject == "p"
    with pytest.raises(TokenExpired):
        verifier.verify(token, NOW + 60)


def test_a_remembered_token_is_not_valid_before_it_was_issued() -> None:
    verifier = TokenVerifier(SECRET)
    token = issue_token("p", secret=SECRET, ttl_s=600, now=NOW)
    verifier.verify(token, NOW)
    with pytest.raises(TokenInvalid):
        verifier.verify(token, NOW - 120)


def test_refused_tokens_are_refused_every_time() -> None:
    verifier = TokenVerifier(SECRET)
    forged = issue_token("p", secret=OTHER_SECRET, ttl_s=60, now=NOW)
    for _ in range(2):
        with pytest.raises(TokenInvalid):
            verifier.verify(forged, NOW)
    with pytest.raises(TokenMissing):
        verifier.verify("", NOW)


def test_the_verifier_remembers_a_bounded_number_of_tokens() -> None:
    verifier = TokenVerifier(SECRET, max_entries=3)
    tokens = [issue_token(f"p{i}", secret=SECRET, ttl_s=60, now=NOW) for i in range(5)]
    for token in tokens + tokens:
        verifier.verify(token, NOW)
    assert len(verifier) == 3
