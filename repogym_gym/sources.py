"""Task sources: a local directory, a git commit, an sdist from the package index or an archive → a directory.

Every kind ends the same way: ``dest`` holds exactly the source files and no ``.git``, ``.hg`` or
``.svn`` anywhere, so no history, remotes, tags or reflog reach a workspace. Downloads are checked
against the sha256 in task.yaml before they enter the cache (a partial or wrong download never
does), and a second materialisation is served from the cache without the network.

Cache layout (under the baseline cache root, see :func:`repogym_gym.paths.default_cache_dir`)::

    sdists/<package>-<version>-<sha256[:16]>/<sdist>   ``pip download``, verified
    tarballs/<sha256>/<file name>                      http(s) archives, verified
    git/<sha256(url)[:16]>.git                         bare mirror: cloned once, fetched on a missing commit

Example:
    >>> materialize(task, Path("/tmp/src"), cache_dir=default_cache_dir())  # doctest: +SKIP
    >>> fetch_sdist("six", "1.16.0", "1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926",
    ...             cache_dir=Path("/tmp/cache"))                           # doctest: +SKIP
    PosixPath('/tmp/cache/sdists/six-1.16.0-1e61c37477a16264/six-1.16.0.tar.gz')
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from repogym_gym.errors import GitMetadataError, SourceError, validation_summary
from repogym_gym.gitstore import GitCommandError, export_tree, has_commit, run_git
from repogym_gym.sandbox.process import run_captured
from repogym_gym.spec import GitSource, LocalSource, PypiSource, Source, TarballSource
from repogym_gym.task import Task

__all__ = ["fetch_sdist", "fetch_tarball", "materialize", "materialize_source"]

#: Version-control metadata never copied or unpacked, at any depth.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
_PIP_TIMEOUT_S = 300.0
_GIT_TIMEOUT_S = 600.0
_HTTP_TIMEOUT_S = 60.0
_MAX_DOWNLOAD_BYTES = 2 << 30
_CHUNK_BYTES = 1 << 20
_TAIL_CHARS = 2000
_PIP_ENV_NAMES = frozenset({
    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "NETRC", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
})
_PIP_ENV_PREFIXES = ("PIP_", "XDG_")
_NETWORK_MARKERS = (
    "NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
    "Name or service not known", "Network is unreachable", "ConnectTimeoutError", "ReadTimeoutError",
    "ProxyError", "SSLError", "Max retries exceeded", "connection broken",
)
_REMOTE_GIT = re.compile(r"^[^/]+:")  # scheme://… or scp-like host:path; anything else is a local path


def materialize(task: Task, dest: Path, *, cache_dir: Path) -> None:
    """Create ``dest`` holding the task's source tree (``repo.source``), with no VCS metadata.

    Args:
        task: The task; relative paths in its source are relative to ``task.root``.
        dest: The directory to create; it must not exist (its parent is created if needed).
        cache_dir: Cache root for downloads and git mirrors (``sdists/``, ``tarballs/``, ``git/``).

    Raises:
        SourceError: naming the task, the package / URL / directory and what to do, when the
            source is missing, unreachable, fails its sha256, or cannot be unpacked safely.
            Nothing is left at ``dest`` then.
    """
    try:
        materialize_source(task.spec.repo.source, task.root, dest, cache_dir=cache_dir)
    except SourceError as exc:
        raise SourceError(f"task {task.id!r}: {exc}") from None


def materialize_source(source: Source, task_root: Path, dest: Path, *, cache_dir: Path) -> None:
    """Create ``dest`` holding ``source``'s tree; relative paths are relative to ``task_root``.

    Raises:
        SourceError: as :func:`materialize`, without the task prefix.
    """
    dest, cache_dir = Path(dest), Path(cache_dir)
    if dest.exists() or dest.is_symlink():
        raise SourceError(f"destination {dest} already exists; materialise into a new path")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, LocalSource):
        _copy_local(task_root / source.path, dest)
    elif isinstance(source, GitSource):
        _export_git(_git_location(task_root, source.url), source.commit, dest, cache_dir=cache_dir)
    elif isinstance(source, PypiSource):
        sdist = fetch_sdist(source.package, source.version, source.sha256, cache_dir=cache_dir)
        _unpack(sdist, dest, subdir=source.subdir, what=f"the sdist of {source.package}=={source.version}")
    else:
        archive = _tarball(task_root, source, cache_dir=cache_dir)
        _unpack(archive, dest, subdir=source.subdir, what=f"archive {source.url}")


# --- sdists from the package index --------------------------------------------------------------


def fetch_sdist(package: str, version: str, sha256: str, *, cache_dir: Path) -> Path:
    """The path of the verified sdist ``package==version`` in the cache, downloading it on a miss.

    A hit (the cached file exists and its sha256 matches) runs nothing. A miss runs
    ``python -m pip download --no-deps --no-binary :all:`` (the user's pip configuration and
    index apply) into a temporary directory, checks the sha256 and only then moves the file into
    ``cache_dir/sdists/<package>-<version>-<sha256[:16]>/``; a file lock keeps two processes from
    downloading the same sdist at once.

    Raises:
        SourceError: naming the package and version for a wrong sha256 (expected and actual),
            a version the index does not have, no network, a pip timeout (300 s) or failure.
    """
    try:
        spec = PypiSource(type="pypi", package=package, version=version, sha256=sha256)
    except ValidationError as exc:
        raise SourceError(f"pypi source {package}=={version}: {validation_summary(exc)}") from None
    what = f"{spec.package}=={spec.version}"
    root = Path(cache_dir) / "sdists"
    entry = root / f"{spec.package}-{spec.version}-{spec.sha256[:16]}"
    if (hit := _cached_file(entry, spec.sha256)) is not None:
        return hit
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f"{entry.name}.lock"):
        if (hit := _cached_file(entry, spec.sha256)) is not None:
            return hit  # another process downloaded it while we waited
        shutil.rmtree(entry, ignore_errors=True)  # a corrupt entry
        staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}.download-", dir=root))
        try:
            _pip_download(what, staging, cwd=root)
            files = sorted(staging.iterdir())
            if len(files) != 1 or not files[0].is_file():
                raise SourceError(f"pip download {what} left {[f.name for f in files]}, expected one sdist file")
            _verify(files[0], spec.sha256, f"the sdist of {what} ({files[0].name})")
            os.replace(staging, entry)
            return entry / files[0].name
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _pip_download(what: str, dest: Path, *, cwd: Path) -> None:
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", str(dest), what]
    env = {k: v for k, v in os.environ.items() if k in _PIP_ENV_NAMES or k.startswith(_PIP_ENV_PREFIXES)}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    try:
        code, out, _ = run_captured(argv, cwd=cwd, env=env, timeout_s=_PIP_TIMEOUT_S, merge_stderr=True)
    except subprocess.TimeoutExpired:
        raise SourceError(
            f"pip download {what} timed out after {_PIP_TIMEOUT_S:.0f} s; check the network and the index, then retry"
        ) from None
    if code != 0:
        raise SourceError(_pip_failure(what, code, out.decode("utf-8", "replace")))


def _pip_failure(what: str, code: int, output: str) -> str:
    package, version = what.split("==", 1)
    if "No module named pip" in output:
        return f"cannot download {what}: pip is not installed for {sys.executable}; install pip"
    network = next((line.strip() for line in output.splitlines() if any(m in line for m in _NETWORK_MARKERS)), None)
    if network is not None:
        return (
            f"cannot download {what}: network failure, pip could not reach the package index "
            f"({network[-300:]}); check the network, proxy and pip's index settings (PIP_INDEX_URL, pip.conf)"
        )
    versions = re.search(r"\(from versions: ([^)]*)\)", output)
    if versions is not None or "No matching distribution" in output:
        found = versions.group(1).strip() if versions else "none"
        if found == "none":
            return (
                f"cannot download {what}: pip found no distribution of {package!r} at all: the name may be "
                "wrong, or the index is unreachable or disabled (offline, PIP_NO_INDEX, --no-index)"
            )
        listed = found.split(", ")
        shown = ", ".join(listed[-10:]) + (f" (and {len(listed) - 10} older)" if len(listed) > 10 else "")
        return (
            f"cannot download {what}: version {version!r} of {package!r} has no sdist on the package index "
            f"(versions there: {shown}); fix repo.source.version"
        )
    return f"pip download {what} failed (exit {code}):\n{output[-_TAIL_CHARS:]}"


# --- archives ------------------------------------------------------------------------------------


def fetch_tarball(url: str, sha256: str, *, cache_dir: Path) -> Path:
    """The path of the verified archive at http(s) ``url`` in the cache, downloading it on a miss.

    The download goes to a temporary file under ``cache_dir/tarballs``; only a file whose sha256
    matches is moved to ``cache_dir/tarballs/<sha256>/<file name>``.

    Raises:
        SourceError: naming the URL, for a non-http(s) URL, an HTTP or network failure, a
            download over 2 GiB, or a wrong sha256 (expected and actual).
    """
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise SourceError(f"archive URL {url!r} must be http(s)")
    try:
        TarballSource(type="tarball", url=url, sha256=sha256)
    except ValidationError as exc:
        raise SourceError(f"archive {url}: {validation_summary(exc)}") from None
    sha256 = sha256.lower()
    root = Path(cache_dir) / "tarballs"
    entry = root / sha256
    if (hit := _cached_file(entry, sha256)) is not None:
        return hit
    root.mkdir(parents=True, exist_ok=True)
    name = PurePosixPath(urllib.parse.urlsplit(url).path).name or "archive.tar"
    with _locked(root / f"{sha256}.lock"):
        if (hit := _cached_file(entry, sha256)) is not None:
            return hit
        shutil.rmtree(entry, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{sha256[:16]}.download-", dir=root))
        try:
            _http_download(url, staging / name)
            _verify(staging / name, sha256, f"archive {url}")
            os.replace(staging, entry)
            return entry / name
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _tarball(task_root: Path, source: TarballSource, *, cache_dir: Path) -> Path:
    if source.is_remote():
        return fetch_tarball(source.url, source.sha256, cache_dir=cache_dir)
    path = task_root / source.url
    if not path.is_file():
        raise SourceError(f"archive {source.url!r} does not exist in the task directory {task_root}")
    _verify(path, source.sha256, f"archive {source.url}")
    return path


def _http_download(url: str, target: Path) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "repogym_gym"})
    try:
        with urllib.request.urlopen(request, timeout=_HTTP_TIMEOUT_S) as response, open(target, "wb") as out:
            size = 0
            while chunk := response.read(_CHUNK_BYTES):
                size += len(chunk)
                if size > _MAX_DOWNLOAD_BYTES:
                    raise SourceError(f"archive {url} is larger than {_MAX_DOWNLOAD_BYTES >> 30} GiB; refused")
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise SourceError(f"cannot download {url}: HTTP {exc.code} {exc.reason}; check the URL") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceError(f"cannot download {url}: network failure ({reason}); check the network and the URL") from None


def _unpack(archive: Path, dest: Path, *, subdir: str | None, what: str) -> None:
    """Unpack ``archive`` (zip by name, else tar) and move its root (``subdir`` or its single top
    directory) to ``dest``."""
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.unpack-", dir=dest.parent))
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, staging, what)
        else:
            _extract_tar(archive, staging, what)
        os.rename(_archive_root(staging, subdir, what), dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_member(name: str, what: str) -> bool:
    """Refuse absolute and ``..`` members; return False for VCS metadata (skipped)."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", name):
        raise SourceError(f"{what}: refused member {name!r}: an absolute or '..' path would write outside the tree")
    return not VCS_DIRS.intersection(pure.parts)


