"""Where a Python file can run code that static metrics never see: code held as data.

The quality limits (:mod:`repogym_gym.metrics`) measure the functions a file defines. A refactor
can dodge them without refactoring anything by keeping the original code as *data* and running
it: source in a string handed to ``exec``, a file not named ``.py`` loaded by an import-system
loader, a pickle or marshalled code object, another interpreter started on it. :func:`dynamic_code`
lists every reference in a parsed module through which data can become running code, in this
process or another one, so the quality grader can refuse such a file rather than measure a shell.

The rule is one principle, *any name or attribute that can turn data into running code*, made
concrete as these references, in any form: a name, an attribute, an import (``import x``,
``from x import y``, ``import x.y as z``), or a string naming it where a name is looked up (the
argument of ``getattr``/``setattr``/``hasattr``/``delattr``, ``operator.attrgetter`` /
``methodcaller``, or a subscript such as ``globals()["__builtins__"]``):

===============================================  =============================================
reference                                        why
===============================================  =============================================
``exec``, ``eval``, ``compile``, ``__import__``   compile or run source held as a string
``breakpoint``                                    runs the debugger, which reads ``.pdbrc`` files
``__builtins__``, ``builtins``                   reach the builtins above under any name
``__loader__``, ``__spec__``                     a module's own loader loads any file as a module
``importlib``, ``imp``, ``zipimport``,           import machinery: load a module from any path
``pkgutil``, ``runpy``                           or run a file as ``__main__``
``sys.meta_path``, ``path_hooks``,               install import hooks (``meta_path``,
``path_importer_cache``, ``exec_module``,        ``path_hooks``, ``path_importer_cache``) or
``load_module``, ``get_code``, ``source_to_code``  drive a loader found elsewhere
``marshal``, ``pickle``, ``_pickle``, ``shelve``,  deserialise code objects or calls to any
``dill``, ``cloudpickle``, ``copyreg``           callable (``exec`` included)
``types.FunctionType`` / ``LambdaType`` /        build functions from code objects, or reach
``CodeType``, ``__code__``, ``co_code``,         the code, globals and builtins of others
``f_code``, ``gi_code``, ``cr_code``,
``ag_code``, ``f_builtins``, ``__globals__``,
``__subclasses__``, ``__self__``
``gc.get_objects`` / ``get_referrers`` /         reach any live object (a loader, a function)
``get_referents``                                without naming it
``code``, ``codeop``, ``timeit``, ``doctest``,   run source text given to them
``pdb``, ``bdb``, ``cProfile``, ``profile``,
``trace``, ``site``, ``py_compile``,
``compileall``, ``pydoc``, ``rlcompleter``
``logging.config``, ``fileConfig``,              library functions that evaluate a config file's
``importfile``, ``safeimport``                   text or re-run a module file on every call
``ctypes``, ``_ctypes``, ``cffi``                call the interpreter's C API (``PyRun_String``)
``sqlite3``, ``_sqlite3``, ``tkinter``,          interpreters of other languages in the standard
``_tkinter``                                     library (SQL, Tcl): logic held as their text
``subprocess``, ``_posixsubprocess``, ``pty``,   start another process, such as an interpreter
``os.system``, ``os.popen``, ``os.exec*``,       running an unmeasured file
``os.spawn*``, ``os.posix_spawn*``
``sys.modules``, ``reload``                      drop or reload a module, so importing it again
                                                 reruns its top-level code (unmeasured) per call
``get_type_hints``, ``get_annotations``,         evaluate annotations held as strings (``from
``ForwardRef``, ``_evaluate``, ``eval_str``,     __future__ import annotations``, a string
``__annotations__``                              annotation): source text run on demand
===============================================  =============================================

A string anywhere that is exactly one of the dunder names or import-system module names above
(``"__builtins__"``, ``"importlib"``...) counts too: such a string has no other use. What this
does not catch: code that reaches these objects through strings it computes (``"ex" + "ec"``)
and an attribute named ``exec``/``eval``/``compile`` on an object obtained that way, since
``re.compile`` and ``model.eval()`` are everyday code. It raises the bar; it is not a sandbox.

Example:
    >>> import ast
    >>> dynamic_code(ast.parse("import re\\npattern = re.compile('x')\\n_run = exec\\n"), "m.py")
    ['m.py:3: `exec` (compiles or runs source held as a string)']
"""

from __future__ import annotations

import ast

__all__ = ["dynamic_code"]

