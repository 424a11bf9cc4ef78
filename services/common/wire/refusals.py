"""The one refusal type of the services and their clients: a gRPC status code, a
stable reason (a `ServiceReason`, the engine's `Reason`, or a client's own) and
a sentence a player understands, plus the ErrorInfo metadata that goes with it.

A service raises it and its servicer ends the call with it as a rich status
(`services.common.errors.abort`); a client reads one back from a failed call."""

from __future__ import annotations

import json
from collections.abc import Mapping

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


class Refusal(Exception):
    """A refused call: its code, reason and sentence (and ErrorInfo metadata)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = str(reason)
        self.message = message
        self.metadata = dict(metadata or {})

    def __str__(self) -> str:
        return f"{self.message} [{self.reason}]" if self.reason else self.message

    @classmethod
    def of_call(cls, error: grpc.RpcError) -> Refusal:
        """The refusal a failed call (sync or grpc.aio) carries: its code, sentence,
        and the reason and metadata of its ErrorInfo (none when it has none)."""
        code: grpc.StatusCode = error.code()
        message: str = error.details() or code.name
        try:
            status = rpc_status.from_call(error)
        except ValueError:
            # The rich status contradicts the plain one: trust neither detail.
            status = None
        if status is not None:
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return cls(code, info.reason, message, dict(info.metadata))
        return cls(code, "", message)

    def to_json(self) -> str:
        """The refusal as kept with a request id, so a retry gets the same answer."""
        return json.dumps({"code": self.code.name, "reason": self.reason, "message": self.message})

    @classmethod
    def from_json(cls, text: str) -> Refusal:
        doc = json.loads(text)
        return cls(grpc.StatusCode[doc["code"]], doc["reason"], doc["message"])
