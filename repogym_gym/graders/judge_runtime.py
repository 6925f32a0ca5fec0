"""The judge's record of run-time code: every text compiled while tests run, whoever compiles it
(part of :mod:`judge_policy`, standard library only).

What runs is measured, not only what was carried: the quality limits are applied on the host to the
texts this part records (``compiled``; ``generated`` for the methods ``dataclasses`` and
``namedtuple`` write, whose shape the host checks) and fail with each reason it notes (``unmeasured``).

**Who calls decides nothing.** Once task code runs (before, only the interpreter's and the runner's
code has run: pytest's plugins and their dataclasses), a compile is recorded whoever calls it: red-team round 24 exec'd the
original code from a ``weakref.finalize`` callback and round 25 compiled it through
``typing.ForwardRef`` from one; a callback the garbage collector runs has only library frames and the
one it interrupted on the stack, so "no frame of the submission" proves nothing. Left unrecorded are
only a file's own bytes (an import: the host measures the file), a test file's syntax tree rewritten
by pytest (its code is compared with the file's bytes when it runs) and ``ast.parse`` of its own text and name, which builds a
tree and runs nothing; should the code compiled there run at once after all (a callback that
interrupted ``ast.parse`` and exec'd a text of its own), its text is recorded when it runs.

:func:`build` adds ``note_unmeasured``, ``note_children``, ``check_native``, ``on_compile``, ``on_code_run`` and
``file_bytes`` to ``J``;
no closure here looks a global up.
"""


