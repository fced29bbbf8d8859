"""The `mlxir` command's error policy: a problem with the user's input is one line on
stderr and a non-zero exit status, never a traceback."""

from __future__ import annotations


class CliError(Exception):
    """A problem with the user's input, reported as one line (exit status 1)."""


class UsageError(CliError):
    """A flag given a value it does not take (exit status 2, as argparse's own)."""

