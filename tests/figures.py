"""Reading figure JSON in tests: plotly writes numpy arrays as typed blocks ({"dtype", "bdata"})."""

import base64

import numpy as np


def values(array) -> list:
    """A trace's x or y as a plain list, whether plotly wrote a list or a typed block."""
    if isinstance(array, dict) and "bdata" in array:
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"])).tolist()
    return list(array)
