"""The judge's policy: a PEP 578 audit hook the grader's pytest runner installs before anything else.

A standalone module (standard library only), copied next to the runner for every graded run and
installed by :mod:`repogym_gym.graders.pytest_runner` as its first act, before ``site``, pytest or
any code of the task is imported. Code under test runs in the process that judges it, so the
verdict must not depend on anything that code can reach. The policy rests on four properties:

1. **Code says where it comes from.** Every code object is classified by its ``co_filename``:
   *trusted* (the interpreter's standard library and site-packages, the runner), *grader* (test
   files and ``conftest.py`` files of the grading copy, whose bytes were read before any code ran)
   or *submission* (everything else, ``<string>`` included). A filename cannot be forged:
   compiling or building (``code.replace``) code that carries a trusted filename is refused unless
   it is that file's own code (for the runner's files: the bytes read at start), bytecode is
   unmarshalled only by importlib's own ``SourceLoader.get_code`` on a plain loader for a source
   path (the code takes that path as its name) or by pytest's cache reader for a test module, and
   every grader module that runs is compared with the code compiled from its bytes (a grader
   frame counts only if its code was so verified).
2. **Capabilities are denied to the submission**, decided from the calling frame and from the
   frame that ends up holding what a *deputy* (``inspect.stack``, ``traceback.walk_tb``,
   ``_pytest._code``...) hands on: no audit hooks, trace or profile hooks, heap walks
   (``gc.get_objects/get_referrers/get_referents``), thread-frame dumps, frames reaching
   submission code (``sys._getframe``, ``tb_frame``, ``gi_frame``...), ``__code__`` /
   ``__defaults__`` / ``__kwdefaults__`` assigned to functions that are not the submission's,
   ``__class__`` / class attributes assigned through audited paths on trusted or grader objects,
   functions built from trusted or grader code, ``ctypes``, Tcl and the interpreter's test modules,
   native extensions from outside the trusted roots, ``/proc/*/mem``, symlinks into ``/proc``, and
   for submission code any file of ``/proc`` (the process's maps, fds, environment).
   A denial raises in the caller and is a *violation*: the run is void (score 0, event and file
   named in the grade).
3. **The verdict lives where nothing can reach it.** The ledger of outcomes, the nonce that frames
   the final record and the policy's state are closure variables of the hook, which only the
   interpreter references (heap walks and frames are denied; the hook frame a denial carries
   out holds only the exception: its other locals are deleted before the raise). Each test item is bound, when its module's collection is reported,
   to its node id and to its function, which must be code of its verified test file named as
   the id says. Outcomes arrive as audit events from the runner's plugin and count only when
   they come from pytest's own flow (the runner's code, called by pluggy, called by
   ``_pytest.runner.call_and_report``; main thread; no submission frame on the stack; the bound
   item, each phase once, each item once), and a passing call report counts only after the
   runner saw the call return without an exception. The hook writes the record and ends the process.
4. **What the verdict depends on is compared.** Class attributes and module globals are not
   audited, so every namespace of a trusted module and its classes is snapshotted at first
   contact (the first code that is not trusted about to run); the verdict path (pytest, pluggy,
   unittest, builtins, the runner, and each test module with its classes) is compared before
   every recorded outcome, everything at the end, where no trusted module may hold submission
   code. Changes made through pytest's ``monkeypatch`` by grader code are accepted. Each grader
   module (test modules and their support modules) is watched from its first statement
   (:mod:`judge_statements`: the policy's trace function reports each line of its body, and only a
   statement that binds a name may change it), and again when pytest's import of a test module
   returns, before its collection probes any name: its file's top-level ``def`` names must still bind their own
   functions, a test class and its bases hold only test-file or interpreter functions under
   unittest's method names, and no planted ``__getattr__``, non-str ``__file__`` or import hook is found.

A fifth property runs through the four: **trust comes from what a verified grader frame does at the
line that does it, never from the absence of the submission.** A callback the garbage collector runs
has only library frames and the one it interrupted on the stack (red-team round 25 passed every "no
frame of the submission" check that way), so process starts and run-time compiles are recorded
whoever calls, ``/proc`` is nobody's once task code runs, and a monkeypatch or a sealed observation
counts only from grader code at a line that names the call (``judge_code.line_names``).
And a sixth: **nothing of the submission runs inside the policy.** It compares only values of exact
builtin types (round 26's str subclass, planted as a loader's key, ran its ``__eq__`` inside it and
reached its state); an event raised while it runs by anything but its own code (or the libraries it
calls on its own data, ``own_calls``) is a violation; an exception it catches leaves bare; it reads a
namespace through its items and exactly-str keys, never by a lookup a planted key could answer
(round 27, ``judge_code._core``); a path object is trusted only of pathlib's or pytest's exact classes;
an event's arguments are read as the interpreter passes them (``plain_args``: ``sys.audit`` forges any),
types are found among ids, and ``__dict__`` only through the interpreter's descriptor (round 28).

Known limits: the README's "The judge" (above all, every property holds only while the process's
memory does: CPython is not memory-safe against the code it runs).

Events of the runner (``sys.audit("repogym.judge", op, *args)``): ``init``, ``collected``, ``collect_error``,
``hooks``, ``begin``, ``call``, ``raised``, ``returned``, ``report``, ``end``, ``monkeypatch``, ``sessionfinish``,
``finish``; of a sealed test file, ``observe`` (slot, value), kept in the signed record (:mod:`judge_ledger`).

The policy is standalone files copied beside the runner (:data:`PARTS`): this one (the audited
operations and the hook), :mod:`judge_code` (where code comes from, who holds a frame, verified
grader modules, the names a frame's current line loads), :mod:`judge_runtime` (the record of run-time
code), :mod:`judge_namespaces` (snapshots and comparisons), :mod:`judge_statements` (a grader module's
body, statement by statement), :mod:`judge_objects` and :mod:`judge_ledger` (items, pytest's own flow,
the record). Their closures share one dict, ``J``, which only they reference,
and none of them looks a global up (``tests/graders/test_judge_policy.py`` checks the bytecode).
"""