_RUNS_SOURCE = "compiles or runs source held as a string"
_MACHINERY = "import machinery: loads a module from any file or runs a file as a script"
_DESERIALISES = "deserialises code objects or calls to any callable"
_CODE_OBJECTS = "builds functions from code objects or reaches other code's globals and builtins"
_RUNS_TEXT = "runs source text given to it"
_PROCESS = "starts another process, such as an interpreter running an unmeasured file"

#: Names (and attribute names) that are references wherever they appear.
_NAMES = {
    "exec": _RUNS_SOURCE, "eval": _RUNS_SOURCE, "compile": _RUNS_SOURCE, "__import__": _RUNS_SOURCE,
    "breakpoint": "runs the debugger, which reads .pdbrc files",
    "__builtins__": "reaches exec, eval and compile under any name",
    "__loader__": "a module's loader loads any file as a module", "__spec__": "a module's loader loads any file as a module",
}
#: Attribute names that are references on any object (distinctive: no everyday code uses them).
_ATTRIBUTES = {
    "__builtins__": _NAMES["__builtins__"], "__loader__": _NAMES["__loader__"], "__spec__": _NAMES["__spec__"],
    "__import__": _RUNS_SOURCE,
    # a builtin function's module: ``print.__self__`` is ``builtins``, whose exec a computed name reaches (round 36)
    "__self__": "a builtin function's __self__ is the builtins module: exec, eval and compile under any name",
    "meta_path": _MACHINERY, "path_hooks": _MACHINERY, "path_importer_cache": _MACHINERY, "exec_module": _MACHINERY,
    "load_module": _MACHINERY, "get_code": _MACHINERY, "source_to_code": _MACHINERY,
    **dict.fromkeys(["FunctionType", "LambdaType", "CodeType", "__code__", "co_code", "f_code", "gi_code", "cr_code",
                     "ag_code", "f_builtins", "__globals__", "__subclasses__"], _CODE_OBJECTS),
    **dict.fromkeys(["get_objects", "get_referrers", "get_referents"], "reaches any live object without naming it"),
    "reload": "reloads a module, so its top-level code (never measured) runs again",
    **dict.fromkeys(["get_type_hints", "get_annotations", "ForwardRef", "_evaluate", "eval_str", "__annotations__"],
                    "evaluates annotations held as strings: source text run on demand"),
    **dict.fromkeys(["fileConfig", "importfile", "safeimport"],
                    "a library function that evaluates text or re-runs a module file (logging.config, pydoc)"),
    **dict.fromkeys(["execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe", "spawnl", "spawnle",
                     "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp",
                     "startfile"], _PROCESS),
}
#: Attributes that are references only on the os module (``platform.system()`` is not one).
_OS_ATTRIBUTES = {"system": _PROCESS, "popen": _PROCESS}
_OS_MODULES = {"os", "posix", "nt"}
#: Attributes that are references only on the sys module.
_SYS_ATTRIBUTES = {"modules": "drops a module so importing it again reruns its top-level code (never measured)"}
#: Modules (by top-level name) whose import is a reference.
_MODULES = {
    "builtins": _NAMES["__builtins__"],
    **dict.fromkeys(["importlib", "imp", "zipimport", "pkgutil", "runpy"], _MACHINERY),
    **dict.fromkeys(["marshal", "pickle", "_pickle", "cPickle", "shelve", "dill", "cloudpickle", "copyreg"], _DESERIALISES),
    **dict.fromkeys(["code", "codeop", "timeit", "doctest", "pdb", "bdb", "cProfile", "profile", "trace", "site",
                     "py_compile", "compileall", "pydoc", "rlcompleter"], _RUNS_TEXT),
    **dict.fromkeys(["ctypes", "_ctypes", "cffi"], "calls the interpreter's C API, which runs source strings"),
    **dict.fromkeys(["subprocess", "_posixsubprocess", "pty"], _PROCESS),
    # round 40 ran the refactor task's whole ladder as one SQL CASE and as Tcl's if/elseif: logic in another language
    **dict.fromkeys(["sqlite3", "_sqlite3", "tkinter", "_tkinter"], "interprets another language (SQL, Tcl): logic held as its text"),
}
#: Submodules (by dotted name) whose import is a reference, in packages whose other modules are everyday code.
_SUBMODULES = {"logging.config": "fileConfig evaluates the `args` and `class` texts of a config file as Python"}
_SUBMODULE_PREFIXES = tuple(f"{name}." for name in _SUBMODULES) + tuple(_SUBMODULES)
#: Strings that are references anywhere: dunders and import-system module names have no other use.
_ANYWHERE = {"__builtins__", "__import__", "__loader__", "__spec__", "__code__", "__globals__", "__subclasses__", "__self__",
             "builtins", "importlib", "zipimport", "runpy", "marshal", "pickle", "_pickle", "cPickle", "ctypes",
             "_ctypes", "subprocess", "_posixsubprocess", "py_compile", "compileall", "cProfile", "pkgutil", "codeop",
             "_sqlite3", "_tkinter"}
