"""Domain errors that services raise and routes turn into 4xx responses."""

from __future__ import annotations


class FieldError(Exception):
    """A value conflicts with stored data (e.g. a name already taken); names the field."""

    def __init__(self, field: str, message: str, status_code: int = 409) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.status_code = status_code  # 409: conflicts with stored data; 422: unusable input


class NotFound(Exception):
    """The thing asked for does not exist."""