import sys

if __package__:
    from . import judge_code, judge_ledger, judge_namespaces, judge_objects, judge_runtime, judge_statements
else:  # copied beside the runner and imported as top-level modules
    import judge_code  # type: ignore[no-redef]
    import judge_ledger  # type: ignore[no-redef]
    import judge_namespaces  # type: ignore[no-redef]
    import judge_objects  # type: ignore[no-redef]
    import judge_runtime  # type: ignore[no-redef]
    import judge_statements  # type: ignore[no-redef]

__all__ = ["install"]

#: The policy's files, copied together beside the runner.
PARTS = ("judge_policy.py", "judge_code.py", "judge_namespaces.py", "judge_objects.py", "judge_ledger.py",
         "judge_statements.py", "judge_values.py", "judge_runtime.py")


def _hmac_pads(key):
    """HMAC-SHA256's inner and outer padded keys (RFC 2104) for a key of at most 64 bytes: the record
    is signed with the captured ``sha256`` builtin, so no function the code under test could replace
    ever sees the key."""
    padded = key + b"\0" * (64 - len(key))
    return bytes(b ^ 0x36 for b in padded), bytes(b ^ 0x5C for b in padded)


def _primitives():
    """Everything the closures use, bound once: names the code under test could rebind later
    (builtins, module attributes) are never looked up again."""
    import _thread
    import functools
    import gc
    import hashlib
    import itertools
    import opcode
    import operator
    import os
    import types

    # "id": object.__hash__ is the address rotated by 4 bits (_Py_HashPointer), one-to-one, and raises no event
    return {
        "type": type, "id": object.__hash__, "len": len, "str": str, "bytes": bytes, "int": int, "dict": dict, "set": set,
        "tuple": tuple, "list": list, "zip": zip, "map": map, "sorted": sorted, "frozenset": frozenset, "bool": bool,
        "float": float, "complex": complex, "repr": repr, "hex": hex, "class_module": type.__dict__["__module__"].__get__,
        "callable": callable, "any": any, "all": all, "getattr": getattr, "min": min, "range": range, "enumerate": enumerate, "is_": operator.is_,
        "dict_get": dict.get, "get_referents": gc.get_referents, "gc_isenabled": gc.isenabled,
        "gc_disable": gc.disable, "gc_enable": gc.enable, "token": {}, "own_calls": {},
        "chain": itertools.chain.from_iterable, "repeat": itertools.repeat, "stat": os.stat, "getcwd": os.getcwd, "compile": compile, "modules": sys.modules,
        "sha256": hashlib.sha256, "getframe": sys._getframe, "get_ident": _thread.get_ident, "write": os.write, "exit": os._exit,
        "os_open": os.open, "os_read": os.read, "os_close": os.close, "O_RDONLY": os.O_RDONLY,
        "FunctionType": types.FunctionType, "MethodType": types.MethodType, "ModuleType": types.ModuleType,
        "CodeType": types.CodeType, "FrameType": types.FrameType, "settrace": sys.settrace, "audit": sys.audit,
        "partial": functools.partial, "property": property, "classmethod": classmethod,
        "staticmethod": staticmethod, "ValueError": ValueError, "AttributeError": AttributeError,
        "ImportError": ImportError, "PermissionError": PermissionError, "RuntimeError": RuntimeError, "TypeError": TypeError,
        "BaseException": BaseException, "Exception": Exception, "OSError": OSError,
        "instance_dict": object.__getattribute__,  # (o, "__dict__") for objects of trusted classes only
        "class_dict": type.__dict__["__dict__"].__get__,  # a class's namespace, past any metaclass
        "meta_path": sys.meta_path, "path_hooks": sys.path_hooks,  # the lists themselves: entries are judged at each watch
        # a module on the verdict path given a global of one of these names calls it instead of the builtin
        "builtin_names": frozenset(vars(sys.modules["builtins"])),
        "class_name": type.__dict__["__name__"].__get__,
        "class_qualname": type.__dict__["__qualname__"].__get__,
        "class_mro": type.__dict__["__mro__"].__get__,
        "opmap": dict(opcode.opmap), "version": tuple(sys.version_info[:2]),
    }


