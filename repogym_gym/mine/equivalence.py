"""Equivalent mutants: two sources that compile to the same bytecode.

A mutant whose code objects match the original's cannot be told apart by any test, so the
miner drops it. Code objects are compared recursively: their instructions with the constants
and names they use resolved (nested code objects compared the same way), argument counts and
names, flags, free and cell variables, docstring and exception table. Ignored: line numbers,
columns, file names, values derived from the code (``co_stacksize``, ``co_nlocals``) and entries
of ``co_consts``/``co_names``/``co_varnames`` that no instruction uses (the compiler keeps some
for code it removed as dead, e.g. under ``if False:``).

Compilation is hermetic: ``dont_inherit=True`` (the caller's ``from __future__`` imports do not
leak in), ``optimize=0`` (``assert`` statements are kept whatever ``-O`` the interpreter runs
with) and warnings such as ``SyntaxWarning: invalid escape sequence`` are silenced, not raised.

Example:
    >>> is_equivalent("def f(x):\\n    return x + 0\\n", "def f(x):\\n    return x+0  # same\\n")
    True
    >>> is_equivalent("def f(x):\\n    return x + 0\\n", "def f(x):\\n    return x - 0\\n")
    False
"""

from __future__ import annotations

import dis
import functools
import inspect
import warnings
from collections.abc import Hashable
from types import CodeType

__all__ = ["compile_module", "is_equivalent", "same_code"]

# Compared as they are; every other attribute is either ignored or compared through instructions.
_HEADER = (
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_flags",
    "co_freevars",
    "co_cellvars",
    "co_name",
    "co_qualname",
    "co_exceptiontable",
)
_HASCONST = frozenset(dis.hasconst)
_EXTENDED_ARG = dis.EXTENDED_ARG
# Opcodes whose argument indexes co_consts, co_names or the locals, so dead code can shift it.
_INDEXED = frozenset([*dis.hasconst, *dis.hasname, *dis.haslocal, *dis.hasfree, _EXTENDED_ARG])


def compile_module(source: str, *, flags: int = 0) -> CodeType | None:
    """``source`` compiled hermetically as a module; ``None`` when it does not compile.

    Args:
        source: A module's text.
        flags: Extra ``compile()`` flags, e.g. ``__future__.annotations.compiler_flag``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return compile(source, "<mutant>", "exec", flags=flags, dont_inherit=True, optimize=0)
        except (SyntaxError, ValueError):  # ValueError: a NUL character, on Python 3.11
            return None


def _header(code: CodeType) -> tuple[object, ...]:
    n_args = code.co_argcount + code.co_kwonlyargcount
    n_args += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    docstring = code.co_consts[0] if code.co_consts and isinstance(code.co_consts[0], str) else None
    return (*(getattr(code, name, None) for name in _HEADER), code.co_varnames[:n_args], docstring)


def _const_key(value: object) -> Hashable:
    """A key that tells apart constants ``==`` confuses: ``1``, ``1.0``, ``True``; ``0.0``, ``-0.0``."""
    if isinstance(value, tuple):
        return ("tuple", tuple(_const_key(item) for item in value))
    if isinstance(value, frozenset):  # iteration order may differ between two compilations
        return ("frozenset", tuple(sorted((_const_key(item) for item in value), key=repr)))
    return (type(value).__qualname__, repr(value))


def _argument_key(value: object) -> Hashable:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, tuple):
        return tuple(_argument_key(item) for item in value)
    return repr(value)


@functools.lru_cache(maxsize=1024)
def _instructions(code: CodeType) -> tuple[tuple[Hashable, ...], tuple[CodeType, ...]]:
    """Instructions with constants and names resolved instead of indices, and the code objects
    they load (compared separately, so a changed method does not resolve its whole class)."""
    resolved: list[Hashable] = []
    nested: list[CodeType] = []
    for i in dis.get_instructions(code):
        if i.opname == "EXTENDED_ARG":
            continue
        if i.opcode not in _HASCONST:
            resolved.append((i.opname, _argument_key(i.argval), i.argrepr))  # argrepr: NULL + name
        elif i.arg is not None and isinstance(value := code.co_consts[i.arg], CodeType):
            nested.append(value)
            resolved.append((i.opname, "<code>"))
        else:
            resolved.append((i.opname, _const_key(value)))
    return tuple(resolved), tuple(nested)


@functools.lru_cache(maxsize=1024)
def _loaded_constants(code: CodeType) -> tuple[int, ...]:
    """Indices into ``co_consts`` that instructions load (unused entries belong to dead code)."""
    raw, used, extended = code.co_code, set(), 0
    for index in range(0, len(raw), 2):
        opcode, arg = raw[index], raw[index + 1] | extended
        extended = arg << 8 if opcode == _EXTENDED_ARG else 0
        if opcode in _HASCONST:
            used.add(arg)
    return tuple(sorted(used))


def _same_const(a: object, b: object) -> bool:
    if isinstance(a, CodeType) and isinstance(b, CodeType):
        return same_code(a, b)
    return not isinstance(a, CodeType) and not isinstance(b, CodeType) and _const_key(a) == _const_key(b)


def same_code(a: CodeType, b: CodeType) -> bool:
    """True when two code objects run the same way (see the module docstring).

    Identical bytes, names and constants decide it cheaply; only code objects that differ
    there (the mutated function and those around it) are compared instruction by instruction.
    """
    if _header(a) != _header(b):
        return False
    if (
        a.co_code == b.co_code
        and a.co_names == b.co_names
        and a.co_varnames == b.co_varnames
        and len(a.co_consts) == len(b.co_consts)
    ):  # the same instructions: compare the constants they load (a changed nested function)
        return all(_same_const(a.co_consts[k], b.co_consts[k]) for k in _loaded_constants(a))
    opcodes = a.co_code[::2]
    if opcodes != b.co_code[::2]:  # different opcodes (an EXTENDED_ARG counts too: rare)
        return False
    if any(x != y and op not in _INDEXED for op, x, y in zip(opcodes, a.co_code[1::2], b.co_code[1::2], strict=False)):
        return False  # an argument that is no index into a table differs: a jump, a COMPARE_OP
    (ops_a, nested_a), (ops_b, nested_b) = _instructions(a), _instructions(b)
    return ops_a == ops_b and len(nested_a) == len(nested_b) and all(map(same_code, nested_a, nested_b))


_compile_original = functools.lru_cache(maxsize=8)(lambda source: compile_module(source))


def is_equivalent(source: str, mutated: str) -> bool:
    """True when ``mutated`` compiles to the same code objects as ``source``.

    A ``mutated`` text that does not compile is not equivalent.

    Raises:
        SyntaxError: ``source`` itself does not compile.
    """
    original = _compile_original(source)  # a miner checks many mutants of one source
    if original is None:
        compile(source, "<original>", "exec", dont_inherit=True)  # raises the real SyntaxError
        raise SyntaxError("the original source does not compile")  # pragma: no cover
    changed = compile_module(mutated)
    return changed is not None and same_code(original, changed)
