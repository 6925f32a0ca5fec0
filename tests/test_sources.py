"""Tests for repogym_gym.sources: git commits, sdists, archives and directories become a source tree.

Everything is real: git repositories built here, ``pip download`` against the configured package
index (the sdist of six 1.16.0, 34 kB), archives written with tarfile/zipfile and served by an
http.server on 127.0.0.1. "Offline" is an environment in which pip cannot reach any index: an
index URL on a closed local port, no config files, no find-links.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import socket
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from repogym_gym.baseline import BaselineStore
from repogym_gym.errors import SourceError, TaskError, TaskSpecError
from repogym_gym.sources import fetch_sdist, fetch_tarball, materialize
from repogym_gym.task import Task, load_task, parse_spec
from repogym_gym.workspace import Workspace
from tests.helpers import git, tiny_spec

SIX = ("six", "1.16.0", "1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926")
SIX_ENTRY = "six-1.16.0-1e61c37477a16264"
WRONG_SHA = "0" * 64


def write_task(root: Path, source: dict[str, Any]) -> Task:
    root.mkdir(parents=True, exist_ok=True)
    (root / "task.yaml").write_text(yaml.safe_dump(tiny_spec(repo={"source": source})))
    return load_task(root)


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(cache_area: Path) -> list[str]:
    """What a failed fetch left in a cache area, lock files aside (those are reused, never data)."""
    return sorted(p.name for p in cache_area.iterdir() if not p.name.endswith(".lock")) if cache_area.exists() else []


# --- pypi: six 1.16.0 through pip ----------------------------------------------------------------


@pytest.fixture(scope="module")
def six_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the six sdist, downloaded once for the module with the ordinary pip."""
    cache = tmp_path_factory.mktemp("six-cache")
    fetch_sdist(*SIX, cache_dir=cache)
    return cache


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> str:
    """pip sees one index, on a closed local port (one logged retry), and no config or find-links."""
    url = f"http://127.0.0.1:{closed_port()}/simple/"
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("PIP_RETRIES", "1")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    return url


def test_first_fetch_downloads_the_sdist_into_its_documented_cache_entry(six_cache: Path) -> None:
    sdist = six_cache / "sdists" / SIX_ENTRY / "six-1.16.0.tar.gz"
    assert sorted(p.name for p in (six_cache / "sdists").iterdir()) == [SIX_ENTRY, f"{SIX_ENTRY}.lock"]
    assert [p.name for p in sdist.parent.iterdir()] == [sdist.name]
    assert sha256_of(sdist) == SIX[2]


