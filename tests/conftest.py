"""Shared test configuration.

The default run is reproducible: Hypothesis draws the same examples on every run
(`derandomize`), so the suite cannot fail at random; the bugs it finds are found again on the
next run. `HYPOTHESIS_PROFILE=explore` draws fresh examples (and more of them) to search for new
failures, as the `slow` soak tests do.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "explore", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=500
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
