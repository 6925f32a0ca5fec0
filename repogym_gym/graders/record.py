"""The judge's record as the host reads it: framed by the nonce exactly once, exactly the judge's schema.

The judged process writes it (:mod:`judge_ledger`); nothing in it is trusted before these checks.
"""

from __future__ import annotations

import json

__all__ = ["OUTCOMES", "RECORD_KEYS", "read_record"]

OUTCOMES = ("passed", "skipped", "failed", "error")


def read_record(stdout: str, nonce: str) -> tuple[dict[str, object] | None, str]:
    """The judge's nonce-framed record, and stdout without it.

    None unless the record is framed exactly once and has exactly the judge's schema:
    ``{"exit_code": int, "record": {str: one of OUTCOMES}, "violations": [str]}`` plus the run-time
    code lists ``compiled``, ``unmeasured``, ``generated`` ([str], [] when absent) (no other key,
    no other type: the host trusts nothing it did not check).
    """
    parts = stdout.split(nonce)
    if len(parts) != 3:
        return None, stdout
    try:
        record = json.loads(parts[1])
    except (ValueError, RecursionError):  # JSONDecodeError, or an int past the conversion limit
        return None, stdout
    rest = parts[0] + parts[2]
    if not isinstance(record, dict) or not {"exit_code", "record", "violations"} <= set(record) <= RECORD_KEYS:
        return None, rest
    outcomes, violations, code = record["record"], record["violations"], record["exit_code"]
    if type(code) is not int or not isinstance(outcomes, dict) or not isinstance(violations, list):
        return None, rest
    if not all(type(k) is str and v in OUTCOMES for k, v in outcomes.items()) or not all(type(v) is str for v in violations):
        return None, rest
    for key in ("compiled", "unmeasured", "generated"):
        texts = record.setdefault(key, [])
        if not isinstance(texts, list) or not all(type(t) is str for t in texts):
            return None, rest
    return record, rest


#: The judge's record: exit code, outcomes, violations, and the run-time code (texts compiled below
#: a frame of the submission; what could not be measured) for the quality limits.
RECORD_KEYS = frozenset(("exit_code", "record", "violations", "compiled", "unmeasured", "generated"))
