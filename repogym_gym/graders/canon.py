r"""The grader's canonical form of a benchmark's result: plain builtin data only, as bytes.

A perf benchmark runs the candidate's code and prints a digest of what it returned; the grader
compares that line with the pristine baseline's for the same seed (``perf.output_check``). A
value the benchmark holds is only worth digesting if it is *plain data*: an object of the
candidate's own type can lie when it is compared, printed or iterated (a list subclass whose
``__eq__`` copies what it is compared with into itself, a lazy sequence that does its work after
the timer stopped). So :func:`canonical` accepts only values whose type is **exactly** one of

=========================  ==================================================================
type (``type(x) is T``)    encoded as
=========================  ==================================================================
``None``                   ``n``
``bool``                   ``T`` or ``F``
``int``                    ``i`` + hexadecimal + ``;`` (no digit limit)
``float``                  ``f`` + :meth:`float.hex` + ``;`` (exact; ``-0.0`` differs from ``0.0``)
``str``                    ``s`` + byte length + ``:`` + UTF-8 (lone surrogates kept)
``bytes``                  ``b`` + length + ``:`` + the bytes
``list``, ``tuple``        ``l`` / ``t`` + item count + ``:`` + each item, in order
``dict``                   ``d`` + entry count + ``:`` + each key and value, sorted by the key's encoding
``set``, ``frozenset``     ``S`` / ``z`` + count + ``:`` + each item, sorted by encoding
=========================  ==================================================================

recursively, and refuses anything else (subclasses included: ``bool`` is not an ``int`` here,
an ``OrderedDict`` is not a ``dict``) with :class:`NotPlainData` naming where the object was
found. The encoding is self-delimiting, so two values have the same bytes exactly when they have
the same types and values all the way down: ``1``, ``1.0`` and ``True`` differ, and a dict's or
set's order does not count (pass ``list(d.items())`` when it should).

This file is standalone (standard library only): the perf grader writes it into every grading
copy, after the submission, at :data:`repogym_gym.graders.perf.CANON_PATH`, and passes its
absolute path in ``REPOGYM_PERF_CANON``; a benchmark loads it before it imports any code under
test::

    _CANON = os.environ.get("REPOGYM_PERF_CANON")
    digest = runpy.run_path(_CANON)["digest"] if _CANON else None

Example:
    >>> digest([("a@x.org", "Ann"), 1, 2.5, None]) == digest([("a@x.org", "Ann"), 1, 2.5, None])
    True
    >>> canonical({"b": [1, True], "a": ()})
    b'd2:s1:at0:s1:bl2:i1;T'
    >>> class Adopting(list):
    ...     pass
    >>> try:
    ...     canonical({"k": [Adopting()]})
    ... except NotPlainData as exc:
    ...     print(str(exc).split(" (")[0])
    result['k'][0]: an object of type repogym_gym.graders.canon.Adopting is not plain data
"""

from __future__ import annotations

import hashlib

__all__ = ["NotPlainData", "canonical", "digest"]

_ALLOWED = "a dict, list, tuple, set, frozenset, str, bytes, int, float, bool or None"
_SCALARS = {
    type(None): lambda x: b"n",
    bool: lambda x: b"T" if x else b"F",
    int: lambda x: b"i%s;" % format(x, "x").encode(),
    float: lambda x: b"f%s;" % x.hex().encode(),
    bytes: lambda x: b"b%d:%s" % (len(x), x),
}
_UNORDERED = {dict: b"d", set: b"S", frozenset: b"z"}  # type: dict[type, bytes]

# A frame of the walk: [its items still to encode (an iterator), what it is (below), the container
# (a dict entry's frame: its key), where its items' bytes go, a dict's or set's element encodings
# (None for the rest), the tag]. What it is: "seq" a list or tuple, "map" a dict or set, "entry" a
# dict entry or set element encoded apart (sorted with its siblings at the end), "root".
_Frame = list


