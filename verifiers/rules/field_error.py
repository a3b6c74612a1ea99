"""Cross-field validation errors that name the offending field.

A ``model_validator`` that raises ``ValueError`` produces an error located at the model
itself, so the client reads ``params: ...`` and must guess which key is wrong. Raising the
`ValidationError` built here instead puts the error at ``params.<field>``; pydantic keeps
its location and prefixes it when the model is nested.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError


def field_error(model: str, field: str, message: str, value: object) -> ValidationError:
    """A one-error `ValidationError` located at ``field``, to raise from a model validator."""
    detail = InitErrorDetails(
        type=PydanticCustomError("value_error", message),
        loc=(field,),
        input=value,
    )
    return ValidationError.from_exception_data(model, [detail])
