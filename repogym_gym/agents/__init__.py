"""Agents: things that drive an environment to the end of an episode."""

from repogym_gym.agents.base import Agent, EpisodeOutcome, run_episode
from repogym_gym.agents.simple import GoldenAgent, NoopAgent, golden_actions

__all__ = ["Agent", "EpisodeOutcome", "GoldenAgent", "NoopAgent", "golden_actions", "run_episode"]
