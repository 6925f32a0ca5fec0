"""The judge's record as the host reads it: framed by the nonce, signed with the run's key, exactly the judge's schema.

The judged process writes it (:mod:`judge_ledger`); nothing in it is trusted before these checks.
The nonce only finds the record: code under test can read the judged process's own output (it can
put a pipe of its own where pytest's output goes, a thread or a child reading it), so it can learn
the nonce from the record as it passes. What it cannot do is sign: the HMAC-SHA256 key is handed to
the runner in the selection file it deletes before any test code loads, and only the policy's
closures hold it (as its padded forms), so a forged or edited record fails the signature check.
"""

from __future__ import annotations

import hashlib
import hmac
import json

__all__ = ["MAX_RUNTIME_CODE_CHARS", "MAX_RUNTIME_CODE_TEXTS", "OUTCOMES", "PYTEST_EXIT_CODES", "RECORD_KEYS", "read_record",
           "shown_exit_code", "sign"]

OUTCOMES = ("passed", "skipped", "failed", "error")
#: What the judge carries of run-time code at most (judge_policy's own bounds: 1 MiB of characters,
#: 4096 texts); a record past them is refused before anything parses its texts.
MAX_RUNTIME_CODE_CHARS = 1 << 20
MAX_RUNTIME_CODE_TEXTS = 4096


#: Exit codes pytest itself returns (``pytest.ExitCode``): the only ones a grade quotes.
PYTEST_EXIT_CODES = range(6)


def shown_exit_code(code: object) -> int | str:
    """``code`` as a grade may show it: pytest's own codes as they are, any other as ``"another"``. The judged
    process chooses its exit status (``os._exit``), and a child process can read the grading copy's hidden
    tests: round 40 quoted 8 bits of them per grading through the code the grade repeated."""
    return code if type(code) is int and code in PYTEST_EXIT_CODES else "another"


def sign(payload: str, key: bytes) -> str:
    """The record's signature: HMAC-SHA256 of ``payload`` (UTF-8) under ``key``, as hex (RFC 2104)."""
    return hmac.new(key, payload.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def read_record(stdout: str, nonce: str, key: bytes) -> tuple[dict[str, object] | None, str]:
    """The judge's signed record, and stdout without it.

    The record is ``nonce + payload + nonce + signature + nonce``, exactly once in ``stdout``. None
    unless the signature is :func:`sign` of the payload under ``key`` and the payload has exactly
    the judge's schema: ``{"exit_code": int, "record": {str: one of OUTCOMES}, "violations": [str]}``
    plus the run-time code lists ``compiled``, ``unmeasured``, ``generated`` ([str], [] when
    absent; ``compiled`` and ``generated`` within :data:`MAX_RUNTIME_CODE_CHARS` characters and
    :data:`MAX_RUNTIME_CODE_TEXTS` texts) and the sealed tests' ``observed`` (``{str: [int >= 0,
    64 hex digits]}``: how many observations each scored test made and their chained SHA-256, {} when
    absent) (no other key, no other type: the host trusts nothing it did not check).
    """
    parts = stdout.split(nonce)
    if len(parts) != 4:
        return None, stdout
    rest = parts[0] + parts[3]
    # bytes, not str: compare_digest raises TypeError on a non-ASCII str (round 21 turned a 0 into an
    # infrastructure error by printing one where the signature goes)
    if not hmac.compare_digest(sign(parts[1], key).encode(), parts[2].encode("utf-8", "surrogatepass")):
        return None, rest
    try:
        record = json.loads(parts[1])
    except (ValueError, RecursionError):  # JSONDecodeError, or an int past the conversion limit
        return None, rest
    if not isinstance(record, dict) or not {"exit_code", "record", "violations"} <= set(record) <= RECORD_KEYS:
        return None, rest
    outcomes, violations, code = record["record"], record["violations"], record["exit_code"]
    if type(code) is not int or not isinstance(outcomes, dict) or not isinstance(violations, list):
        return None, rest
    if not all(type(k) is str and v in OUTCOMES for k, v in outcomes.items()) or not all(type(v) is str for v in violations):
        return None, rest
    for key_name in ("compiled", "unmeasured", "generated"):
        texts = record.setdefault(key_name, [])
        if not isinstance(texts, list) or not all(type(t) is str for t in texts):
            return None, rest
    observed = record.setdefault("observed", {})
    if not isinstance(observed, dict) or not all(
            type(k) is str and type(v) is list and len(v) == 2 and type(v[0]) is int and v[0] >= 0 and type(v[1]) is str
            and len(v[1]) == 64 and all(c in "0123456789abcdef" for c in v[1]) for k, v in observed.items()):
        return None, rest
    code_texts = [*record["compiled"], *record["generated"]]
    if len(code_texts) > MAX_RUNTIME_CODE_TEXTS or sum(map(len, code_texts)) > MAX_RUNTIME_CODE_CHARS:
        return None, rest
    return record, rest


#: The judge's record: exit code, outcomes, violations, the run-time code (texts compiled below
#: a frame of the submission; what could not be measured) for the quality limits, and the sealed tests' observations.
RECORD_KEYS = frozenset(("exit_code", "record", "violations", "compiled", "unmeasured", "generated", "observed"))
