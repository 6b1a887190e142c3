"""The errors osbench raises on purpose, under one base class, so that a caller (the command
line among them) can tell a refused input or a missing resource from a bug."""

from __future__ import annotations


class OsbenchError(Exception):
    """Base of every error osbench raises on purpose."""


__all__ = ["OsbenchError"]
