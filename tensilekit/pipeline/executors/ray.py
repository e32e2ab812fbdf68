"""Ray executor: the same jobs on every GPU of a Ray cluster (the optional ``ray`` extra).

Design
------
* **One actor per device slot.** For every alive node the executor reads how many units of the
  device resource the node offers (``tensilekit_device`` by default, a *custom* resource so a
  cluster without GPUs -- CI, laptops -- works the same; start nodes with
  ``ray start --resources '{"tensilekit_device": 8}'``) and starts ``slots_per_device`` actors
  per device, each holding ``1 / slots_per_device`` of one unit and pinned to its node with a
  node-affinity strategy. An actor knows its device index and pins the tools it starts with
  the same environment as the local pool (:func:`~tensilekit.pipeline.jobs.device_env`). With
  ``resource="GPU"`` the actors hold Ray GPUs instead and take their index from
  ``ray.get_gpu_ids()``.
* **CPU jobs** (library builds) are plain tasks with ``num_cpus=1``.
* **Scheduling** is the local pool's own loop
  (:func:`~tensilekit.pipeline.executors.scheduling.run_schedule`): longest job first, to the
  idle slot whose device runs the fewest jobs, retries while attempts remain; events are emitted
  on the driver. A dead actor fails its attempt (which is retried elsewhere) and leaves the pool.
* **Results are identical** to the local executors because a job's value depends only on its
  payload. Work directories must be on a filesystem every node sees (all paths in payloads
  are absolute).

Ray is imported only when an executor is created; without it :class:`MissingDependency` says
how to install the ``ray`` extra.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any

from tensilekit.errors import MissingDependency, PipelineError, ToolError
from tensilekit.pipeline.executors import check_unique_ids
from tensilekit.pipeline.executors.scheduling import Finished, Slot, run_schedule
from tensilekit.pipeline.jobs import (
    Attempt,
    EventCallback,
    Job,
    JobContext,
    JobKind,
    JobOutcome,
    device_env,
    run_attempt,
)

DEVICE_RESOURCE = "tensilekit_device"
CONNECT_TIMEOUT_S = 10.0
"""How long a Ray head may take to accept a TCP connection before the address counts as unreachable."""
DEFAULT_RAY_PORT = 6379
CLIENT_RAY_PORT = 10001


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`~tensilekit.errors.ToolError` unless ``address``'s host:port accepts a
    TCP connection within ``timeout`` seconds (``ray.init`` itself retries for minutes).

    ``auto`` and ``local`` are left to Ray (they name no host).
    """
    if address in ("auto", "local"):
        return
    text = address.removeprefix("ray://")
    default_port = CLIENT_RAY_PORT if address.startswith("ray://") else DEFAULT_RAY_PORT
    host, _, port = text.rpartition(":") if ":" in text else (text, "", str(default_port))
    try:
        number = int(port)
    except ValueError:
        raise ToolError(f"--address {address!r}: expected host:port or ray://host:port") from None
    try:
        with socket.create_connection((host, number), timeout=timeout):
            pass
    except OSError as error:
        raise ToolError(
            f"cannot reach the Ray cluster at {address} ({host}:{number}: {error}); is the head node up "
            "(ray start --head) and the address right?"
        ) from None


