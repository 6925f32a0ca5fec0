"""Reading the YAML files the project takes from users and datasets: bounded, plain, unambiguous.

``task.yaml``, suite recipes and agent files arrive by the thousand from sources nobody here
wrote, so a file is refused, with one message naming the file, the line and the problem, when:

- it is over :data:`MAX_YAML_BYTES` (a 50 MB file took 89 s to read), or not UTF-8 text;
- it uses an alias (``*name``): a few lines of nested aliases expand to billions of nodes (an
  alias bomb took 265 s), and no task needs one, so none is expanded, not even for a message;
- it nests deeper than :data:`MAX_YAML_DEPTH` mappings and sequences (5,000 levels overflowed
  the stack);
- it holds more than :data:`MAX_YAML_NODES` values (a 4 MiB flow list of 2 million items took
  43 s to read; the count stops reading at the limit);
- a mapping holds the same key twice (YAML says the last wins, so a typo silently replaced a
  field).

Example:
    >>> load_yaml("a: 1\\nb: [x, y]\\n", "t.yaml")
    {'a': 1, 'b': ['x', 'y']}
    >>> load_yaml("a: 1\\na: 2\\n", "t.yaml")
    Traceback (most recent call last):
    ...
    repogym_gym.errors.TaskSpecError: t.yaml: line 2, column 1: duplicate key 'a' (first at line 1); each field may appear once
"""

from __future__ import annotations

import os
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node

from repogym_gym.errors import RepoGymError, TaskSpecError