def install(config):
    """Install the policy hook (once per process, before anything else is imported).

    Args:
        config: ``{"nonce": str, "key": hex str, "tree": abs path, "grader_files": {abs path: bytes},
            "scored_files": [rel path], "scored_ids": [node id],
            "runner_files": {abs path: its bytes as read first, or None}}``.

    Returns:
        None: nothing that could reach the hook's state leaves this function.
    """
    import os

    J = _primitives()  # noqa: N806 - the policy's closure state, shared by its parts
    grader_bytes = dict(config["grader_files"])  # abs path -> bytes read before any test code ran
    for path in list(grader_bytes):
        grader_bytes.setdefault(os.path.realpath(path), grader_bytes[path])
    inodes = set()
    for path in grader_bytes:
        try:
            st = os.stat(path)
        except OSError:
            continue
        inodes.add((st.st_dev, st.st_ino))
    skip = [p for p in (sys.base_prefix, sys.prefix, sys.pycache_prefix) if p]
    try:
        proc_dev = os.stat("/proc").st_dev  # procfs: every file in it, however reached, is on this device
    except OSError:
        proc_dev = None
    J.update(grader_inodes=frozenset(inodes), open_skip_prefixes=tuple(p.rstrip("/") + "/" for p in skip), proc_dev=proc_dev)
    J.update(
        sources=dict(config.get("sources", {})),  # abs path -> sha256 of a tree file as the run started
        nonce=config["nonce"], tree=os.path.realpath(config["tree"]).rstrip("/") + "/", grader_bytes=grader_bytes,
        mac_pads=_hmac_pads(bytes.fromhex(config["key"])),
        scored_files=frozenset(config["scored_files"]), scored_ids=frozenset(config["scored_ids"]),
        runner_files=frozenset(config["runner_files"]), runner_bytes=dict(config["runner_files"]),
        state={"roots": (), "codes": None, "armed": False, "finished": False, "current": None, "item": None,
               "phases": None, "modules": {}},
        kinds={},  # co_filename -> "trusted" | "grader" | "submission"
        keep=[], rewriting=False,  # objects whose ids the policy relies on stay alive; whether pytest rewrites asserts
        verified={},  # id(code) -> code: grader code that is the compiled bytes of its file
        module_codes={},  # abs path -> codes its bytes compile to (plain, assertion-rewritten)
        module_dicts={},  # id(globals) -> abs path, for verified grader modules
        grader_modules=[],  # their globals, in the order they started to run (watched once their import returned)
        imports={}, decorated={},  # abs path -> {name: (module, attribute)} its top-level imports bind; {def: decorators' root names}
        bound={},  # abs path -> every name it binds anywhere (None: a star import), for planted builtin shadows
        qualnames={},  # abs path -> qualified names of the functions it defines
        lines={},  # abs path -> what each line's module-level statements bind (judge_statements.line_table)
        compiled=[], unmeasured=[], generated=[],  # run-time code for the quality limits (texts; what could not
        # be measured; methods dataclasses and namedtuple wrote, whose shape the host checks)
        violations=[], ledger={}, items={},  # items: id(item) -> [item, node id, function, its state, ran]
        watched=[], everything=[],  # snapshot rows compared before each pass / at the end
        protected_classes={}, protected_modules={},  # id -> object
    )
    judge_code.build(J)
    judge_runtime.build(J)
    judge_namespaces.build(J)
    judge_statements.build(J)
    judge_objects.build(J)
    judge_ledger.build(J)
    sys.addaudithook(_rules(J))