def build(J):  # noqa: C901, N803 - J is the policy's closure state
    """Add the run-time code record's closures to ``J`` (after :mod:`judge_code`'s)."""
    _type, _str, _bytes, _len, _any, _tuple = J["type"], J["str"], J["bytes"], J["len"], J["any"], J["tuple"]
    _os_open, _os_read, _os_close, _O_RDONLY, _OSError = J["os_open"], J["os_read"], J["os_close"], J["O_RDONLY"], J["OSError"]
    _RuntimeError, _get_ident, _sha256 = J["RuntimeError"], J["get_ident"], J["sha256"]
    state, kind_of_file, tree = J["state"], J["kind_of_file"], J["tree"]
    compiled, unmeasured, generated, sources = J["compiled"], J["unmeasured"], J["generated"], J["sources"]
    grader_bytes, runner_bytes = J["grader_bytes"], J["runner_bytes"]
    seen = J["set"]()
    left = [1 << 20]  # characters of run-time code the record carries (1 MiB)
    generators = ("/dataclasses.py", "/collections/__init__.py")  # dataclass methods, namedtuple's __new__
    parsed = {}  # thread ident -> (filename, source) ast.parse just compiled unrecorded

    def file_bytes(path):
        fd = _os_open(path, _O_RDONLY)
        try:
            chunks = []
            while chunk := _os_read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            _os_close(fd)

    def note_unmeasured(why):
        if why not in unmeasured:
            unmeasured.append(why)

    import os  # noqa: PLC0415 - bound now, before any task code runs, and never looked up again
    import resource  # noqa: PLC0415

    _waitpid, _WNOHANG, _ChildProcessError, _getrusage, _CHILDREN = (  # noqa: N806
        os.waitpid, os.WNOHANG, ChildProcessError, resource.getrusage, resource.RUSAGE_CHILDREN)

    def child_usage():
        usage = _getrusage(_CHILDREN)  # kept across exec: compared with its value now, not with 0
        return usage.ru_maxrss, usage.ru_utime + usage.ru_stime

    children_at_start = child_usage()

    def note_children():
        """At the end: a child process of the judged process the kernel knows of, running or not yet
        waited for (``waitpid``) or waited for since now (RUSAGE_CHILDREN), is unmeasured code. Starts
        from C raise no audit event (round 40: Tcl's ``exec`` and ``_posixsubprocess.fork_exec`` ran the
        original function in a child interpreter)."""
        try:
            _waitpid(-1, _WNOHANG)
            seen = True  # a child exists, running or exited
        except _ChildProcessError:
            seen = child_usage() != children_at_start
        except _OSError:
            seen = True  # fail closed
        if seen:
            note_unmeasured("a process was started at run time (the kernel counts a child of the judged process): "
                            "the code it runs was not measured")

    def library(caller, tail, name=None):
        code = caller.f_code if caller is not None else None
        return code is not None and kind_of_file(code.co_filename) == "trusted" and code.co_filename.endswith(tail) \
            and (name is None or code.co_name == name)

    def note_compiled(source, filename, caller):
        ident = _get_ident()
        parsed.pop(ident, None)
        if not state["armed"]:
            return  # only the interpreter's and the runner's code has run yet (pytest's plugins, their dataclasses)
        if library(caller, "/ast.py", "parse") and parsing(caller, source, filename):
            parsed[ident] = (filename, source)  # a tree, which runs nothing: recorded if code of that name runs next
            return
        if _type(source) is not _str and _type(source) is not _bytes and rewritten_file(caller):
            return  # a file's tree, rewritten by pytest: measured as the file (a test file: compared with its bytes)
        record(source, filename, generated if library(caller, generators) else compiled)

    def parsing(caller, source, filename):
        """Whether this compile is ``ast.parse``'s own, of the text and name it was given: a compile made
        while ``ast.parse`` converts its arguments (a ``__fspath__`` of builtins compiling another text,
        red-team round 26) has ``ast.parse`` as its caller too but not its text."""
        local = J["plain"](caller.f_locals)  # a class body's: its __prepare__ mapping (round 29)
        given, name = local.get("source"), local.get("filename")
        if _type(given) is _str:
            try:
                given = given.encode("utf-8")
            except UnicodeError:
                return False
        if _type(name) is _bytes:
            name = name.decode("utf-8", "surrogateescape")
        # exact types on both sides before any ==: a str subclass's __eq__ would run inside the policy
        return _type(given) is _bytes and _type(source) is _bytes and given == source and \
            _type(name) is _str and _type(filename) is _str and name == filename

    def rewritten_file(caller):
        """Whether ``caller`` is pytest's ``_rewrite_test`` compiling the tree of a file that is as the run
        found it: a test file or a file of the tree."""
        if not library(caller, "/_pytest/assertion/rewrite.py", "_rewrite_test"):
            return False
        local = J["plain"](caller.f_locals)  # a class body's: its __prepare__ mapping (round 29)
        path, data = local.get("strfn"), local.get("source")
        if _type(path) is not _str or _type(data) is not _bytes:
            return False
        return grader_bytes.get(path) == data or sources.get(path) == _sha256(data).hexdigest()

    def on_code_run(code):
        """A code object is about to run: if it is what ``ast.parse`` just compiled unrecorded, record its text."""
        ident = _get_ident()
        pending = parsed.get(ident)
        if pending is not None and _type(code.co_filename) is _str and code.co_filename == pending[0]:
            del parsed[ident]
            record(pending[1], pending[0], compiled)

    def record(source, filename, into):
        if _type(source) is _str:
            data, text = None, source
        elif _type(source) is _bytes:
            # the event hands every text over as UTF-8 bytes; compile() drops a leading BOM (round 26 hid the
            # original code from the host's parse behind one)
            data, text = source, source.decode("utf-8", "replace").removeprefix("\ufeff")
        else:
            note_unmeasured("a syntax tree was compiled at run time")
            return
        if _type(filename) is _str and filename.startswith(tree):
            # a file of the tree as it was when the run started (the quality grader measures it if it
            # was carried): a module written into the tree, or rewritten, at run time is measured here
            data = text.encode("utf-8", "surrogatepass") if data is None else data
            if filename in grader_bytes and grader_bytes[filename] == data:
                return
            if sources.get(filename) is not None and sources[filename] == _sha256(data).hexdigest():
                return
        elif _type(filename) is _str and kind_of_file(filename) != "submission":
            data = text.encode("utf-8", "surrogatepass") if data is None else data
            try:
                own = file_bytes(filename)  # the interpreter's own file, compiled as it is on disk
            except _OSError:
                own = None
            if own == data:
                return
        if _type(source) is _bytes:
            for line in source.split(b"\n", 2)[:2]:
                low = line.lower().replace(b"_", b"-")
                if b"#" in line and b"coding" in low and b"utf-8" not in low and b"utf8" not in low:
                    # bytes decoded by their own cookie: the text recorded would not be what ran (red-team round 24)
                    note_unmeasured("bytes with an encoding declaration were compiled at run time")
                    return
        if text in seen:
            return
        if _len(text) > left[0] or _len(compiled) + _len(generated) >= 4096:
            note_unmeasured("more code was compiled at run time than the record carries (1 MiB)")
            return
        seen.add(text)
        left[0] -= _len(text)
        into.append(text)

    def on_compile(source, filename, caller):
        """None, or (error, message): a trusted file's name may be given only to that file's own code."""
        if _type(filename) is _bytes:
            filename = filename.decode("utf-8", "surrogateescape")
        if state["codes"] is not None:
            note_compiled(source, filename, caller)
        if kind_of_file(filename) != "trusted":
            return None  # submission names are harmless; grader modules are compared with their bytes at exec
        if _type(source) is _str:
            source = source.encode("utf-8", "surrogateescape")
        if filename in runner_bytes:  # as read before anything ran: the file itself may since have changed
            if _type(source) is _bytes and runner_bytes[filename] == source:
                return None
            return _RuntimeError, f"code compiled as {filename} is not that file's code"
        try:
            if _type(source) is _bytes and file_bytes(filename) == source:
                return None
        except _OSError:
            pass
        return _RuntimeError, f"code compiled as {filename} is not that file's code"

    import sys  # noqa: PLC0415
    venv = sys.executable.rsplit("/", 2)[0]  # <venv>/bin/python: its site-packages may hold a dependency's extensions
    # opened now, before any task code runs, and read again at the end (procfs writes it out at each read):
    # the judged process's /proc is the judge's, and an open there at the end would be judged as any other
    _pread, _fstat = os.pread, os.fstat
    try:
        smaps_fd = os.open("/proc/self/smaps", os.O_RDONLY | os.O_CLOEXEC)
        smaps_id = (os.fstat(smaps_fd).st_dev, os.fstat(smaps_fd).st_ino)
    except OSError:
        smaps_fd = smaps_id = None

    def read_smaps():
        """The memory map, through the descriptor opened at the start (``OSError``: it is not that file now)."""
        if smaps_fd is None:
            raise _OSError("no memory map")
        st = _fstat(smaps_fd)
        if (st.st_dev, st.st_ino) != smaps_id:
            raise _OSError("the memory map's descriptor was replaced")
        chunks, offset = [], 0
        while chunk := _pread(smaps_fd, 1 << 16, offset):
            chunks.append(chunk)
            offset += _len(chunk)
        return b"".join(chunks)

    native_roots = _tuple(r.rstrip("/") + "/" for r in (sys.base_prefix, sys.base_exec_prefix, venv, "/usr/lib", "/lib",
                                                          "/lib64", "/usr/lib64", "/lib32", "/usr/lib32", "/usr/local/lib"))
    _violate, native_verdict = J["violate"], foreign_native_code  # bound now: no global is looked up later

    def check_native():
        """At the end: every executable mapping of the judged process is a file of the interpreter's
        installation, of its environment or of the system's libraries, never of the tree, of a writable
        place or of anonymous memory, and holds that file's bytes (no private page written since it was
        mapped). Extension imports from elsewhere and the loaders of other languages are refused as they
        happen, but round 40 had Tcl's ``load`` (``tkinter``) dlopen a library the agent built, which swapped
        ``list ==`` for one ignoring order (1.0 with the bug in), and round 41's library copied its code into a
        private copy of ``libc.so.6``'s mapping, whose line in the map still names libc: a mapping's path
        says where it was opened, its dirty private pages that its bytes are not that file's."""
        try:
            smaps = read_smaps().decode("utf-8", "surrogateescape")
        except _OSError:
            return _violate("the judged process's memory map could not be read")
        why = native_verdict(smaps, tree, native_roots)
        return _violate(why) if why is not None else None

    J.update(file_bytes=file_bytes, note_unmeasured=note_unmeasured, note_children=note_children, on_compile=on_compile,
             on_code_run=on_code_run, check_native=check_native)


