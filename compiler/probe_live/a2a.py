"""Asking an agent surface over A2A, and classifying what comes back.

The request is A2A 1.0 JSON-RPC ``SendMessage`` (``message/send`` is the 0.3 name) with the
``A2A-Version: 1.0`` header set explicitly: an agent that receives none must assume the
pre-rename 0.3 protocol (a2a-sdk ``utils/version_validator.py``: "If the header is missing or
empty, it is interpreted as '0.3'"). The send is blocking (``configuration.returnImmediately:
false``), so a task still ``SUBMITTED`` or ``WORKING`` when it returns is a fault. Field names
follow ``specification/a2a.proto`` (a2a-sdk 1.3 ``types/a2a_pb2.pyi``): ``messageId``,
``role: ROLE_USER``, ``parts: [{text}]``; the result is ``{task}`` or ``{message}``; a task has
``status.state``, ``status.message``, ``artifacts[].parts`` and ``metadata``.

Every task state has one row in :data:`TASK_STATES` (the nine of the proto, and the 0.3
spellings); anything else is a fault. The canary's clear value outranks a denial code: a task
that shows it is ``clear`` whatever code rides in its metadata or data parts (the value left
the agent). A fault (:func:`classify_task` kind ``fault``) is reported as a probe that did not
run.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any, Literal

from accord.compiler.connect.denials import DenialCode, find_denial
from accord.compiler.core.deadline import DeadlinePassed, read_by
from accord.compiler.core.jsonfile import depth_problem
from accord.compiler.core.secrets import redact
from accord.compiler.probe_live.canary import Canary

A2A_VERSION = "1.0"
METHOD = "SendMessage"
#: an answer from an agent is read up to this size (a bigger one is a fault)
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

#: answer: the task holds an answer to classify; denial: the platform or agent refused;
#: code-decides: a denial when a denial code rides along, else a fault; no-answer: nothing was
#: answered (never an empty success); human: needs a human, not an answer; fault: the
#: exchange itself is broken
Kind = Literal["answer", "denial", "code-decides", "no-answer", "human", "fault"]

#: every task state (A2A 1.0 proto names, and their 0.3 wire spellings) -> what it means
TASK_STATES: dict[str, tuple[Kind, str]] = {
    "TASK_STATE_COMPLETED": ("answer", "completed: an answer, unless a denial code rides in it"),
    "TASK_STATE_FAILED": ("code-decides", "failed: a denial only when a denial code says so"),
    "TASK_STATE_REJECTED": (
        "code-decides",
        "rejected: the agent refused to answer, a denial only when a denial code says so",
    ),
    "TASK_STATE_CANCELED": ("no-answer", "canceled: no answer (never an empty success)"),
    "TASK_STATE_INPUT_REQUIRED": ("human", "input required: needs a human, not an answer"),
    "TASK_STATE_AUTH_REQUIRED": ("human", "auth required: needs a human, not an answer"),
    "TASK_STATE_SUBMITTED": ("fault", "submitted: still pending after a blocking send"),
    "TASK_STATE_WORKING": ("fault", "working: still pending after a blocking send"),
    "TASK_STATE_UNSPECIFIED": ("fault", "unspecified: not a task state an agent may report"),
}
#: the 0.3 spellings (JSON-RPC 0.3 wire names) of the same states
LEGACY_STATES: dict[str, str] = {
    "completed": "TASK_STATE_COMPLETED",
    "failed": "TASK_STATE_FAILED",
    "rejected": "TASK_STATE_REJECTED",
    "canceled": "TASK_STATE_CANCELED",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "unknown": "TASK_STATE_UNSPECIFIED",
}


@dataclass(frozen=True)
class AgentAnswer:
    """What an agent surface answered, classified."""

    #: a disposition, or None (no answer, needs a human, fault)
    disposition: str | None
    #: the task state as received (or the HTTP / JSON-RPC outcome)
    state: str
    kind: Kind
    detail: str
    denial: DenialCode | None = None


class A2AError(Exception):
    """The exchange failed before any task came back (network, HTTP, JSON-RPC)."""

    def __init__(self, message: str, payload: Any = None, status: int | None = None) -> None:
        # an agent's error may quote the bearer token it was sent (compiler.core.secrets)
        super().__init__(redact(message))
        self.payload = payload
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """An agent endpoint that redirects is answered as an HTTP error: a probe asks the URL
    the model names, never another."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


