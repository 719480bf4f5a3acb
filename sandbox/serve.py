"""Both stand-ins serving a seed on 127.0.0.1, for as long as a ``with`` block runs
(``accord sandbox``): the Snowflake account on one port, the Databricks workspace on another,
each seeded (:mod:`accord.sandbox.seed`), each checked to answer before the block starts, and
each stopped when it ends, however it ends.

What reaches them is fixed and printed by ``accord sandbox``, never secret: the Snowflake
account accepts any password (the one printed is a placeholder), the Databricks workspace the
tokens below, one per principal of the seed (a persona's own SDK profile) and the deployer's.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from accord.sandbox.seed import Seed, plant
from accord.sandbox.standins.databricks import DatabricksEstate, workspace
from accord.sandbox.standins.snowflake import SnowflakeEstate, account

#: the Snowflake account name and the password the sandbox prints (any is accepted)
ACCOUNT = "sandbox"
PASSWORD = "sandbox-not-a-secret"
#: the SQL warehouse statements name (the stand-in runs them whatever warehouse they name)
WAREHOUSE = "sandbox"
#: the Databricks deployer's token (it reads and deploys as a metastore admin)
DEPLOYER_TOKEN = "dapi-sandbox"
#: seconds each stand-in has to answer its first request
READY_TIMEOUT = 10.0


@dataclass(frozen=True)
class Serving:
    """The two stand-ins, serving: where they listen and the Databricks tokens (principal ->
    token; the deployer's is :data:`DEPLOYER_TOKEN`)."""

    snowflake: SnowflakeEstate
    databricks: DatabricksEstate
    snowflake_port: int
    databricks_url: str
    tokens: dict[str, str]

    @property
    def databricks_port(self) -> int:
        return int(self.databricks_url.rsplit(":", 1)[1])


def tokens_of(seed: Seed) -> dict[str, str]:
    """Each Databricks principal's token, numbered in the order of their names (the same seed
    gives the same tokens)."""
    names = sorted(seed.databricks.members)
    return {name: f"{DEPLOYER_TOKEN}-{i}" for i, name in enumerate(names, start=1)}


@contextmanager
def serving(seed: Seed, port: int = 0, ready_timeout: float = READY_TIMEOUT) -> Iterator[Serving]:
    """Both stand-ins holding ``seed``: Snowflake on ``port`` and Databricks on ``port + 1``
    (``port`` 0: two free ports). OSError when a port cannot be had; TimeoutError when a
    stand-in does not answer within ``ready_timeout`` seconds. Both are stopped on leaving."""
    sf, dbx = SnowflakeEstate(), DatabricksEstate()
    plant(sf, seed.snowflake)
    plant(dbx, seed.databricks)
    tokens = tokens_of(seed)
    dbx.tokens = {DEPLOYER_TOKEN: dbx.reader} | {t: who for who, t in tokens.items()}
    with ExitStack() as stack:
        params = stack.enter_context(account(sf, port))
        host = stack.enter_context(workspace(dbx, port + 1 if port else 0))
        served = Serving(sf, dbx, int(params["port"]), host, tokens)
        for p in (served.snowflake_port, served.databricks_port):
            wait_until_answering(p, ready_timeout)
        yield served


def wait_until_answering(port: int, timeout: float) -> None:
    """Until the server on ``port`` answers an HTTP request (any status), at most ``timeout``
    seconds: TimeoutError after."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=max(0.1, left))
        try:
            conn.request("GET", "/sandbox-ready")
            conn.getresponse().read()
            return
        except OSError as err:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"127.0.0.1:{port} did not answer in {timeout:g} s") from err
            time.sleep(0.05)
        finally:
            conn.close()
