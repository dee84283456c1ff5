"""Suite-wide test settings: hypothesis checks properties, never timing.

Timing on a shared machine is not a property of the code under test (a draw that takes 200 ms
while another process holds the cores is still right), so no hypothesis test here has a deadline;
speed is measured by the scripts under `bench/`.
"""

from hypothesis import settings

settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
