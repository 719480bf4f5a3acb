"""The default timeouts of live connections, in seconds: the standard library only, so that the
command line's shared options name them without importing the connection machinery
(:mod:`~compiler.connect.config` re-exports them)."""

from __future__ import annotations

DEFAULT_CONNECT_TIMEOUT = 30
DEFAULT_STATEMENT_TIMEOUT = 300
