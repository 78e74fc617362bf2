"""Named storage classes that a read can be emulated on or its time predicted for.

Figures are typical datasheet / cloud-offering values, not measurements: they set the caps of
the emulation and the inputs of the cost model, so a profile means the same in both.
"""

from __future__ import annotations

from dataclasses import dataclass

from hepfmt.errors import ConfigError

KINDS = ("block", "remote")


@dataclass(frozen=True)
class Profile:
    """A storage class. ``block`` profiles are emulated by a throttled loop device (bandwidth
    and IOPS caps; the per-request latency of a disk is what its IOPS cap implies, so
    ``latency_s`` is 0); ``remote`` ones by a proxy in front of a server (round-trip time and
    bandwidth; ``iops`` None: a server has no per-request cap of its own)."""

    name: str
    kind: str
    bandwidth_bps: float  # bytes per second
    iops: float | None = None
    latency_s: float = 0.0  # added to every request on the critical path (a network RTT)
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError("storage.kind", f"{self.kind!r} is not one of {KINDS}")
        if self.bandwidth_bps <= 0 or (self.iops is not None and self.iops <= 0) \
                or self.latency_s < 0:
            raise ConfigError(f"storage.{self.name}", "bandwidth and IOPS must be positive, "
                                                      "latency not negative")


MB = 1e6

PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("hdd", "block", 150 * MB, iops=120,
            description="7200 rpm disk: ~150 MB/s sequential, ~8 ms per random access"),
    Profile("sata-ssd", "block", 530 * MB, iops=90_000,
            description="SATA SSD: interface-bound 530 MB/s, ~90k 4 KiB read IOPS"),
    Profile("network-disk", "block", 125 * MB, iops=3000,
            description="cloud block volume at its baseline (e.g. AWS gp3): 125 MB/s, 3000 IOPS"),
    # A LAN inside one machine room has 0.1-0.2 ms round trips; the proxy that adds latency
    # here (Toxiproxy; this kernel has no netem) counts it in whole milliseconds, so the lan
    # profile is a same-site network at 1 ms, which it can represent exactly.
    Profile("lan", "remote", 1.25e9, latency_s=1e-3,
            description="server on the same site (campus network, another building): "
                        "10 Gb/s, 1 ms round trip (not a machine-room LAN's 0.2 ms: the latency "
                        "proxy has 1 ms resolution)"),
    Profile("wan", "remote", 125 * MB, latency_s=20e-3,
            description="server at another site: 1 Gb/s, 20 ms round trip"),
)}


def get(name: str) -> Profile:
    """The profile called ``name``; a config naming an unknown one fails with the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError("storage.profile", f"{name!r} is not one of {sorted(PROFILES)}") \
            from None
