"""The notebooks in notebooks/ run top to bottom, and are committed without outputs.

Each notebook asserts its own key results in code cells (rewards, advantages, grades, mined
tasks' noop 0 / golden 1), so executing it is the test. The kernel is the ``python3`` kernel of
the interpreter running pytest (jupyter_client resolves its ``python`` to ``sys.executable``),
its working directory is notebooks/ (as when a user opens the notebook in Jupyter), and its
environment is this process's, so the session's isolated ``REPOGYM_CACHE_DIR`` reaches it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tests.helpers import REPO_ROOT

NOTEBOOKS = REPO_ROOT / "notebooks"
NOTEBOOK_NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
#: Seconds one cell may run; the mining cell of notebook 04 with a cold cache is the longest (~30 s).
CELL_TIMEOUT_S = 300
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failing_cell(nb: nbformat.NotebookNode) -> str:
    """A message naming the first cell with an error output: its index, source and traceback (no colours)."""
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                trace = ANSI.sub("", "\n".join(output.get("traceback", [])))
                return f"cell {index} failed\n--- source ---\n{cell.source}\n--- error ---\n{trace}"
    return "no cell has an error output"


def execute(path: Path) -> nbformat.NotebookNode:
    """Run the notebook at ``path`` in a fresh kernel; fail with the failing cell's source and error."""
    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ)  # explicit: the kernel must see this session's REPOGYM_CACHE_DIR
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    problem = None
    try:
        client.execute(env=env)
    except CellExecutionError:
        problem = failing_cell(nb)
    except (CellTimeoutError, DeadKernelError) as exc:
        problem = f"{type(exc).__name__}: {ANSI.sub('', str(exc))}"
    if problem is not None:
        pytest.fail(f"{path.name}: {problem}", pytrace=False)
    return nb


def test_the_four_notebooks_exist() -> None:
    assert NOTEBOOK_NAMES == ["01_quickstart.ipynb", "02_grpo_group_rollouts.ipynb",
                              "03_custom_grader.ipynb", "04_mine_real_package.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_is_committed_without_outputs_and_asserts_its_results(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), f"{name}: clear the outputs before committing"
    assert sum(c.source.count("assert") for c in code) >= 3, f"{name}: a notebook checks its key results with assert"
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_runs_top_to_bottom(name: str) -> None:
    nb = execute(NOTEBOOKS / name)
    executed = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in executed)
    streams = [o.get("text", "") for c in executed for o in c.outputs if o.get("name") == "stderr"]
    assert not [s for s in streams if "Warning" in s], f"{name}: warnings in the kernel's stderr: {streams}"