#: http and https only (the model's URL pattern), no redirects, no proxies from the env
_OPENER = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def request_body(question: str, metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": METHOD,
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": question}],
                "metadata": metadata,
            },
            "configuration": {"returnImmediately": False, "acceptedOutputModes": ["text/plain"]},
        },
    }


def send_message(
    url: str,
    question: str,
    *,
    timeout: float,
    token: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """POST one ``SendMessage``; the JSON-RPC ``result``. Raises A2AError."""
    body = json.dumps(request_body(question, metadata or {})).encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "A2A-Version": A2A_VERSION,
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    deadline = time.monotonic() + timeout
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            raw = _read_by(resp, deadline, url)
    except urllib.error.HTTPError as err:
        payload = _json_or_none(err.read(MAX_RESPONSE_BYTES))
        raise A2AError(f"HTTP {err.code} from {url}", payload, err.code) from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError, HTTPException) as err:
        reason = getattr(err, "reason", err)
        raise A2AError(f"no answer from {url}: {reason}") from None
    if len(raw) > MAX_RESPONSE_BYTES:
        raise A2AError(f"the answer from {url} is larger than {MAX_RESPONSE_BYTES} bytes")
    deep = depth_problem(raw.decode("utf-8", "replace"))
    if deep is not None:
        raise A2AError(f"the answer from {url} is not a JSON-RPC object: it is {deep[1]}")
    doc = _json_or_none(raw)
    if not isinstance(doc, dict):
        raise A2AError(f"{url} did not answer with a JSON-RPC object")
    if "error" in doc:
        error = doc["error"] if isinstance(doc["error"], dict) else {}
        raise A2AError(
            f"JSON-RPC error {error.get('code')}: {error.get('message', '')}".strip(), error
        )
    result = doc.get("result")
    if not isinstance(result, dict):
        raise A2AError(f"{url} answered without a JSON-RPC result")
    return result


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# classification


def _texts(node: Any) -> list[str]:
    """Every text of a message's or artifact's parts (data parts as JSON)."""
    out: list[str] = []
    if not isinstance(node, dict):
        return out
    for part in node.get("parts") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            out.append(part["text"])
        if "data" in part:
            out.append(json.dumps(part["data"], sort_keys=True))
    return out


def answer_text(task: dict[str, Any]) -> str:
    status = task.get("status") if isinstance(task.get("status"), dict) else {}
    texts = _texts(status.get("message"))
    for artifact in task.get("artifacts") or []:
        texts += _texts(artifact)
    if "parts" in task:  # a bare Message result
        texts += _texts(task)
    return "\n".join(texts)


def _carriers(task: dict[str, Any]) -> list[Any]:
    """Where a denial code may ride: metadata (task, status message, artifacts, parts) and
    data parts."""
    out: list[Any] = [task.get("metadata")]
    status = task.get("status") if isinstance(task.get("status"), dict) else {}
    nodes = [status.get("message"), *(task.get("artifacts") or [])]
    if "parts" in task:
        nodes.append(task)
    for node in nodes:
        if not isinstance(node, dict):
            continue
        out.append(node.get("metadata"))
        for part in node.get("parts") or []:
            if isinstance(part, dict):
                out.append(part.get("metadata"))
                out.append(part.get("data"))
    return [c for c in out if c is not None]


def _read_by(resp: Any, deadline: float, url: str) -> bytes:
    """The answer's bytes, read by ``deadline`` at the latest (an agent that drips a byte at a
    time is cut off), at most ``MAX_RESPONSE_BYTES + 1`` bytes."""
    try:
        return read_by(resp, deadline, MAX_RESPONSE_BYTES)
    except DeadlinePassed:
        raise A2AError(
            f"no answer from {url}: it did not finish within the probe's timeout"
        ) from None


def state_of(task: dict[str, Any]) -> str:
    status = task.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    return state if isinstance(state, str) else repr(state)


