"""A server interceptor for what every RPC shares: its metrics and its log context.

It times each call, counts it by its final status code, and binds a request id
(the client's `x-request-id`, else a new one), the method and the caller to the
structlog context of the task serving the call.
"""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog

from .metrics import RPC_DURATION, RPC_REQUESTS


def _split(method: str) -> tuple[str, str]:
    service, _, name = method.lstrip("/").partition("/")
    return service.rpartition(".")[2], name


def _code(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if error is None:
        return "OK"
    return "CANCELLED" if isinstance(error, BaseException) and context.cancelled() else "UNKNOWN"


def _request_id(context: grpc.aio.ServicerContext) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id":
            text = value.decode() if isinstance(value, bytes) else value
            return text[:64]
    return uuid.uuid4().hex[:16]


# grpcio ships no type hints, so its base class is `Any` to mypy.
class ObserveInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        service, method = _split(details.method)
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                structlog.contextvars.bind_contextvars(request_id=_request_id(context), rpc=method)
                started = time.perf_counter()
                error: BaseException | None = None
                try:
                    return await inner(request, context)
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    RPC_DURATION.labels(service, method).observe(time.perf_counter() - started)
                    RPC_REQUESTS.labels(service, method, _code(context, error)).inc()

            return grpc.unary_unary_rpc_method_handler(
                unary, handler.request_deserializer, handler.response_serializer
            )
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream
            if not inspect.isasyncgenfunction(inner_stream):
                # A handler that writes with context.write (grpc health's Watch).
                async def written(request: Any, context: grpc.aio.ServicerContext) -> None:
                    structlog.contextvars.bind_contextvars(
                        request_id=_request_id(context), rpc=method
                    )
                    error: BaseException | None = None
                    try:
                        await inner_stream(request, context)
                    except BaseException as exc:
                        error = exc
                        raise
                    finally:
                        RPC_REQUESTS.labels(service, method, _code(context, error)).inc()

                return grpc.unary_stream_rpc_method_handler(
                    written, handler.request_deserializer, handler.response_serializer
                )

            async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                structlog.contextvars.bind_contextvars(request_id=_request_id(context), rpc=method)
                error: BaseException | None = None
                try:
                    async for item in inner_stream(request, context):
                        yield item
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    RPC_REQUESTS.labels(service, method, _code(context, error)).inc()

            return grpc.unary_stream_rpc_method_handler(
                stream, handler.request_deserializer, handler.response_serializer
            )
        return handler
