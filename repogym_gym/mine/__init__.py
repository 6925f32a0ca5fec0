"""Mining tasks from real code: injected faults (MutationMiner) and fix commits or releases (HistoryMiner)."""

from repogym_gym.mine.history import HistoryOptions, HistoryReport, mine_history, mine_releases
from repogym_gym.mine.mutation import MutationOptions, MutationReport, mine_mutations, operator_yield
from repogym_gym.mine.operators import OPERATORS, Mutation, find_mutations

__all__ = [
    "OPERATORS",
    "HistoryOptions",
    "HistoryReport",
    "Mutation",
    "MutationOptions",
    "MutationReport",
    "find_mutations",
    "mine_history",
    "mine_mutations",
    "mine_releases",
    "operator_yield",
]
