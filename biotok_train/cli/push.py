"""``biotok-train push``: the same command as ``biotok push`` (an output folder to the Hub)."""

from __future__ import annotations

from biotok.cli.push import push

COMMANDS = (push,)

__all__ = ["COMMANDS"]
