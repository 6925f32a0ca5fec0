"""Sandbox configurations: data that names a backend and its options, and builds it.

One model per backend, each with a ``type`` literal and no unknown fields, joined in the
discriminated union :data:`SandboxConfig` (the shape SWE-ReX gives its deployments). A run
file, a ``gym.make(..., sandbox={...})`` call or the CLI hands over a name or a mapping;
:func:`sandbox_config` turns it into a config (or a :class:`~repogym_gym.errors.SandboxConfigError`
naming the field and the value) and :meth:`build` makes the sandbox, importing only its backend.

Example:
    >>> sandbox_config({"type": "docker", "cpus": 1}).cpus
    1.0
    >>> sandbox_config("bwrap").type
    'bwrap'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from repogym_gym.errors import SandboxConfigError, validation_problems
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST
from repogym_gym.sandbox.limits import DEFAULT_LIFETIME_S, SandboxLimits
from repogym_gym.spec_run import StrictModel


class _Options(StrictModel):
    """A sandbox configuration: built in code or JSON, so a list stands for a tuple (task.yaml's
    sections are strict about types; these are not read from task.yaml)."""

    model_config = ConfigDict(strict=False)

if TYPE_CHECKING:
    from repogym_gym.sandbox.base import Sandbox

__all__ = ["AutoConfig", "BubblewrapConfig", "DockerConfig", "LocalConfig", "SandboxConfig", "sandbox_config"]


class LocalConfig(_Options):
    """A plain subprocess of the host user: a guardrail for trusted agents, not a boundary."""

    type: Literal["local"] = "local"
    env_allowlist: tuple[str, ...] = Field(DEFAULT_ENV_ALLOWLIST, description="Host variables a command inherits.")

    def build(self) -> Sandbox:
        """The :class:`~repogym_gym.sandbox.local.LocalSandbox` of this config."""
        from repogym_gym.sandbox.local import LocalSandbox

        return LocalSandbox(env_allowlist=self.env_allowlist)


class _Confining(_Options):
    """Options every confining backend takes."""

    limits: SandboxLimits | None = Field(None, description="Per-command resource limits (None: the defaults).")
    hide: tuple[str, ...] = Field((), description="Host paths a command must not see, even under a shown directory.")
    reveal: tuple[str, ...] = Field((), description="Host paths shown read-only besides the allowlist.")
    env_allowlist: tuple[str, ...] = Field(DEFAULT_ENV_ALLOWLIST, description="Host variables a command inherits.")


class BubblewrapConfig(_Confining):
    """bubblewrap: namespaces, an allowlisted read-only view, a uid of its own, seccomp and rlimits."""

    type: Literal["bwrap"] = "bwrap"

    def build(self) -> Sandbox:
        """The :class:`~repogym_gym.sandbox.bwrap.BubblewrapSandbox` of this config."""
        from repogym_gym.sandbox.bwrap import BubblewrapSandbox

        return BubblewrapSandbox(limits=self.limits, hide=self.hide, reveal=self.reveal, env_allowlist=self.env_allowlist)


class DockerConfig(_Confining):
    """A container per episode on a Docker engine; grading in fresh containers."""

    type: Literal["docker"] = "docker"
    image: str | None = Field(None, description="Image of the containers (None: the base image, repogym/base:bookworm).")
    cpus: float | None = Field(2.0, gt=0, description="CPUs a container may use (capped at the machine's; None: no cap).")
    url: str | None = Field(None, description="Engine URL (None: $REPOGYM_DOCKER_HOST, $DOCKER_HOST, the default socket).")
    lifetime_s: int = Field(DEFAULT_LIFETIME_S, ge=1, description="Seconds an episode's container lives at most (its "
                            "sleep; a task's limits lower it to its longest command limit plus a minute).")

    def build(self) -> Sandbox:
        """The :class:`~repogym_gym.sandbox.docker.DockerSandbox` of this config."""
        from repogym_gym.sandbox.docker import DEFAULT_IMAGE, DockerSandbox

        return DockerSandbox(image=self.image or DEFAULT_IMAGE, limits=self.limits, hide=self.hide, reveal=self.reveal,
                             env_allowlist=self.env_allowlist, cpus=self.cpus, url=self.url, lifetime_s=self.lifetime_s)


class AutoConfig(_Confining):
    """For an untrusted agent: bubblewrap (with these options) where it runs, else local with a warning."""

    type: Literal["auto"] = "auto"

    def build(self) -> Sandbox:
        """:func:`~repogym_gym.sandbox.default_sandbox` for an untrusted agent with these options."""
        from repogym_gym.sandbox import default_sandbox

        return default_sandbox(trusted=False, limits=self.limits, hide=self.hide, reveal=self.reveal,
                               env_allowlist=self.env_allowlist)


#: Any backend's configuration, told apart by ``type``.
SandboxConfig = Annotated[LocalConfig | BubblewrapConfig | DockerConfig | AutoConfig, Field(discriminator="type")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(SandboxConfig)
#: The valid ``type`` values.
SANDBOX_TYPES = ("auto", "bwrap", "docker", "local")


def sandbox_config(value: str | Mapping[str, Any] | LocalConfig | BubblewrapConfig | DockerConfig | AutoConfig,
                   **options: Any) -> LocalConfig | BubblewrapConfig | DockerConfig | AutoConfig:
    """The configuration ``value`` describes: a backend's name, a mapping with ``type``, or a config.

    Args:
        value: ``"local"``, ``"bwrap"``, ``"docker"`` or ``"auto"``; a mapping such as
            ``{"type": "docker", "cpus": 1}``; or a config (returned as is when no options are given).
        options: Fields to set on top (``limits=...``, ``image=...``).

    Raises:
        SandboxConfigError: for an unknown type (the message lists the valid ones), an unknown
            option or a value out of range, naming the field and the value.
    """
    if isinstance(value, (LocalConfig, BubblewrapConfig, DockerConfig, AutoConfig)):
        if not options:
            return value
        value = value.model_dump(exclude_defaults=True) | {"type": value.type}
    data = {"type": value} if isinstance(value, str) else dict(value) if isinstance(value, Mapping) else None
    if data is None:
        raise SandboxConfigError(f"sandbox: expected a name or a mapping with 'type', got {type(value).__name__}")
    data.update(options)
    kind = data.get("type")
    if kind not in SANDBOX_TYPES:
        raise SandboxConfigError(f"unknown sandbox {kind!r}; valid sandboxes are {list(SANDBOX_TYPES)}")
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        model = {"local": LocalConfig, "bwrap": BubblewrapConfig, "docker": DockerConfig, "auto": AutoConfig}[kind]
        raise SandboxConfigError(f"invalid {kind!r} sandbox: " + "; ".join(validation_problems(exc, model=model, skip=1))) from None