def classify_task(result: dict[str, Any], canary: Canary | None, column: bool) -> AgentAnswer:
    """Classify a ``SendMessage`` result (``{task}`` or ``{message}``)."""
    if isinstance(result.get("message"), dict) and "task" not in result:
        task: dict[str, Any] = dict(result["message"])
        state = "TASK_STATE_COMPLETED"  # a direct message is a completed answer
        received = "message"
    elif isinstance(result.get("task"), dict):
        task = result["task"]
        received = state = state_of(task)
    else:
        return AgentAnswer(None, "?", "fault", "the result holds neither a task nor a message")
    canonical = LEGACY_STATES.get(state, state)
    kind, meaning = TASK_STATES.get(canonical, ("fault", f"{state!r} is not a task state"))
    denial = next((d for c in _carriers(task) if (d := find_denial(c)) is not None), None)
    if denial is not None and kind in ("denial", "code-decides", "answer"):
        # the clear canary outranks a denial-looking code: an answer that shows the value
        # was not denied, whatever code rides beside it (in metadata or a data part)
        shown = canary is not None and canary.classify(answer_text(task)) == "clear"
        if shown:
            return AgentAnswer(
                "clear",
                received,
                kind,
                f"{meaning}; the answer holds the canary's clear value, which outranks the "
                f"{denial} beside it",
                denial,
            )
    if kind == "denial":
        return AgentAnswer("denied", received, kind, meaning, denial)
    if kind == "code-decides":
        if denial is not None:
            return AgentAnswer("denied", received, kind, f"{meaning}: {denial}", denial)
        if canonical == "TASK_STATE_REJECTED":
            # a refusal to answer is no evidence of a policy: no answer, never "denied"
            return AgentAnswer(None, received, "no-answer", f"{meaning}; none did: no answer")
        return AgentAnswer(None, received, "fault", f"{meaning}; none did")
    if kind != "answer":
        return AgentAnswer(None, received, kind, meaning)
    if denial is not None:
        return AgentAnswer(
            "denied", received, kind, f"completed, with {denial} in its metadata or data", denial
        )
    disposition, note = classify_text(answer_text(task), canary, column)
    return AgentAnswer(disposition, received, kind, f"{meaning}; {note}")


def classify_text(text: str, canary: Canary | None, column: bool) -> tuple[str | None, str]:
    """A completed answer's disposition from its text, and why: the canary's clear value, a
    masked form of it, or neither (no rows shown: ``empty``). Without a canary a column probe
    cannot tell clear from masked, nor can a canary whose masked form accord cannot recompute
    (a hash mask without its salt): None, never a pass."""
    if canary is None:
        if not text.strip():
            return "empty", "the answer is empty"
        what = "clear from masked" if column else "which rows were shown"
        return None, f"the probe has no canary: the answer's text cannot tell {what}"
    found = canary.classify(text)
    if found == "clear":
        return "clear", "the answer holds the canary's clear value"
    if found == "masked":
        return "masked", "the answer holds the canary's masked value"
    if canary.unknown_mask and text.strip():
        # a digest-shaped string is no evidence of masking when accord cannot recompute it
        return None, f"the answer does not hold the canary's clear value; {canary.unknown_mask}"
    return "empty", "the answer holds neither the canary's clear value nor its masked value"


def classify_error(err: A2AError, canary: Canary | None = None) -> AgentAnswer:
    """An exchange that returned no task: a denial when a code (or HTTP 403) says so. The
    canary's clear value outranks it here too: an error payload (or message) that quotes the
    value has shown it, whatever code rides with it."""
    if canary is not None:
        said = (
            str(err)
            + "\n"
            + (json.dumps(err.payload, ensure_ascii=False) if err.payload is not None else "")
        )
        if canary.classify(said) == "clear":
            return AgentAnswer(
                "clear",
                "error",
                "answer",
                f"{err}: the error quotes the canary's clear value, which outranks any "
                "denial code beside it",
            )
    denial = find_denial(err.payload) if err.payload is not None else None
    if denial is not None:
        return AgentAnswer("denied", "error", "denial", f"{err}: {denial}", denial)
    if err.status == 403:
        return AgentAnswer("denied", "HTTP 403", "denial", f"{err}: forbidden for this persona")
    if err.status == 401:
        return AgentAnswer(None, "HTTP 401", "human", f"{err}: needs credentials, not an answer")
    return AgentAnswer(None, "error", "fault", str(err))