def test_second_fetch_is_served_from_the_cache_without_starting_pip(
    six_cache: Path, offline: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    before = sorted(str(p) for p in six_cache.rglob("*"))
    stat = (six_cache / "sdists" / SIX_ENTRY / "six-1.16.0.tar.gz").stat()
    path = fetch_sdist(*SIX, cache_dir=six_cache)
    assert path == six_cache / "sdists" / SIX_ENTRY / "six-1.16.0.tar.gz"
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert sorted(str(p) for p in six_cache.rglob("*")) == before  # no download directory was ever made
    # The same call against an empty cache needs pip, which fails in this environment.
    with pytest.raises(SourceError, match="six==1.16.0"):
        fetch_sdist(*SIX, cache_dir=six_cache / "empty")


def test_pypi_source_materialises_the_sdist_tree_offline_from_the_cache(
    six_cache: Path, offline: str, tmp_path: Path
) -> None:
    task = write_task(tmp_path / "task", {"type": "pypi", "package": "six", "version": "1.16.0", "sha256": SIX[2]})
    materialize(task, tmp_path / "src", cache_dir=six_cache)
    tree = files_under(tmp_path / "src")
    assert {"six.py", "setup.py", "PKG-INFO", "test_six.py"} <= set(tree)
    assert b"__version__ = \"1.16.0\"" in tree["six.py"]
    assert not any(part in {".git", ".hg", ".svn"} for rel in tree for part in rel.split("/"))


def test_baseline_of_a_pypi_task_holds_the_sdist_files(six_cache: Path, offline: str, tmp_path: Path) -> None:
    task = write_task(tmp_path / "task", {"type": "pypi", "package": "six", "version": "1.16.0", "sha256": SIX[2]})
    assert task.source_dir is None
    baseline = BaselineStore(six_cache).get(task)
    with tarfile.open(six_cache / "sdists" / SIX_ENTRY / "six-1.16.0.tar.gz") as tar:
        expected = {m.name.removeprefix("six-1.16.0/"): tar.extractfile(m).read()  # type: ignore[union-attr]
                    for m in tar.getmembers() if m.isfile()}
    assert files_under(baseline.tree) == expected
    assert {"six.py", "setup.py", "PKG-INFO"} <= set(baseline.manifest)


def test_a_wrong_sha256_names_package_expected_and_actual_and_caches_nothing(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        fetch_sdist("six", "1.16.0", WRONG_SHA, cache_dir=tmp_path)
    message = str(info.value)
    assert "six==1.16.0" in message and "six-1.16.0.tar.gz" in message
    assert f"expected {WRONG_SHA}, got {SIX[2]}" in message
    assert leftovers(tmp_path / "sdists") == []


def test_a_missing_version_names_package_and_version_and_lists_what_exists(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        fetch_sdist("six", "0.0.999", WRONG_SHA, cache_dir=tmp_path)
    message = str(info.value)
    assert "cannot download six==0.0.999: version '0.0.999' of 'six' has no sdist on the package index" in message
    assert "1.16.0" in message and "fix repo.source.version" in message
    assert leftovers(tmp_path / "sdists") == []


def test_no_network_is_reported_as_a_network_failure_and_caches_nothing(offline: str, tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        fetch_sdist(*SIX, cache_dir=tmp_path)
    message = str(info.value)
    assert message.startswith("cannot download six==1.16.0: network failure, pip could not reach the package index")
    assert leftovers(tmp_path / "sdists") == []


def test_a_disabled_index_says_the_index_may_be_unreachable_or_disabled(
    offline: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    with pytest.raises(SourceError, match=r"pip found no distribution of 'six' at all: .*unreachable or disabled"):
        fetch_sdist(*SIX, cache_dir=tmp_path)
    assert leftovers(tmp_path / "sdists") == []


def test_fetch_sdist_refuses_arguments_pip_would_read_as_options_before_running_it(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"package '--index-url=http://evil' is not a valid project name"):
        fetch_sdist("--index-url=http://evil", "1.0", SIX[2], cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_pypi_failure_through_materialize_names_the_task_and_is_a_task_error(offline: str, tmp_path: Path) -> None:
    task = write_task(tmp_path / "task", {"type": "pypi", "package": "six", "version": "1.16.0", "sha256": SIX[2]})
    with pytest.raises(TaskError, match=r"^task 'tiny-calc': cannot download six==1.16.0: network failure"):
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "src").exists()


# --- archives --------------------------------------------------------------------------------------


def make_tar(path: Path, members: dict[str, str | bytes | tuple[str, str]], *, mode: int = 0o644) -> str:
    """Write a .tar.gz: path -> content, or (kind, target) for ("symlink", t) / ("hardlink", t). Returns its sha256."""
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(content, tuple):
                info.type = tarfile.SYMTYPE if content[0] == "symlink" else tarfile.LNKTYPE
                info.linkname = content[1]
                tar.addfile(info)
                continue
            data = content.encode() if isinstance(content, str) else content
            info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else mode
            tar.addfile(info, io.BytesIO(data))
    return sha256_of(path)


PROJECT = {"proj-1.0/pkg/__init__.py": "x = 1\n", "proj-1.0/run.sh": "#!/bin/sh\n", "proj-1.0/README": "hi\n"}


def tarball_task(root: Path, members: dict[str, Any], **source: Any) -> Task:
    root.mkdir(parents=True, exist_ok=True)
    sha = make_tar(root / "src.tar.gz", members)
    return write_task(root, {"type": "tarball", "url": "src.tar.gz", "sha256": sha, **source})


def test_a_local_tarball_unpacks_its_single_top_directory_without_vcs_metadata(tmp_path: Path) -> None:
    members = {**PROJECT, "proj-1.0/.git/config": "[core]\n", "proj-1.0/pkg/.hg/x": "", "proj-1.0/.svn/y": ""}
    task = tarball_task(tmp_path / "task", members)
    materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert files_under(tmp_path / "src") == {"README": b"hi\n", "pkg/__init__.py": b"x = 1\n", "run.sh": b"#!/bin/sh\n"}
    assert os.access(tmp_path / "src" / "run.sh", os.X_OK)
    assert not (tmp_path / "cache").exists()  # a local archive is read in place


def test_a_tarball_with_a_wrong_sha256_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "task"
    root.mkdir()
    actual = make_tar(root / "src.tar.gz", PROJECT)
    task = write_task(root, {"type": "tarball", "url": "src.tar.gz", "sha256": WRONG_SHA})
    with pytest.raises(SourceError) as info:
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert str(info.value) == (
        f"task 'tiny-calc': sha256 mismatch for archive src.tar.gz: expected {WRONG_SHA}, got {actual}; "
        "if the new file is trusted, put its sha256 in repo.source.sha256"
    )
    assert not (tmp_path / "src").exists()


@pytest.mark.parametrize("evil", ["proj-1.0/../../evil.txt", "../evil.txt", "/tmp/evil.txt"])
def test_members_that_would_write_outside_the_tree_are_refused(tmp_path: Path, evil: str) -> None:
    task = tarball_task(tmp_path / "task", {**PROJECT, evil: "pwned\n"})
    with pytest.raises(SourceError, match=f"refused member {evil!r}: an absolute or '..' path"):
        materialize(task, tmp_path / "out" / "src", cache_dir=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "out").iterdir()] == []
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "out" / "evil.txt").exists()


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../etc/passwd"])
def test_symlinks_pointing_outside_the_tree_are_refused(tmp_path: Path, target: str) -> None:
    task = tarball_task(tmp_path / "task", {**PROJECT, "proj-1.0/link": ("symlink", target)})
    with pytest.raises(SourceError, match="refused member"):
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "src").exists()


def test_subdir_selects_the_repository_root_inside_the_archive(tmp_path: Path) -> None:
    members = {"mono/lib/a.py": "a\n", "mono/lib/sub/b.py": "b\n", "mono/docs/x.md": "x\n", "other/y": "y\n"}
    task = tarball_task(tmp_path / "task", members, subdir="mono/lib")
    materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert files_under(tmp_path / "src") == {"a.py": b"a\n", "sub/b.py": b"b\n"}


def test_a_missing_subdir_is_named(tmp_path: Path) -> None:
    task = tarball_task(tmp_path / "task", PROJECT, subdir="proj-1.0/nope")
    expected = r"subdir 'proj-1.0/nope' is not a directory in the archive \(top level: \['proj-1.0'\]\)"
    with pytest.raises(SourceError, match=expected):
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")


def test_several_top_level_entries_without_subdir_are_a_clear_error(tmp_path: Path) -> None:
    task = tarball_task(tmp_path / "task", {"a/x": "1", "b/y": "2", "README": "r"})
    with pytest.raises(SourceError) as info:
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert str(info.value) == (
        "task 'tiny-calc': archive src.tar.gz: expected exactly one top-level directory, found "
        "['README', 'a', 'b']; set repo.source.subdir to the directory to use as the repository root"
    )


def test_a_missing_local_archive_is_named(tmp_path: Path) -> None:
    task = write_task(tmp_path / "task", {"type": "tarball", "url": "gone.tar.gz", "sha256": WRONG_SHA})
    with pytest.raises(SourceError, match=r"archive 'gone.tar.gz' does not exist in the task directory"):
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")


def test_a_file_that_is_not_an_archive_is_named(tmp_path: Path) -> None:
    root = tmp_path / "task"
    root.mkdir()
    (root / "src.tar.gz").write_bytes(b"not a tarball")
    task = write_task(root, {"type": "tarball", "url": "src.tar.gz", "sha256": sha256_of(root / "src.tar.gz")})
    with pytest.raises(SourceError, match="src.tar.gz is not a readable tar archive"):
        materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")


def make_zip(path: Path, members: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100755 if name.endswith(".sh") else 0o100644) << 16
            zf.writestr(info, text)
    return sha256_of(path)


def test_a_zip_archive_unpacks_with_its_executable_bits(tmp_path: Path) -> None:
    root = tmp_path / "task"
    root.mkdir()
    sha = make_zip(root / "src.zip", {**PROJECT, "proj-1.0/.git/HEAD": "ref\n"})
    materialize(write_task(root, {"type": "tarball", "url": "src.zip", "sha256": sha}), tmp_path / "src",
                cache_dir=tmp_path / "cache")
    assert files_under(tmp_path / "src") == {"README": b"hi\n", "pkg/__init__.py": b"x = 1\n", "run.sh": b"#!/bin/sh\n"}
    assert os.access(tmp_path / "src" / "run.sh", os.X_OK)
    assert not os.access(tmp_path / "src" / "README", os.X_OK)


@pytest.mark.parametrize("evil", ["../evil.txt", "/abs/evil.txt", "proj-1.0/../../evil.txt"])
def test_a_zip_member_outside_the_tree_is_refused(tmp_path: Path, evil: str) -> None:
    root = tmp_path / "task"
    root.mkdir()
    sha = make_zip(root / "src.zip", {**PROJECT, evil: "pwned"})
    with pytest.raises(SourceError, match=f"refused member {evil!r}"):
        materialize(write_task(root, {"type": "tarball", "url": "src.zip", "sha256": sha}), tmp_path / "out" / "src",
                    cache_dir=tmp_path / "cache")
    assert list((tmp_path / "out").iterdir()) == []


@contextmanager
def serve(files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    """An http.server on 127.0.0.1 serving ``files`` (URL path -> bytes); yields (base URL, requested paths)."""
    requested: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            body = files.get(self.path)
            if body is None:
                self.send_error(404, "Not Found")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def archive(tmp_path: Path) -> tuple[bytes, str]:
    sha = make_tar(tmp_path / "served.tar.gz", PROJECT)
    return (tmp_path / "served.tar.gz").read_bytes(), sha


@pytest.mark.usefixtures("no_proxy")
def test_a_url_archive_is_downloaded_once_then_served_from_the_cache(
    tmp_path: Path, archive: tuple[bytes, str]
) -> None:
    data, sha = archive
    cache = tmp_path / "cache"
    with serve({"/dl/proj-1.0.tar.gz": data}) as (base, requested):
        task = write_task(tmp_path / "task", {"type": "tarball", "url": f"{base}/dl/proj-1.0.tar.gz", "sha256": sha})
        materialize(task, tmp_path / "first", cache_dir=cache)
        assert requested == ["/dl/proj-1.0.tar.gz"]
    assert (cache / "tarballs" / sha / "proj-1.0.tar.gz").read_bytes() == data
    materialize(task, tmp_path / "second", cache_dir=cache)  # the server is gone
    assert files_under(tmp_path / "second") == files_under(tmp_path / "first") != {}


@pytest.mark.usefixtures("no_proxy")
def test_a_corrupt_cached_archive_is_downloaded_again(tmp_path: Path, archive: tuple[bytes, str]) -> None:
    data, sha = archive
    with serve({"/a.tar.gz": data}) as (base, requested):
        path = fetch_tarball(f"{base}/a.tar.gz", sha, cache_dir=tmp_path)
        path.write_bytes(data[: len(data) // 2])  # a truncated file where the cache entry is
        assert fetch_tarball(f"{base}/a.tar.gz", sha, cache_dir=tmp_path).read_bytes() == data
        assert requested == ["/a.tar.gz", "/a.tar.gz"]


@pytest.mark.usefixtures("no_proxy")
def test_a_downloaded_archive_with_the_wrong_bytes_never_reaches_the_cache(
    tmp_path: Path, archive: tuple[bytes, str]
) -> None:
    data, sha = archive
    with serve({"/a.tar.gz": data[:-100]}) as (base, _), pytest.raises(SourceError) as info:
        fetch_tarball(f"{base}/a.tar.gz", sha, cache_dir=tmp_path)
    assert f"sha256 mismatch for archive {base}/a.tar.gz: expected {sha}, got " in str(info.value)
    assert leftovers(tmp_path / "tarballs") == []


@pytest.mark.usefixtures("no_proxy")
def test_http_errors_and_unreachable_servers_name_the_url(tmp_path: Path) -> None:
    with serve({}) as (base, _):
        url = f"{base}/missing.tar.gz"
        with pytest.raises(SourceError, match=f"cannot download {url}: HTTP 404 Not Found; check the URL"):
            fetch_tarball(url, WRONG_SHA, cache_dir=tmp_path)
    url = f"http://127.0.0.1:{closed_port()}/a.tar.gz"
    with pytest.raises(SourceError, match=f"cannot download {url}: network failure"):
        fetch_tarball(url, WRONG_SHA, cache_dir=tmp_path)
    assert leftovers(tmp_path / "tarballs") == []


@pytest.mark.usefixtures("no_proxy")
def test_concurrent_fetches_of_one_archive_download_it_once(tmp_path: Path, archive: tuple[bytes, str]) -> None:
    data, sha = archive
    results: list[Path] = []
    with serve({"/a.tar.gz": data}) as (base, requested):
        def fetch() -> None:
            results.append(fetch_tarball(f"{base}/a.tar.gz", sha, cache_dir=tmp_path))

        threads = [threading.Thread(target=fetch) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert requested == ["/a.tar.gz"]
    assert len(results) == 4 and len(set(results)) == 1


# --- git ---------------------------------------------------------------------------------------------


def commit_files(repo: Path, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        if text is None:
            git(repo, "rm", "-q", rel)
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
        if rel.endswith(".sh"):
            (repo / rel).chmod(0o755)
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository with 3 commits on main, a tag on the middle one, a side branch and a remote."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit_files(repo, {"a.txt": "1\n", "gone.txt": "bye\n"}, "one")
    middle = commit_files(
        repo,
        {"a.txt": "2\n", "gone.txt": None, "pkg/mod.py": "VERSION = '$Format:%H$'\n", "run.sh": "#!/bin/sh\n",
         "ignored.txt": "kept anyway\n", ".gitattributes": "ignored.txt export-ignore\npkg/mod.py export-subst\n"},
        "two",
    )
    last = commit_files(repo, {"a.txt": "3\n", "late.txt": "late\n"}, "three")
    git(repo, "tag", "-a", "v2", "-m", "release", middle)
    git(repo, "checkout", "-q", "-b", "side", first)
    commit_files(repo, {"side.txt": "side\n"}, "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "remote", "add", "origin", "https://example.invalid/upstream.git")
    return repo, [first, middle, last]


def git_task(tmp_path: Path, url: str, commit: str) -> Task:
    return write_task(tmp_path / "task", {"type": "git", "url": url, "commit": commit})


def test_a_git_commit_materialises_exactly_that_commits_files_and_no_git(
    tmp_path: Path, upstream: tuple[Path, list[str]]
) -> None:
    repo, (_, middle, _) = upstream
    materialize(git_task(tmp_path, "../upstream", middle), tmp_path / "src", cache_dir=tmp_path / "cache")
    expected = {rel: git(repo, "show", f"{middle}:{rel}").encode() + b"\n"
                for rel in git(repo, "ls-tree", "-r", "--name-only", middle).splitlines()}
    assert files_under(tmp_path / "src") == expected  # export-ignore / export-subst change nothing
    assert set(expected) == {".gitattributes", "a.txt", "ignored.txt", "pkg/mod.py", "run.sh"}
    assert os.access(tmp_path / "src" / "run.sh", os.X_OK)
    assert not (tmp_path / "src" / ".git").exists()


def test_a_workspace_from_a_git_source_holds_only_the_baseline_commit(
    tmp_path: Path, upstream: tuple[Path, list[str]]
) -> None:
    repo, (_, middle, _) = upstream
    task = git_task(tmp_path, str(repo), middle)
    with Workspace.create(task, store=BaselineStore(tmp_path / "cache")) as ws:
        store = f"--git-dir={ws.root / 'git'}"
        assert git(ws.root, store, "log", "--all", "--format=%H").splitlines() == [ws.baseline.commit]
        assert ws.baseline.commit not in {git(repo, "rev-parse", c) for c in ("main", "side", "v2^{commit}")}
        assert git(ws.root, store, "tag") == ""
        assert git(ws.root, store, "remote") == ""
        assert git(ws.root, store, "for-each-ref", "--format=%(refname)").splitlines() == ["refs/heads/baseline"]
        assert (ws.path / "a.txt").read_text() == "2\n" and not (ws.path / "late.txt").exists()
        assert not (ws.path / ".git").exists()


def test_a_commit_missing_from_the_repository_names_url_and_commit(
    tmp_path: Path, upstream: tuple[Path, list[str]]
) -> None:
    repo, _ = upstream
    with pytest.raises(SourceError) as info:
        materialize(git_task(tmp_path, str(repo), "deadbeef" * 5), tmp_path / "src", cache_dir=tmp_path / "cache")
    assert str(info.value).startswith(
        f"task 'tiny-calc': git source {repo} at {'deadbeef' * 5}: commit {'deadbeef' * 5} is not in the repository"
    )
    assert not (tmp_path / "src").exists()


def test_an_unreachable_repository_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"git source .*nowhere at .*: git clone failed .*check repo.source.url"):
        materialize(git_task(tmp_path, str(tmp_path / "nowhere"), "a" * 40), tmp_path / "src",
                    cache_dir=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache" / "git").iterdir() if not p.name.endswith(".lock")] == []


def test_the_git_mirror_is_cloned_once_and_fetched_only_for_a_missing_commit(
    tmp_path: Path, upstream: tuple[Path, list[str]]
) -> None:
    repo, (first, middle, _) = upstream
    cache = tmp_path / "cache"
    materialize(git_task(tmp_path, str(repo), first), tmp_path / "one", cache_dir=cache)
    (mirror,) = (p for p in (cache / "git").iterdir() if p.suffix == ".git")
    inode = mirror.stat().st_ino
    newer = commit_files(repo, {"a.txt": "4\n"}, "four")  # not in the mirror yet: fetched, not recloned
    materialize(write_task(tmp_path / "t2", {"type": "git", "url": str(repo), "commit": newer}), tmp_path / "two",
                cache_dir=cache)
    assert (tmp_path / "two" / "a.txt").read_text() == "4\n"
    repo.rename(tmp_path / "moved-away")  # a present commit needs no upstream at all
    materialize(write_task(tmp_path / "t3", {"type": "git", "url": str(repo), "commit": middle}), tmp_path / "three",
                cache_dir=cache)
    assert (tmp_path / "three" / "a.txt").read_text() == "2\n"
    assert mirror.stat().st_ino == inode


# --- local and common ----------------------------------------------------------------------------


def test_a_local_source_is_copied_without_vcs_metadata(make_task: Any, tmp_path: Path) -> None:
    task = make_task(files={".git/config": "x", "sub/.hg/store": "y", ".svn/z": "z", "keep/.gitignore": "*.pyc\n"})
    materialize(task, tmp_path / "src", cache_dir=tmp_path / "cache")
    assert sorted(files_under(tmp_path / "src")) == ["calc/__init__.py", "keep/.gitignore", "tests/test_calc.py"]


def test_materialize_refuses_an_existing_destination(tiny_task: Task, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(SourceError, match=r"destination .*src already exists"):
        materialize(tiny_task, tmp_path / "src", cache_dir=tmp_path / "cache")


def test_non_local_tasks_load_without_a_repo_directory_and_are_fingerprinted_by_their_spec(tmp_path: Path) -> None:
    one = write_task(tmp_path / "a", {"type": "git", "url": "https://example.invalid/r.git", "commit": "a" * 40})
    two = write_task(tmp_path / "b", {"type": "git", "url": "https://example.invalid/r.git", "commit": "b" * 40})
    (tmp_path / "b" / "repo").mkdir()
    (tmp_path / "b" / "repo" / "stray.py").write_text("ignored\n")
    assert one.source_dir is None and two.source_dir is None
    assert one.fingerprint != two.fingerprint
    (tmp_path / "b" / "repo" / "stray.py").write_text("changed\n")
    assert load_task(tmp_path / "b").fingerprint == two.fingerprint


# --- spec validation -------------------------------------------------------------------------------


def source_error(source: object) -> str:
    with pytest.raises(TaskSpecError) as info:
        parse_spec(yaml.safe_dump(tiny_spec(repo={"source": source})), "t/task.yaml")
    return str(info.value)


@pytest.mark.parametrize("commit", ["abc123", "g" * 40, "a" * 41, "main"])
def test_a_git_commit_must_be_a_full_hex_id(commit: str) -> None:
    assert source_error({"type": "git", "url": "https://x/r.git", "commit": commit}) == (
        f"t/task.yaml: repo.source.commit: commit {commit!r} must be a full 40-character hex commit id "
        "(get it with `git rev-parse <rev>`)"
    )


@pytest.mark.parametrize("kind", ["pypi", "tarball"])
@pytest.mark.parametrize("sha", ["abc", "z" * 64, "a" * 63])
def test_a_sha256_must_be_64_hex_characters(kind: str, sha: str) -> None:
    fields = {"package": "six", "version": "1.16.0"} if kind == "pypi" else {"url": "src.tar.gz"}
    assert source_error({"type": kind, "sha256": sha, **fields}) == (
        f"t/task.yaml: repo.source.sha256: sha256 {sha!r} must be 64 hex characters "
        "(e.g. the output of `sha256sum FILE`)"
    )


def test_an_unknown_source_type_lists_the_valid_types() -> None:
    assert source_error({"type": "svn", "url": "x"}) == (
        "t/task.yaml: repo.source.type: source type 'svn' is not one of 'local', 'git', 'pypi', 'tarball'"
    )


def test_an_unknown_source_field_suggests_the_right_one() -> None:
    assert source_error({"type": "git", "url": "x", "comit": "a" * 40}).splitlines() == [
        "t/task.yaml: repo.source.commit: Field required",
        f"t/task.yaml: repo.source.comit: unknown field of a git source (did you mean 'commit'?) (got {'a' * 40!r})",
    ]


@pytest.mark.parametrize(
    ("source", "field", "message"),
    [
        ({"type": "pypi", "package": "--index-url=http://evil", "version": "1", "sha256": SIX[2]}, "package",
         "is not a valid project name"),
        ({"type": "pypi", "package": "six", "version": ">=1.0", "sha256": SIX[2]}, "version",
         "must be one exact version"),
        ({"type": "tarball", "url": "file:///etc/x.tar", "sha256": SIX[2]}, "url",
         "must be an http(s) URL or a path inside the task directory"),
        ({"type": "tarball", "url": "../x.tar", "sha256": SIX[2]}, "url",
         "must be an http(s) URL or a path inside the task directory"),
        ({"type": "tarball", "url": "x.tar", "sha256": SIX[2], "subdir": "/abs"}, "subdir",
         "must be relative and stay inside the repository"),
        ({"type": "git", "url": "--upload-pack=evil", "commit": "a" * 40}, "url", "is not a repository location"),
    ],
)
def test_source_fields_that_could_escape_or_inject_are_refused(
    source: dict[str, str], field: str, message: str
) -> None:
    error = source_error(source)
    assert error.startswith(f"t/task.yaml: repo.source.{field}: ") and message in error


def test_source_hashes_and_commits_are_normalised_to_lowercase() -> None:
    spec = parse_spec(yaml.safe_dump(tiny_spec(repo={"source": {"type": "git", "url": "u", "commit": "AB" * 20}})), "t")
    assert spec.repo.source.commit == "ab" * 20  # type: ignore[union-attr]


def test_an_unreadable_file_of_a_local_source_is_named_and_not_blamed_on_its_kind(tmp_path: Path) -> None:
    """Issue 13's audit (stop 35): an unreadable regular file ended with "a task's repository holds regular
    files, directories and symlinks only", which is about named pipes. Root reads anything, so the copy runs
    in a child without the capabilities that bypass file permissions."""
    import shutil
    import subprocess
    import sys

    if not shutil.which("setpriv"):
        pytest.skip("util-linux setpriv is not installed")
    src = tmp_path / "src"
    (src / "calc").mkdir(parents=True)
    (src / "calc" / "secret.py").write_text("x = 1\n")
    (src / "calc" / "secret.py").chmod(0)
    code = ("import sys\nfrom pathlib import Path\nfrom repogym_gym.errors import SourceError\n"
            "from repogym_gym.sources import _copy_local\n"
            "try:\n    _copy_local(Path(sys.argv[1]), Path(sys.argv[2]))\nexcept SourceError as exc:\n    print(exc)\n")
    done = subprocess.run(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", sys.executable, "-c", code,
                           str(src), str(tmp_path / "dest")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "calc/secret.py: [Errno 13] Permission denied" in done.stdout
    assert "the files must be readable by this user" in done.stdout and "symlinks only" not in done.stdout
