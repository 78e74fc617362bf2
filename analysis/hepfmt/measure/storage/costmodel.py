"""Predict a read's time on a storage class from what the read asked of storage.

The model is the one the emulation enforces, so a measured time can be checked against it and
a read measured on one class can be projected onto another from its counted requests and bytes:

    time = max(bytes / bandwidth, requests / iops) + requests * latency / concurrency

A throttle (cgroup blkio, a token bucket) caps bytes and requests per second independently, so
the slower of the two bounds the transfer; a round trip is paid per request that waits on the
previous one, which ``concurrency`` (requests in flight at once: vector reads, prefetching)
divides. CPU time (decompression) is not storage time and is not modelled: compare a
prediction with wall time minus the same read's warm time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hepfmt.measure.storage.profiles import Profile


@dataclass(frozen=True)
class Prediction:
    transfer_s: float  # bytes / bandwidth
    ops_s: float  # requests / iops
    latency_s: float  # round trips on the critical path

    @property
    def total_s(self) -> float:
        return max(self.transfer_s, self.ops_s) + self.latency_s

    @property
    def bound(self) -> str:
        """What dominates: the term a faster storage class would have to improve."""
        terms = {"bandwidth": self.transfer_s, "iops": self.ops_s, "latency": self.latency_s}
        return max(terms, key=lambda k: terms[k])


def predict(profile: Profile, requests: int, nbytes: int, concurrency: float = 1.0) -> Prediction:
    """Storage time of a read that issued ``requests`` requests for ``nbytes`` bytes in all."""
    if requests < 0 or nbytes < 0 or concurrency < 1:
        raise ValueError("requests and bytes must not be negative, concurrency at least 1")
    return Prediction(
        transfer_s=nbytes / profile.bandwidth_bps,
        ops_s=requests / profile.iops if profile.iops else 0.0,
        latency_s=requests * profile.latency_s / concurrency,
    )
