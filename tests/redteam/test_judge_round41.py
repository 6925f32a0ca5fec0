"""Red-team round 41 (an attack of 53ecd56 with the source in hand): native code that outlived its library file.

Round 40 answered Tcl's ``load`` (through ``tkinter``) with a check at the end that every executable mapping
names a file of the installation. Round 41's library had no ``<Pkg>_Init``, so ``load`` failed and unmapped
it, but its constructor had already copied a ``list ==`` stub (and, on the refactor task, the original
``quote()`` ladder in C) into a private copy-on-write mapping of ``libc.so.6``: the map still named libc. 1.0
with the bug in, under local and bwrap (Docker's image has no Tcl). The property it broke: a mapping's path
says where it was opened, not what its pages hold, and native code that runs once can forge anything the
process checks afterwards. So the loader is gone (``_tkinter`` is refused in the judged process, however it
is imported: the attack reached it through ``mock.patch("tk" + "inter.Tcl")``), a written executable page
voids the run, and quality knows native code by its bytes, not its name (the ladder lived in ``tables.dat``).
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repogym_gym.graders.judge_runtime import foreign_native_code
from repogym_gym.task import Task, load_task
from tests.helpers import FIXED_SOURCE, STARTER
from tests.redteam.helpers import Start, attack, component, run, submit, write

ROUTES = {
    "import tkinter": "\n\nimport tkinter as _t\n_t.Tcl()\n",
    "unittest.mock's import by name": '\n\nfrom unittest import mock as _m\n_m.patch("tk" + "inter.Tcl").getter().Tcl()\n',
}


@pytest.mark.parametrize("route", list(ROUTES))
@attack("the judge", "Tcl in the judged process, however it is imported (round 41 loaded native code with Tcl's "
        "`load`, reaching tkinter through mock.patch's import by name: 1.0 with the bug in)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_tcl_is_refused_in_the_judged_process(start: Start, tiny_task: Task, route: str) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", FIXED_SOURCE + ROUTES[route])
    result = submit(env)
    assert result.reward == 0.0 and result.info["passed"] is False and result.info.get("infra_error") is None
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert "importing _tkinter is not allowed while tests are judged" in invalid, invalid


@pytest.fixture(scope="module")
def elf_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A shared library built with the system's C compiler, as base64 text the agent writes."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    assert gcc, "a C compiler (Debian's gcc) is needed to build the library"
    folder = tmp_path_factory.mktemp("elf")
    (folder / "quote.c").write_text("int quote(int w) { return w < 500 ? 1 : 2; }\n")
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(folder / "quote.so"), str(folder / "quote.c")], check=True,
                   capture_output=True)
    return base64.b64encode((folder / "quote.so").read_bytes()).decode()


@attack("refactor tasks", "the original logic as native code in a file not named like an extension (round 41: "
        "`shipping/tables.dat`, an ELF image, quality 1.0)", local="score 0 with the reason",
        confining="score 0 with the reason")
def test_native_code_is_known_by_its_bytes_not_its_name(start: Start, elf_image: str) -> None:
    task = load_task(STARTER / "shipping-quote-refactor")
    env = start(task)
    for path, text in _golden_files(task).items():
        write(env, path, text)
    write(env, "shipping/tables.b64", elf_image)
    decoded = run(env, "python -c \"import base64; open('shipping/tables.dat', 'wb').write(base64.b64decode("
                       "open('shipping/tables.b64').read()))\" && rm shipping/tables.b64")
    assert decoded.observation.exit_code == 0, decoded.observation.text
    result = submit(env)
    quality = component(result, "quality")
    assert quality["score"] == 0.0 and quality["passed"] is False, quality
    assert any("shipping/tables.dat:1: native code (an ELF image)" in m for m in quality["messages"]), quality["messages"]
    assert result.reward < 1.0 and result.info.get("infra_error") is None


def _golden_files(task: Task) -> dict[str, str]:
    """The refactor's golden files, as the agent would write them."""
    from repogym_gym.workspace import Workspace  # noqa: PLC0415

    with Workspace.create(task) as ws:
        ws.apply_patch(task.golden_patch())
        return {rel: (ws.path / rel).read_text() for rel in ws.changed_paths()}


LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
ROOTS = ("/usr/lib/", "/lib/", f"{sys.base_prefix}/")


def _mapping(perms: str, path: str, dirty: int = 0) -> str:
    return (f"7f0000000000-7f0000001000 {perms} 00000000 08:01 1234 {path}\nSize: 4 kB\nRss: 4 kB\n"
            f"Private_Clean: 4 kB\nPrivate_Dirty: {dirty} kB\nVmFlags: rd ex mr mw me\n")


def test_an_executable_mapping_whose_pages_were_written_is_foreign_native_code() -> None:
    """Round 41's constructor copied its code into a private mapping of libc: the path still says libc, the
    dirty private pages say otherwise."""
    clean = _mapping("r-xp", LIBC) + _mapping("rw-p", "", dirty=8) + _mapping("r--p", LIBC, dirty=4)
    assert foreign_native_code(clean, "/tmp/tree", ROOTS) is None  # written data pages are data
    ghost = clean + _mapping("r-xp", LIBC, dirty=4)
    assert "was written into an executable mapping" in str(foreign_native_code(ghost, "/tmp/tree", ROOTS))
    assert "from anonymous memory" in str(foreign_native_code(clean + _mapping("rwxp", ""), "/tmp/tree", ROOTS))
    assert "from the tree" in str(foreign_native_code(clean + _mapping("r-xp", "/tmp/tree/_x.so"), "/tmp/tree", ROOTS))
    assert "from a file elsewhere" in str(foreign_native_code(clean + _mapping("r-xp", f"{LIBC} (deleted)"), "/tmp/tree",
                                                               ROOTS))
    assert foreign_native_code(clean + _mapping("r-xp", "[vdso]"), "/tmp/tree", ROOTS) is None


def test_this_process_s_own_map_shows_no_foreign_native_code() -> None:
    """The rule on a real map: an interpreter with extensions of its installation and environment loaded."""
    import _decimal  # noqa: F401, PLC0415 - extensions of the installation, mapped now
    import sqlite3  # noqa: F401, PLC0415

    venv = str(Path(sys.executable).parent.parent)
    roots = tuple(r.rstrip("/") + "/" for r in (sys.base_prefix, sys.base_exec_prefix, venv, "/usr/lib", "/lib", "/lib64"))
    assert foreign_native_code(Path("/proc/self/smaps").read_text(), "/nonexistent-tree", roots) is None
