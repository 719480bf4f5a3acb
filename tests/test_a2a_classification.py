"""How an agent's answer is classified (issue 22, A2A classification; compiler/probe_live).

A refusal is evidence of a policy only when a platform denial code rides with it; the canary's
clear value is found in any letter case and beside a digest-shaped trace id; an agent that drips
its answer is cut off at the probe's timeout, not at a per-read timeout."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from accord.compiler.probe_live.a2a import A2AError, classify_task, send_message
from accord.compiler.probe_live.canary import Canary
from accord.sandbox.standins.http import Handler, serve

CANARY = Canary("SUBJ-0042", masked=("2f1c" * 16,))
TRACE = "9" * 64


def _task(state: str, text: str = "", metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    parts = [{"kind": "text", "text": text}] if text else []
    return {
        "task": {
            "id": "t",
            "status": {"state": state},
            "artifacts": [{"parts": parts}],
            "metadata": metadata or {},
        }
    }


@pytest.mark.parametrize("state", ["TASK_STATE_REJECTED", "rejected"])
def test_a_rejection_without_a_denial_code_is_no_answer(state: str) -> None:
    got = classify_task(_task(state, "I cannot help with that."), CANARY, True)
    assert (got.disposition, got.kind) == (None, "no-answer"), got.detail


def test_a_rejection_with_a_platform_denial_code_is_denied() -> None:
    got = classify_task(_task("TASK_STATE_REJECTED", metadata={"sqlState": "42501"}), CANARY, True)
    assert got.disposition == "denied" and got.denial is not None, got.detail


@pytest.mark.parametrize(
    "text",
    [
        "The subject is subj-0042.",  # restated in another case
        f"SUBJ-0042 (trace {TRACE})",  # beside a 64-hex trace id
        f"trace {TRACE}: Subj-0042 and its digest {'2f1c' * 16}",  # beside its own masked form
    ],
)
def test_the_clear_value_is_clear(text: str) -> None:
    got = classify_task(_task("TASK_STATE_COMPLETED", text), CANARY, True)
    assert got.disposition == "clear", got.detail


class Drip(Handler):
    """Headers at once, then one byte of a valid answer every 0.2 s."""

    def do_POST(self) -> None:
        self.body()
        data = json.dumps({"jsonrpc": "2.0", "id": 1, "result": _task("completed")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        for byte in data:
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)


@pytest.mark.standin
def test_a_dripping_agent_is_cut_off_at_the_probe_timeout() -> None:
    with serve(Drip) as port:
        started = time.monotonic()
        with pytest.raises(A2AError, match="no answer from"):
            send_message(f"http://127.0.0.1:{port}/", "q", timeout=1.0)
        took = time.monotonic() - started
    # each byte arrives well within the per-read timeout; only the overall deadline stops it
    assert took < 3.0, took
    assert threading.active_count() < 50


@pytest.mark.parametrize(
    ("text", "salted", "expected"),
    [
        (f"Subject: {TRACE}", False, None),  # a trace id, or any digest: no evidence of masking
        ("Subject: " + "ab12" * 16, False, None),
        (f"trace {TRACE}; subject subj-0042", False, "clear"),  # the clear value is still clear
        (f"Subject: {TRACE}", True, "empty"),  # with the salt: not the canary's digest
        ("Subject: <digest>", True, "masked"),  # with the salt: the digest accord recomputes
    ],
)
@pytest.mark.standin
def test_a_hex_string_is_the_canarys_digest_only_when_accord_can_recompute_it(
    monkeypatch, text: str, salted: bool, expected: str | None
) -> None:
    """The reference model's subject_pseudonym mask, its salt set or not, asked through the
    A2A stand-in on 127.0.0.1."""
    from urllib.parse import quote

    from accord.compiler.meaning.semantics import apply_mask
    from accord.compiler.model.validate import load_project
    from accord.compiler.probe_live.canary import canary_for
    from tests.a2a_standin import a2a_standin, url
    from tests.conftest import ROOT

    if salted:
        monkeypatch.setenv("SUBJECT_SALT_SNOWFLAKE", "pepper")
    else:
        monkeypatch.delenv("SUBJECT_SALT_SNOWFLAKE", raising=False)
    model = load_project(ROOT / "policies").model
    canary = canary_for(model, "assay_results", "SUBJECT_ID", "SUBJ-0042")
    digest = apply_mask(model.masks["subject_pseudonym"], "SUBJ-0042", "pepper") or ""
    with a2a_standin() as server:
        path = "/message/" + quote(text.replace("<digest>", digest), safe="")
        got = classify_task(send_message(url(server, path), "q", timeout=5), canary, True)
    assert got.disposition == expected, got.detail
    if expected is None:
        assert "SUBJECT_SALT_SNOWFLAKE is not available here" in got.detail