class NotPlainData(TypeError):
    """A value holds an object whose type is not exactly a builtin data type, or refers to itself."""


def canonical(value: object) -> bytes:
    """The canonical bytes of ``value`` (see the module docstring for the encoding).

    Iterative and linear in the size of the value (a dict or set inside a dict or set is copied
    once per level), so any depth of nesting is fine: about 40 ms on this project's machine for
    12,000 tuples of two short strings and 18,000 more strings.

    Raises:
        NotPlainData: an object of any other type (a subclass included) is found, or a container
            contains itself; the message names its place, e.g. ``result[2]['k']``.
    """
    out = bytearray()
    stack: list[_Frame] = [[iter((value,)), "root", None, out, None, b""]]
    active: set[int] = set()  # the containers being walked: one met again contains itself
    while stack:
        frame = stack[-1]
        what, sink, parts = frame[1], frame[3], frame[4]
        for item in frame[0]:
            if parts is not None:  # a dict entry or set element, encoded apart
                element = bytearray()
                parts.append(element)
                if frame[5] == b"d":
                    stack.append([iter(item), "entry", item[0], element, None, b""])
                else:
                    stack.append([iter((item,)), "entry", None, element, None, b""])
                break
            kind = type(item)
            if kind is str:
                data = item.encode("utf-8", "surrogatepass")
                sink += b"s%d:" % len(data)
                sink += data
                continue
            scalar = _SCALARS.get(kind)
            if scalar is not None:
                sink += scalar(item)
                continue
            if kind is not list and kind is not tuple and kind not in _UNORDERED:
                name = f"{kind.__module__}.{kind.__qualname__}"
                raise NotPlainData(f"{_place(stack, item)}: an object of type {name} is not plain data "
                                   f"(it must be exactly {_ALLOWED}, not a subclass)")
            if id(item) in active:
                raise NotPlainData(f"{_place(stack, item)}: a {kind.__name__} that contains itself has no canonical form")
            active.add(id(item))
            if kind is list or kind is tuple:
                sink += (b"l%d:" if kind is list else b"t%d:") % len(item)
                stack.append([iter(item), "seq", item, sink, None, b""])
            else:
                items = iter(item.items()) if kind is dict else iter(item)
                stack.append([items, "map", item, sink, [], _UNORDERED[kind]])
            break
        else:
            stack.pop()
            if parts is not None:  # a dict's or set's elements, sorted: their order does not count
                sink += b"%s%d:%s" % (frame[5], len(parts), b"".join(sorted(parts)))
            if what in ("seq", "map"):
                active.discard(id(frame[2]))
    return bytes(out)


def digest(value: object) -> str:
    """16 hexadecimal characters (64 bits) of the SHA-256 of :func:`canonical` ``(value)``.

    Raises:
        NotPlainData: as :func:`canonical`.
    """
    return hashlib.sha256(canonical(value)).hexdigest()[:16]


def _place(stack: list[_Frame], culprit: object) -> str:
    """Where ``culprit`` sits, e.g. ``result[2]['k']`` (a list's index is its first identical item)."""
    place = "result"
    for depth in range(1, len(stack)):
        frame = stack[depth]
        child = stack[depth + 1][2] if depth + 1 < len(stack) and stack[depth + 1][1] != "entry" else culprit
        if frame[1] == "seq":
            place += f"[{next((i for i, x in enumerate(frame[2]) if x is child), '?')}]"
        elif frame[1] == "entry" and frame[2] is not None:
            place += f"[{_shown(frame[2])}]" + (" (its key)" if child is frame[2] else "")
        elif frame[1] == "entry":
            place += "{...}"
    return place


def _shown(key: object) -> str:
    """A dict key as an error message shows it (only builtin scalars are ever repr()'d)."""
    if type(key) is not str and type(key) not in _SCALARS:
        return "<key>"
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."
