"""Running an environment behind verifiers' env-server pool, as a trainer does.

`env_server_pool` spawns `serve_env` on a free loopback port, with a static pool of worker
processes or the pool a ``[serve]`` block configures (a trainer's ``serve.pool``), and
yields its ZMQ address for `EnvClient`. Each worker rebuilds the environment from its JSON
config and every task from its `TaskData` alone, which is what makes "served = local" a
property worth testing.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from verifiers.v1 import pool_serve_kwargs
from verifiers.v1.serve import env_config_data, serve_env


@contextmanager
def env_server_pool(
    env_config: Any, workers: int = 2, startup_timeout: float = 180, pool: Any = None
) -> Iterator[str]:
    """Serve `env_config` (a verifiers EnvConfig) from `workers` spawned processes, or as the
    verifiers pool config `pool` (``ServeConfig.pool``: static or elastic) says; yields the address."""
    sizing = {"max_workers": workers, "elastic": False} if pool is None else pool_serve_kwargs(pool)
    context = multiprocessing.get_context("spawn")
    addresses = context.Queue()
    server = context.Process(
        target=serve_env,
        kwargs={
            **sizing,
            "address": "tcp://127.0.0.1:0",
            "address_queue": addresses,
            "config_data": env_config_data(env_config),
        },
    )
    server.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                address = addresses.get(timeout=1)
                break
            except queue.Empty:
                if not server.is_alive():
                    raise RuntimeError(f"env server exited with code {server.exitcode}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("env server never reported its address") from None
        yield address
    finally:
        server.terminate()
        server.join(timeout=30)
