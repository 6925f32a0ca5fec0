"""Tests for repogym_gym.sandbox.images: recipes, their keys and errors (the build itself runs in
``.ci/docker-up`` and is what every Docker test starts from)."""

from __future__ import annotations

import doctest
import io
import os
import tarfile
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError
from repogym_gym.sandbox import images
from repogym_gym.sandbox.images import EnvRecipe, debian_mirror, load_recipe, recipe_names


def write(root: Path, name: str, text: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "env.toml").write_text(text)


def test_the_shipped_base_recipe_has_git_and_bash_and_no_python() -> None:
    """The container's Python is the host's (mounted); a Debian python3-pytest brought dist-packages
    with more_itertools 8.10.0 (golden hunks of the real-code suite) and pkg_resources' vendored copies."""
    recipe = load_recipe("base")
    assert recipe.image == "repogym/base:bookworm" and recipe.suite == "bookworm" and recipe.base is None
    assert {"git", "bash", "coreutils"} <= set(recipe.packages)
    assert not [p for p in recipe.packages if p.startswith(("python", "pypy"))], recipe.packages


def _tarball(path: Path, members: dict[str, int | None]) -> None:
    """A tarball of ``members`` (name -> file mode, None for a directory), parents first."""
    with tarfile.open(path, "w") as tar:
        for name, mode in members.items():
            info = tarfile.TarInfo(name)
            if mode is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                data = b"x = 1\n"
                info.mode, info.size = mode, len(data)
                tar.addfile(info, io.BytesIO(data))


def test_finishing_a_root_filesystem_leaves_every_python_tree_out(tmp_path: Path) -> None:
    """Whatever a recipe installs, the image holds no Python of its own: dist-packages, another
    interpreter's standard library and a tool's vendored modules are left out, tools stay."""
    members = {"./": None, "./usr/": None, "./usr/bin/": None, "./usr/bin/git": 0o755, "./usr/bin/stray.py": 0o644,
               "./usr/lib/": None, "./usr/lib/python3/": None, "./usr/lib/python3/dist-packages/": None,
               "./usr/lib/python3/dist-packages/more_itertools/": None,
               "./usr/lib/python3/dist-packages/more_itertools/more.py": 0o644,
               "./usr/lib/python3.11/": None, "./usr/lib/python3.11/os.py": 0o644,
               "./usr/lib/tool/": None, "./usr/lib/tool/third_party/": None, "./usr/lib/tool/third_party/calc/": None,
               "./usr/lib/tool/third_party/calc/__init__.py": 0o644, "./usr/lib/tool/README": 0o644,
               "./etc/": None, "./etc/passwd": 0o644, "./etc/group": 0o644, "./root/": None}
    raw, out = tmp_path / "raw.tar", tmp_path / "out.tar"
    _tarball(raw, members)
    images._finish(raw, out)
    with tarfile.open(out) as tar:
        names = {os.path.normpath(m.name) for m in tar.getmembers()}
    assert {"usr/bin/git", "usr/lib/tool/README", "etc/passwd", "usr/lib/python3"} <= names
    assert not [n for n in names if n.endswith(".py") or "dist-packages" in n or "python3.11" in n or "third_party" in n], names


def test_a_derived_recipe_adds_packages_after_its_bases(tmp_path: Path) -> None:
    write(tmp_path, "base", 'image = "t/base:1"\nsuite = "bookworm"\npackages = ["python3", "git"]\n')
    write(tmp_path, "node", 'image = "t/node:1"\nbase = "base"\npackages = ["nodejs", "git"]\n')
    node = load_recipe("node", tmp_path)
    assert node.packages == ("python3", "git", "nodejs") and node.suite == "bookworm" and node.base == "base"
    assert recipe_names(tmp_path) == ["base", "node"]


def test_the_image_key_follows_the_packages_not_their_order() -> None:
    a = EnvRecipe(name="a", image="t:a", packages=("git", "python3"))
    b = EnvRecipe(name="b", image="t:b", packages=("python3", "git"))
    c = EnvRecipe(name="c", image="t:c", packages=("python3", "git", "make"))
    assert a.rootfs_key() == b.rootfs_key() != c.rootfs_key() and a.key() == b.key() != c.key()
    assert len(a.key()) == 16 and a.key() != a.rootfs_key()


def test_an_unknown_recipe_lists_the_valid_ones(tmp_path: Path) -> None:
    write(tmp_path, "base", 'image = "t/base:1"\npackages = []\n')
    with pytest.raises(SandboxError, match=r"no environment recipe 'rust' .*; recipes are \['base'\]"):
        load_recipe("rust", tmp_path)


def test_an_invalid_recipe_names_its_file_and_field(tmp_path: Path) -> None:
    write(tmp_path, "bad", 'image = "t/bad:1"\npackages = ["git"]\ncompiler = "gcc"\n')
    with pytest.raises(SandboxError, match=r"bad/env.toml is not a valid environment recipe: compiler: unknown field \(known fields: \[.base., .image., .name., .packages., .suite.\]\)"):
        load_recipe("bad", tmp_path)


def test_a_base_cycle_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "a", 'image = "t:a"\nbase = "b"\n')
    write(tmp_path, "b", 'image = "t:b"\nbase = "a"\n')
    with pytest.raises(SandboxError, match=r"cycle: a -> b -> a"):
        load_recipe("a", tmp_path)


def test_the_mirror_comes_from_the_environment_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_DEBIAN_MIRROR", "http://mirror.example/debian")
    assert debian_mirror() == "http://mirror.example/debian"
    monkeypatch.delenv("REPOGYM_DEBIAN_MIRROR")
    assert debian_mirror().startswith("http")


def test_images_docstring_examples_run() -> None:
    assert doctest.testmod(images).failed == 0


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    """Run the ``repogym`` entry point in-process: (exit code, stdout, stderr)."""
    from repogym_gym.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return info.value.code, out, err


def test_repogym_envs_build_of_an_unknown_recipe_exits_2_naming_the_recipes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["envs", "build", "nope"], capsys)
    assert code == 2 and "no environment recipe 'nope'" in err and "recipes are ['base']" in err


def test_repogym_envs_build_of_the_built_base_is_a_no_op(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.sandbox.helpers import require_docker

    require_docker().close()
    code, out, _ = run_main(["envs", "build"], capsys)
    assert code in (0, None) and "repogym/base:bookworm" in out and "up to date, not rebuilt" in out
