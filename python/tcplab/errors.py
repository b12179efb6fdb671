"""Errors that are the user's to fix (bad scenario, bad option): the CLI prints
them without a traceback and exits with status 2."""


class UserError(ValueError):
    """Invalid input: the message names what was wrong and what was expected."""


class EngineCannotRun(UserError):
    """A valid scenario that one engine cannot run: it uses a mechanism that engine
    does not have (ns-2 has no threshold dropper, for one). The message names the
    key path and the reason; `tcplab reproduce` turns it into the verdict "not run
    on this engine" and goes on with the other claims."""