def import_ray() -> Any:
    """The ``ray`` module, or :class:`MissingDependency` telling how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingDependency.for_extra("the Ray executor needs Ray", "ray") from None
    return ray


class _DeviceWorker:
    """Actor body: runs attempts pinned to one device."""

    def __init__(self, device: int | None, node: str | None, use_gpu_ids: bool) -> None:
        if use_gpu_ids:
            import ray

            ids = ray.get_gpu_ids()
            device = int(ids[0]) if ids else device
        self.device = device
        self.node = node

    def run(self, job: Job, attempt: int, timeout: float | None, stall_timeout: float | None = None) -> Attempt:
        context = JobContext(
            job.id, attempt, self.device, timeout, device_env(self.device), node=self.node, stall_timeout=stall_timeout
        )
        return run_attempt(job, context)

    def ping(self) -> int | None:
        return self.device


def _cpu_attempt(job: Job, attempt: int, timeout: float | None, stall_timeout: float | None = None) -> Attempt:
    context = JobContext(job.id, attempt, None, timeout, {}, node=socket.gethostname(), stall_timeout=stall_timeout)
    return run_attempt(job, context)


class _Slot:
    def __init__(self, actor: Any, device: int, node: str | None, label: str) -> None:
        self.actor = actor
        self.device = device
        self.node = node
        self.label = label


class RayExecutor:
    """Run jobs on a Ray cluster; see the module docstring.

    Args:
        address: ``ray.init`` address (``"auto"``, ``"host:6379"``, ``"ray://host:10001"``); None
            starts a private local instance with ``local_devices`` device units. An address
            whose host:port does not answer within ``connect_timeout`` seconds fails at once
            (:func:`check_reachable`) instead of hanging in ``ray.init``. An already initialised
            Ray is used as is.
        slots_per_device: concurrent jobs per device.
        cpu_slots: concurrent CPU jobs (each a ``num_cpus=1`` task).
        retries: extra attempts for a failed job.
        timeout: seconds each attempt's tool may run (enforced in the job by its runner).
        stall_timeout: seconds each attempt's tool may go without output; None never.
        resource: the per-device custom resource, or ``"GPU"`` for Ray's GPUs.
        init_kwargs: more ``ray.init`` arguments when this executor starts Ray.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        slots_per_device: int = 1,
        cpu_slots: int = 1,
        retries: int = 1,
        timeout: float | None = None,
        stall_timeout: float | None = None,
        resource: str = DEVICE_RESOURCE,
        init_kwargs: dict[str, Any] | None = None,
        local_devices: int = 1,
        connect_timeout: float = CONNECT_TIMEOUT_S,
    ) -> None:
        if slots_per_device < 1 or cpu_slots < 1 or retries < 0:
            raise ValueError("slots_per_device and cpu_slots must be >= 1, retries >= 0")
        self._ray = import_ray()
        self.address = address
        self.slots_per_device = slots_per_device
        self.cpu_slots = cpu_slots
        self.retries = retries
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self.resource = resource
        self.init_kwargs = dict(init_kwargs or {})
        self.local_devices = max(1, local_devices)
        self.connect_timeout = connect_timeout
        self._slots: list[_Slot] = []
        self._started_ray = False

    # ------------------------------------------------------------------------- cluster

    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        kwargs = dict(self.init_kwargs)
        if self.address is None:
            # A private local instance ("local" never joins a cluster RAY_ADDRESS or a running
            # `ray start` points at), offering one device unit per --devices entry.
            address = "local"
            kwargs.setdefault("include_dashboard", False)
            if self.resource != "GPU":
                resources = dict(kwargs.get("resources") or {})
                resources.setdefault(self.resource, self.local_devices)
                kwargs["resources"] = resources
        else:
            address = self.address
            check_reachable(address, self.connect_timeout)
        ray.init(address=address, log_to_driver=False, **kwargs)
        self._started_ray = True

    def _ensure_slots(self) -> list[_Slot]:
        if self._slots:
            return self._slots
        self._connect()
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = sorted(
            (node for node in ray.nodes() if node.get("Alive")), key=lambda node: str(node.get("NodeManagerAddress"))
        )
        multi_node = len(nodes) > 1
        worker = ray.remote(_DeviceWorker)
        share = 1.0 / self.slots_per_device
        for node in nodes:
            count = int(node.get("Resources", {}).get(self.resource, 0))
            host = str(node.get("NodeManagerHostname") or node.get("NodeManagerAddress"))
            for device in range(count):
                for _ in range(self.slots_per_device):
                    options: dict[str, Any] = {
                        "num_cpus": 0,
                        "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
                    }
                    if self.resource == "GPU":
                        options["num_gpus"] = share
                    else:
                        options["resources"] = {self.resource: share}
                    actor = worker.options(**options).remote(
                        device, host if multi_node else None, self.resource == "GPU"
                    )
                    label = f"{host}:{device}" if multi_node else str(device)
                    self._slots.append(_Slot(actor, device, host if multi_node else None, label))
        if not self._slots:
            raise PipelineError(
                f"the Ray cluster offers no {self.resource!r} resource; start each node with "
                f"ray start --resources '{{\"{self.resource}\": <GPUs on the node>}}'"
            )
        ray.get([slot.actor.ping.remote() for slot in self._slots])
        return self._slots

    @property
    def devices(self) -> tuple[str, ...]:
        labels: list[str] = []
        for slot in self._slots:
            if slot.label not in labels:
                labels.append(slot.label)
        return tuple(labels) or ("ray",)

    def describe(self) -> str:
        where = self.address or "local Ray"
        slots = (
            f"{len(self.devices)} device(s) x {self.slots_per_device} slot(s)" if self._slots else "devices on demand"
        )
        return f"ray ({where}): {slots}, resource {self.resource}"

    def close(self) -> None:
        ray = self._ray
        for slot in self._slots:
            try:
                ray.kill(slot.actor)
            except Exception:  # noqa: BLE001 - the actor may already be gone
                pass
        self._slots = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    # ------------------------------------------------------------------------- scheduling

    def run(self, jobs: Sequence[Job], on_event: EventCallback | None = None) -> list[JobOutcome]:
        """Run ``jobs`` on the cluster; outcomes come back in input order (:func:`run_schedule`)."""
        check_unique_ids(jobs)
        if not jobs:
            return []
        workers = list(self._ensure_slots()) if any(job.kind is JobKind.GPU for job in jobs) else []
        slots = [Slot(worker.label, worker.device, worker.node, worker) for worker in workers]

        def dead(slot: Slot) -> None:
            if slot.handle in self._slots:
                self._slots.remove(slot.handle)

        return run_schedule(
            jobs, slots, _RayBackend(self._ray, self.timeout, self.stall_timeout), cpu_slots=self.cpu_slots, retries=self.retries,
            emit=on_event or (lambda event: None), on_dead=dead,
        )  # fmt: skip


