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
"""

from __future__ import annotations

import json
import math
import os
import time

from ._errors import TokenGateError

HARD_CAP_TOTAL = 1_000_000
CHARS_PER_TOKEN = 3


def approx_tokens(text_or_chars, *, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """Estimated tokens of a text, or of a count of characters."""
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


def _ledger_append(path: str, record: dict):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass


def preflight(prompt, max_tokens: int | None = None, caller: str = "unknown", *,
              cap: int = HARD_CAP_TOTAL, model: str | None = None,
              ledger: str | None = None,
              chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """Refuse (TokenGateError) a call whose estimated prompt tokens plus
    max_tokens exceed cap; return the estimated total otherwise.  prompt is
    the text or its number of characters."""
    est_prompt = approx_tokens(prompt, chars_per_token=chars_per_token)
    total = est_prompt + (max_tokens or 0)
    if total <= cap:
        return total
    path = ledger if ledger is not None else os.environ.get("LIL_TOKEN_LEDGER")
    if path:
        _ledger_append(path, {"ts": time.time(), "caller": caller,
                              "kind": "preflight_refused", "model": model,
                              "est_prompt_tokens": est_prompt, "max_tokens": max_tokens,
                              "total": total, "cap": cap})
    raise TokenGateError(
        f"TOKEN GATE: pre-flight refusal. est_prompt={est_prompt} "
        f"max_tokens={max_tokens or 0} total={total} cap={cap} caller={caller}. "
        "Split the payload.", None)
