"""test_tokens.py -- the token gate: approx_tokens of a character count
(letitloop's numbers) and of a text (non-ASCII characters a token each);
preflight passes at the cap and refuses above it with TokenGateError, after
a ledger line when a ledger is named (argument or $LIL_TOKEN_LEDGER, read at
each call)."""

import json
import os
import unittest

from helpers import LilCase, lil, read_lines


class TokenTest(LilCase):
    def test_approx_tokens(self):
        for chars, want in ((0, 1), (3, 1), (6, 2), (100, 34), (3_000_000, 1_000_000)):
            self.assertEqual(lil.approx_tokens(chars), want)
        self.assertEqual(lil.approx_tokens("abcdef"), 2)
        self.assertEqual(lil.approx_tokens("日本語のテキスト"), 8)
        self.assertEqual(lil.approx_tokens("abc日本"), 3)
        self.assertEqual(lil.approx_tokens(100, chars_per_token=4), 25)
        with self.assertRaises(ValueError):
            lil.approx_tokens(-1)

    def test_preflight(self):
        self.assertEqual(lil.preflight(300, max_tokens=900), 1000)
        self.assertEqual(lil.preflight(3 * 999_000, max_tokens=1000), lil.HARD_CAP_TOTAL)
        ledger = os.path.join(self.tmp, "ledger.jsonl")
        with self.assertRaises(lil.TokenGateError) as cm:
            lil.preflight("x" * 30, max_tokens=5, caller="unit", cap=10, ledger=ledger)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("TOKEN GATE: pre-flight refusal."))
        for part in ("est_prompt=10", "max_tokens=5", "total=15", "cap=10", "caller=unit",
                     "Split the payload."):
            self.assertIn(part, msg)
        rec = json.loads(read_lines(ledger)[0])
        self.assertEqual((rec["kind"], rec["caller"], rec["total"]), ("preflight_refused", "unit", 15))
        os.environ["LIL_TOKEN_LEDGER"] = ledger
        try:
            with self.assertRaises(lil.TokenGateError):
                lil.preflight(3_000_003)
        finally:
            del os.environ["LIL_TOKEN_LEDGER"]
        self.assertEqual(len(read_lines(ledger)), 2)
        with self.assertRaises(lil.TokenGateError):  # an unwritable ledger hides nothing
            lil.preflight(100, cap=1, ledger=os.path.join(self.tmp, "no", "such", "dir"))


if __name__ == "__main__":
    unittest.main()