def _extract_tar(archive: Path, into: Path, what: str) -> None:
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if _check_member(m.name, what)]
            tar.extractall(into, members=members, filter="data")
    except tarfile.FilterError as exc:
        raise SourceError(f"{what}: refused member: {exc}") from None
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise SourceError(f"{what}: {archive.name} is not a readable tar archive ({exc})") from None
    except OSError as exc:
        raise SourceError(f"{what}: cannot unpack {archive.name}: {exc}") from None


def _extract_zip(archive: Path, into: Path, what: str) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = [i for i in zf.infolist() if _check_member(i.filename, what)]
            for info in infos:
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise SourceError(f"{what}: refused member {info.filename!r}: zip symlinks are not supported")
            for info in infos:
                path = Path(zf.extract(info, into))
                if not info.is_dir() and (info.external_attr >> 16) & 0o111:
                    path.chmod(0o755)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise SourceError(f"{what}: {archive.name} is not a readable zip archive ({exc})") from None
    except OSError as exc:
        raise SourceError(f"{what}: cannot unpack {archive.name}: {exc}") from None


def _archive_root(staging: Path, subdir: str | None, what: str) -> Path:
    top = sorted(os.listdir(staging))
    if subdir is not None:
        root = staging / subdir
        if root.is_symlink() or not root.is_dir() or not root.resolve().is_relative_to(staging.resolve()):
            raise SourceError(f"{what}: subdir {subdir!r} is not a directory in the archive (top level: {top[:10]})")
        return root
    if len(top) != 1 or (staging / top[0]).is_symlink() or not (staging / top[0]).is_dir():
        raise SourceError(
            f"{what}: expected exactly one top-level directory, found {top[:10]}; set repo.source.subdir to "
            "the directory to use as the repository root"
        )
    return staging / top[0]


