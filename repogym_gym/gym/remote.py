"""RemoteEnv: a ``gymnasium.Env`` whose episodes run on a ``repogym serve`` server (:mod:`repogym_gym.serve`).

Same spaces, same 5-tuple and infos as the local env; the workspace, sandbox and grading live on the
server, one session per RemoteEnv (made at construction, closed by :meth:`close`; a session left idle
past the server's ``--idle-timeout`` is closed there and the next call raises).

Example:
    >>> env = RemoteEnv("http://127.0.0.1:8000", "RepoGym/parse-duration-v0", sandbox="bwrap")  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)                                                          # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import httpx
import numpy as np

from repogym_gym.episode import EpisodeError
from repogym_gym.gym.spaces import action_space, chat_observation_space, json_data, observation_space

__all__ = ["RemoteEnv"]


class RemoteEnv(gym.Env[Any, Any]):
    """An env served by ``repogym serve``.

    Args:
        url: The server, e.g. ``http://127.0.0.1:8000``.
        env_id: A ``RepoGym/...`` id registered on the server (``RepoGym/Task-v0`` with ``task=``
            plays any task directory the server can read).
        timeout_s: Seconds to wait for one call's answer; None (default): as long as it takes. A step
            runs every call of a completion (up to 64 commands and test runs, each bounded by the task's
            limits) and may grade: a client timeout would lose its reward while the server finishes it
            (red-team round 45), so set one only to detect a dead server. Connecting times out after 30 s.
        **kwargs: ``gym.make`` options for the server: ``task``, ``suite``, ``sandbox``,
            ``max_steps``, ``reward_shaping``, ``max_episode_steps``, ``observation_mode``.

    Raises:
        EpisodeError: when the server refuses a call (its message: an unknown id, an expired session,
            a call while another of this env runs), or cannot be reached.
    """

    metadata = {"render_modes": []}

    def __init__(self, url: str, env_id: str, *, timeout_s: float | None = None, **kwargs: Any) -> None:
        self.observation_mode = str(kwargs.get("observation_mode", "dict"))
        self.observation_space = chat_observation_space() if self.observation_mode == "chat" else observation_space()
        self.action_space = action_space()
        self._client = httpx.Client(base_url=url.rstrip("/"), timeout=httpx.Timeout(timeout_s, connect=30.0))
        self.session_id: str | None = None
        try:
            self.session_id = self._call("post", "/sessions", {"env_id": env_id, "kwargs": kwargs})["session_id"]
        except BaseException:
            self._client.close()
            raise

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self._client.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise EpisodeError(f"the env server at {self._client.base_url} cannot be reached: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            try:
                message = response.json().get("error") or response.text
            except ValueError:
                message = response.text
            raise EpisodeError(f"the env server refused {method.upper()} {path} ({response.status_code}): {message}")
        return response.json()

    def _observation(self, obs: Any) -> Any:
        if self.observation_mode == "chat":
            return tuple(obs)
        return {"text": obs["text"], **{k: np.asarray(obs[k], dtype=np.int64) for k in ("step", "steps_left", "exit_code")}}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        out = self._call("post", f"/sessions/{self.session_id}/reset", {"seed": seed, "options": options})
        return self._observation(out["observation"]), out["info"]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        out = self._call("post", f"/sessions/{self.session_id}/step", {"action": json_data(action)})
        return self._observation(out["observation"]), out["reward"], out["terminated"], out["truncated"], out["info"]

    def truncate(self, reason: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Grade the running episode now, as the step budget would (``truncated=True``)."""
        out = self._call("post", f"/sessions/{self.session_id}/truncate", {"reason": reason})
        return self._observation(out["observation"]), out["reward"], out["terminated"], out["truncated"], out["info"]

    def close(self) -> None:
        """End the session (the server removes its workspace); idempotent."""
        if self.session_id is not None:
            session_id, self.session_id = self.session_id, None
            try:
                self._call("delete", f"/sessions/{session_id}")
            except EpisodeError:
                pass  # already expired or the server is gone: nothing of ours is left there
        self._client.close()
        super().close()
