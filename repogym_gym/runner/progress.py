"""A Rich progress bar for a run, on stderr: episodes done, running mean score, infra errors."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from repogym_gym.runner.models import RunResult

__all__ = ["RunProgress"]


class RunProgress:
    """Counts results and shows them; does nothing visible when ``enabled`` is False.

    Args:
        total: Episodes in the run (resumed ones included).
        enabled: Draw the bar.
        console: Where to draw (default: a Console on stderr).

    Example:
        >>> with RunProgress(total=2, enabled=False) as bar:
        ...     bar.mean_score is None
        True
    """

    def __init__(self, total: int, *, enabled: bool = True, console: Console | None = None) -> None:
        self.total = total
        self.done = 0
        self.infra_errors = 0
        self._score_sum = 0.0
        self._graded = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        if enabled:
            self._bar = Progress(TextColumn("[bold]run[/]"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeElapsedColumn(),
                                 console=console or Console(stderr=True))

    @property
    def mean_score(self) -> float | None:
        """Mean score of the graded results seen so far (None before the first)."""
        return self._score_sum / self._graded if self._graded else None

    def _stats(self) -> str:
        mean = self.mean_score
        text = "mean score " + ("-" if mean is None else f"{mean:.3f}")
        return text + (f"  [red]infra errors {self.infra_errors}[/]" if self.infra_errors else "")

    def add(self, result: RunResult) -> None:
        """Count one finished (or resumed) episode."""
        self.done += 1
        if result.status == "graded" and result.score is not None:
            self._score_sum += result.score
            self._graded += 1
        else:
            self.infra_errors += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done, stats=self._stats())

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task("run", total=self.total, completed=self.done, stats=self._stats())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