# --- git ---------------------------------------------------------------------------------------


def _git_location(task_root: Path, url: str) -> str:
    """A URL as given; a local path made absolute (relative to the task directory)."""
    if _REMOTE_GIT.match(url):
        return url
    path = Path(url)
    return str(path if path.is_absolute() else (task_root / path).resolve())


def _export_git(location: str, commit: str, dest: Path, *, cache_dir: Path) -> None:
    """Export exactly ``commit``'s tree to ``dest`` through a cached bare mirror of ``location``."""
    what = f"git source {location} at {commit}"
    root = cache_dir / "git"
    root.mkdir(parents=True, exist_ok=True)
    mirror = root / f"{hashlib.sha256(location.encode()).hexdigest()[:16]}.git"
    with _locked(root / f"{mirror.stem}.lock"), _git_errors(what):
        if not (mirror / "HEAD").is_file():
            _clone_mirror(location, mirror)
        if not has_commit(mirror, commit):
            run_git(["fetch", "--quiet", "--prune", "origin"], git_dir=mirror, cwd=root,
                    timeout_s=_GIT_TIMEOUT_S, network=True)
            if not has_commit(mirror, commit):
                raise SourceError(
                    f"{what}: commit {commit} is not in the repository (after fetching its branches and tags); "
                    "check repo.source.commit and that the commit is on a branch or tag of repo.source.url"
                )
        export_tree(mirror, commit, dest)


