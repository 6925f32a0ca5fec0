"""QualityGrader: function length and cyclomatic complexity limits, measured on the code that runs.

What is measured: the files of ``constraints.paths`` (a directory: its ``*.py`` files) and every
file the submission adds or changes **whatever its name**: a changed ``.py`` file must parse, and
any other changed file of up to 1 MiB that parses as Python is measured too (a ``quote_impl.txt``
holding the original code is in sight); a binary or non-parsing file is not Python. Source is decoded as the
interpreter decodes it (BOM, ``# coding:`` cookie), and lambdas are functions
(:mod:`repogym_gym.metrics`).

What fails the objective outright (score 0, each reason naming ``file:line`` and the reference): a
changed file that can run code held as data (:mod:`repogym_gym.dyncode`: ``exec``, ``compile``,
``__builtins__``, ``importlib``, ``runpy``, ``pickle``, ``subprocess``..., referenced in any form,
not only called), and a changed native extension module (``*.so``, ``*.pyd``). Such code is out of
the metrics' sight, so its limits cannot hold.

Each set limit is one rule; ``score`` is the fraction of rules with no violating function, and
``passed`` requires all (design doc 000, "QualityGrader"). It is the objective of refactor tasks
and a gate elsewhere. An unreadable, undecodable or unparseable file that must be measured, or one
nested too deep for the parser, violates every rule.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import stat
import zipfile
from pathlib import Path

from repogym_gym.dyncode import dynamic_code
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.metrics import FunctionMetrics, NestedTooDeep, parse_module, python_files, read_source, tree_metrics
from repogym_gym.results import GradeComponent, Role
from repogym_gym.safetext import short_text
from repogym_gym.spec import ConstraintSpec

__all__ = ["QualityGrader", "runtime_code_violations"]

#: Changed files Python imports as native code: nothing there can be measured.
_NATIVE_SUFFIXES = tuple(dict.fromkeys([*importlib.machinery.EXTENSION_SUFFIXES, ".so", ".pyd"]))
#: The first bytes of native code images a loader maps: ELF, Mach-O (both byte orders, 32/64-bit, universal).
_NATIVE_MAGIC = ((b"\x7fELF", "an ELF image"), (b"\xfe\xed\xfa\xce", "a Mach-O image"), (b"\xfe\xed\xfa\xcf", "a Mach-O image"),
                 (b"\xce\xfa\xed\xfe", "a Mach-O image"), (b"\xcf\xfa\xed\xfe", "a Mach-O image"),
                 (b"\xca\xfe\xba\xbe", "a Mach-O universal image"))
#: Names Python imports as source, which must parse.
_SOURCE_SUFFIXES = (".py", ".pyw", ".pyi")
#: Other changed files past this size are not parsed (a loader or exec is needed to run them,
#: which is refused anyway); parsing megabytes of CSV would cost the grader gigabytes. In bytes.
_OPTIONAL_PARSE_LIMIT = 1 << 20
#: Python's parser holds about 500 times a module's size while it parses (a 4 MB module took the
#: grader's process from 63 MB to 2 GB): the source measured in one grading is bounded, per file
#: and in all, and past that the submission is unmeasurable (score 0). In bytes.
MAX_PARSE_BYTES = 512 * 1024
MAX_PARSED_BYTES = 2 << 20


class _Unmeasurable(Exception):
    """A file that must be measured cannot be read or parsed."""


def _rules(constraints: ConstraintSpec) -> dict[str, tuple[int, str, str]]:
    """The set limits, by rule name: (limit, the ``FunctionMetrics`` attribute, its unit)."""
    rules = {
        "max_function_length": (constraints.max_function_length, "length", "lines"),
        "max_cyclomatic_complexity": (constraints.max_cyclomatic_complexity, "complexity", "complexity"),
    }
    return {name: (limit, attr, unit) for name, (limit, attr, unit) in rules.items() if limit is not None}


class QualityGrader:
    """Measures every function of the files described in the module docstring, in the grading copy."""

    name = "quality"

    def __init__(self, role: Role = "gate") -> None:
        self.role: Role = role

    def grade(self, ctx: GradingContext) -> GradeComponent:
        """The quality component. Everything it reads is the submission's (the grading copy's files), so an
        error while reading or measuring them is the submission's 0 with the error named, never an
        infrastructure error a trainer would drop (round 42: a 42-byte zip64 record that ``zipfile`` cannot
        judge crashed the grader, and the episode was masked)."""
        rules = _rules(ctx.task.spec.constraints)
        try:
            return self._grade(ctx, rules)
        except _Unmeasurable as exc:
            message = str(exc)
        except Exception as exc:  # noqa: BLE001 - a parser's failure on the submission's bytes
            message = f"cannot measure the submission: {type(exc).__name__}: {short_text(str(exc), 200)}"
        return component(self, score=0.0, passed=False, messages=[message],
                         details={"violations": {name: ["unmeasurable"] for name in rules}})

    def _grade(self, ctx: GradingContext, rules: dict[str, tuple[int, str, str]]) -> GradeComponent:
        """The grade; raises ``_Unmeasurable`` (or any parser's error) when the submission cannot be measured."""
        spec = ctx.task.spec.constraints
        changed = sorted(c.path for c in ctx.snapshot.changes.carried if c.status != "deleted")
        modules = _modules(ctx.repo, spec.paths, changed)
        held = {f"{rel} (source in a string at {where})": tree for rel in changed if rel in modules
                for where, tree in _source_in_strings(modules[rel], rel)}
        try:
            metrics: list[FunctionMetrics] = [m for rel, tree in {**modules, **held}.items()
                                              for m in tree_metrics(tree, rel, top_level=True)]
        except ValueError as exc:  # a measurement the metrics model refuses is the submission's 0, not infra_error
            raise _Unmeasurable(f"unmeasurable: {short_text(str(exc), 200)}") from None
        changed_set = set(changed)
        dynamic = [why for rel in changed if rel not in modules and (why := _importable_binary(ctx.repo, rel))]
        dynamic += [m for rel, tree in modules.items() if rel in changed_set for m in dynamic_code(tree, rel)]
        violations: dict[str, list[str]] = {}
        functions = [m for m in metrics if m.kind == "function"]
        for name, (limit, attr, unit) in rules.items():
            violations[name] = [
                f"{m.path}:{m.lineno} {m.qualname}: {getattr(m, attr)} {unit}{' of logic' if m.kind == 'module' and attr == 'length' else ''} > {limit}"
                for m in metrics if getattr(m, attr) > limit
            ]
        bad = [name for name, v in violations.items() if v]
        worst = {
            "max_function_length": max((m.length for m in metrics), default=0),
            "max_cyclomatic_complexity": max((m.complexity for m in metrics), default=0),
        }
        details = {"violations": violations, "worst": worst, "functions": len(functions), "measured": list(modules)}
        messages = [v for name in bad for v in violations[name]]
        if dynamic:  # code run from data is out of the metrics' sight: no limit can be said to hold
            return component(self, score=0.0, passed=False,
                             messages=[f"{d}: runs code the quality limits cannot measure" for d in dynamic] + messages,
                             details={**details, "dynamic_code": dynamic})
        return component(self, score=1 - len(bad) / len(rules), passed=not bad, messages=messages, details=details)


def _modules(repo: Path, paths: list[str], changed: list[str]) -> dict[str, ast.Module]:
    """The parsed modules to measure, by relative path: ``paths`` (must parse), then changed files.

    Raises:
        _Unmeasurable: a file of ``paths`` or a changed source file cannot be read or parsed, or
            any file to measure nests too deep for the parser.
    """
    try:
        required = python_files(repo, paths)
    except (OSError, TypeError, ValueError) as exc:
        raise _Unmeasurable(f"cannot measure {paths}: {exc}") from None
    modules: dict[str, ast.Module] = {}
    budget = [MAX_PARSED_BYTES]
    for rel, data in required:
        if rel not in modules:
            modules[rel] = _parse(rel, _within(rel, data, budget), required=True)  # type: ignore[assignment]
    for rel in changed:
        if rel.endswith(_SOURCE_SUFFIXES) and rel not in modules:
            modules[rel] = _parse(rel, _within(rel, _read(repo, rel), budget), required=True)  # type: ignore[assignment]
    for rel in changed:
        if rel in modules or rel.endswith(_NATIVE_SUFFIXES):
            continue
        try:
            small = (repo / rel).stat().st_size <= _OPTIONAL_PARSE_LIMIT
        except OSError as exc:
            raise _Unmeasurable(f"cannot measure {rel}: {exc.strerror or exc}") from None
        tree = _parse(rel, _within(rel, _read(repo, rel), budget), required=False) if small else None
        if tree is not None:
            modules[rel] = tree
    return modules


def _source_in_strings(tree: ast.Module, rel: str) -> list[tuple[str, ast.Module]]:
    """(where, module) for every string or bytes literal of a changed file that parses as Python
    statements (red-team round 14: the original code kept as a string and run through a builtin
    reached as ``vars(print.__self__).get("exec")``, a ForwardRef, ``inspect.signature(eval_str=True)``,
    ``mock``'s ``get_original``, or a module written at run time and imported): code held as data
    is measured like code, whatever later runs it. A one-line string with no ``;`` is prose or a
    name, never a program worth measuring.

    Raises:
        _Unmeasurable: such a string nests too deep for the parser.
    """
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, bytes)) or len(node.value) < 16:
            continue
        text = node.value if isinstance(node.value, bytes) else node.value.encode("utf-8", "surrogatepass")
        if b"\n" not in text and b";" not in text:
            continue
        # Both ways the data can run: as text (exec of a str ignores a coding cookie) and as bytes
        # (exec of bytes, or a module written from it, honours one). Red-team round 24 held the
        # original code behind "# coding: raw_unicode_escape", harmless when parsed one way only.
        readings: list[str | bytes] = [node.value.decode("utf-8", "surrogateescape") if isinstance(node.value, bytes) else node.value]
        if b"coding" in b"\n".join(text.split(b"\n", 2)[:2]):  # only a cookie makes the bytes read otherwise
            readings.append(text)
        for number, reading in enumerate(readings):
            try:
                held = parse_module(reading, rel)
            except NestedTooDeep:
                raise _Unmeasurable(f"cannot measure {rel}: a string at line {node.lineno} nests too deeply for the parser") from None
            except (SyntaxError, ValueError):
                continue
            if any(not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, (ast.Constant, ast.Name)) for stmt in held.body):
                found.append((f"line {node.lineno}" + (", its coding cookie honoured" if number else ""), held))
    return found


