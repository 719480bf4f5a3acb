"""Canonical JSON and its SHA-256: keys sorted, no whitespace, UTF-8. The one definition the
probe result file's seal, agent-card digests and the mesh manifest share."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(doc: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``doc``."""
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def sealed_digest(doc: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``doc`` without its ``sha256`` key (a sealed file)."""
    return sha256_of({k: v for k, v in doc.items() if k != "sha256"})
