"""Tests for repogym_gym.commands: the Run allowlist, split into shell segments quote-aware.

These are pure checks; tests/test_episode.py proves with real subprocesses that a refused command
runs nothing.
"""

from __future__ import annotations

import re

import pytest

from repogym_gym.commands import DEFAULT_ALLOWLIST, DENYLIST, CommandRefusedError, check_command, split_segments
from repogym_gym.errors import RepoGymError

# -- split_segments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "segments"),
    [
        ("ls", ["ls"]),
        ("ls; pwd && echo a | wc -l || true", ["ls", "pwd", "echo a", "wc -l", "true"]),
        ("ls\npwd", ["ls", "pwd"]),
        ("sleep 1 & echo a", ["sleep 1", "echo a"]),
        ("pytest |& tail", ["pytest", "tail"]),
        ("  ;; ls ;  ", ["ls"]),
    ],
)
def test_segments_split_at_separators(command: str, segments: list[str]) -> None:
    assert split_segments(command) == segments


@pytest.mark.parametrize(
    "command",
    ["grep 'a;b|c' f", 'grep "a;b|c" f', "grep a\\;b\\|c f", "echo 'x && y'", 'echo "line1\nline2"'],
)
def test_separators_inside_quotes_or_escaped_do_not_split(command: str) -> None:
    assert split_segments(command) == [command]


@pytest.mark.parametrize(
    ("command", "segments"),
    [
        ("pytest -q 2>&1 | tail -5", ["pytest -q 2>&1", "tail -5"]),
        ("pytest &> log.txt", ["pytest &> log.txt"]),
        ("echo a >&2", ["echo a >&2"]),
        ("cat <&0", ["cat <&0"]),
        ("echo a 2>&1& ls", ["echo a 2>&1", "ls"]),
        ("echo a &>/dev/null & ls", ["echo a &>/dev/null", "ls"]),
    ],
)
def test_redirections_with_ampersand_are_not_separators(command: str, segments: list[str]) -> None:
    assert split_segments(command) == segments


@pytest.mark.parametrize("command", ["echo $(id)", 'echo "$(id)"', "echo `id`", 'echo "`id`"', "echo $((1+2))", "echo a\\ $(id)"])
def test_command_substitution_is_refused_outside_single_quotes(command: str) -> None:
    with pytest.raises(CommandRefusedError, match=r"command substitution \(\$\(\.\.\.\) or backticks\) is not allowed"):
        split_segments(command)


@pytest.mark.parametrize("command", ["cat <(ls)", "tee >(cat)", "diff <(ls a) <(ls b)"])
def test_process_substitution_is_refused(command: str) -> None:
    with pytest.raises(CommandRefusedError, match="process substitution"):
        split_segments(command)


@pytest.mark.parametrize("command", ["echo '$(id)'", "echo '`id`'", "echo '<(ls)'", "grep -n '$(' f"])
def test_substitution_syntax_inside_single_quotes_is_allowed(command: str) -> None:
    assert split_segments(command) == [command]
    check_command(command)


@pytest.mark.parametrize(("command", "quote"), [("echo 'abc", "'"), ('echo "abc', '"'), ("echo \"a'b", '"')])
def test_an_unterminated_quote_is_refused(command: str, quote: str) -> None:
    with pytest.raises(CommandRefusedError, match=f"unterminated {quote} quote"):
        split_segments(command)


# -- check_command -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "grep -rn 'a|b' src | head -5",
        "python -c 'import os; print(os.getcwd())'",
        "python -m pytest -q tests 2>&1 | tail -20",
        "FOO=1 BAR=2 pytest -q",
        "PYTHONPATH=. python -c 'print(1)'",
        "/bin/ls",
        "cd calc && cat __init__.py",
        "FOO=1",
        "sed -n '1,5p' f; echo done",
    ],
)
def test_allowed_commands_pass(command: str) -> None:
    check_command(command)


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("curl http://x", "curl"),
        ("wget http://x", "wget"),
        ("ssh host", "ssh"),
        ("bash -c 'ls'", "bash"),
        ("sh -c ls", "sh"),
        ("env", "env"),
        ("env ls", "env"),
        ("echo a | xargs ls", "xargs"),
        ("ls; curl x", "curl"),
        ("ls && sudo ls", "sudo"),
        ("FOO=1 curl x", "curl"),
        ("/usr/bin/curl http://x", "curl"),
        ("./curl http://x", "curl"),
        ("'curl' http://x", "curl"),
        ('"cu"rl http://x', "curl"),
        ("c\\url http://x", "curl"),
        ("eval ls", "eval"),
        ("exec ls", "exec"),
        (". ./script", "."),
        ("timeout 5 ls", "timeout"),
    ],
)
def test_denylisted_programs_are_refused_by_name(command: str, program: str) -> None:
    with pytest.raises(CommandRefusedError, match="^" + re.escape(f"'{program}' is refused: it runs unchecked programs")):
        check_command(command)


@pytest.mark.parametrize(("command", "program"), [("uname -a", "uname"), ("ls | perl -e 1", "perl"), ("(ls)", "(ls)")])
def test_programs_outside_the_allowlist_are_refused_by_name(command: str, program: str) -> None:
    with pytest.raises(CommandRefusedError, match="^" + re.escape(f"'{program}' is not an allowed program; allowed: [, awk, ")):
        check_command(command)


@pytest.mark.parametrize("command", ["", "   ", "\n\t"])
def test_an_empty_command_is_refused(command: str) -> None:
    with pytest.raises(CommandRefusedError, match="the command is empty"):
        check_command(command)


def test_a_custom_allowlist_narrows() -> None:
    check_command("echo hi", allowlist={"echo"})
    with pytest.raises(CommandRefusedError, match=r"'ls' is not an allowed program; allowed: echo$"):
        check_command("echo hi; ls", allowlist={"echo"})


def test_a_custom_allowlist_widens() -> None:
    check_command("uname -a", allowlist=DEFAULT_ALLOWLIST | {"uname"})


def test_the_denylist_wins_over_a_custom_allowlist() -> None:
    with pytest.raises(CommandRefusedError, match="'curl' is refused"):
        check_command("curl http://x", allowlist={"curl"})


def test_default_allowlist_and_denylist_are_disjoint() -> None:
    assert not DEFAULT_ALLOWLIST & DENYLIST


def test_command_refused_error_is_a_repogym_error_and_a_value_error() -> None:
    assert issubclass(CommandRefusedError, RepoGymError) and issubclass(CommandRefusedError, ValueError)


def test_ansi_c_quoting_does_not_hide_a_denylisted_program() -> None:
    with pytest.raises(CommandRefusedError):
        check_command("echo $'\\'' ; curl http://x ; echo '\\'")


def test_a_comment_does_not_hide_a_denylisted_program() -> None:
    with pytest.raises(CommandRefusedError):
        check_command("echo x #'\ncurl http://x\n#'")


def test_a_command_holding_a_nul_byte_is_refused_before_anything_starts() -> None:
    with pytest.raises(CommandRefusedError, match="NUL byte at character 6"):
        check_command("echo a\0b")