def _importable_binary(repo: Path, rel: str) -> str | None:
    """Why a changed non-source file is code Python can import or a loader can run unmeasured, or None:
    a native extension module by its name, and native code by its content whatever it is named (round 41
    kept a refactor task's original ladder as an ELF image called ``tables.dat``)."""
    if rel.endswith(_NATIVE_SUFFIXES):
        return f"{rel}:1: a native extension module"
    try:
        fd = os.open(repo / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a symlink or a fifo is no code image
        try:
            head = os.read(fd, 4) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        finally:
            os.close(fd)
    except OSError:
        head = b""
    kind = next((name for magic, name in _NATIVE_MAGIC if head.startswith(magic)), None)
    if kind is not None:
        return f"{rel}:1: native code ({kind}), which a loader runs whatever the file is named"
    try:
        if zipfile.is_zipfile(repo / rel):
            return f"{rel}:1: a zip archive, which the import system imports from once it is on sys.path"
    except OSError:
        return None
    return None


def _within(rel: str, data: bytes, budget: list[int]) -> bytes:
    """``data``, if parsing it stays within :data:`MAX_PARSE_BYTES` and what is left of ``budget``."""
    if len(data) > MAX_PARSE_BYTES or len(data) > budget[0]:
        raise _Unmeasurable(f"cannot measure {rel}: {len(data)} bytes of source is more than the grader parses "
                            f"({MAX_PARSE_BYTES} per file, {MAX_PARSED_BYTES} in all)")
    budget[0] -= len(data)
    return data


def _read(repo: Path, rel: str) -> bytes:
    """A changed file's bytes, read as :func:`repogym_gym.metrics.read_source` reads (bounded, no fifo)."""
    try:
        return read_source(repo / rel, rel)
    except (OSError, ValueError) as exc:
        raise _Unmeasurable(f"cannot measure {rel}: {getattr(exc, 'strerror', None) or exc}") from None


def _parse(rel: str, data: bytes, *, required: bool) -> ast.Module | None:
    """The module in ``data``; None when it is not required and is not Python (binary, not parsing). A file
    that is not imported (not required) may be compiled with a flag that changes the grammar (red-team
    round 34 kept the original code in a .txt file with ``<>``): it is Python if any grammar parses it."""
    try:
        return parse_module(data, rel) if required else _parse_in_any_grammar(data, rel)
    except NestedTooDeep:  # parses or not, nobody can tell: fail closed
        raise _Unmeasurable(f"cannot measure {rel}: nested too deeply for the parser") from None
    except (SyntaxError, ValueError) as exc:
        if required:
            raise _Unmeasurable(f"cannot measure {rel}: {exc}") from None
        return None


#: The compile() flags that change what parses (``from __future__ import barry_as_FLUFL``'s ``<>``, top-level
#: ``await``): a run-time text compiled with one is measured in that grammar.
_GRAMMAR_FLAGS = (0x400000, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, 0x400000 | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _parse_in_any_grammar(text: str | bytes, name: str) -> ast.Module:
    """``text`` parsed as a module, in the plain grammar or else in one a compile() flag selects.

    Raises:
        SyntaxError: no grammar parses it. NestedTooDeep: as :func:`parse_module`.
    """
    try:
        return parse_module(text, name)
    except NestedTooDeep:
        raise
    except SyntaxError as plain:
        for flags in _GRAMMAR_FLAGS:
            try:
                tree = compile(text, name, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
            except (RecursionError, MemoryError) as exc:
                raise NestedTooDeep(f"nested too deeply to measure ({type(exc).__name__})", (name, 1, 1, None)) from None
            assert isinstance(tree, ast.Module)
            return tree
        raise plain


def runtime_code_violations(texts: tuple[str, ...], unmeasured: tuple[str, ...], *, max_function_length: int | None,
                            max_cyclomatic_complexity: int | None, generated: tuple[str, ...] = ()) -> list[str]:
    """What breaks the quality limits in code compiled at run time (the judge's record).

    Each text is measured as a module (its functions and its top level, as for a changed file);
    messages number the texts and never quote them or their names (the judged process chose both,
    and could spell out a hidden test in them). Returns [] when the limits hold.

    Args:
        texts: Source compiled below a frame of the submission (:attr:`TestRun.compiled`).
        unmeasured: Why some run-time code could not be carried as text (each one a violation).
        generated: Texts ``dataclasses``/``namedtuple`` compiled (:attr:`TestRun.generated`): one
            generated method (``def __create_fn__`` around one plain ``def``, or namedtuple's
            ``lambda``) is held to the complexity limit only, its length being its fields'; any other
            shape (red-team round 15 smuggled the original through a dataclass field's name) is
            measured like any run-time code.
        max_function_length: The task's limit in lines, or None.
        max_cyclomatic_complexity: The task's limit, or None.
    """
    found = [f"run-time code: {why}, so the quality limits cannot be said to hold" for why in unmeasured]
    lengths_held = [True] * len(texts)
    for text in generated:
        try:
            shaped = _generated_shape(parse_module(text, "<generated>"))
        except (SyntaxError, ValueError):
            shaped = False
        texts, lengths_held = (*texts, text), [*lengths_held, not shaped]
    for number, (text, hold_length) in enumerate(zip(texts, lengths_held, strict=True), 1):
        try:
            # parsed as the str that ran: exec of a str ignores a coding cookie, and bytes parsed here
            # honoured one (red-team round 24: "# coding: raw_unicode_escape" turned the original code
            # into one harmless string for the host while it ran whole)
            tree = _parse_in_any_grammar(text, f"<run-time code {number}>")
        except NestedTooDeep:  # the judged process may raise its own recursion limit to compile it
            found.append(f"run-time code {number}: nested too deeply to be measured")
            continue
        except (SyntaxError, ValueError):
            # Fail closed: red-team round 26 compiled the original code with a grammar flag the host's
            # plain parse lacks; a compile that failed ran nothing, but the host cannot tell it from one
            # in a grammar it does not read.
            found.append(f"run-time code {number}: does not parse here in any grammar compile() accepts, so the "
                         "quality limits cannot be said to hold")
            continue
        try:
            metrics = tree_metrics(tree, f"<run-time code {number}>", top_level=True)
        except ValueError:
            found.append(f"run-time code {number}: cannot be measured")
            continue
        for m in metrics:
            what = "its top level" if m.kind == "module" else "a function"
            if hold_length and max_function_length is not None and m.length > max_function_length:
                found.append(f"run-time code {number}, line {m.lineno}: {what} of {m.length} lines > {max_function_length}")
            if max_cyclomatic_complexity is not None and m.complexity > max_cyclomatic_complexity:
                found.append(f"run-time code {number}, line {m.lineno}: {what} of complexity {m.complexity} > "
                             f"{max_cyclomatic_complexity}")
    return found


_NOT_IN_A_GENERATED_METHOD = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef, ast.Try, ast.With, ast.AsyncWith, ast.Import, ast.ImportFrom, ast.Global)


def _generated_shape(tree: ast.Module) -> bool:
    """Whether ``tree`` is what dataclasses' ``_create_fn`` writes (``def __create_fn__(...)`` holding
    one loop-free ``def`` and its ``return``) or namedtuple's ``lambda``."""
    body = tree.body
    if len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Lambda):
        return isinstance(body[0].value.body, ast.Call)
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef) or body[0].name != "__create_fn__":
        return False
    inner = body[0].body
    if len(inner) != 2 or not isinstance(inner[0], ast.FunctionDef) or not isinstance(inner[1], ast.Return):
        return False
    return not any(isinstance(node, _NOT_IN_A_GENERATED_METHOD) for stmt in inner[0].body for node in ast.walk(stmt))
