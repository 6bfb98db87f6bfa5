"""How long copying the database to the standby takes (pure). Units: bytes, bytes/s, seconds.

Source: seed 000, "Instantiation": database size / total aggregate throughput, where each node pair
copies in parallel, plus 0-50 % (about 30 %) for the redo generated during the copy. Its example,
100 TB on a 2-node RAC at 300 MB/s per node, is "about 50 hours" (the seed rounds 2.16 TB/h down to
2 TB/h; exactly it is 48.5 h with binary units, 46.3 h with decimal ones).
"""

from __future__ import annotations

from dataclasses import dataclass

from redolab.planning.network import require_positive


@dataclass(frozen=True)
class InstantiationEstimate:
    database_bytes: int
    throughput_per_pair_bytes_per_second: float
    node_pairs: int
    overhead_percent: float
    copy_seconds: float
    total_seconds: float

    @property
    def aggregate_bytes_per_second(self) -> float:
        return self.throughput_per_pair_bytes_per_second * self.node_pairs

    @property
    def total_hours(self) -> float:
        return self.total_seconds / 3600


def instantiation_estimate(
    *,
    database_bytes: int,
    throughput_per_pair_bytes_per_second: float,
    node_pairs: int = 1,
    overhead_percent: float = 0,
) -> InstantiationEstimate:
    """copy = size / (throughput per node pair x node pairs); total = copy x (1 + overhead / 100)."""
    require_positive(database_bytes, "database size")
    require_positive(throughput_per_pair_bytes_per_second, "throughput")
    if node_pairs < 1:
        raise ValueError(f"the number of node pairs must be at least 1 (got {node_pairs})")
    if not 0 <= overhead_percent <= 1000:
        raise ValueError(f"the apply overhead must be between 0 and 1000 % (got {overhead_percent})")
    copy = database_bytes / (throughput_per_pair_bytes_per_second * node_pairs)
    total = copy * (1 + overhead_percent / 100)
    return InstantiationEstimate(
        database_bytes, throughput_per_pair_bytes_per_second, node_pairs, overhead_percent, copy, total
    )