def foreign_native_code(smaps, tree, roots, _len=len, _any=any):
    """Why the memory map ``smaps`` (the text of ``/proc/<pid>/smaps``) shows native code that is not the
    installation's, or None: an executable mapping of anonymous memory, of a file under ``tree`` or outside
    ``roots`` (directory prefixes ending in ``/``), of a deleted file, or one with a private page written
    since it was mapped (``Private_Dirty`` > 0: round 41's code copied into a private mapping of libc). It looks
    no global up (the builtins it uses were bound when it was defined, before any task code ran)."""
    executable = False
    for line in smaps.splitlines():
        fields = line.split(None, 5)
        if _len(fields) >= 5 and "-" in fields[0] and _len(fields[1]) == 4:  # a mapping's first line, as in maps
            path = fields[5] if _len(fields) == 6 else ""
            executable = "x" in fields[1] and path not in ("[vdso]", "[vsyscall]")
            if executable and (not path.startswith("/") or path.startswith(tree) or not _any(path.startswith(r) for r in roots)
                               or path.endswith(" (deleted)") or "/../" in path):
                where = "the tree" if path.startswith(tree) else "anonymous memory" if not path else "a file elsewhere"
                return (f"native code from {where} ran in the judged process (only the interpreter's installation, "
                        "its environment and the system's libraries may be mapped executable)")
        elif executable and _len(fields) >= 2 and fields[0] == "Private_Dirty:" and fields[1] != "0":
            return ("native code was written into an executable mapping of the judged process (its pages are no "
                    "longer the bytes of the file it names)")
    return None
