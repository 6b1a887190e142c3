"""The errors osbench raises on purpose, under one base class, so that a caller (the command
line among them) can tell a refused input or a missing resource from a bug.

Every refused argument is an :class:`ArgumentError` (a ``ValueError``: the value is wrong) or an
:class:`ArgumentTypeError` (a ``TypeError``: the kind of value is wrong), with the message
``name=value is not accepted: what is accepted``; the native engine raises the same classes.
A file that cannot be read (damaged, truncated, not what its name says) is a
:class:`TraceFileError`, naming the file and the place.
"""

from __future__ import annotations


class OsbenchError(Exception):
    """Base of every error osbench raises on purpose."""


class ArgumentError(OsbenchError, ValueError):
    """An argument's value is not accepted."""


class ArgumentTypeError(OsbenchError, TypeError):
    """An argument's type is not accepted."""


class TraceFileError(OsbenchError, ValueError):
    """A trace file that cannot be read. The message names the file and where it went wrong
    (a byte offset or a line number): ``path: where: what``."""


__all__ = ["ArgumentError", "ArgumentTypeError", "OsbenchError", "TraceFileError"]