#: Calls whose string arguments name the attribute they look up, and what such a string may name.
_LOOKUPS = {"getattr", "setattr", "hasattr", "delattr", "attrgetter", "methodcaller"}
_LOOKED_UP = {**_NAMES, **_ATTRIBUTES, **_OS_ATTRIBUTES}
#: What a string subscript may name (``globals()["exec"]``); not os's "system", a common dict key.
_SUBSCRIPTED = {**_NAMES, **_ATTRIBUTES}
_WHY = {**_MODULES, **_LOOKED_UP}


def dynamic_code(tree: ast.AST, path: str) -> list[str]:
    """The references through which a module can run code held as data (see the module docstring).

    Args:
        tree: The parsed module (:func:`repogym_gym.metrics.parse_module`).
        path: Its repo-relative posix path, for the messages.

    Returns:
        One message per reference, ``"<path>:<line>: `<reference>` (<why>)"``, in line order;
        empty when there is none.
    """
    os_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names if alias.name in _OS_MODULES}
    sys_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names if alias.name == "sys"}
    found: list[tuple[int, int, str, str]] = []

    def add(node: ast.AST, reference: str, why: str) -> None:
        found.append((getattr(node, "lineno", 1), getattr(node, "col_offset", 0), reference, why))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in _MODULES:
                    add(node, alias.name, _MODULES[top])
                elif alias.name.startswith(_SUBMODULE_PREFIXES):
                    add(node, alias.name, _SUBMODULES[alias.name.split(".")[0] + "." + alias.name.split(".")[1]])
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module else []
            if node.level == 0 and top in _MODULES:
                add(node, node.module or top, _MODULES[top])
            elif node.level == 0 and (hit := next((n for n in [node.module or "", *names] if n in _SUBMODULES
                                                   or n.startswith(_SUBMODULE_PREFIXES)), None)):
                add(node, hit, _SUBMODULES[".".join(hit.split(".")[:2])])
            elif node.level == 0 and top == "sys":
                for alias in node.names:
                    if alias.name in _SYS_ATTRIBUTES:
                        add(node, f"sys.{alias.name}", _SYS_ATTRIBUTES[alias.name])
            elif node.level == 0 and top in _OS_MODULES:
                for alias in node.names:
                    why = _OS_ATTRIBUTES.get(alias.name) or _ATTRIBUTES.get(alias.name)
                    if why is not None:
                        add(node, f"{top}.{alias.name}", why)
            for alias in node.names:
                if alias.name in _ATTRIBUTES and top not in _OS_MODULES:  # from types import FunctionType
                    add(node, alias.name, _ATTRIBUTES[alias.name])
        elif isinstance(node, ast.Name) and node.id in _NAMES and not isinstance(node.ctx, ast.Store):
            add(node, node.id, _NAMES[node.id])
        elif isinstance(node, ast.Name) and node.id == "__annotations__":  # read or written: annotations as data
            add(node, node.id, _ATTRIBUTES[node.id])
        elif isinstance(node, ast.Attribute):
            if node.attr in _ATTRIBUTES:
                add(node, node.attr, _ATTRIBUTES[node.attr])
            elif node.attr in _OS_ATTRIBUTES and isinstance(node.value, ast.Name) and node.value.id in os_names:
                add(node, f"{node.value.id}.{node.attr}", _OS_ATTRIBUTES[node.attr])
            elif node.attr in _SYS_ATTRIBUTES and isinstance(node.value, ast.Name) and node.value.id in sys_names:
                add(node, f"{node.value.id}.{node.attr}", _SYS_ATTRIBUTES[node.attr])
        elif isinstance(node, ast.Constant) and type(node.value) is str and node.value in _ANYWHERE:
            add(node, repr(node.value), _WHY[node.value])
        if isinstance(node, ast.Call) and _called_name(node.func) in _LOOKUPS:
            lookup, strings = _LOOKED_UP, [*node.args, *(keyword.value for keyword in node.keywords)]
        elif isinstance(node, ast.Subscript):
            lookup, strings = _SUBSCRIPTED, [node.slice]
        else:
            continue
        for arg in strings:
            if isinstance(arg, ast.Constant) and type(arg.value) is str and arg.value in lookup and arg.value not in _ANYWHERE:
                add(arg, repr(arg.value), lookup[arg.value])
    return [f"{path}:{line}: `{reference}` ({why})" for line, _, reference, why in sorted(found)]


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