__all__ = ["MAX_YAML_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "load_yaml", "load_yaml_file", "read_yaml_bytes"]

#: Largest YAML file read, bytes (the largest mined task.yaml, with a whole suite's pass_to_pass, is ~60 kB).
MAX_YAML_BYTES = 4 * 1024 * 1024
#: Deepest nesting of mappings and sequences read.
MAX_YAML_DEPTH = 64
#: Most values (scalars, mappings, sequences) one YAML file may hold (a mined task.yaml listing a whole
#: suite's test ids holds a few thousand).
MAX_YAML_NODES = 250_000


class _Refused(yaml.YAMLError):
    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that refuses aliases, deep nesting and duplicate keys while it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _Refused(f"an alias (*{event.anchor}) is not allowed here; write the value out", event.start_mark)
        if self.check_event(yaml.MappingStartEvent, yaml.SequenceStartEvent):
            self._depth += 1
            try:
                if self._depth > MAX_YAML_DEPTH:
                    raise _Refused(f"nested deeper than {MAX_YAML_DEPTH} levels", self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, yaml.Mark] = {}
        for key_node, _ in node.value:
            try:
                key = self.construct_object(key_node, deep=True)
                hash(key)
            except (TypeError, ConstructorError):
                continue  # the base class reports an unhashable key
            if key in seen:
                first = seen[key]
                raise _Refused(f"duplicate key {str(key)[:60]!r} (first at line {first.line + 1}); each field may "
                               "appear once", key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


_CLoader = getattr(yaml, "CSafeLoader", None)


def _at(mark: yaml.Mark | None) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def _read_fast(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when libyaml composes ``text`` into a node graph within this module's limits
    (libyaml itself stops past 1,000 levels; an alias is a node met twice, never expanded), built with
    the safe constructor; ``(False, why)`` when anything is amiss (``why`` a message with the place, or
    None when libyaml is missing or gave no reason), for :class:`_BoundedLoader` to read (25x slower: a
    mined task.yaml lists a whole suite's ids, and importing the package reads every built task's)."""
    if _CLoader is None:
        return False, None
    try:
        root = yaml.compose(text, Loader=_CLoader)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None)
        return False, (f"{_at(getattr(exc, 'problem_mark', None))}invalid YAML: {' '.join(str(problem).split())}"
                       if problem else None)
    except (RecursionError, MemoryError):
        return False, None
    constructor = yaml.SafeLoader("")
    try:
        seen, stack = set(), [(root, 1)] if root is not None else []
        while stack:
            node, depth = stack.pop()
            if id(node) in seen:
                return False, f"{_at(node.start_mark)}a value given an anchor is used again by an alias; write it out"
            if depth > MAX_YAML_DEPTH:
                return False, f"{_at(node.start_mark)}nested deeper than {MAX_YAML_DEPTH} levels"
            seen.add(id(node))
            if isinstance(node, MappingNode):
                keys = set()
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode):
                        key = constructor.construct_object(key_node)
                        if key in keys:
                            return False, f"{_at(key_node.start_mark)}duplicate key {str(key)[:60]!r}; each field may appear once"
                        keys.add(key)
                    stack += [(key_node, depth + 1), (value_node, depth + 1)]
            elif isinstance(node, yaml.SequenceNode):
                stack += [(item, depth + 1) for item in node.value]
        return True, (constructor.construct_document(root) if root is not None else None)
    except (yaml.YAMLError, TypeError, RecursionError):
        return False, None
    finally:
        constructor.dispose()


#: Past this many characters a file libyaml refused is not read again by the pure-Python reader for its
#: exact message (a refused task.yaml of nearly 4 MiB took it 32 to 56 s): libyaml's reason is given.
#: Past it too, the values are counted before any is built (fewer characters cannot hold
#: :data:`MAX_YAML_NODES` values).
SLOW_READER_CHARS = 256 * 1024


def _past_node_limit(text: str) -> Any:
    """Where the value past :data:`MAX_YAML_NODES` starts, from the parser's events alone (libyaml's
    when installed; it stops there), or None: fewer values, or text the readers refuse themselves."""
    count = 0
    try:
        for event in yaml.parse(text, Loader=_CLoader or yaml.SafeLoader):
            if isinstance(event, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent)):
                count += 1
                if count > MAX_YAML_NODES:
                    return event.start_mark
    except (yaml.YAMLError, RecursionError, MemoryError):
        return None
    return None


def load_yaml(data: str | bytes, source: str, *, error: type[RepoGymError] = TaskSpecError) -> Any:
    """Parse one YAML document under the limits of this module.

    Args:
        data: The file's bytes (decoded as UTF-8) or text.
        source: What to call it in messages (its path).
        error: The exception class raised (a task file's :class:`TaskSpecError` by default).

    Returns:
        The document: plain dicts, lists, strings, numbers, booleans, None (``yaml.safe_load``'s types).

    Raises:
        error: naming ``source``, the line and column where known, and the problem: too large,
            not UTF-8, invalid YAML, an alias, nesting past :data:`MAX_YAML_DEPTH`, more than
            :data:`MAX_YAML_NODES` values, a duplicate key.
    """
    size = len(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    if size > MAX_YAML_BYTES:
        raise error(f"{source}: the file is {size:,} bytes, over the {MAX_YAML_BYTES:,} a YAML file may have here")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as "
                        "UTF-8") from None
    past = _past_node_limit(data) if len(data) > SLOW_READER_CHARS else None
    if past is not None:
        raise error(f"{source}: {_at(past)}more than {MAX_YAML_NODES:,} values; a YAML file here holds fewer")
    fast, value = _read_fast(data)
    if fast:
        return value
    if value is not None and len(data) > SLOW_READER_CHARS:
        raise error(f"{source}: {value}")
    loader = None
    try:
        loader = _BoundedLoader(data)  # the slow reader: it says exactly what is wrong, and where
        return loader.get_single_data()
    except yaml.reader.ReaderError as exc:  # a control character: raised as the reader starts, with no mark
        line = data.count("\n", 0, exc.position) + 1
        column = exc.position - (data.rfind("\n", 0, exc.position) + 1) + 1
        shown = f"U+{exc.character:04X}" if isinstance(exc.character, int) else f"byte {exc.character!r}"
        raise error(f"{source}: line {line}, column {column}: invalid YAML: the character {shown} is not allowed "
                    "in YAML (a control character)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start is not None:
            problem += f" ({context} at line {start.line + 1}, column {start.column + 1})"
        prefix = "" if isinstance(exc, _Refused) else "invalid YAML: "
        raise error(f"{source}: {where}{prefix}{' '.join(problem.split())}") from None
    except RecursionError:
        raise error(f"{source}: nested too deeply to read") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml_bytes(path: str | os.PathLike[str], *, error: type[RepoGymError] = TaskSpecError) -> bytes:
    """The bytes of the YAML file at ``path``, reading at most :data:`MAX_YAML_BYTES` + 1 of them.

    Raises:
        error: when the file cannot be read or is over :data:`MAX_YAML_BYTES` (naming the path).
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise error(f"{source}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_YAML_BYTES:
        raise error(f"{source}: the file is over the {MAX_YAML_BYTES:,} bytes a YAML file may have here")
    return data


def load_yaml_file(path: str | os.PathLike[str], *, error: type[RepoGymError] = TaskSpecError) -> Any:
    """:func:`load_yaml` of the file at ``path`` (:func:`read_yaml_bytes`).

    Raises:
        error: as :func:`load_yaml` and :func:`read_yaml_bytes`.
    """
    return load_yaml(read_yaml_bytes(path, error=error), os.fspath(path), error=error)
