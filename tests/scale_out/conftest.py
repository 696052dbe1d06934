"""The scale-out deployment of its tests, on the machine's own services (orchestration/local_deployment.py).

Where one of the machine's services is absent the tests skip, in one line naming it. The benchmark is
a third of the embedded one (100 sessions), and recall-probe is slowed down (local_deployment.SLOW_MODEL).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from memsql_assets.lib.harness.homes import build_home
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.orchestration.local_deployment import (
    LATENCY_MS,
    SLOW_MODEL,
    Deployment,
    absent_machine_service,
    base_env,
    deployment,
)

EVERY_NTH_SESSION = 3


def _models_file(path: Path) -> Path:
    registry = yaml.safe_load((REPO_ROOT / "models.yaml").read_text(encoding="utf-8"))
    registry["models"][SLOW_MODEL]["provider_params"] = {"simulated_latency_ms": LATENCY_MS}
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def services(tmp_path_factory, embedded_dbs, embedded_sessions) -> Iterator[Deployment]:
    """The deployment's services (no daemon, no worker yet), and meanwhile, in a process of its own,
    the embedded default's rows of the same cells in `d.reference`."""
    absent = absent_machine_service()
    if absent:
        pytest.skip(f"the scale-out tests need the machine's services: {absent}")
    root = tmp_path_factory.mktemp("scale_out")
    subset = [s for i, s in enumerate(embedded_sessions) if i % EVERY_NTH_SESSION == 0]
    models = _models_file(root / "models.yaml")
    reference = build_home(root / "reference", embedded_dbs, subset, semantic=False)
    with deployment(root, build_home(root / "shared", embedded_dbs, subset, semantic=False), models) as d:
        d.reference = reference
        with open(d.log("reference"), "wb") as log:  # the embedded default: private Redis, local Chroma
            d.procs["reference"] = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("embedded_reference.py")), str(reference)],
                cwd=REPO_ROOT,
                env=base_env(d.marker, models),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        yield d


@pytest.fixture(scope="module")
def cluster(services: Deployment) -> Deployment:
    """The deployment with a Dagster daemon and two Celery workers, w1 and w2."""
    services.start_cluster(["w1", "w2"])
    return services
