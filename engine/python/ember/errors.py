"""Exceptions raised by ember, named and numbered as TensorFlow's ``tf.errors``.

Every failure of ember's engine surfaces as an :class:`OpError` subclass chosen by its
canonical code (``NotFoundError`` for ``NOT_FOUND``, ...), carrying ``.code`` (the integer
code, also as ``.error_code``, TensorFlow's name) and ``.message``.

Where ``tf.compat.v1.Session`` raises a built-in exception instead, ember raises the OpError
subclass that also derives from that built-in, so code written against either still catches
it: unknown names given to ``Session.run`` raise a ``NotFoundError`` that is a ``ValueError``,
and a closed session raises a ``CancelledError`` that is a ``RuntimeError``.
"""

from __future__ import annotations

from typing import Any

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed ember operation: ``code`` (TensorFlow's canonical code) and ``message``."""

    _code: int = UNKNOWN

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        if error_code is not None:
            self._code = error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def code(self) -> int:
        return self._code

    @property
    def error_code(self) -> int:
        return self._code

    @property
    def node_def(self) -> Any:
        return self._node_def

    @property
    def op(self) -> Any:
        return self._op

    def __str__(self) -> str:
        return self._message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._code, self._message))


class CancelledError(OpError):
    _code = CANCELLED


class UnknownError(OpError):
    _code = UNKNOWN


class InvalidArgumentError(OpError):
    _code = INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    _code = DEADLINE_EXCEEDED


class NotFoundError(OpError):
    _code = NOT_FOUND


class AlreadyExistsError(OpError):
    _code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    _code = PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    _code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    _code = FAILED_PRECONDITION


class AbortedError(OpError):
    _code = ABORTED


class OutOfRangeError(OpError):
    _code = OUT_OF_RANGE


class UnimplementedError(OpError):
    _code = UNIMPLEMENTED


class InternalError(OpError):
    _code = INTERNAL


class UnavailableError(OpError):
    _code = UNAVAILABLE


class DataLossError(OpError):
    _code = DATA_LOSS


class UnauthenticatedError(OpError):
    _code = UNAUTHENTICATED


_BY_CODE: dict[int, type[OpError]] = {
    cls._code: cls
    for cls in (
        CancelledError,
        UnknownError,
        InvalidArgumentError,
        DeadlineExceededError,
        NotFoundError,
        AlreadyExistsError,
        PermissionDeniedError,
        ResourceExhaustedError,
        FailedPreconditionError,
        AbortedError,
        OutOfRangeError,
        UnimplementedError,
        InternalError,
        UnavailableError,
        DataLossError,
        UnauthenticatedError,
    )
}


class _LookupNotFoundError(NotFoundError, ValueError):
    """An unknown feed, fetch or target name given to Session.run (tf.compat.v1: ValueError)."""


class _ClosedSessionError(CancelledError, RuntimeError):
    """Session.run after close (tf.compat.v1: RuntimeError)."""


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    """The OpError subclass for a canonical code (UnknownError for codes ember does not know)."""
    return _BY_CODE.get(error_code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    return cls._code


def _from_status(code: int, message: str, flavor: int = 0) -> OpError:
    """Called by the extension for every failed Status (flavor: 1 a name lookup, 2 closed)."""
    cls: type[OpError] = exception_type_from_error_code(code)
    if flavor == 1 and cls is NotFoundError:
        cls = _LookupNotFoundError
    elif flavor == 2 and cls is CancelledError:
        cls = _ClosedSessionError
    return cls(None, None, message, code)


def _rebuild(code: int, message: str) -> OpError:
    return exception_type_from_error_code(code)(None, None, message, code)


__all__ = [
    "ABORTED",
    "ALREADY_EXISTS",
    "CANCELLED",
    "DATA_LOSS",
    "DEADLINE_EXCEEDED",
    "FAILED_PRECONDITION",
    "INTERNAL",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "OK",
    "OUT_OF_RANGE",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "UNAUTHENTICATED",
    "UNAVAILABLE",
    "UNIMPLEMENTED",
    "UNKNOWN",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "error_code_from_exception_type",
    "exception_type_from_error_code",
]
