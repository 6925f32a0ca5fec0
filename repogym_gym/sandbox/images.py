"""Environment images as code: ``envs/<name>/env.toml`` recipes, built with debootstrap, no registry.

A recipe names a Debian suite and the packages of a root filesystem; a derived recipe names a
``base`` and adds packages (no Dockerfile, no registry: the union is bootstrapped afresh)::

    # envs/base/env.toml
    image = "repogym/base:bookworm"
    suite = "bookworm"
    packages = ["git", "bash", "coreutils"]

:func:`build_image` runs ``debootstrap --variant=minbase``, adds the sandbox's users
(:data:`SANDBOX_USERS`), drops apt's caches and every Python tree (the only Python a container
shows is the host's, mounted), tars the root and ``docker import``\\ s it with a
``repogym.recipe`` label (the hash of suite and packages). The tarball is cached under
:func:`image_cache_dir` (outside the repository), so a rebuild skips debootstrap, and an image
whose label matches is not rebuilt at all.

Example:
    >>> load_recipe("base").image
    'repogym/base:bookworm'
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repogym_gym.errors import SandboxError, SandboxUnavailableError, validation_problems
from repogym_gym.paths import env_recipes_dir
from repogym_gym.sandbox.pytrees import Listing, python_trees_in

__all__ = ["BuildResult", "EnvRecipe", "SANDBOX_USERS", "build_image", "debian_mirror", "envs_dir", "image_cache_dir",
           "load_recipe", "recipe_names"]

#: ``(name, uid, home, shell)`` added to every image: the uid commands run as, and the uid of
#: the container's idle init (see :mod:`repogym_gym.sandbox.docker`).
SANDBOX_USERS = (("repogym", 61100, "/tmp", "/bin/bash"), ("repogym-idle", 61101, "/nonexistent", "/usr/sbin/nologin"))
_DEBOOTSTRAP_TIMEOUT_S = 1800
#: Bumped whenever :func:`_finish` changes what it does to a root filesystem (2: no Python trees).
_FINISH_VERSION = 2
#: Root filesystem entries left out of images: apt's downloaded packages and lists.
_DROPPED = ("./var/cache/apt/archives/", "./var/lib/apt/lists/")


class EnvRecipe(BaseModel):
    """One environment image, resolved (a derived recipe's packages include its base's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Directory name under envs/.")
    image: str = Field(description="The image tag built, e.g. 'repogym/base:bookworm'.")
    suite: str = Field("bookworm", description="Debian suite debootstrap installs.")
    packages: tuple[str, ...] = Field(description="Debian packages installed on top of minbase, base's first.")
    base: str | None = Field(None, description="Recipe this one extends (its packages come first); None for a root.")

    def rootfs_key(self) -> str:
        """16 hex characters naming debootstrap's root filesystem (suite and packages)."""
        return hashlib.sha256(json.dumps([self.suite, sorted(set(self.packages))]).encode()).hexdigest()[:16]

    def key(self) -> str:
        """16 hex characters naming the image (the root filesystem and what :func:`build_image` adds)."""
        return hashlib.sha256(json.dumps([self.rootfs_key(), SANDBOX_USERS, _FINISH_VERSION]).encode()).hexdigest()[:16]


class BuildResult(BaseModel):
    """What :func:`build_image` did."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str
    image_id: str
    built: bool = Field(description="False when an image with this recipe's label already existed.")
    tarball: str = Field(description="The cached root filesystem tarball.")
    tarball_cached: bool = Field(description="True when debootstrap was skipped (the tarball was cached).")
    duration_s: float = Field(description="Wall-clock seconds of the whole build.")


def envs_dir() -> Path:
    """``$REPOGYM_ENVS_DIR``, else the repository's ``envs/`` (:func:`repogym_gym.paths.env_recipes_dir`)."""
    return env_recipes_dir()


def image_cache_dir() -> Path:
    """``$REPOGYM_IMAGE_CACHE``, else ``$XDG_CACHE_HOME/repogym_gym/images`` (``~/.cache/...``)."""
    if env := os.environ.get("REPOGYM_IMAGE_CACHE"):
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "repogym_gym" / "images"


def recipe_names(root: Path | None = None) -> list[str]:
    """Names of the recipes under ``root`` (default :func:`envs_dir`)."""
    root = root or envs_dir()
    return sorted(p.parent.name for p in root.glob("*/env.toml")) if root.is_dir() else []


def load_recipe(name: str, root: Path | None = None, _seen: tuple[str, ...] = ()) -> EnvRecipe:
    """The recipe ``envs/<name>/env.toml``, with its base's packages first.

    Raises:
        SandboxError: naming the valid recipes for an unknown ``name``, the file and field for an
            invalid one, and the chain for a ``base`` cycle.
    """
    root = root or envs_dir()
    path = root / name / "env.toml"
    if not path.is_file():
        raise SandboxError(f"no environment recipe {name!r} ({path} does not exist); recipes are {recipe_names(root)}")
    if name in _seen:
        raise SandboxError(f"environment recipes extend each other in a cycle: {' -> '.join([*_seen, name])}")
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SandboxError(f"cannot read {path}: {exc}") from None
    packages = list(data.pop("packages", []))
    if base := data.get("base"):
        parent = load_recipe(str(base), root, (*_seen, name))
        data.setdefault("suite", parent.suite)
        packages = [*parent.packages, *(p for p in packages if p not in parent.packages)]
    try:
        return EnvRecipe(name=name, packages=tuple(packages), **data)
    except ValidationError as exc:
        problems = "; ".join(validation_problems(exc, model=EnvRecipe))
        raise SandboxError(f"{path} is not a valid environment recipe: {problems}") from None


def debian_mirror() -> str:
    """``$REPOGYM_DEBIAN_MIRROR``, else the first Debian URI apt is configured with, else deb.debian.org."""
    if env := os.environ.get("REPOGYM_DEBIAN_MIRROR"):
        return env
    sources = [Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")]
    for source in sources:
        try:
            lines = source.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = line.split()
            uris = words[1:] if words[:1] == ["URIs:"] else words[1:2] if words[:1] == ["deb"] else []
            for uri in uris:
                if uri.startswith("http") and "security" not in uri:
                    return uri
    return "http://deb.debian.org/debian"


def _rootfs_tarball(recipe: EnvRecipe, cache: Path) -> tuple[Path, bool]:
    """The cached tarball of debootstrap's root for ``recipe`` (bootstrapped under a lock if missing)."""
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"{recipe.suite}-{recipe.rootfs_key()}.tar"
    with open(cache / f"{tarball.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tarball.is_file():
            return tarball, True
        if shutil.which("debootstrap") is None:
            raise SandboxUnavailableError("building an environment image needs debootstrap: apt-get install debootstrap")
        work = Path(tempfile.mkdtemp(prefix=f"rootfs-{recipe.name}-", dir=cache))
        try:
            root = work / "root"
            _run(["debootstrap", "--variant=minbase", f"--include={','.join(recipe.packages)}", recipe.suite,
                  str(root), debian_mirror()], f"debootstrap {recipe.suite} for {recipe.name!r}")
            partial = work / "rootfs.tar"
            _run(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(partial),
                  "--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "."], f"tar the root of {recipe.name!r}")
            os.replace(partial, tarball)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return tarball, False


def _python_trees(src: tarfile.TarFile) -> list[str]:
    """The Python trees of a root filesystem tarball, as absolute paths (``/usr/lib/python3.11``):
    what :func:`~repogym_gym.sandbox.pytrees.python_trees` would have a sandbox cover there."""
    listing: dict[str, Listing] = {"/": ([], [])}
    for member in src.getmembers():
        path = _abs(member.name)
        if path == "/":
            continue
        parent, name = os.path.split(path)
        entries = listing.setdefault(parent, ([], []))
        if member.isdir():
            entries[0].append(name)
            listing.setdefault(path, ([], []))
        elif member.isfile() or member.islnk():
            entries[1].append((name, member.mode))
    return python_trees_in(listing)


def _abs(name: str) -> str:
    """A tar member's name as an absolute path (``./usr/lib/`` -> ``/usr/lib``)."""
    name = os.path.normpath(name)
    return "/" if name in (".", "/") else "/" + name.lstrip("/")


def _finish(raw: Path, out: Path) -> None:
    """Copy tarball ``raw`` to ``out`` as the image's root: the sandbox users added to
    ``/etc/passwd`` and ``/etc/group``, ``/root`` traversable (0755: a host interpreter under
    ``/root`` is mounted there), apt's caches and every Python tree left out.

    A Python tree (a ``dist-packages``, an interpreter's standard library, a tool's vendored
    modules: :func:`~repogym_gym.sandbox.pytrees.python_trees_in`) may hold another release of
    a package under test; the only Python a container shows is the host interpreter's standard
    library and the task's environment, mounted read-only. A hard link into a tree left out goes
    too."""
    with tarfile.open(raw) as src, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
        trees = _python_trees(src)

        def dropped(name: str) -> bool:
            path = _abs(name)
            return any(path == t or path.startswith(t + "/") for t in trees)

        for member in src:
            if any(member.name.startswith(d) and member.name != d.rstrip("/") for d in _DROPPED):
                continue
            if dropped(member.name) or (member.islnk() and dropped(member.linkname)):
                continue
            if member.name == "./root":
                member.mode = 0o755
            if member.name in ("./etc/passwd", "./etc/group") and member.isfile():
                text = src.extractfile(member).read().decode()  # type: ignore[union-attr]
                for name, uid, home, shell in SANDBOX_USERS:
                    if f"\n{name}:" not in f"\n{text}":
                        text += f"{name}:x:{uid}:{uid}::{home}:{shell}\n" if member.name.endswith("passwd") else f"{name}:x:{uid}:\n"
                data = text.encode()
                member.size = len(data)
                dst.addfile(member, io.BytesIO(data))
            else:
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=_DEBOOTSTRAP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SandboxError(f"could not {what}: timed out after {_DEBOOTSTRAP_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise SandboxError(f"could not {what} (exit {proc.returncode}):\n{(proc.stdout + proc.stderr).strip()[-2000:]}")


def build_image(name: str = "base", *, client: Any = None, force: bool = False, root: Path | None = None) -> BuildResult:
    """Build the image of recipe ``name`` on the engine (see the module docstring).

    Args:
        name: Recipe name under ``envs/``.
        client: A ``docker.DockerClient`` (default: :func:`~repogym_gym.sandbox.engine.connect`).
        force: Rebuild the image even when one with this recipe's label exists (the cached
            tarball is still used; delete it from :func:`image_cache_dir` to re-bootstrap).
        root: The recipes' directory (default :func:`envs_dir`).

    Raises:
        SandboxError: for an unknown or invalid recipe, or a failed debootstrap or import.
        SandboxUnavailableError: when no engine answers or debootstrap is missing.
    """
    import docker

    from repogym_gym.sandbox.engine import connect

    start = time.monotonic()
    recipe = load_recipe(name, root)
    own = client is None
    client = connect(timeout_s=900) if own else client
    try:
        try:
            existing = client.images.get(recipe.image)
        except docker.errors.ImageNotFound:
            existing = None
        if existing is not None and not force and existing.labels.get("repogym.recipe") == recipe.key():
            return BuildResult(image=recipe.image, image_id=existing.id, built=False, tarball="", tarball_cached=True,
                               duration_s=time.monotonic() - start)
        tarball, cached = _rootfs_tarball(recipe, image_cache_dir())
        with tempfile.TemporaryDirectory(prefix="repogym-image-", dir=tarball.parent) as tmp:
            image = _import(client, recipe, tarball, Path(tmp) / "image.tar")
        if existing is not None and existing.id != image.id:
            try:
                client.images.remove(existing.id)  # the replaced image, now untagged
            except docker.errors.DockerException:
                pass  # still used by a container: it goes with the engine's next prune
        return BuildResult(image=recipe.image, image_id=image.id, built=True, tarball=str(tarball), tarball_cached=cached,
                           duration_s=time.monotonic() - start)
    finally:
        if own:
            client.close()


def _import(client: Any, recipe: EnvRecipe, tarball: Path, scratch: Path) -> Any:
    """``docker import`` the finished root of ``tarball`` as ``recipe.image``, labelled with its key."""
    import docker

    _finish(tarball, scratch)
    repository, _, tag = recipe.image.rpartition(":") if ":" in recipe.image.split("/")[-1] else (recipe.image, "", "latest")
    changes = [f"LABEL repogym.recipe={recipe.key()} repogym.env={recipe.name}", 'CMD ["/bin/bash"]',
               "ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    try:
        client.api.import_image_from_file(str(scratch), repository=repository, tag=tag, changes=changes)
        return client.images.get(recipe.image)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"docker import of {tarball} as {recipe.image!r} failed: {exc}") from None