def _rules(J):  # noqa: C901, N803, PLR0915 - one closure per audited operation
    """The audit hook: each audited operation decided from its caller (see the module docstring)."""
    _type, _id, _str, _bytes, _any, _all, _set, _len, _stat = (J["type"], J["id"], J["str"], J["bytes"], J["any"], J["all"],
                                                              J["set"], J["len"], J["stat"])
    _instance_dict, _getframe, _get_ident = J["instance_dict"], J["getframe"], J["get_ident"]
    _gc_isenabled, _gc_disable, _gc_enable = J["gc_isenabled"], J["gc_disable"], J["gc_enable"]
    _os_open, _os_read, _os_close, _O_RDONLY = J["os_open"], J["os_read"], J["os_close"], J["O_RDONLY"]
    _FunctionType, _CodeType = J["FunctionType"], J["CodeType"]
    _ValueError, _AttributeError, _ImportError, _PermissionError, _RuntimeError, _BaseException, _OSError = (
        J["ValueError"], J["AttributeError"], J["ImportError"], J["PermissionError"], J["RuntimeError"],
        J["BaseException"], J["OSError"])
    _class_name, _class_qualname = J["class_name"], J["class_qualname"]
    state, verified, protected_classes, protected_modules = J["state"], J["verified"], J["protected_classes"], J["protected_modules"]
    violate, name_of, key_text, where, safe = J["violate"], J["name_of"], J["key_text"], J["where"], J["safe"]
    kind_of_file, is_submission, holder_of_frames = J["kind_of_file"], J["is_submission"], J["holder_of_frames"]
    verify_module, take_snapshot, on_runner = J["verify_module"], J["take_snapshot"], J["on_runner"]
    exec_globals, begin_statements, on_trace, proc_dev = J["exec_globals"], J["begin_statements"], J["on_trace"], J["proc_dev"]
    deny_always = frozenset(("sys.addaudithook", "sys.setprofile", "sys.settrace", "gc.get_objects", "gc.get_referrers",
                             "gc.get_referents", "sys._current_frames", "sys._current_exceptions", "builtins.breakpoint"))
    frame_attrs = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))
    # Starting a process runs code where the policy cannot follow it (a fork's compiles stay in the
    # child's copy of the record): round 20 kept a refactor task's original code in a forked "rate
    # server" and forwarded calls to it; every start is unmeasured code (the quality limits fail).
    process_events = frozenset(("os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system",
                                "subprocess.Popen", "pty.spawn"))
    file_changes, on_change = J["file_changes"], J["on_change"]  # written where trust is decided by location (round 35)
    # whoever imports them: each runs native code, files or processes in C with no audit event (round 41's Tcl `load`)
    forbidden_imports = frozenset(("ctypes", "_ctypes", "_testcapi", "_testinternalcapi", "_testbuffer", "_testmultiphase", "_testimportmultiple",
                                   "_xxtestfuzz", "_ctypes_test", "_xxsubinterpreters", "_testsinglephase", "cffi", "_cffi_backend", "_tkinter"))
    busy = {}  # thread ident -> how deep it is inside the policy
    # {thread ident: event name}: the one privileged call the policy announces for itself, per thread
    # (a shared slot let one thread's announcement be used up by another's and void a sound run)
    token = J["token"]
    own_calls = J["own_calls"]  # {thread ident: depth} while the policy calls a library on its own data
    gc_was = [False]  # whether collection was enabled when the first thread entered the policy
    _with_traceback = _BaseException.with_traceback
    here = _rules.__code__.co_filename.rpartition("/")[0]
    policy_files = frozenset(f"{here}/{part}" for part in PARTS)
    # the events the policy's own operations raise while it runs (reading a file's bytes)
    policy_events = frozenset(("open", "builtins.id"))
    _set_context = J["class_dict"](_BaseException)["__context__"].__set__
    _set_cause = J["class_dict"](_BaseException)["__cause__"].__set__

    def caller_of_event():
        ident = _get_ident()
        token[ident] = "sys._getframe"
        try:
            return _getframe(4)  # this <- dispatch <- guarded <- hook <- the code that raised the event
        except _ValueError:
            return None
        finally:
            token.pop(ident, None)

    def deliberate(caller, names):
        """Trusted code doing this itself: it names the operation (a callback made of builtins does not)."""
        return caller is not None and kind_of_file(caller.f_code.co_filename) == "trusted" and \
            _any(n in caller.f_code.co_names for n in names)

    def last_part(path):
        if _type(path) is _bytes:
            path = path.decode("latin-1")
        return path.rstrip("/").rsplit("/", 1)[-1] if _type(path) is _str else None

    def on_exec(code, caller):
        filename = code.co_filename
        kind = kind_of_file(filename)
        on_code_run(code)
        if kind == "trusted":
            if caller is not None and _id(caller.f_code) in state["codes"]["pyc_callers"]:
                return _ImportError, f"a test module's code claims to be {filename}"  # a planted pytest cache file
            return None
        if not state["armed"] and (kind == "grader" or (_type(filename) is _str and filename.startswith("/"))):
            state["armed"] = True  # first contact: the first code of a file that is not trusted is about to run
            take_snapshot()
        if kind == "grader" and code.co_name == "<module>":
            if _id(code) not in verified and not verify_module(code, caller):
                return _ImportError, f"the code run as {filename} is not the code of that file"
            namespace = exec_globals(caller)
            if namespace is not None:
                begin_statements(code, namespace)  # its body is traced from its first line (judge_statements)
        return None

    def on_frame(name, error, caller):
        if caller is None or name not in caller.f_code.co_names:
            return error, f"{name} obtained by code that does not name it ({where(caller)})"
        holder = holder_of_frames(caller)
        if holder is not None and is_submission(holder.f_code):
            return error, f"a frame ({name}) reached code of the submission ({where(holder)})"
        return None

    def on_import(name, filename):
        if _type(name) is _str and name.split(".", 1)[0] in forbidden_imports:
            return _ImportError, f"importing {name.split('.', 1)[0]} is not allowed while tests are judged"
        if filename is not None and kind_of_file(filename) != "trusted":
            return _ImportError, f"the native extension {safe(filename, 60)} is outside the interpreter's installation"
        return None

    code_builders = judge_code.CODE_BUILDERS
    note_unmeasured, on_compile, on_code_run = J["note_unmeasured"], J["on_compile"], J["on_code_run"]

    def genuine_loader(frame):
        """``frame`` runs importlib's own ``SourceLoader.get_code`` on a plain ``SourceFileLoader`` (no
        method hidden by an instance attribute) for a source path: the code it unmarshals gets that
        path as its filename, so a bytecode file cannot make code claim another file."""
        codes = state["codes"]
        if frame is None or _id(frame.f_code) not in codes["loader_callers"]:
            return False
        local = J["plain"](frame.f_locals)
        loader = local.get("self")
        # exact str keys before any == (round 26: a str subclass's __eq__ ran inside the policy)
        return _type(loader) is codes["source_loader"] and _type(local.get("source_path")) is _str and \
            _all(_type(k) is _str and (k == "name" or k == "path") for k in _instance_dict(loader, "__dict__"))

    def on_unmarshal(event, caller):
        codes = state["codes"]
        if caller is not None and _id(caller.f_code) in codes["bytecode_readers"]:
            if _id(caller.f_code) in codes["pytest_pyc_readers"]:
                if caller.f_back is not None and _id(caller.f_back.f_code) in codes["pyc_callers"]:
                    return None  # pytest's cache of a rewritten test module: compared with its bytes at exec
            elif genuine_loader(caller.f_back):
                return None  # importlib's bytecode cache of a source file
        return _RuntimeError, f"{event} is not allowed while tests are judged ({where(caller)})"

    def on_setattr(target, name, caller):
        t = _type(target)
        if t is _FunctionType:
            if name in ("__code__", "__defaults__", "__kwdefaults__") and state["armed"] and \
                    not is_submission(target.__code__) and not deliberate(caller, (name,)):
                code = target.__code__
                return _PermissionError, f"{name} of {code.co_filename}:{code.co_name} assigned ({where(caller)})"
            return None
        if name == "__class__" and (_id(t) in protected_classes or _id(target) in protected_modules):
            return _PermissionError, f"__class__ of a {_class_name(t)} assigned ({where(caller)})"
        if _id(target) in protected_classes and state["armed"]:
            return _PermissionError, f"{key_text(name)} of class {_class_qualname(target)} assigned ({where(caller)})"
        return None

    grader_names = frozenset(last_part(p) for p in J["grader_bytes"])
    grader_inodes = J["grader_inodes"]
    skip_prefixes = J["open_skip_prefixes"]  # the interpreter's installation and bytecode cache: never grader files
    importers = (("<frozen importlib._bootstrap_external>", "get_data"), ("/_pytest/assertion/rewrite.py", "_rewrite_test"))

    def is_grader_file(path):
        if _type(path) is _bytes:
            path = path.decode("utf-8", "surrogateescape")
        if _type(path) is not _str:
            return False  # an open file descriptor
        if path in J["grader_bytes"]:
            return True
        if path.startswith("/"):  # through "..", a prefix names no directory (round 34's trusted names)
            if J["canonical"](path) and _any(path.startswith(prefix) for prefix in skip_prefixes):
                return False
        elif last_part(path) in grader_names:  # relative (perhaps to a dir_fd the event does not show)
            return True
        try:
            st = _stat(path)  # follows symlinks; hard links and renames keep the inode
        except (_OSError, _ValueError):
            return False
        return (st.st_dev, st.st_ino) in grader_inodes

    def imported(caller):
        frame, hops = caller, 0
        while frame is not None and hops < 4:
            code = frame.f_code
            if _any(code.co_filename.endswith(tail) and code.co_name == name for tail, name in importers):
                return True
            frame, hops = frame.f_back, hops + 1
        return False

    def in_proc(path):
        """Whether ``path`` (a str or bytes) is a file of procfs, however named (relative, through a
        symlink: ``/dev/fd/../maps`` is ``/proc/self/maps``), by the device its ``stat`` reports."""
        if _type(path) is not _str and _type(path) is not _bytes:
            return False
        try:
            return proc_dev is not None and _stat(path).st_dev == proc_dev
        except (_OSError, _ValueError, J["TypeError"]):
            return False

    def on_open(opened):
        """``/proc/*/mem`` never; nothing of ``/proc`` once task code runs (a violation for code of the
        submission), nor a path object the judge cannot read plainly; a grader file (a test's source)
        only for the import system: the code under test reading the tests it is judged by would be an
        oracle of their expected values. A path object is judged by :func:`path_text`, never converted:
        ``io.FileIO`` hands the hook the object, and converting it again runs its class's code (round 29
        planted an object with ``__bool__`` in an exact ``PosixPath``'s slots)."""
        t = _type(opened)
        is_object = t is not _str and t is not _bytes and t is not J["int"]
        path = path_text(opened) if is_object else opened  # str, bytes, int, or None: a path object not read
        if last_part(path) == "mem":
            shown = safe(path if _type(path) is _str else path.decode("latin-1") if _type(path) is _bytes else "", 60)
            return _PermissionError, f"opening a process's memory ({shown}) is not allowed while tests are judged"
        if state["codes"] is not None and (is_object or in_proc(path)):
            caller = caller_of_event()
            bad, judged = J["submission_frame"](caller), state.get("judged_ident")
            if bad is not None or (judged is not None and _get_ident() != judged):
                # Round 22 read /proc/self/maps for the live mappings, then scanned them through a
                # bytearray stretched over the address space by a dangling memoryview (bpo-15994)
                # for the record's HMAC pads: the judged process's /proc is the judge's.
                shown = "a path object" if is_object else safe(path if _type(path) is _str else path.decode("latin-1"), 60)
                return _PermissionError, f"code of the submission opened {shown}: the judged process's /proc and " \
                    f"path objects are not the submission's ({where(bad or caller)})"
        if state["armed"] and _type(path) is not J["int"] and (path is None or in_proc(path)):
            # whoever opens it: round 25 read /proc/self/maps from a garbage-collector finalizer, whose frames
            # are a library's and the one it interrupted (refused, not void: a library may look for itself)
            return _PermissionError, "the judged process's /proc, or a path object the judge cannot read, opened " \
                f"while tests are judged ({where(caller_of_event())})", False
        if state["codes"] is None or not is_grader_file(path):
            return None
        caller = caller_of_event()
        bad = J["submission_frame"](caller)
        if bad is not None:
            return _PermissionError, f"code of the submission read a test file ({where(bad)})"
        if imported(caller):
            return None
        return _PermissionError, f"a test file is read only to import it ({where(caller)})", False  # quietly: linecache

    def path_text(path):
        """The text of a path object of exactly one of pathlib's classes (its cached ``_str`` slot, set
        when ``io.FileIO`` converted it) or pytest's ``LocalPath`` (its ``strpath``), read by the
        interpreter's own descriptors and only when exactly a str; else None. Nothing of the object
        runs: a subclass's ``__str__``, or an object planted in an exact class's slots, would."""
        t = _type(path)
        if _id(t) not in state.get("path_types", ()):
            return None
        if J["class_name"](t) == "LocalPath":
            text = _instance_dict(path, "__dict__").get("strpath")
        else:
            read = state.get("path_str_slot")
            try:
                text = read(path) if read is not None else None
            except J["AttributeError"]:  # never converted: not what io.FileIO opened
                return None
        return text if _type(text) is _str else None

    def on_symlink(target):
        if _type(target) is _bytes:
            target = target.decode("latin-1")
        if _type(target) is _str and ("proc" in target.split("/") or last_part(target) == "mem"):
            return _PermissionError, f"a symlink to {safe(target, 60)} is not allowed while tests are judged"
        return None

    def dispatch(event, args):  # noqa: C901, PLR0911 - one branch per audited operation
        """None to allow ``event``, or (exception type, message) to refuse it as a violation."""
        if event == "open" or event in file_changes:
            why = on_change(event, args)
            if why is not None:
                return _PermissionError, why
            return on_open(args[0]) if event == "open" else on_symlink(args[0]) if event == "os.symlink" else None
        caller = caller_of_event()
        if event == "repogym.trace":  # the policy's trace function, while a grader module's body runs
            return on_trace(args, caller)
        if event in deny_always or event == "pdb.Pdb":  # doctest's runner makes a Pdb, then puts the trace function
            restore = event == "sys.settrace" and caller is not None and caller.f_code.co_name == "run"  # back (toolz)
            if J["submission_frame"](caller) is not None or not (event == "pdb.Pdb" or (
                    restore and caller.f_code.co_filename.endswith("/doctest.py"))):
                return _RuntimeError, f"{event} is not allowed while tests are judged ({where(caller)})"
        if state["codes"] is None:  # before init only the runner's own trusted start-up runs
            why = on_runner(args[0], args[1:], caller) if event == "repogym.judge" and args else None
            return None if why is None else (_RuntimeError, why)
        if event in process_events:  # whoever starts it (round 25 started one from a garbage-collector finalizer)
            note_unmeasured(f"a process was started at run time ({event}): the code it runs was not measured")
            return None
        if event == "object.__getattr__":
            return on_frame(args[1], _AttributeError, caller)
        if event == "sys._getframe":
            return on_frame("_getframe", _ValueError, caller)
        if event == "exec":
            return on_exec(args[0], caller) if _type(args[0]) is _CodeType else None
        if event == "import":
            return on_import(args[0], args[1])
        if event.startswith("ctypes."):
            return _PermissionError, f"{event} is not allowed while tests are judged"
        if event == "compile":
            return on_compile(args[0], args[1], caller)
        if event == "marshal.loads" or event == "marshal.load":
            return on_unmarshal(event, caller)
        if event == "code.__new__":
            builder = deliberate(caller, ("replace", "CodeType")) and caller.f_code.co_filename.endswith(code_builders)
            if kind_of_file(args[1]) != "submission" and not builder:
                return _RuntimeError, f"code built to claim {safe(args[1], 60)} ({where(caller)})"
            if not builder:
                # Whoever calls: red-team round 24 built one from a weakref finalizer, whose frames are
                # weakref's and the one it interrupted, and any trusted frame names str.replace.
                # CPython runs a code object's bytecode unchecked: one LOAD_CONST past co_consts gave
                # round 21 a view of the whole address space and the record's HMAC key with it. Trusted
                # code that builds one itself (types.coroutine sets a flag) is not the submission's doing.
                return _RuntimeError, f"a code object built at run time ({where(caller)}): CPython trusts its bytecode"
            return None
        if event == "function.__new__":
            if state["armed"] and _type(args[0]) is _CodeType and not is_submission(args[0]):
                return _RuntimeError, f"a function built from code of {args[0].co_filename} ({where(caller)})"
            return None
        if event == "object.__setattr__":
            return on_setattr(args[0], args[1], caller)
        if event == "repogym.judge":  # the runner's, or a sealed test file's "observe"
            why = on_runner(args[0], args[1:], caller) if args else "an empty runner event"
            return None if why is None else (_RuntimeError, why)
        return None

    plain_args = J["plain_args"]  # watched: the events dispatch names; guarded lets any other through as dispatch does
    watched = deny_always | process_events | file_changes | frozenset(("open", "repogym.trace", "pdb.Pdb", "repogym.judge",
        "object.__getattr__", "sys._getframe", "exec", "import", "compile", "marshal.loads", "marshal.load", "code.__new__",
        "function.__new__", "object.__setattr__", "os.symlink"))

    def guarded(event, args):
        ident = _get_ident()
        # once the record is built, the judged thread only writes it and ends the process; every
        # other thread is still judged (a thread waved through then had frames, and the writer)
        done = state["finished"] and ident == state.get("judged_ident") and event != "repogym.judge"
        if ident in busy:
            if event == token.get(ident):
                del token[ident]
                return None  # the policy's own sys._getframe or gc.get_referents, announced just before it
            if done:
                return None
            # Anything else raised while the policy runs is foreign code running inside it: red-team round 26
            # planted a str subclass where the policy compared keys, and its __eq__ took a frame through a
            # library that names _getframe. The policy calls nothing of the submission's on purpose, so
            # whatever ran is a violation, whoever raised the event.
            token[ident] = "sys._getframe"
            try:
                raiser = _getframe(2)  # guarded <- hook <- the frame whose operation raised the event
            except _ValueError:
                raiser = None
            finally:
                token.pop(ident, None)
            own = ident in own_calls  # the policy compiling the grader files itself (library code, trusted data)
            if not own and (raiser is None or _type(raiser.f_code.co_filename) is not _str
                            or raiser.f_code.co_filename not in policy_files or event not in policy_events):
                violate(f"code ran inside the judge's policy and raised {safe(event, 40)}")
                return _RuntimeError, "code ran inside the judge's policy"
        elif done:
            return None
        if event not in watched and not event.startswith("ctypes."):  # the hook passes an exact str
            return None
        depth = busy.get(ident, 0)
        if not busy:
            gc_was[0] = _gc_isenabled()
        busy[ident] = depth + 1
        _gc_disable()  # no cyclic-GC finalizer of the submission runs inside the policy
        try:
            plain = plain_args(event, args)  # round 28 forged events whose arguments ran code in the comparisons
            verdict = dispatch(event, plain) if plain is not None else (
                _RuntimeError, f"a forged {safe(event, 40)} event: its arguments are not what the interpreter passes")
        except _BaseException as exc:  # noqa: BLE001 - a fault of the policy itself fails closed
            # The exception may be the submission's (round 26 raised one held elsewhere from a planted __eq__):
            # its traceback, context and cause would carry the policy's frames out; dropped through the base
            # class's own descriptors (a subclass's attribute would run code of its own).
            _with_traceback(exc, None)
            _set_context(exc, None)
            _set_cause(exc, None)
            verdict = _RuntimeError, f"the judge's policy failed on {event}: {name_of(exc)}"
        finally:
            if depth:
                busy[ident] = depth
            else:
                del busy[ident]
            if not busy and gc_was[0]:  # collection resumes when no thread is inside the policy
                _gc_enable()
        if verdict is not None and _len(verdict) == 2:  # a third element False: refused, not a violation
            violate(verdict[1])
        return verdict

    def hook(event, args, _guarded=guarded, _frame_attrs=frame_attrs, _getattr_event="object.__getattr__", _t=_type,
             _s=_str, _n=_len, _b=_BaseException):
        # The one frame of the policy an exception carries out (its traceback's first entry), so
        # the frame must hold nothing that reaches the policy's state when it is left: no free
        # variables (defaults instead), and every local but the exception and the event's name
        # deleted before any raise, its own or one passing through (round 30: a forged
        # object.__getattr__ with no arguments raised IndexError here, and the frame, out of
        # gc.garbage, held _guarded).
        try:
            if event == _getattr_event and _n(args) == 2 and _t(args[1]) is _s and args[1] not in _frame_attrs:
                return  # __code__ reads and the like: frequent and harmless (a str subclass's hash would run)
            denied = _guarded(event, args)
        except _b:
            del args, _guarded, _frame_attrs, _getattr_event, _t, _s, _n, _b
            raise
        if denied is not None:
            error = denied[0](denied[1])
            del denied, args, _guarded, _frame_attrs, _getattr_event, _t, _s, _n, _b
            raise error

    return hook
