"""Tests for repogym_gym.sandbox.images: recipes, their keys and errors (the build itself runs in
``.ci/docker-up`` and is what every Docker test starts from)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError
from repogym_gym.sandbox import images
from repogym_gym.sandbox.images import EnvRecipe, debian_mirror, load_recipe, recipe_names


def write(root: Path, name: str, text: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "env.toml").write_text(text)


def test_the_shipped_base_recipe_has_python_pytest_and_git() -> None:
    recipe = load_recipe("base")
    assert recipe.image == "repogym/base:bookworm" and recipe.suite == "bookworm" and recipe.base is None
    assert {"python3", "python3-pytest", "git", "bash", "coreutils", "python-is-python3"} <= set(recipe.packages)


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
    with pytest.raises(SandboxError, match=r"bad/env.toml is not a valid environment recipe: compiler: Extra inputs are not permitted"):
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
    from tests.sandbox.conftest import require_docker

    require_docker().close()
    code, out, _ = run_main(["envs", "build"], capsys)
    assert code in (0, None) and "repogym/base:bookworm" in out and "up to date, not rebuilt" in out
