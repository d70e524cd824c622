"""The token gate: refuse a model call that would exceed a token cap before
it is made.

``approx_tokens`` estimates tokens without a tokenizer: for a character
count (letitloop's form) ``max(1, ceil(chars / chars_per_token))``; for a
text, its ASCII characters count ``1 / chars_per_token`` token each and
every other character one token (CJK and most non-Latin scripts are about
one token a character, so the 3-characters rule would undercount them
threefold).  It is an estimate: the provider's usage is the truth.

``preflight(prompt, max_tokens)`` raises :class:`TokenGateError` when the
estimate of the prompt plus ``max_tokens`` is over ``cap`` (equal passes),
after appending a JSON line to the ledger file when one is named (argument,
or $LIL_TOKEN_LEDGER read at each call); a ledger that cannot be written
does not hide the refusal.  It returns the estimated total otherwise.

During a streamed answer, ``StreamGuard`` counts the completion's characters
and says when the call went over the cap (``exceeded``); after it,
``check_usage_authoritative`` compares the provider's reported usage with the
cap.  Both append to the ledger and never raise.  letitloop's keywords work:
``preflight(prompt_chars=N)``, ``approx_tokens(chars=N)``.
"""

from __future__ import annotations

import json
import math
import os
import time

from ._errors import TokenGateError

HARD_CAP_TOTAL = 1_000_000
CHARS_PER_TOKEN = 3
#: the exit status of a command refused by the token gate
EXIT_GATE = 3


def _one(what: str, value, letitloop_name: str, letitloop_value):
    if (value is None) == (letitloop_value is None):
        raise TypeError(f"{what}: give {letitloop_name} or the text (or its count) once")
    return value if value is not None else letitloop_value


def approx_tokens(text_or_chars=None, *, chars=None,
                  chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """Estimated tokens of a text, or of a count of characters (``chars=``)."""
    text_or_chars = _one("approx_tokens", text_or_chars, "chars", chars)
    if chars_per_token <= 0:
        raise ValueError("chars_per_token must be positive")
    if isinstance(text_or_chars, str):
        other = sum(1 for c in text_or_chars if ord(c) > 0x7F)
        ascii_chars = len(text_or_chars) - other
        return max(1, math.ceil(ascii_chars / chars_per_token) + other)
    chars = int(text_or_chars)
    if chars < 0:
        raise ValueError("a character count cannot be negative")
    return max(1, math.ceil(chars / chars_per_token))


def _ledger_append(path: str | None, record: dict):
    """Append record to the ledger at path (None: $LIL_TOKEN_LEDGER, or no
    ledger).  A ledger that cannot be written is left as it is."""
    if path is None:
        path = os.environ.get("LIL_TOKEN_LEDGER")
    if not path:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass


def preflight(prompt=None, max_tokens: int | None = None, caller: str = "unknown", *,
              prompt_chars: int | None = None, cap: int = HARD_CAP_TOTAL,
              model: str | None = None, ledger: str | None = None,
              chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """Refuse (TokenGateError) a call whose estimated prompt tokens plus
    max_tokens exceed cap; return the estimated total otherwise.  prompt is
    the text or its number of characters (letitloop's ``prompt_chars=``)."""
    prompt = _one("preflight", prompt, "prompt_chars", prompt_chars)
    est_prompt = approx_tokens(prompt, chars_per_token=chars_per_token)
    total = est_prompt + (max_tokens or 0)
    if total <= cap:
        return total
    _ledger_append(ledger, {"ts": time.time(), "caller": caller,
                            "kind": "preflight_refused", "model": model,
                            "est_prompt_tokens": est_prompt, "max_tokens": max_tokens,
                            "total": total, "cap": cap})
    raise TokenGateError(
        f"TOKEN GATE: pre-flight refusal. est_prompt={est_prompt} "
        f"max_tokens={max_tokens or 0} total={total} cap={cap} caller={caller}. "
        "Split the payload.", None)


class StreamGuard:
    """Watch a streamed answer: ``add(chunk)`` for each piece of text;
    ``exceeded`` is true once the estimated prompt plus the completion so far
    is over ``cap``; ``report(actual_usage=None)`` appends a
    ``stream_aborted`` line to the ledger (``ledger=`` or $LIL_TOKEN_LEDGER).
    Stopping the stream is the caller's decision: nothing here raises."""

    def __init__(self, prompt=None, caller: str = "unknown", model: str | None = None, *,
                 prompt_chars: int | None = None, cap: int = HARD_CAP_TOTAL,
                 ledger: str | None = None,
                 chars_per_token: float = CHARS_PER_TOKEN):
        prompt = _one("StreamGuard", prompt, "prompt_chars", prompt_chars)
        self.caller = caller
        self.model = model
        self.cap = cap
        self.ledger = ledger
        self.chars_per_token = chars_per_token
        self.est_prompt = approx_tokens(prompt, chars_per_token=chars_per_token)
        self.completion_chars = 0
        self._other_chars = 0  # non-ASCII: a token each

    def add(self, text: str) -> bool:
        """Count a chunk of the answer; return ``exceeded``."""
        self.completion_chars += len(text)
        self._other_chars += sum(1 for c in text if ord(c) > 0x7F)
        return self.exceeded

    @property
    def est_completion(self) -> int:
        """Estimated tokens of the answer so far (approx_tokens' rule)."""
        ascii_chars = self.completion_chars - self._other_chars
        return math.ceil(ascii_chars / self.chars_per_token) + self._other_chars

    @property
    def exceeded(self) -> bool:
        """The estimated prompt plus the answer so far is over the cap."""
        return self.est_prompt + self.est_completion > self.cap

    def report(self, actual_usage: dict | None = None) -> None:
        """Append what happened to the ledger."""
        _ledger_append(self.ledger, {
            "ts": time.time(), "caller": self.caller, "kind": "stream_aborted",
            "model": self.model, "est_prompt_tokens": self.est_prompt,
            "est_completion_tokens": self.est_completion,
            "actual_usage": actual_usage, "cap": self.cap})


def check_usage_authoritative(usage: dict, est_prompt: int | None = None,
                              caller: str = "unknown", model: str | None = None, *,
                              cap: int = HARD_CAP_TOTAL, ledger: str | None = None) -> bool:
    """True (and a ``usage_over_cap`` ledger line) when the provider's
    reported ``usage["total_tokens"]`` is over ``cap``: the provider's count
    is the truth, the estimates are not."""
    total = int((usage or {}).get("total_tokens") or 0)
    if total <= cap:
        return False
    _ledger_append(ledger, {"ts": time.time(), "caller": caller, "kind": "usage_over_cap",
                            "model": model, "est_prompt_tokens": est_prompt,
                            "actual_usage": usage, "cap": cap})
    return True