class _RayBackend:
    """Attempts as actor calls (GPU) or ``num_cpus=1`` tasks (CPU); a dead actor fails its attempt."""

    def __init__(self, ray: Any, timeout: float | None, stall_timeout: float | None = None) -> None:
        self.ray = ray
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self.cpu_task = ray.remote(num_cpus=1)(_cpu_attempt)
        self.in_flight: dict[Any, tuple[Job, int, Slot | None]] = {}

    def start(self, job: Job, number: int, slot: Slot | None) -> None:
        if slot is None:
            reference = self.cpu_task.remote(job, number, self.timeout, self.stall_timeout)
        else:
            reference = slot.handle.actor.run.remote(job, number, self.timeout, self.stall_timeout)
        self.in_flight[reference] = (job, number, slot)

    def wait(self) -> list[Finished]:
        ray = self.ray
        done_refs, _ = ray.wait(list(self.in_flight), num_returns=1)
        finished: list[Finished] = []
        for done in done_refs:
            job, number, slot = self.in_flight.pop(done)
            try:
                attempt = ray.get(done)
                alive = True
            except Exception as error:  # noqa: BLE001 - a dead worker or lost object fails the attempt
                now = time.monotonic()
                attempt = Attempt(
                    ok=False, error_type=type(error).__name__, error=str(error)[:2000], started=now, finished=now,
                    device=slot.device if slot else None, node=slot.node if slot else None,
                )  # fmt: skip
                alive = not isinstance(error, ray.exceptions.RayActorError)
            finished.append(Finished(job, number, slot, attempt, alive))
        return finished


__all__ = ["CONNECT_TIMEOUT_S", "DEVICE_RESOURCE", "RayExecutor", "check_reachable", "import_ray"]
