"""Downsampling for charts: MinMaxLTTB keeps the shape, and the very peak and dip always survive."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.core.downsample import keep_indices

rates = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(rates, min_size=1, max_size=3000), st.integers(min_value=4, max_value=600))
def test_the_peak_and_the_dip_are_always_drawn(values, n_out):
    x = list(range(len(values)))
    kept = keep_indices(x, values, n_out)
    assert kept == sorted(set(kept)) and all(0 <= i < len(values) for i in kept)
    assert len(kept) <= max(len(values) if len(values) <= n_out else n_out + 2, 0)
    assert max(values[i] for i in kept) == max(values)  # dedupe-like rule: drawing never lowers the peak
    assert min(values[i] for i in kept) == min(values)
    if len(values) <= n_out:
        assert kept == x  # nothing thinned when it fits


def test_a_one_hour_run_is_drawn_with_a_thousand_points_and_its_spike():
    values = [100.0 + 10 * math.sin(i / 50) for i in range(3600)]
    values[1234] = 5000.0  # one interval's burst
    values[2345] = None  # an interval without a figure
    kept = keep_indices([float(i) for i in range(3600)], values, 1000)
    assert 990 <= len(kept) <= 1002 and 1234 in kept and kept[0] == 0 and kept[-1] == 3599


def test_unsorted_times_are_chosen_in_time_order_and_mapped_back():
    x = [5.0, 1.0, 3.0, 2.0, 4.0, 0.0, 6.0, 7.0]
    y = [1.0, 9.0, 2.0, 3.0, 1.0, 0.5, 2.0, 1.0]
    kept = keep_indices(x, y, 5)
    assert 1 in kept  # the 9 (time 1.0) is kept wherever it sat in the list
