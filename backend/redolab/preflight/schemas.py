"""API schemas of pasted pre-flight evidence."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from redolab.core.fields import OneLine, VisibleName
from redolab.preflight.service import MAX_TEXT_CHARACTERS


class EvidenceCreate(BaseModel):
    """A pasted output: `broker` (any DGMGRL VALIDATE command's output, the command recognised from its
    prompt line or its content) or `recovery_progress` (SQL*Plus output of SELECT * FROM
    V$RECOVERY_PROGRESS on the standby). `label` names it in the card and in errors."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["broker", "recovery_progress"]
    label: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), OneLine, VisibleName]
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARACTERS)]
