"""Errors that are the user's to fix (bad scenario, bad option): the CLI prints
them without a traceback and exits with status 2."""


class UserError(ValueError):
    """Invalid input: the message names what was wrong and what was expected."""
