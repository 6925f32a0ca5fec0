"""Files only their owner reads: results, trajectories, exports and reports hold every episode's patch.

An export line carries the patch that earned its score, and a results directory holds the
trajectories of every episode: an agent of a later episode that could read them would read the
answers. So whatever the runner, the env, ``repogym export`` and ``repogym report`` write is
mode ``0600``, in directories they create with mode ``0700`` (an existing directory keeps its
mode: it is the user's), and every file is written whole (a temporary file beside it, then
``os.replace``), so an interrupted write leaves the old file or none.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> write_private(root / "run" / "a.json", "{}")
    >>> oct((root / "run" / "a.json").stat().st_mode & 0o777), oct((root / "run").stat().st_mode & 0o777)
    ('0o600', '0o700')
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "make_private_dirs", "private_writer", "write_private"]

#: Mode of every directory repogym_gym creates for results, trajectories, exports and reports.
PRIVATE_DIR_MODE = 0o700
#: Mode of every file it writes there.
PRIVATE_FILE_MODE = 0o600


def make_private_dirs(path: Path) -> None:
    """Create directory ``path`` and its missing parents with mode 0700; existing ones are left as they are.

    Raises:
        OSError: when a directory cannot be created.
    """
    missing = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another writer
        os.chmod(directory, PRIVATE_DIR_MODE)  # whatever the umask


@contextmanager
def private_writer(path: Path) -> Iterator[TextIO]:
    """A text stream (utf-8) whose content replaces ``path`` (mode 0600) when the block ends without
    an exception; on an exception ``path`` is left as it was and the temporary file removed.

    Raises:
        OSError: when the directory cannot be created or written.
    """
    path = Path(path)
    make_private_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)  # mkstemp's own mode, made explicit
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_private(path: Path, text: str) -> None:
    """Write ``text`` (utf-8) to ``path``, mode 0600, whole (see :func:`private_writer`).

    Raises:
        OSError: when the directory cannot be created or written.
    """
    with private_writer(path) as handle:
        handle.write(text)
