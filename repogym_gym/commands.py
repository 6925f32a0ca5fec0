"""The Run action's command allowlist: a guardrail, not a security boundary.

A command is split into shell segments at ``;``, ``&``, ``|`` and newlines outside quotes
(``#`` comments skipped to the end of their line); the first word of every segment (after ``VAR=value`` assignments) must be an allowlisted program
and not a known-dangerous one. Command substitution (``$(...)``, backticks) and process
substitution (``<(...)``, ``>(...)``) are refused outside single quotes, since they run
programs nobody checked; so are ANSI-C quoting (``$'...'``, whose escapes hide quotes from this
check), ``find -exec`` and awk's ``system()``. ``git`` is not allowlisted: its config (aliases,
``core.fsmonitor``) runs programs. An allowlisted interpreter (``python -c ...``) can still run anything:
use the bubblewrap or Docker sandbox for untrusted agents.

Example:
    >>> check_command("grep -rn 'a|b' src | head -5")
    >>> check_command("curl http://x")
    Traceback (most recent call last):
    ...
    repogym_gym.commands.CommandRefusedError: 'curl' is refused: it runs unchecked programs, reaches the network, or changes privileges or processes
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

from repogym_gym.errors import CommandRefusedError

__all__ = ["DEFAULT_ALLOWLIST", "DENYLIST", "CommandRefusedError", "check_command", "split_segments"]


DEFAULT_ALLOWLIST = frozenset({
    "python", "python3", "pytest", "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "find",
    "sed", "awk", "wc", "sort", "uniq", "diff", "cmp", "echo", "printf", "true", "false", "test", "[",
    "mkdir", "touch", "cp", "mv", "rm", "rmdir", "cd", "pwd", "tree", "nl", "cut", "tr", "basename",
    "dirname", "file", "stat", "du", "patch", "which", "sleep", "tee", "less", "more", "comm", "paste",
    "realpath", "readlink", "ln", "chmod", "seq", "date", "expr", "xxd", "od", "md5sum", "sha256sum",
})
DENYLIST = frozenset({
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp",
    "sudo", "su", "doas", "docker", "podman", "kubectl", "kill", "pkill", "killall", "shutdown", "reboot",
    "halt", "poweroff", "mkfs", "dd", "mount", "umount", "chroot", "nsenter", "unshare", "setsid",
    "nohup", "disown", "crontab", "at", "systemctl", "service", "iptables", "ip", "chown", "eval", "exec",
    "source", ".", "bwrap", "env", "xargs", "timeout", "nice", "bash", "sh", "zsh", "dash",
})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split_segments(command: str) -> list[str]:
    """Split at ``;``, ``&``, ``|`` and newlines outside quotes.

    Raises:
        CommandRefusedError: on command or process substitution outside single quotes, or an
            unterminated quote.
    """
    segments: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(command):
        ch = command[i]
        pair = command[i : i + 2]
        if quote == "'":
            quote = None if ch == "'" else quote
        elif ch == "\\" and i + 1 < len(command):
            current.append(pair)
            i += 2
            continue
        elif pair in ("$'", '$"') and quote is None:
            raise CommandRefusedError("ANSI-C and locale quoting ($'...', $\"...\") is not allowed")
        elif ch == "#" and quote is None and (not current or current[-1] in " \t"):
            end = command.find("\n", i)  # a comment runs to the end of the line and executes nothing
            i = len(command) if end < 0 else end
            continue
        elif ch == "`" or pair == "$(":
            raise CommandRefusedError("command substitution ($(...) or backticks) is not allowed")
        elif quote == '"':
            quote = None if ch == '"' else quote
        elif pair in ("<(", ">("):
            raise CommandRefusedError("process substitution (<(...) or >(...)) is not allowed")
        elif ch in "'\"":
            quote = ch
        elif ch == "&" and ((current and current[-1] in "<>") or command[i + 1 : i + 2] == ">"):
            pass  # a redirection (2>&1, &>file), not a separator
        elif ch in ";&|\n":
            segments.append("".join(current))
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    if quote is not None:
        raise CommandRefusedError(f"unterminated {quote} quote in the command")
    segments.append("".join(current))
    return [s.strip() for s in segments if s.strip()]


#: Arguments that make an allowlisted program start other programs.
_RUNS_PROGRAMS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir"),
}


def _words(segment: str) -> list[str]:
    try:
        words = shlex.split(segment)
    except ValueError as exc:
        raise CommandRefusedError(f"cannot parse {segment!r}: {exc}") from None
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return words


def _check_arguments(program: str, words: list[str]) -> None:
    bad = [w for w in words[1:] if w in _RUNS_PROGRAMS.get(program, ())]
    if bad:
        raise CommandRefusedError(f"{program} {bad[0]} runs other programs; it is refused")
    if program in ("awk", "gawk", "mawk") and any("system" in w or "|" in w for w in words[1:]):
        raise CommandRefusedError("awk programs that call system() or pipes are refused")


def check_command(command: str, allowlist: Iterable[str] = DEFAULT_ALLOWLIST) -> None:
    """Raise CommandRefusedError unless every segment of ``command`` runs an allowed program.

    Args:
        command: The shell command.
        allowlist: Program names allowed as the first word of a segment.
    """
    allowed = frozenset(allowlist)
    if not command.strip():
        raise CommandRefusedError("the command is empty")
    if "\0" in command:  # no argv can carry one: the process could not even be started
        raise CommandRefusedError(f"the command holds a NUL byte at character {command.index(chr(0))}; remove it")
    for segment in split_segments(command):
        words = _words(segment)
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in DENYLIST:
            raise CommandRefusedError(
                f"{program!r} is refused: it runs unchecked programs, reaches the network, or changes privileges or processes"
            )
        if program not in allowed:
            raise CommandRefusedError(f"{program!r} is not an allowed program; allowed: {', '.join(sorted(allowed))}")
        _check_arguments(program, words)
