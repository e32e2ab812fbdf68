"""Hypothesis settings profiles for the property tests.

``ci`` keeps ``.ci/run`` inside its time budget and is deterministic (derandomised, no example
database); ``dev`` (the default outside CI) searches more. ``HYPOTHESIS_PROFILE`` picks one
explicitly; otherwise ``ci`` is loaded when the ``CI`` variable is set.
"""

from __future__ import annotations

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property modules skip themselves (pytest.importorskip)
    pass
else:
    _SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile(
        "ci", max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=_SLOW_DATA
    )
    settings.register_profile("dev", max_examples=200, deadline=None, suppress_health_check=_SLOW_DATA)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
