"""The ns-2 backend's errors (every module of it raises them)."""

from __future__ import annotations

from tcplab.errors import EngineCannotRun, UserError

class Ns2Error(UserError):
    """ns-2 is missing or failed, or the scenario uses something the export
    cannot express in ns-2."""


class Ns2CannotRun(Ns2Error, EngineCannotRun):
    """A scenario the packet engine runs but ns-2 has no counterpart for (or the
    export does not write): not the user's mistake, a limit of this engine."""