def _clone_mirror(location: str, mirror: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{mirror.stem}.clone-", dir=mirror.parent))
    try:
        run_git(["clone", "--mirror", "--quiet", "--", location, str(staging)], git_dir=None, cwd=mirror.parent,
                timeout_s=_GIT_TIMEOUT_S, network=True)
        os.replace(staging, mirror)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def _git_errors(what: str) -> Iterator[None]:
    """git's failures as :class:`SourceError` naming the source and what to check."""
    try:
        yield
    except GitCommandError as exc:
        reason = exc.stderr[-_TAIL_CHARS:]
        raise SourceError(f"{what}: git {exc.command} failed (exit {exc.returncode}): {reason}; "
                          "check repo.source.url") from None
    except GitMetadataError as exc:
        hint = "; check the network" if "timed out" in str(exc) else ""
        raise SourceError(f"{what}: {exc}{hint}") from None


# --- local directories and shared helpers ------------------------------------------------------


def _copy_local(src: Path, dest: Path) -> None:
    if not src.is_dir():
        raise SourceError(f"local source directory {src} does not exist")
    try:
        shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(*VCS_DIRS))
    except shutil.Error as exc:  # every file that failed: (source, destination, why)
        shutil.rmtree(dest, ignore_errors=True)
        rows = [r for r in (exc.args[0] if exc.args and isinstance(exc.args[0], list) else []) if len(r) == 3]
        shown = "; ".join(_failed_copy(str(r[0]), str(r[2]), src) for r in rows[:3])
        more = f" (and {len(rows) - 3} more)" if len(rows) > 3 else ""
        special = any(str(r[2]).replace(f"`{r[0]}` ", "").startswith("is ") for r in rows)  # a pipe, socket, device
        hint = ("a task's repository holds regular files, directories and symlinks only" if special
                else "the files must be readable by this user")
        raise SourceError(f"cannot copy the local source {src}: {shown or exc}{more}; {hint}") from None
    except OSError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise SourceError(f"cannot copy the local source {src}: {exc}") from None


def _failed_copy(path: str, why: str, root: Path) -> str:
    """One file ``copytree`` could not copy, named relative to ``root``: "calc/pipe is a named pipe"."""
    prefix = str(root).rstrip("/") + "/"
    shown = path[len(prefix):] if path.startswith(prefix) else path
    why = why.replace(f"`{path}` ", "")
    return f"{shown} {why}" if why.startswith("is ") else f"{shown}: {why}"


def _sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _verify(path: Path, sha256: str, what: str) -> None:
    actual = _sha256_of(path)
    if actual != sha256:
        raise SourceError(
            f"sha256 mismatch for {what}: expected {sha256}, got {actual}; if the new file is trusted, "
            "put its sha256 in repo.source.sha256"
        )


def _cached_file(entry: Path, sha256: str) -> Path | None:
    """The file in cache entry ``entry`` whose sha256 is ``sha256``, or None."""
    if not entry.is_dir():
        return None
    for path in sorted(entry.iterdir()):
        if path.is_file() and not path.is_symlink() and _sha256_of(path) == sha256:
            return path
    return None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) across processes and threads."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
