"""Adapters to the LLM-RL libraries, one small module each, imported only by who uses it.

Each adapter is thin: what every trainer needs (every tool call of a completion, grading when the
trainer stops the rollout, an ``infra_error`` to mask) lives in the core episode API.

- :mod:`repogym_gym.integrations.trl`: an ``environment_factory`` class for TRL's ``GRPOTrainer``
  (``pip install "repogym_gym[trl]"``);
- :mod:`repogym_gym.integrations.skyrl`: SkyRL-gym's ``BaseTextEnv`` (``pip install "repogym_gym[skyrl]"``);
- :mod:`repogym_gym.integrations.gem`: a ``gem.Env`` with ``spawn(same_state=True)`` (``pip install "repogym_gym[gem]"``);
- :mod:`repogym_gym.integrations.verifiers`: a ``verifiers.v1`` taskset whose env steps RepoGym host-side
  (``pip install "repogym_gym[verifiers]"``);
- :mod:`repogym_gym.integrations.openenv`: an OpenEnv ``Environment`` served by OpenEnv's own HTTP and
  WebSocket server, ``repogym serve --openenv`` (``pip install "repogym_gym[openenv]"``).
"""

__all__: list[str] = []
